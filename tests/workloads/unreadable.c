// SPDX-License-Identifier: GPL-2.0
/*
 * unreadable - a program whose own .sframe is unreadable for a while:
 *
 *   main -> ur_a -> ur_b -> ur_toggled (spins MS ms) while a thread makes
 *           the pages of its PT_GNU_SFRAME PROT_NONE for 10 ms, readable
 *           for 10 ms, and so on;
 *   main -> ur_a -> ur_b -> ur_after (spins MS ms), readable.
 *
 * A kernel that unwinds it with SFrame faults on the section in the
 * first phase, and must find it again in the second: a section that
 * could not be read is not a bad one.  Built without frame pointers, with
 * an injected section (unreadable-sframe3).  Usage: unreadable [MS]
 * (default 500).
 */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME 0x6474e554
#endif

volatile unsigned long sink;
static atomic_int toggling = 1;
static uintptr_t sf_start, sf_end;
static unsigned long nr_toggles;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline __attribute__((always_inline)) void spin(double ms)
{
	double end = now_ms() + ms;

	do {
		for (int i = 0; i < 20000; i++)
			sink += i ^ (sink >> 3);
	} while (now_ms() < end);
}

__attribute__((noinline)) void ur_toggled(double ms) { spin(ms); sink++; }
__attribute__((noinline)) void ur_after(double ms) { spin(ms); sink++; }
__attribute__((noinline)) void ur_b(void (*leaf)(double), double ms) { leaf(ms); sink++; }
__attribute__((noinline)) void ur_a(void (*leaf)(double), double ms) { ur_b(leaf, ms); sink++; }

/* The program is the first object dl_iterate_phdr() reports. */
static int find_sframe(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t page = sysconf(_SC_PAGESIZE);

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_GNU_SFRAME)
			continue;
		sf_start = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
		sf_end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + page - 1) & ~(page - 1);
	}
	return 1;
}

static void protect(int prot)
{
	if (mprotect((void *)sf_start, sf_end - sf_start, prot)) {
		perror("unreadable: mprotect");
		exit(1);
	}
}

static void *toggle(void *arg)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	while (atomic_load(&toggling)) {
		protect(PROT_NONE);
		nanosleep(&ts, NULL);
		protect(PROT_READ);
		nanosleep(&ts, NULL);
		nr_toggles++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 500;
	pthread_t t;

	if (argc > 2 || ms <= 0) {
		fprintf(stderr, "usage: %s [MILLISECONDS]\n", argv[0]);
		return 2;
	}
	dl_iterate_phdr(find_sframe, NULL);
	if (!sf_start) {
		fprintf(stderr, "%s: no PT_GNU_SFRAME\n", argv[0]);
		return 1;
	}
	if (pthread_create(&t, NULL, toggle, NULL)) {
		fprintf(stderr, "unreadable: pthread_create failed\n");
		return 1;
	}
	ur_a(ur_toggled, ms);
	atomic_store(&toggling, 0);
	pthread_join(t, NULL);
	printf("unreadable: .sframe pages %#lx-%#lx made unreadable %lu times\n",
	       (unsigned long)sf_start, (unsigned long)sf_end, nr_toggles);
	ur_a(ur_after, ms);
	return 0;
}
