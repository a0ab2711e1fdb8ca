// SPDX-License-Identifier: GPL-2.0
/*
 * sig32 - an IA-32 task interrupted by signals, for the signal frames of
 * both kinds:
 *
 *   main -> sg_a -> sg_spin, which spins until MS / 2 signals have been
 *   handled: SIGALRM, every 2 ms, whose handler sg_handler -> sg_leaf
 *   spins for 0.5 ms if it interrupted sg_spin (no calls: a sample is in
 *   one of them, not in libc; the loop count for 0.5 ms is measured at
 *   start, so that a quarter of the time is in sg_leaf on any host);
 *
 * the handler installed with SA_SIGINFO ("rt": an rt_sigframe, libc's
 * __restore_rt) or without ("legacy": a sigframe, libc's __restore, which
 * calls sigreturn).  Built with frame pointers, -m32.  Usage: sig32
 * rt|legacy [MS] (default 500).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

volatile unsigned long sink;
static volatile unsigned long handled;
static volatile int in_spin;
static volatile unsigned long leaf_loops = 100000;

/* No calls: the interrupted IP is in the caller of spin(), not in libc. */
static inline __attribute__((always_inline)) void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
}

__attribute__((noinline)) void sg_leaf(void) { spin(leaf_loops); sink++; }
/* Only a signal that interrupted sg_spin spins: the chain is known. */
__attribute__((noinline)) void sg_handler(int sig)
{
	if (in_spin)
		sg_leaf();
	handled++;
	(void)sig;
}

__attribute__((noinline)) void sg_handler_info(int sig, siginfo_t *si, void *uc)
{
	if (in_spin)
		sg_leaf();
	handled++;
	(void)sig; (void)si; (void)uc;
}

/* Until @signals have been handled. */
__attribute__((noinline)) void sg_spin(unsigned long signals)
{
	in_spin = 1;
	while (handled < signals)
		spin(1000);
	in_spin = 0;
	sink++;
}

__attribute__((noinline)) void sg_a(unsigned long signals) { sg_spin(signals); sink++; }

/* leaf_loops: the loops of 0.5 ms, from a run of at least 20 ms. */
static void calibrate(void)
{
	unsigned long n = 1000;
	struct timespec a, b;
	double ns;

	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		spin(n);
		clock_gettime(CLOCK_MONOTONIC, &b);
		ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
		if (ns >= 20e6)
			break;
		n *= 2;
	}
	leaf_loops = n * (500e3 / ns) + 1;
}

int main(int argc, char **argv)
{
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
	struct sigaction sa;
	unsigned long ms;

	if (argc < 2 || (strcmp(argv[1], "rt") && strcmp(argv[1], "legacy"))) {
		fprintf(stderr, "usage: sig32 rt|legacy [MS]\n");
		return 2;
	}
	ms = argc > 2 ? strtoul(argv[2], NULL, 0) : 500;
	calibrate();
	memset(&sa, 0, sizeof(sa));
	if (!strcmp(argv[1], "rt")) {
		sa.sa_sigaction = sg_handler_info;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
	} else {
		sa.sa_handler = sg_handler;
		sa.sa_flags = SA_RESTART;
	}
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL)) {
		perror("sig32");
		return 1;
	}
	sg_a(ms / 2);
	it = (struct itimerval){ 0 };
	setitimer(ITIMER_REAL, &it, NULL);
	printf("sig32 %s: %lu signals handled\n", argv[1], handled);
	return 0;
}
