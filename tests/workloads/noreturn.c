// SPDX-License-Identifier: GPL-2.0
/*
 * noreturn - callers whose last instruction is the call of a function
 * that doesn't return: their return address is the first byte of the
 * function after them in the text (no padding: -falign-functions=1).
 *
 *   main -> nr_outer -> nr_middle -> nr_spin, which makes getppid() system
 *   calls for MS milliseconds (default 1000), then _exit(0)
 *
 * nr_after_middle follows nr_middle, nr_after_outer follows nr_outer.  A
 * return address symbolized as it is names those instead of the callers.
 *
 * Usage: noreturn [MS]
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static long deadline;

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* getppid() right here: the samples in the system call have nr_spin on top */
__attribute__((noreturn, noinline)) void nr_spin(void)
{
	unsigned long n;
	long ret;

	for (n = 0;; n++) {
		asm volatile("syscall" : "=a" (ret) : "0" ((long)SYS_getppid)
			     : "rcx", "r11", "memory");
		if (n % 256 == 0 && now_ns() > deadline)
			_exit(0);
	}
}

__attribute__((noreturn, noinline)) void nr_middle(void)
{
	asm volatile("" ::: "memory");
	nr_spin();
}

__attribute__((noinline)) int nr_after_middle(int x)
{
	return x * 3 + 1;
}

__attribute__((noreturn, noinline)) void nr_outer(void)
{
	asm volatile("" ::: "memory");
	nr_middle();
}

__attribute__((noinline)) int nr_after_outer(int x)
{
	return x * 5 + 2;
}

int main(int argc, char **argv)
{
	deadline = now_ns() + (argc > 1 ? atol(argv[1]) : 1000) * 1000000L;
	/* Keeps the functions after the callers. */
	if (argc > 2)
		return nr_after_middle(argc) + nr_after_outer(argc);
	nr_outer();
}
