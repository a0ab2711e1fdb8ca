// SPDX-License-Identifier: GPL-2.0
/*
 * chain - a known call chain for unwinding tests:
 *
 *   main -> chain_a -> chain_b -> chain_c -> chain_leaf (spins)
 *
 * Built twice, with and without frame pointers.  Usage: chain [MS], spins
 * for MS milliseconds (default 1000) so that the run is long enough to
 * sample whatever the speed of the machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void chain_leaf(double ms)
{
	double end = now_ms() + ms;

	do {
		for (int i = 0; i < 20000; i++)
			sink += i ^ (sink >> 3);
	} while (now_ms() < end);
}

__attribute__((noinline)) void chain_c(double ms) { chain_leaf(ms); sink++; }
__attribute__((noinline)) void chain_b(double ms) { chain_c(ms); sink++; }
__attribute__((noinline)) void chain_a(double ms) { chain_b(ms); sink++; }

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 1000;

	if (argc > 2 || ms <= 0) {
		fprintf(stderr, "usage: %s [MILLISECONDS]\n", argv[0]);
		return 2;
	}
	chain_a(ms);
	return 0;
}
