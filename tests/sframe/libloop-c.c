// SPDX-License-Identifier: GPL-2.0
/*
 * libloop-c.c - test library for dlopen-loop -m (sframe-audit test): it
 * needs libc, so that dlmopen() into a new namespace loads a libc of its
 * own there, as real plugins do.
 */
#include <stdio.h>
#include <string.h>

volatile size_t loop_c_sink;

void loop_entry(int n)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", n);
	loop_c_sink += strlen(buf);
}
