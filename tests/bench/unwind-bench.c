// SPDX-License-Identifier: GPL-2.0
/*
 * unwind-bench - what the kernel's deferred user unwinder costs per frame.
 *
 * The program samples itself with a software event that fires once per
 * iteration of a loop, deep in a stack of known depth, and times the loop:
 *
 *   main -> unwind_bench_top (outermost: undefined RA, zero frame pointer)
 *        -> rec x (DEPTH - 2) -> leaf: madvise(MADV_DONTNEED) + read of
 *           the page = one page fault per iteration
 *
 * The event is page-faults with a period of 1 (the guest has no
 * tracepoints; a fault is a kernel entry like a syscall, and the sample
 * is always taken at the same instruction), in three modes, alternated:
 *
 *   base    samples without callchain: the loop plus the sampling;
 *   unwind  samples with defer_callchain (user part only) but no event
 *           with defer_output: the same, plus a deferred request and one
 *           unwind of DEPTH frames at the return to user space, whose
 *           result goes nowhere;
 *   defer   as perf record --call-graph fp,defer: the same, plus one
 *           PERF_RECORD_CALLCHAIN_DEFERRED of DEPTH ips;
 *   fp      as perf record --call-graph fp: the sample's callchain has
 *           the user stack, walked with frame pointers in the fault
 *           handler (only the frame-pointer build gives whole stacks).
 *
 * Which unwinder runs depends on the build: with frame pointers and no
 * SFrame, the frame-pointer walk; without frame pointers and with SFrame
 * (sframe-gen --inject: PT_GNU_SFRAME, registered at exec), SFrame for
 * every frame. Each record is checked: DEPTH ips, the last one in
 * unwind_bench_top (else the unwinder stopped early, e.g. fell back to
 * frame pointers).
 *
 * Counted per measurement: the loop's time (CLOCK_MONOTONIC and the
 * thread's CPU time; under QEMU -icount shift=0 both are instructions),
 * unwinds/requests/callbacks from /sys/kernel/debug/unwind_user/stats
 * around the loop, samples, records, frames per record, lost records.
 * One line per measurement, "key=value" words, for unwind-report.py.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef PERF_RECORD_CALLCHAIN_DEFERRED
#define PERF_RECORD_CALLCHAIN_DEFERRED	22
#endif
#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME			0x6474e554
#endif
#define STATS "/sys/kernel/debug/unwind_user/stats"

extern long unwind_bench_top(long (*fn)(long), long arg);
extern char unwind_bench_top_end[];

struct stats {
	uint64_t requests, unwinds, callbacks;
};

static volatile char *page;
static long pagesz;
static int iters = 2000, warmup = 200, statfd = -1;
static struct {
	struct timespec m0, m1, c0, c1;
	struct stats s0, s1;
} meas;

static void die(const char *what)
{
	fprintf(stderr, "unwind-bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void read_stats(struct stats *s)
{
	char buf[256], *p;
	ssize_t n = pread(statfd, buf, sizeof(buf) - 1, 0);

	memset(s, 0, sizeof(*s));
	if (n <= 0)
		return;
	buf[n] = 0;
	if ((p = strstr(buf, "requests:")))
		s->requests = strtoull(p + 9, NULL, 10);
	if ((p = strstr(buf, "unwinds:")))
		s->unwinds = strtoull(p + 8, NULL, 10);
	if ((p = strstr(buf, "callbacks:")))
		s->callbacks = strtoull(p + 10, NULL, 10);
}

/* One kernel entry that samples: a fault, after the page was dropped. */
static inline void iteration(void)
{
	long r;

	asm volatile("syscall" : "=a"(r)
		     : "0"((long)SYS_madvise), "D"(page), "S"(pagesz),
		       "d"((long)MADV_DONTNEED)
		     : "rcx", "r11", "memory");
	(void)*page;
}

__attribute__((noinline)) static long leaf(long arg)
{
	int i;

	/* Fault in what the loop and the unwinder touch: SFrame, stack. */
	for (i = 0; i < warmup; i++)
		iteration();
	read_stats(&meas.s0);
	clock_gettime(CLOCK_MONOTONIC, &meas.m0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &meas.c0);
	for (i = 0; i < iters; i++)
		iteration();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &meas.c1);
	clock_gettime(CLOCK_MONOTONIC, &meas.m1);
	read_stats(&meas.s1);
	return arg;
}

