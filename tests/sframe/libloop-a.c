// SPDX-License-Identifier: GPL-2.0
/*
 * libloop-a.c - test library for dlopen-loop (sframe-audit test): a few
 * functions calling each other, built -O2 -fomit-frame-pointer, so that
 * only SFrame (from a sidecar) can unwind it.
 */
volatile unsigned long loop_a_sink;

__attribute__((noinline)) static void a_leaf(int n)
{
	int i;

	for (i = 0; i < n; i++)
		loop_a_sink += i * 3;
}

__attribute__((noinline)) static void a_mid(int n)
{
	a_leaf(n);
	a_leaf(n / 2);
	loop_a_sink++;
}

void loop_entry(int n)
{
	a_mid(n);
	loop_a_sink++;
}
