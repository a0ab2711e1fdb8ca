// SPDX-License-Identifier: GPL-2.0
/*
 * soak-dlopen - shared objects with SFrame loaded and unloaded by two
 * threads at once, run under LD_AUDIT=sframe-audit.so (which registers
 * each with PR_ADD_SFRAME at dlopen; dlclose unmaps the text, the kernel
 * drops the section with it, and the module's PR_REMOVE_SFRAME after that
 * gets ENOENT).
 *
 * Usage: soak-dlopen MS LIB...
 *
 * Each thread, until MS milliseconds have passed: dlopen a LIB at random
 * (RTLD_NOW | RTLD_LOCAL), call its loop_entry(20000) for about half a
 * millisecond, with a getppid() between calls, dlclose.  The two
 * threads' handles share one mapping while both hold it, so the last
 * dlclose, by either, unmaps it while the other may have just been
 * sampled in it.  SIGUSR1 runs a handler that computes.  Exit 0, or 1
 * with a message.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *prog = "soak-dlopen";

#include "soak.h"

static double end_ms;
static char **libs;
static int nlibs;

__attribute__((noinline)) static void call_lib(void (*fn)(int))
{
	double t0 = now_ms();

	do {
		fn(20000);
		syscall(SYS_getppid);
	} while (now_ms() - t0 < 0.5);
}

static void *loader(void *arg)
{
	unsigned long s = (unsigned long)arg, n = 0;

	while (now_ms() < end_ms) {
		const char *lib;
		void (*fn)(int);
		void *h;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		lib = libs[s % nlibs];
		h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "%s: %s\n", prog, dlerror());
			exit(1);
		}
		fn = (void (*)(int))dlsym(h, "loop_entry");
		if (!fn) {
			fprintf(stderr, "%s: %s: no loop_entry\n", prog, lib);
			exit(1);
		}
		call_lib(fn);
		if (dlclose(h)) {
			fprintf(stderr, "%s: %s: dlclose: %s\n", prog, lib, dlerror());
			exit(1);
		}
		n++;
	}
	return (void *)n;
}

int main(int argc, char **argv)
{
	pthread_t th;
	void *n1, *n2;

	if (argc < 3) {
		fprintf(stderr, "usage: soak-dlopen MS LIB...\n");
		return 2;
	}
	end_ms = now_ms() + atof(argv[1]);
	libs = argv + 2;
	nlibs = argc - 2;
	signal(SIGUSR1, on_usr1);
	if (pthread_create(&th, NULL, loader, (void *)(88172645463325252UL ^ getpid())))
		return perror("pthread_create"), 1;
	n1 = loader((void *)(2463534242UL * getpid()));
	pthread_join(th, &n2);
	printf("%s: %lu dlopen/dlclose\n", prog, (unsigned long)n1 + (unsigned long)n2);
	return 0;
}
