// SPDX-License-Identifier: GPL-2.0
/*
 * defer-deep - user stacks of a known depth, for the limits of deferred
 * callchains: one thread per DEPTH argument, named dp-DEPTH:
 *
 *   dp_thread -> dp_top -> dp_rec(DEPTH) -> ... -> dp_rec(0) -> dp_leaf
 *
 * dp_leaf loops, calling nothing else, until the thread has used MS
 * milliseconds of CPU time: a raw read() of 64 KiB of /dev/zero (samples
 * in the kernel), then a computation (samples in user space).  CPU time
 * and not wall time, so that a thread that waits for a CPU in a busy
 * (virtual) machine still gets its share of samples of a cpu-clock event.  So nearly every sample of the thread is in dp_leaf,
 * where its user stack is dp_leaf, DEPTH + 1 dp_rec, dp_top, dp_thread and
 * one frame of libc.so.6 (start_thread, where dp_thread ends the frame
 * pointer chain): DEPTH + 5 frames.
 *
 * A DEPTH of "cycle" makes a thread dp-cycle that reads /dev/zero with
 * %rbp pointing at a frame whose saved frame pointer is its own address
 * (as glibc's clone3() leaves %rbp at a struct pthread, whose first word
 * points to itself): a frame-pointer walk from its entries goes round
 * and round, and must stop at its bound.
 *
 * Usage: defer-deep [-w] MS DEPTH...: each dp-DEPTH thread runs until it
 * has used MS milliseconds of CPU time, dp-cycle threads until those have
 * ended and at least MS milliseconds have passed.
 * With -w, waits for SIGUSR1 before starting them (for perf sessions that
 * attach to it first).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "defer-common.h"

#define MAX_THREADS	8
#define MAX_DEPTH	10000

volatile unsigned long sink;
static volatile int stop;
static int zero_fd;

static long long budget_ns;

__attribute__((noinline)) void dp_leaf(void)
{
	static char buf[64 << 10];
	unsigned long i, x;
	struct timespec ts;

	FRAME();
	for (;;) {
		/* raw: the user IP of every entry is in dp_leaf */
		if (raw_syscall3(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, (long)&ts, 0) ||
		    ts.tv_sec * 1000000000LL + ts.tv_nsec >= budget_ns)
			break;
		if (raw_syscall3(SYS_read, zero_fd, (long)buf, sizeof(buf)) != sizeof(buf))
			sink++;
		x = sink;
		for (i = 0; i < 20000; i++)
			x = x * 2862933555777941757UL + 3037000493UL;
		sink = x;
	}
}

/* read(fd, buf, size) with %rbp = frame */
long dp_cycle_read(long fd, void *buf, unsigned long size, void *frame);
asm (".pushsection .text\n"
     ".globl dp_cycle_read\n"
     ".type dp_cycle_read, @function\n"
     "dp_cycle_read:\n"
     "	push %rbp\n"
     "	mov %rcx, %rbp\n"
     "	xor %eax, %eax\n"	/* SYS_read */
     "	syscall\n"
     "	pop %rbp\n"
     "	ret\n"
     ".size dp_cycle_read, .-dp_cycle_read\n"
     ".popsection\n");

__attribute__((noinline)) void *dp_cycle(void *arg)
{
	static char buf[64 << 10];
	void *volatile frame[2];

	prctl(PR_SET_NAME, "dp-cycle");
	frame[0] = (void *)frame;
	frame[1] = NULL;
	while (!stop)
		dp_cycle_read(zero_fd, buf, sizeof(buf), (void *)frame);
	return arg;
}

__attribute__((noinline)) unsigned long dp_rec(int n)
{
	volatile unsigned long pad[3] = { (unsigned long)n, 0, 0 };

	if (n == 0)
		dp_leaf();
	else
		pad[1] = dp_rec(n - 1);
	return pad[0] + pad[1] + pad[2];
}

__attribute__((noinline)) void dp_top(int depth)
{
	sink += dp_rec(depth);
}

__attribute__((noinline)) void *dp_thread(void *arg)
{
	int depth = (int)(long)arg;
	char name[16];

	FP_ROOT_BEGIN();
	snprintf(name, sizeof(name), "dp-%d", depth);
	prctl(PR_SET_NAME, name);
	dp_top(depth);
	FP_ROOT_END();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[MAX_THREADS];
	struct timespec ts;
	int i, n, first = 1;
	double ms;

	if (argc > 1 && !strcmp(argv[1], "-w")) {
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		if (sigwait(&set, &sig)) {
			perror("defer-deep: sigwait");
			return 1;
		}
		first = 2;
	}
	n = argc - first - 1;
	if (n < 1 || n > MAX_THREADS) {
		fprintf(stderr, "usage: %s [-w] MILLISECONDS DEPTH... (1 to %d)\n",
			argv[0], MAX_THREADS);
		return 2;
	}
	ms = atof(argv[first]);
	budget_ns = ms * 1e6;
	zero_fd = open("/dev/zero", O_RDONLY);
	if (zero_fd < 0) {
		perror("defer-deep: /dev/zero");
		return 1;
	}
	for (i = 0; i < n; i++) {
		const char *arg = argv[first + 1 + i];
		long depth = atol(arg);

		if (!strcmp(arg, "cycle")) {
			if (pthread_create(&t[i], NULL, dp_cycle, NULL)) {
				perror("defer-deep: pthread_create");
				return 1;
			}
			continue;
		}
		if (depth < 0 || depth > MAX_DEPTH) {
			fprintf(stderr, "defer-deep: depth %ld: 0 to %d\n", depth, MAX_DEPTH);
			return 2;
		}
		if (pthread_create(&t[i], NULL, dp_thread, (void *)depth)) {
			perror("defer-deep: pthread_create");
			return 1;
		}
	}
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms - ts.tv_sec * 1000.0) * 1e6;
	nanosleep(&ts, NULL);
	for (i = 0; i < n; i++)
		if (strcmp(argv[first + 1 + i], "cycle"))
			pthread_join(t[i], NULL);
	stop = 1;
	for (i = 0; i < n; i++)
		if (!strcmp(argv[first + 1 + i], "cycle"))
			pthread_join(t[i], NULL);
	return 0;
}
