// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-replace - a section found bad by a walk that waited on a page
 * fault, while the section was replaced by another for the same text
 * (tests/guest/84): the kernel must remove what the walk read, or nothing,
 * never the new section.
 *
 * Usage: sframe-replace control|replace, under perf record --call-graph
 * fp,defer (whose deferred unwinds do the walks).
 *
 * A thread spins in a page of text made here (jmp .), described by
 * section S1, whose rows are on a page held by userfaultfd: the first
 * unwind of the spinning thread faults there and waits.  Then:
 *  control: the page is filled with a bad row (mangled RA); the walk
 *           finds S1 bad and removes it: PR_REMOVE_SFRAME(S1) is ENOENT.
 *  replace: S1 is removed, and once kfree_rcu() has freed its record,
 *           S2 (good, other data) is registered for the same text, so
 *           that its record is likely S1's again; then the page is filled
 *           with the bad row: the walk finds the S1 it read bad, which is
 *           gone, and must leave S2 alone: PR_REMOVE_SFRAME(S2) is 0.
 * Prints what it did; exit status 0 if so, 1 if not, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sframe-section.h"

#ifndef PR_ADD_SFRAME
#define PR_ADD_SFRAME		79
#define PR_REMOVE_SFRAME	80
#endif

static size_t page;
static uint8_t *text;

static void die(const char *what)
{
	fprintf(stderr, "sframe-replace: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int add(uint8_t *sf)
{
	return prctl(PR_ADD_SFRAME, (unsigned long)sf,
		     (unsigned long)sf + SF_SIZE,
		     (unsigned long)text, (unsigned long)text + page);
}

static int del(uint8_t *sf)
{
	return prctl(PR_REMOVE_SFRAME, (unsigned long)sf, 0, 0, 0);
}

static void *spin(void *arg)
{
	((void (*)(void))text)();
	return arg;
}

int main(int argc, char **argv)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_copy copy = { 0 };
	struct uffd_msg msg;
	struct pollfd pfd;
	uint8_t *data, *s1, *s2, *rows;
	bool replace;
	cpu_set_t cpus;
	pthread_t t;
	int uffd;

	if (argc != 2 || (strcmp(argv[1], "control") && strcmp(argv[1], "replace"))) {
		fprintf(stderr, "usage: sframe-replace control|replace\n");
		return 2;
	}
	replace = !strcmp(argv[1], "replace");
	page = sysconf(_SC_PAGESIZE);

	/* One CPU: S1's record is freed where S2's is allocated. */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		die("sched_setaffinity");

	text = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (text == MAP_FAILED)
		die("mmap text");
	text[0] = 0xeb;		/* jmp . */
	text[1] = 0xfe;
	if (mprotect(text, page, PROT_READ | PROT_EXEC))
		die("mprotect text");

	/* Page 0: S1's header and index; page 1: S1's rows; page 2: S2. */
	data = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (data == MAP_FAILED)
		die("mmap data");
	rows = data + page;
	s1 = rows - SF_INDEX_SIZE;
	sf_write(s1, (uintptr_t)text, SF_FRE_INFO_GOOD);
	s2 = data + 2 * page;
	sf_write(s2, (uintptr_t)text, SF_FRE_INFO_GOOD);
	if (add(s1))
		die("PR_ADD_SFRAME S1");

	/* S1's rows go; the next read of them waits for this thread. */
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		die("userfaultfd");
	if (ioctl(uffd, UFFDIO_API, &api))
		die("UFFDIO_API");
	if (madvise(rows, page, MADV_DONTNEED))
		die("madvise");
	reg.range.start = (unsigned long)rows;
	reg.range.len = page;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER");

	if (pthread_create(&t, NULL, spin, NULL))
		die("pthread_create");
	pfd.fd = uffd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 30000) != 1) {
		fprintf(stderr, "sframe-replace: no unwind read S1's rows in 30 s (sampled?)\n");
		return 1;
	}
	if (read(uffd, &msg, sizeof(msg)) != sizeof(msg) || msg.event != UFFD_EVENT_PAGEFAULT)
		die("read uffd");
	printf("an unwind waits on S1's rows at %#llx\n",
	       (unsigned long long)msg.arg.pagefault.address);

	if (replace) {
		if (del(s1))
			die("PR_REMOVE_SFRAME S1");
		/*
		 * kfree_rcu() frees S1's record in a batch, some 5 s later
		 * (KFREE_DRAIN_JIFFIES), after a grace period: then S2's
		 * allocation on this CPU is likely to get it.
		 */
		sleep(7);
		if (add(s2))
			die("PR_ADD_SFRAME S2");
		printf("S1 replaced by S2\n");
	}

	/* The rows come in, bad: the waiting walk finds S1 bad. */
	copy.dst = (unsigned long)rows;
	copy.src = (unsigned long)mmap(NULL, page, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (copy.src == (unsigned long)MAP_FAILED)
		die("mmap");
	sf_write_fres((uint8_t *)copy.src, SF_FRE_INFO_BAD);
	copy.len = page;
	if (ioctl(uffd, UFFDIO_COPY, &copy))
		die("UFFDIO_COPY");
	usleep(300000);

	if (!replace) {
		if (!del(s1) || errno != ENOENT) {
			printf("FAIL: S1 is still registered after the walk found it bad\n");
			return 1;
		}
		printf("S1 removed\n");
		return 0;
	}
	if (del(s2)) {
		printf("FAIL: S2 is gone (%s): removed for S1's bad rows\n", strerror(errno));
		return 1;
	}
	printf("S2 kept\n");
	return 0;
}
