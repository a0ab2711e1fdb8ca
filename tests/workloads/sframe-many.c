// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-many - register N SFrame sections, for what they cost the
 * kernel (tests/guest/79: charged to the memory cgroup).
 *
 * Usage: sframe-many N: maps N * 64 bytes of text and of section data,
 * writes N sections (SFrame v3, one function of 64 bytes each, one after
 * the other), prints "mapped", waits for a line on stdin, registers the N
 * with PR_ADD_SFRAME, prints "registered N", waits for a line and exits.
 * Exit status: 0; 1 if a registration fails (its errno on stderr); 2 on
 * bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "sframe-section.h"

#ifndef PR_ADD_SFRAME
#define PR_ADD_SFRAME	79
#endif

/*
 * Touch the stack that printing an error takes (an unbuffered stderr
 * formats into a buffer on the stack) before the registrations: at the
 * cgroup's limit, a page fault there would wake the cgroup's OOM killer,
 * where the test wants ENOMEM from PR_ADD_SFRAME and an exit.
 */
static __attribute__((noinline)) void prefault_stack(void)
{
	volatile char buf[64 << 10];
	size_t i;

	for (i = 0; i < sizeof(buf); i += 256)
		buf[i] = 0;
}

static void wait_line(void)
{
	char line[64];

	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		exit(0);
}

int main(int argc, char **argv)
{
	size_t len;
	uint8_t *text, *data;
	char *end;
	long n, i;

	n = argc == 2 ? strtol(argv[1], &end, 0) : 0;
	if (argc != 2 || *end || n < 1 || n > 1 << 20) {
		fprintf(stderr, "usage: sframe-many N (1 to %d)\n", 1 << 20);
		return 2;
	}
	len = n * SF_FUNC_SIZE;
	text = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	data = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (text == MAP_FAILED || data == MAP_FAILED) {
		perror("sframe-many: mmap");
		return 1;
	}
	for (i = 0; i < n; i++)
		sf_write(data + i * SF_FUNC_SIZE, (uintptr_t)text + i * SF_FUNC_SIZE,
			 SF_FRE_INFO_GOOD);
	prefault_stack();
	(void)strerror(ENOMEM);
	printf("mapped\n");
	wait_line();
	for (i = 0; i < n; i++) {
		uintptr_t t = (uintptr_t)text + i * SF_FUNC_SIZE;

		if (prctl(PR_ADD_SFRAME, (unsigned long)(data + i * SF_FUNC_SIZE),
			  (unsigned long)(data + i * SF_FUNC_SIZE + SF_SIZE), t, t + SF_FUNC_SIZE)) {
			fprintf(stderr, "sframe-many: PR_ADD_SFRAME of section %ld: %s\n",
				i, strerror(errno));
			return 1;
		}
	}
	printf("registered %ld\n", n);
	wait_line();
	return 0;
}