/* @k more frames, then the loop. */
__attribute__((noinline)) static long rec(long k)
{
	long r = k > 1 ? rec(k - 1) : leaf(k);

	/* Work after the call: no tail call, no loop made of the recursion. */
	asm volatile("" : "+r"(r) : : "memory");
	return r;
}

static int perf_open(struct perf_event_attr *attr, int group)
{
	return syscall(SYS_perf_event_open, attr, 0, -1, group, 0);
}

struct result {
	int sample_chains;	/* the samples' callchains are counted */
	uint64_t samples, records, lost, other, top_ok, bad;
	uint64_t nr_hist[4];	/* frames of the first distinct records */
	uint64_t nr_count[4];
};

static void count_record(struct result *r, const uint64_t *rec, size_t words)
{
	uint64_t nr, frames, last;
	int i;

	r->records++;
	/*
	 * cookie, nr, ips[nr]: the user addresses (Linux 6.19), or
	 * PERF_CONTEXT_USER and them (this series' earlier kernels).
	 */
	if (words < 3 || (nr = rec[1]) < 1 || nr > words - 2) {
		r->bad++;
		return;
	}
	frames = nr - (rec[2] == (uint64_t)PERF_CONTEXT_USER);
	if (!frames) {
		r->bad++;
		return;
	}
	last = rec[2 + nr - 1];
	if (last >= (uintptr_t)unwind_bench_top && last <= (uintptr_t)unwind_bench_top_end)
		r->top_ok++;
	for (i = 0; i < 4; i++) {
		if (!r->nr_count[i] || r->nr_hist[i] == frames) {
			r->nr_hist[i] = frames;
			r->nr_count[i]++;
			return;
		}
	}
	r->other++;
}

static void drain(struct perf_event_mmap_page *pc, struct result *r)
{
	unsigned char *data = (unsigned char *)pc + pagesz;
	uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pc->data_tail, size = pc->data_size;
	static uint64_t buf[65536 / 8];	/* a record's size is a u16 */

	while (tail < head) {
		struct perf_event_header h;
		size_t i, n;

		for (i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(tail + i) & (size - 1)];
		n = h.size;
		for (i = 0; i < n; i++)
			((unsigned char *)buf)[i] = data[(tail + i) & (size - 1)];
		if (h.type == PERF_RECORD_SAMPLE) {
			r->samples++;
			/* ip, pid/tid, time, then nr and the ips, as a record's */
			if (r->sample_chains && n >= sizeof(h) + 5 * 8)
				count_record(r, buf + 3, (n - sizeof(h)) / 8 - 2);
		}
		else if (h.type == PERF_RECORD_CALLCHAIN_DEFERRED)
			count_record(r, buf + 1, (n - sizeof(h)) / 8);
		else if (h.type == PERF_RECORD_LOST)
			r->lost += buf[2];
		if (!h.size)
			break;
		tail += h.size;
	}
	__atomic_store_n(&pc->data_tail, tail, __ATOMIC_RELEASE);
}

static uint64_t ns(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000000ull + b->tv_nsec - a->tv_nsec;
}

enum mode { BASE, UNWIND, DEFER, FP };
static const char *const mode_name[] = { "base", "unwind", "defer", "fp" };

