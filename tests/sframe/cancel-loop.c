// SPDX-License-Identifier: GPL-2.0
/*
 * cancel-loop.c - cancel threads while they are inside dlopen() and
 * dlclose(), for the sframe-audit.so test.
 *
 * Usage: cancel-loop N LIB
 *        cancel-loop -x T LIB
 *
 * N times: a thread dlopen()s and dlclose()s LIB over and over, with
 * deferred cancellation enabled; the main thread lets it run for a few
 * hundred microseconds, cancels it and joins it.  An audit module whose
 * callbacks reach a cancellation point (open(), pread(), ...) lets the
 * thread unwind from inside the loader with the loader's lock held: the
 * next dlopen() anywhere blocks for ever.  So this either finishes ("N
 * cycles"), or hangs and the test's timeout says so.
 *
 * With -x, T threads dlopen() (half of them dlmopen()) and dlclose() LIB
 * over and over while the main thread exits: _dl_fini() calls la_objclose() for every object
 * without the loader's lock, while the threads' la_objopen() may still
 * grow the module's table.  Exit status 0, unless that crashes.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *lib;

#define CHURN_NEWNS	1	/* dlmopen() into a new namespace */
#define CHURN_TOLERANT	2	/* a failed dlopen is tried again */

static void *churn(void *arg)
{
	uintptr_t how = (uintptr_t)arg;

	for (;;) {
		void *h = how & CHURN_NEWNS ?
			  dlmopen(LM_ID_NEWLM, lib, RTLD_NOW) :
			  dlopen(lib, RTLD_NOW | RTLD_LOCAL);

		/*
		 * Namespaces loading libc at once may run out of static TLS
		 * ("cannot allocate memory in static TLS block"): that is the
		 * loader's limit, not what -x tests.
		 */
		if (!h && (how & CHURN_TOLERANT))
			continue;
		if (!h) {
			fprintf(stderr, "cancel-loop: %s\n", dlerror());
			exit(1);
		}
		dlclose(h);
		pthread_testcancel();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec ts;
	pthread_t t;
	long i, n;
	void *h;

	if (argc == 4 && !strcmp(argv[1], "-x") && (n = atol(argv[2])) > 0) {
		lib = argv[3];
		for (i = 0; i < n; i++) {
			/* half of them in dlmopen() namespaces */
			if (pthread_create(&t, NULL, churn,
					   (void *)(uintptr_t)(CHURN_TOLERANT |
							       (i & 1)))) {
				perror("cancel-loop: pthread_create");
				return 1;
			}
		}
		ts.tv_sec = 0;
		ts.tv_nsec = 2000000;
		nanosleep(&ts, NULL);
		exit(0);
	}
	if (argc != 3 || (n = atol(argv[1])) < 1) {
		fprintf(stderr, "Usage: cancel-loop N LIB | -x THREADS LIB\n");
		return 1;
	}
	lib = argv[2];
	srand(getpid());
	for (i = 0; i < n; i++) {
		if (pthread_create(&t, NULL, churn, NULL)) {
			perror("cancel-loop: pthread_create");
			return 1;
		}
		ts.tv_sec = 0;
		ts.tv_nsec = 100000 + rand() % 400000;
		nanosleep(&ts, NULL);
		pthread_cancel(t);
		pthread_join(t, NULL);
	}
	/* the loader's lock must be free */
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "cancel-loop: %s\n", dlerror());
		return 1;
	}
	dlclose(h);
	printf("%ld cycles\n", n);
	return 0;
}
