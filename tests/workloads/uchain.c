// SPDX-License-Identifier: GPL-2.0
/*
 * uchain - a known call chain to put uprobes on:
 *
 *   main -> uc_a -> uc_b -> uc_c (spins SPIN iterations)
 *
 * called again and again from one call site in main, so that every hit
 * of a uprobe on uc_c (or of a uretprobe on uc_b or uc_c) has the same
 * user stack.  Usage:
 *
 *   uchain calls N SPIN   call the chain N times
 *   uchain ms MS SPIN     call it until MS milliseconds have passed
 *
 * Built with and without frame pointers (and the latter with SFrame);
 * never inlined, never tail-called: every caller has a return address
 * in its callee's frame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile unsigned long sink;

/*
 * The volatile local makes GCC set up the frame (with frame pointers): it
 * leaves it out of a leaf that doesn't use the stack, whatever
 * -mno-omit-leaf-frame-pointer says, and a frame-pointer walk from such a
 * leaf skips its caller.
 */
__attribute__((noinline, noclone)) void uc_c(long spin)
{
	volatile long i;

	for (i = 0; i < spin; i++)
		sink += i;
}

__attribute__((noinline, noclone)) void uc_b(long spin)
{
	uc_c(spin);
	sink++;
}

__attribute__((noinline, noclone)) void uc_a(long spin)
{
	uc_b(spin);
	sink++;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	long n, spin, calls = 0;
	double end = 0;
	int timed;

	if (argc != 4 || (strcmp(argv[1], "calls") && strcmp(argv[1], "ms"))) {
		fprintf(stderr, "usage: %s calls N SPIN | ms MS SPIN\n", argv[0]);
		return 2;
	}
	timed = !strcmp(argv[1], "ms");
	n = atol(argv[2]);
	spin = atol(argv[3]);
	if (timed)
		end = now_ms() + n;
	/* One call site of uc_a: one return address in main. */
	while (timed ? now_ms() < end : calls < n) {
		uc_a(spin);
		calls++;
	}
	printf("uchain: %ld calls\n", calls);
	return 0;
}
