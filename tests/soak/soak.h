/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the soak load generators share. Each defines its name,
 *	static const char *prog = "soak-...";
 * before including this.
 */
#ifndef SOAK_H
#define SOAK_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
	exit(1);
}

/* Compute: N steps of an LCG that the compiler can't drop. */
__attribute__((noinline, unused)) static void spin(unsigned long n)
{
	unsigned long i, x = sink;

	for (i = 0; i < n; i++)
		x = x * 2862933555777941757UL + 3037000493UL;
	sink = x;
}

/* SIGUSR1 (soak.sh's signals load): a handler that computes. */
__attribute__((noinline)) static void usr_leaf(void)
{
	spin(20000);
}

__attribute__((unused)) static void on_usr1(int sig)
{
	(void)sig;
	usr_leaf();
}

#endif /* SOAK_H */
