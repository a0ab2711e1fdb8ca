// SPDX-License-Identifier: GPL-2.0
/*
 * defer-mig - threads that move between CPUs 0 and 1 inside their kernel
 * entries, each on a known chain whose leaf makes a raw system call (the
 * syscall instruction is in the leaf, so that a frame-pointer walk from
 * the user registers of the entry gives the whole chain):
 *
 *   mg-read  mg_reader -> rd_a -> rd_b -> rd_leaf: read() of 256 KiB of
 *            /dev/zero, again and again, so that nearly all its time is
 *            in the kernel, where mg-ctl moves it to the other CPU
 *   mg-pin   mg_pinner -> pn_a -> pn_leaf: sched_setaffinity() of itself
 *            to the other CPU (it enters on one CPU and returns to user
 *            space on the other), then pn_a -> pn_spin computes
 *   mg-ctl   main -> ct_loop -> ct_move: sched_setaffinity() of mg-read
 *            to the other CPU, then ct_loop -> ct_nap: nanosleep() of
 *            200 us, woken on whichever CPU is free
 *   mg-late  (a child process, with FIFO only) main -> mg_late -> lt_leaf:
 *            on CPU 0, an open() of FIFO, which blocks until a writer
 *            opens it: after the run, when no perf session is left to
 *            get the record of that entry
 *
 * The thread functions and main end the frame-pointer chain (FP_ROOT_BEGIN),
 * so that the user stack of an entry from a leaf is its chain and one frame
 * of libc.so.6 (start_thread, __libc_start_call_main).
 *
 * Usage: defer-mig [MS [FIFO]]: runs for MS milliseconds (default 1000).
 * Needs CPUs 0 and 1; exit 1 if a system call fails.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "defer-common.h"

volatile unsigned long sink;
static volatile int stop;
static volatile pid_t reader_tid;
static int zero_fd;
static char buf[256 << 10];

static void die(const char *what, long ret)
{
	fprintf(stderr, "defer-mig: %s: error %ld\n", what, -ret);
	exit(1);
}

/* mg-read */

/* The leaves only make the system call: see raw_syscall3(). */
__attribute__((noinline)) long rd_leaf(void)
{
	return raw_syscall3(SYS_read, zero_fd, (long)buf, sizeof(buf));
}

__attribute__((noinline)) void rd_b(void)
{
	long ret = rd_leaf();

	if (ret != sizeof(buf))
		die("read /dev/zero", ret);
}

__attribute__((noinline)) void rd_a(void) { rd_b(); sink++; }

__attribute__((noinline)) void *mg_reader(void *arg)
{
	FP_ROOT_BEGIN();

	prctl(PR_SET_NAME, "mg-read");
	reader_tid = gettid();
	while (!stop)
		rd_a();
	FP_ROOT_END();
	return arg;
}

/* mg-pin */

__attribute__((noinline)) long pn_leaf(const cpu_set_t *set)
{
	return raw_syscall3(SYS_sched_setaffinity, 0, sizeof(*set), (long)set);
}

__attribute__((noinline)) void pn_spin(void)
{
	unsigned long i, x = sink;

	FRAME();
	for (i = 0; i < 20000; i++)
		x = x * 2862933555777941757UL + 3037000493UL;
	sink = x;
}

__attribute__((noinline)) void pn_a(int cpu)
{
	cpu_set_t set;
	long ret;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ret = pn_leaf(&set);
	if (ret)
		die("sched_setaffinity self", ret);
	pn_spin();
}

__attribute__((noinline)) void *mg_pinner(void *arg)
{
	int cpu = 0;

	FP_ROOT_BEGIN();
	prctl(PR_SET_NAME, "mg-pin");
	while (!stop) {
		pn_a(cpu);
		cpu ^= 1;
	}
	FP_ROOT_END();
	return arg;
}

/* mg-late */

__attribute__((noinline)) long lt_leaf(const char *path)
{
	return raw_syscall3(SYS_openat, AT_FDCWD, (long)path, O_RDONLY);
}

__attribute__((noinline)) void mg_late(const char *fifo)
{
	cpu_set_t set;
	long fd;

	prctl(PR_SET_NAME, "mg-late");
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity mg-late", -1);
	fd = lt_leaf(fifo);
	if (fd < 0)
		die("open FIFO", fd);
	close(fd);
}

/* mg-ctl */

__attribute__((noinline)) long ct_move(const cpu_set_t *set)
{
	return raw_syscall3(SYS_sched_setaffinity, reader_tid, sizeof(*set), (long)set);
}

__attribute__((noinline)) long ct_nap(const struct timespec *ts)
{
	return raw_syscall3(SYS_nanosleep, (long)ts, 0, 0);
}

__attribute__((noinline)) void ct_loop(double end)
{
	struct timespec now, nap = { 0, 200000 };
	cpu_set_t set;
	int cpu = 0;
	long ret;

	do {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		ret = ct_move(&set);
		if (ret)
			die("sched_setaffinity mg-read", ret);
		ct_nap(&nap);
		cpu ^= 1;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec + now.tv_nsec / 1e9 < end);
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 1000;
	struct timespec now;
	pthread_t rd, pn;

	if (argc > 3 || ms <= 0) {
		fprintf(stderr, "usage: %s [MILLISECONDS [FIFO]]\n", argv[0]);
		return 2;
	}
	zero_fd = open("/dev/zero", O_RDONLY);
	if (zero_fd < 0) {
		perror("defer-mig: /dev/zero");
		return 1;
	}
	if (pthread_create(&rd, NULL, mg_reader, NULL) ||
	    pthread_create(&pn, NULL, mg_pinner, NULL)) {
		perror("defer-mig: pthread_create");
		return 1;
	}
	FP_ROOT_BEGIN();
	if (argc > 2) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork", -1);
		if (!pid) {
			mg_late(argv[2]);
			_exit(0);
		}
	}
	while (!reader_tid)
		sched_yield();
	prctl(PR_SET_NAME, "mg-ctl");
	clock_gettime(CLOCK_MONOTONIC, &now);
	ct_loop(now.tv_sec + now.tv_nsec / 1e9 + ms / 1e3);
	stop = 1;
	pthread_join(rd, NULL);
	pthread_join(pn, NULL);
	FP_ROOT_END();
	return 0;
}
