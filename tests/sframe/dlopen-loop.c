// SPDX-License-Identifier: GPL-2.0
/*
 * dlopen-loop.c - dlopen()/dlclose() shared objects over and over, for the
 * sframe-audit.so test: every dlopen is an la_objopen() (PR_ADD_SFRAME),
 * every dlclose an la_objclose() and, once unmapped, a PR_REMOVE_SFRAME.
 *
 * Usage: dlopen-loop [-q] [-m] [-a KB] [-t] N LIB...
 *
 * N times: for each LIB, dlopen(RTLD_NOW | RTLD_LOCAL) (-m: dlmopen() in
 * a new namespace, which loads a libc of its own; -t: in a new thread,
 * joined after), call its entry
 * function (loop_entry, else libvec_entry: void f(int)), dlclose.  Then
 * one pass with the first two LIBs open at once, closed in the order they
 * were opened (not LIFO).  Prints on stdout, for the test:
 *	open LIB l_addr=0x...		after each dlopen (not with -q)
 *	maps warm=N end=M		lines of /proc/self/maps
 *	rss_kb warm=N end=M		RssAnon (anonymous RSS: heap, copies)
 *	vm_kb warm=N end=M		VmSize (address space: arenas)
 * "warm" is after the first iteration, "end" after the last pass.  -a KB:
 * after each dlclose, allocate KB kB and keep it (big allocations are
 * mmap()ed: they may land where the closed library was).
 * Exit status 0, or 1 with a message naming the library.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool quiet, newns, threads;
static long keep_kb;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: dlopen-loop [-q] [-m] N LIB...\n"
		"dlopen, call loop_entry or libvec_entry, dlclose each LIB, N times;\n"
		"then the first two LIBs open at once.  -q: no \"open\" lines;\n"
		"-m: dlmopen(LM_ID_NEWLM) instead of dlopen; -t: each in a new\n"
		"thread; -a KB: keep a KB kB allocation after each dlclose.\n");
}

static void *open_lib(const char *lib)
{
	struct link_map *lm;
	void *h;

	if (newns)
		h = dlmopen(LM_ID_NEWLM, lib, RTLD_NOW | RTLD_LOCAL);
	else
		h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen-loop: %s\n", dlerror());
		exit(1);
	}
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm)) {
		fprintf(stderr, "dlopen-loop: %s: dlinfo: %s\n", lib,
			dlerror());
		exit(1);
	}
	if (!quiet)
		printf("open %s l_addr=%#lx\n", lib, (unsigned long)lm->l_addr);
	return h;
}

static void call_lib(void *h, const char *lib)
{
	void (*fn)(int);

	fn = (void (*)(int))dlsym(h, "loop_entry");
	if (!fn)
		fn = (void (*)(int))dlsym(h, "libvec_entry");
	if (!fn) {
		fprintf(stderr, "dlopen-loop: %s: no loop_entry or libvec_entry\n",
			lib);
		exit(1);
	}
	fn(100);
}

static void close_lib(void *h, const char *lib)
{
	if (dlclose(h)) {
		fprintf(stderr, "dlopen-loop: %s: dlclose: %s\n", lib,
			dlerror());
		exit(1);
	}
}

static long count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	long n = 0;
	int c;

	if (!f) {
		perror("dlopen-loop: /proc/self/maps");
		exit(1);
	}
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static long status_kb(const char *field)
{
	FILE *f = fopen("/proc/self/status", "re");
	size_t n = strlen(field);
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':' &&
		    sscanf(line + n + 1, "%ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void once(const char *lib)
{
	void *h = open_lib(lib);
	char *p;

	call_lib(h, lib);
	close_lib(h, lib);
	if (keep_kb) {
		p = malloc(keep_kb * 1024);
		if (!p) {
			perror("dlopen-loop: malloc");
			exit(1);
		}
		memset(p, 1, 4096);	/* kept for good */
	}
}

static void *once_thread(void *lib)
{
	once(lib);
	return NULL;
}

int main(int argc, char **argv)
{
	long maps_warm = 0, rss_warm = 0, vm_warm = 0, i, n;
	int first = 1, j;
	void *h0, *h1;
	char *end;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	for (; first < argc && argv[first][0] == '-'; first++) {
		if (!strcmp(argv[first], "-q")) {
			quiet = true;
		} else if (!strcmp(argv[first], "-m")) {
			newns = true;
		} else if (!strcmp(argv[first], "-t")) {
			threads = true;
		} else if (!strcmp(argv[first], "-a") && first + 1 < argc) {
			keep_kb = atol(argv[++first]);
		} else {
			usage(stderr);
			return 1;
		}
	}
	if (argc < first + 2) {
		usage(stderr);
		return 1;
	}
	n = strtol(argv[first], &end, 10);
	if (*end || n < 1) {
		fprintf(stderr, "dlopen-loop: N must be a positive number, not '%s'\n",
			argv[first]);
		return 1;
	}
	argv += first + 1;
	argc -= first + 1;
	for (i = 0; i < n; i++) {
		for (j = 0; j < argc; j++) {
			pthread_t t;

			if (!threads) {
				once(argv[j]);
			} else if (pthread_create(&t, NULL, once_thread, argv[j]) ||
				   pthread_join(t, NULL)) {
				perror("dlopen-loop: pthread_create");
				return 1;
			}
		}
		if (i == 0) {
			maps_warm = count_maps();
			rss_warm = status_kb("RssAnon");
			vm_warm = status_kb("VmSize");
		}
	}
	if (argc >= 2) {
		h0 = open_lib(argv[0]);
		h1 = open_lib(argv[1]);
		call_lib(h0, argv[0]);
		call_lib(h1, argv[1]);
		close_lib(h0, argv[0]);
		close_lib(h1, argv[1]);
	}
	printf("maps warm=%ld end=%ld\n", maps_warm, count_maps());
	printf("rss_kb warm=%ld end=%ld\n", rss_warm, status_kb("RssAnon"));
	printf("vm_kb warm=%ld end=%ld\n", vm_warm, status_kb("VmSize"));
	return 0;
}