static void measure(enum mode mode, int depth, int rep)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *pc;
	struct result r;
	size_t pages = 1, len;
	int fd[2], i;

	memset(&r, 0, sizeof(r));
	/* Room for every sample and record: nothing is read until the end. */
	while (pages * pagesz < (size_t)(iters + warmup) * (8 * depth + 192) + 65536)
		pages *= 2;
	len = (pages + 1) * pagesz;

	/* The ring buffer's owner; with defer, it receives the records. */
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.disabled = 1;
	attr.sample_id_all = 1;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr.defer_output = mode == DEFER;
	fd[0] = perf_open(&attr, -1);
	if (fd[0] < 0)
		die("perf_event_open(dummy)");

	attr.config = PERF_COUNT_SW_PAGE_FAULTS;
	attr.sample_period = 1;
	attr.defer_output = 0;
	if (mode != BASE) {
		attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
		attr.exclude_callchain_kernel = 1;
		attr.defer_callchain = mode != FP;
	}
	r.sample_chains = mode == FP;
	fd[1] = perf_open(&attr, -1);
	if (fd[1] < 0)
		die("perf_event_open(page-faults)");

	pc = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd[0], 0);
	if (pc == MAP_FAILED)
		die("mmap(ring buffer)");
	if (ioctl(fd[1], PERF_EVENT_IOC_SET_OUTPUT, fd[0]))
		die("PERF_EVENT_IOC_SET_OUTPUT");

	for (i = 0; i < 2; i++)
		ioctl(fd[i], PERF_EVENT_IOC_ENABLE, 0);
	unwind_bench_top(rec, depth - 2);
	for (i = 0; i < 2; i++)
		ioctl(fd[i], PERF_EVENT_IOC_DISABLE, 0);

	drain(pc, &r);
	munmap(pc, len);
	close(fd[0]);
	close(fd[1]);

	printf("depth=%d mode=%s rep=%d iters=%d mono_ns=%llu cpu_ns=%llu "
	       "unwinds=%llu requests=%llu callbacks=%llu samples=%llu records=%llu "
	       "frames=%llu frames_n=%llu frames2=%llu frames2_n=%llu other=%llu "
	       "top_ok=%llu bad=%llu lost=%llu\n",
	       depth, mode_name[mode], rep, iters,
	       (unsigned long long)ns(&meas.m0, &meas.m1),
	       (unsigned long long)ns(&meas.c0, &meas.c1),
	       (unsigned long long)(meas.s1.unwinds - meas.s0.unwinds),
	       (unsigned long long)(meas.s1.requests - meas.s0.requests),
	       (unsigned long long)(meas.s1.callbacks - meas.s0.callbacks),
	       (unsigned long long)r.samples, (unsigned long long)r.records,
	       (unsigned long long)r.nr_hist[0], (unsigned long long)r.nr_count[0],
	       (unsigned long long)r.nr_hist[1], (unsigned long long)r.nr_count[1],
	       (unsigned long long)(r.other + r.nr_count[2] + r.nr_count[3]),
	       (unsigned long long)r.top_ok, (unsigned long long)r.bad,
	       (unsigned long long)r.lost);
	fflush(stdout);
}

/* Our own PT_GNU_SFRAME, as the kernel saw it at exec. */
static void describe_self(void)
{
	const Elf64_Phdr *ph = (const Elf64_Phdr *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM), i, size = 0;

	for (i = 0; ph && i < n; i++)
		if (ph[i].p_type == PT_GNU_SFRAME)
			size = ph[i].p_memsz;
	printf("# pid=%d pt_gnu_sframe=%lu\n", getpid(), size);
}

int main(int argc, char **argv)
{
	int depths[16], nd = 0, reps = 3, opt, i, j;

	while ((opt = getopt(argc, argv, "n:w:r:")) != -1) {
		switch (opt) {
		case 'n': iters = atoi(optarg); break;
		case 'w': warmup = atoi(optarg); break;
		case 'r': reps = atoi(optarg); break;
		default: goto usage;
		}
	}
	for (; optind < argc && nd < 16; optind++)
		if ((depths[nd++] = atoi(argv[optind])) < 3)
			goto usage;
	if (optind < argc || iters <= 0 || warmup < 0 || reps <= 0)
		goto usage;
	if (!nd) {
		depths[nd++] = 32;
		depths[nd++] = 96;
	}

	pagesz = sysconf(_SC_PAGESIZE);
	page = mmap(NULL, pagesz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		die("mmap");
	statfd = open(STATS, O_RDONLY);
	if (statfd < 0)
		die(STATS " (debugfs mounted?)");
	describe_self();
	/* Fault in the code between the stats reads, outside the loop. */
	read_stats(&meas.s0);
	clock_gettime(CLOCK_MONOTONIC, &meas.m0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &meas.c0);

	for (i = 0; i < nd; i++)
		for (j = 0; j < reps; j++) {
			measure(BASE, depths[i], j);
			measure(UNWIND, depths[i], j);
			measure(DEFER, depths[i], j);
			measure(FP, depths[i], j);
		}
	return 0;

usage:
	fprintf(stderr, "usage: unwind-bench [-n ITERS] [-w WARMUP] [-r REPS] [DEPTH...]\n"
		"  times ITERS (2000) sampled page faults at each DEPTH (32 96; >= 3\n"
		"  frames), without callchains, with deferred unwinds, with deferred\n"
		"  callchain records and with callchains walked at once with frame\n"
		"  pointers, REPS (3) times; prints one line of key=value counts per\n"
		"  measurement.\n");
	return 2;
}
