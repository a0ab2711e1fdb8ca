// SPDX-License-Identifier: GPL-2.0
/*
 * soak-procs - tasks that come and go while perf samples them with
 * deferred user callchains, each in a known chain of calls:
 *
 *   threads  threads created and ended over and over, 1 to 6 at a time:
 *            pt_thread -> pt_a -> pt_work, which mixes computing with
 *            system calls (getppid, sched_yield, a short nanosleep);
 *            some are joined, some detached, some end with pthread_exit()
 *            from the middle of their work
 *   texec    a child process whose second thread execs (so that the
 *            kernel makes it the group leader, under its new pid) while
 *            the first thread is in a system call loop; the new image
 *            (mode "leaf") computes a little and exits
 *   fork     children that compute and make system calls, some exiting
 *            by themselves, some killed by SIGKILL in the middle, some
 *            stopped and continued first
 *   leaf     compute ~1 ms in fk_a -> fk_work and exit (the exec target)
 *
 * Usage: soak-procs MODE [MS]: runs MODE for MS milliseconds (1000).
 * SIGUSR1 runs a handler that computes.  Exit 0, or 1 with a message.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *prog = "soak-procs";

#include "soak.h"

static const char *self;
static double end_ms;
static __thread unsigned long rnd;

static unsigned long xorshift(void)
{
	if (!rnd)
		rnd = 88172645463325252UL ^ (unsigned long)syscall(SYS_gettid) ^
		      (unsigned long)(now_ms() * 1000);
	rnd ^= rnd << 13;
	rnd ^= rnd >> 7;
	rnd ^= rnd << 17;
	return rnd;
}

/* compute and make system calls for about MS milliseconds */
__attribute__((noinline)) static void pt_work(double ms, int may_exit)
{
	double end = now_ms() + ms;
	struct timespec ts = { 0, 20000 };

	while (now_ms() < end) {
		switch (xorshift() % 8) {
		case 0:
		case 1:
		case 2:
			syscall(SYS_getppid);
			break;
		case 3:
			sched_yield();
			break;
		case 4:
			nanosleep(&ts, NULL);
			break;
		default:
			spin(3000);
		}
		if (may_exit && !(xorshift() % 64))
			pthread_exit(NULL);
	}
}

__attribute__((noinline)) static void pt_a(double ms, int may_exit)
{
	pt_work(ms, may_exit);
	sink++;
}

static void *pt_thread(void *arg)
{
	unsigned long v = (unsigned long)arg;

	pt_a(v % 6, v & 8);
	return NULL;
}

static int mode_threads(void)
{
	unsigned long created = 0;

	while (now_ms() < end_ms) {
		int i, k = 1 + xorshift() % 6;
		pthread_t th[6];
		int join[6];

		for (i = 0; i < k; i++) {
			pthread_attr_t a;

			join[i] = xorshift() % 4 != 0;
			pthread_attr_init(&a);
			if (!join[i])
				pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
			errno = pthread_create(&th[i], &a, pt_thread, (void *)xorshift());
			pthread_attr_destroy(&a);
			if (errno) {
				if (errno == EAGAIN)	/* detached ones still ending */
					continue;
				die("pthread_create");
			}
			created++;
		}
		pt_a(1, 0);
		for (i = 0; i < k; i++)
			if (join[i] && (errno = pthread_join(th[i], NULL)))
				die("pthread_join");
	}
	printf("%s: threads: %lu threads\n", prog, created);
	return 0;
}

/* texec: the second thread of the child execs */
static void *exec_thread(void *arg)
{
	(void)arg;
	pt_a(0.2 + xorshift() % 2, 0);
	execl(self, self, "leaf", (char *)NULL);
	die("execl");
	return NULL;
}

__attribute__((noinline)) static void fk_work(double ms)
{
	double end = now_ms() + ms;

	while (now_ms() < end) {
		spin(2000);
		syscall(SYS_getppid);
	}
}

__attribute__((noinline)) static void fk_a(double ms)
{
	fk_work(ms);
	sink++;
}

static int reap(pid_t pid, int want_kill)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		die("waitpid");
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (want_kill && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		return 0;
	fprintf(stderr, "%s: child %d: status %#x\n", prog, pid, st);
	return 1;
}

static int mode_texec(void)
{
	unsigned long n = 0;

	while (now_ms() < end_ms) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (!pid) {
			pthread_t th;

			if ((errno = pthread_create(&th, NULL, exec_thread, NULL)))
				die("pthread_create");
			for (;;)	/* until the exec ends this thread */
				pt_work(1, 0);
		}
		if (reap(pid, 0))
			return 1;
		n++;
	}
	printf("%s: texec: %lu execs from a second thread\n", prog, n);
	return 0;
}

static int mode_fork(void)
{
	unsigned long n = 0, killed = 0;

	while (now_ms() < end_ms) {
		int how = xorshift() % 4;
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (!pid) {
			fk_a(how ? 5 : 1);
			_exit(0);
		}
		if (how >= 2) {
			struct timespec ts = { 0, 500000 + xorshift() % 1000000 };

			nanosleep(&ts, NULL);
			if (how == 3) {
				kill(pid, SIGSTOP);
				nanosleep(&ts, NULL);
				kill(pid, SIGCONT);
			}
			kill(pid, SIGKILL);
			killed++;
		}
		if (reap(pid, how >= 2))
			return 1;
		n++;
	}
	printf("%s: fork: %lu children, %lu killed\n", prog, n, killed);
	return 0;
}

int main(int argc, char **argv)
{
	static char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (len <= 0)
		die("/proc/self/exe");
	self = exe;
	if (argc < 2) {
		fprintf(stderr, "usage: soak-procs threads|texec|fork|leaf [MS]\n");
		return 2;
	}
	signal(SIGUSR1, on_usr1);
	end_ms = now_ms() + (argc > 2 ? atof(argv[2]) : 1000);
	if (!strcmp(argv[1], "threads"))
		return mode_threads();
	if (!strcmp(argv[1], "texec"))
		return mode_texec();
	if (!strcmp(argv[1], "fork"))
		return mode_fork();
	if (!strcmp(argv[1], "leaf")) {
		fk_a(1);
		return 0;
	}
	fprintf(stderr, "%s: unknown mode '%s'\n", prog, argv[1]);
	return 2;
}
