// SPDX-License-Identifier: GPL-2.0
/*
 * defer-bench - what deferred user callchains save, measured by counting.
 *
 * A child runs a syscall-heavy loop (getppid from inline asm in the leaf
 * of a known frame-pointer chain) while two events sample it at the same
 * period (cpu-clock and task-clock, 10 kHz each by default), first with
 * plain callchains (--call-graph fp: the user stack is walked in every
 * sample), then with defer_callchain (one PERF_RECORD_CALLCHAIN_DEFERRED
 * per sampled kernel entry, to a tracking event with defer_output).
 * Everything counted is work, not time: ring-buffer bytes, samples,
 * records, user unwinds (a plain sample is one; deferred ones are read
 * from /sys/kernel/debug/unwind_user/stats), kernel entries (the child's
 * syscalls).
 *
 * Output: a markdown table, one line per mode with the chain as it is and
 * with 40 more frames of recursion, and the ratios deferred/plain.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PERF_RECORD_CALLCHAIN_DEFERRED
#define PERF_RECORD_CALLCHAIN_DEFERRED	22
#endif
#define CONTEXT_USER_DEFERRED	((uint64_t)-640)
#define RB_PAGES		512

static volatile unsigned long sink;
static volatile sig_atomic_t stop;

static void on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

static inline long raw_getppid(void)
{
	long r;

	asm volatile("syscall" : "=a"(r) : "0"((long)SYS_getppid)
		     : "rcx", "r11", "memory");
	return r;
}

__attribute__((noinline)) static unsigned long chain_leaf(void)
{
	unsigned long n = 0;

	while (!stop) {
		sink += raw_getppid();
		n++;
	}
	return n;
}

__attribute__((noinline)) static unsigned long chain_c(void) { return chain_leaf() + sink * 0; }
__attribute__((noinline)) static unsigned long chain_b(void) { return chain_c() + sink * 0; }
static int depth;

/* @n more frames between chain_a and chain_b: deeper user stacks. */
__attribute__((noinline)) static unsigned long recurse(int n)
{
	return (n ? recurse(n - 1) : chain_b()) + sink * 0;
}

__attribute__((noinline)) static unsigned long chain_a(void) { return recurse(depth) + sink * 0; }

/* The child: wait for the go, loop for @ms, report the syscalls made. */
static void workload(int go, int res, int ms)
{
	struct itimerval it = { .it_value = { ms / 1000, ms % 1000 * 1000 } };
	unsigned long n;
	char b;

	if (read(go, &b, 1) != 1)
		_exit(1);
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	n = chain_a();
	if (write(res, &n, sizeof(n)) != sizeof(n))
		_exit(1);
	_exit(0);
}

static void die(const char *what)
{
	fprintf(stderr, "defer-bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int perf_open(struct perf_event_attr *attr, pid_t pid, int group)
{
	return syscall(SYS_perf_event_open, attr, pid, -1, group, 0);
}

/* defer_callchain and defer_output follow sigtrap in the flag word. */
static void set_defer_bits(struct perf_event_attr *attr, int callchain, int output)
{
	attr->defer_callchain = callchain;
	attr->defer_output = output;
}

struct counts {
	uint64_t bytes, samples, deferred, lost, syscalls, unwinds;
};

static uint64_t stat_unwinds(void)
{
	char line[128];
	uint64_t v = 0;
	FILE *f = fopen("/sys/kernel/debug/unwind_user/stats", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "unwinds: %lu", &v) == 1)
			break;
	fclose(f);
	return v;
}

static void drain(struct perf_event_mmap_page *pc, struct counts *c)
{
	unsigned char *data = (unsigned char *)pc + sysconf(_SC_PAGESIZE);
	uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pc->data_tail, size = pc->data_size;

	while (tail < head) {
		struct perf_event_header h;
		uint64_t off = tail & (size - 1), lost;

		memcpy(&h, data + off, sizeof(h));
		c->bytes += h.size;
		if (h.type == PERF_RECORD_SAMPLE)
			c->samples++;
		else if (h.type == PERF_RECORD_CALLCHAIN_DEFERRED)
			c->deferred++;
		else if (h.type == PERF_RECORD_LOST) {
			off = (tail + 16) & (size - 1);
			memcpy(&lost, data + off, sizeof(lost));
			c->lost += lost;
		}
		tail += h.size;
	}
	__atomic_store_n(&pc->data_tail, tail, __ATOMIC_RELEASE);
}

static void run(int defer, int ms, uint64_t period_ns, struct counts *c)
{
	struct perf_event_attr attr;
	int go[2], res[2], fds[3], nfd = 0, i;
	struct perf_event_mmap_page *pc;
	struct timespec end, t;
	uint64_t unwinds;
	pid_t child;

	memset(c, 0, sizeof(*c));
	if (pipe(go) || pipe(res))
		die("pipe");
	child = fork();
	if (child < 0)
		die("fork");
	if (!child)
		workload(go[0], res[1], ms);

	/* Ring-buffer owner: the tracking event (deferred), or cpu-clock. */
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.disabled = 1;
	attr.sample_id_all = 1;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_CALLCHAIN;
	if (defer) {
		attr.config = PERF_COUNT_SW_DUMMY;
		set_defer_bits(&attr, 0, 1);
		fds[nfd] = perf_open(&attr, child, -1);
		if (fds[nfd++] < 0)
			die("perf_event_open(dummy, defer_output)");
	}
	for (i = 0; i < 2; i++) {
		attr.config = i ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_SW_CPU_CLOCK;
		attr.sample_period = period_ns;
		set_defer_bits(&attr, defer, 0);
		fds[nfd] = perf_open(&attr, child, -1);
		if (fds[nfd++] < 0)
			die("perf_event_open(sampling)");
	}
	pc = mmap(NULL, (1 + RB_PAGES) * sysconf(_SC_PAGESIZE),
		  PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	if (pc == MAP_FAILED)
		die("mmap");
	for (i = 1; i < nfd; i++)
		if (ioctl(fds[i], PERF_EVENT_IOC_SET_OUTPUT, fds[0]))
			die("PERF_EVENT_IOC_SET_OUTPUT");

	unwinds = stat_unwinds();
	for (i = 0; i < nfd; i++)
		ioctl(fds[i], PERF_EVENT_IOC_ENABLE, 0);
	if (write(go[1], "g", 1) != 1)
		die("write");
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += ms / 1000 + 30;
	for (;;) {
		int status;
		pid_t w = waitpid(child, &status, WNOHANG);

		drain(pc, c);
		if (w == child)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec > end.tv_sec) {
			kill(child, SIGKILL);
			fprintf(stderr, "defer-bench: workload did not stop\n");
			exit(1);
		}
		usleep(1000);
	}
	drain(pc, c);
	if (read(res[0], &c->syscalls, sizeof(c->syscalls)) != sizeof(c->syscalls))
		die("read result");
	/* A plain sample walks the user stack itself. */
	c->unwinds = defer ? stat_unwinds() - unwinds : c->samples;
	for (i = 0; i < nfd; i++)
		close(fds[i]);
	munmap(pc, (1 + RB_PAGES) * sysconf(_SC_PAGESIZE));
	close(go[0]); close(go[1]); close(res[0]); close(res[1]);
}

static void row(const char *mode, int d, const struct counts *c, double s)
{
	printf("| %-10s | %5d | %8lu | %8lu | %10lu | %9.1f | %10.0f | %9.2f | %8.3f |\n",
	       mode, d, c->samples, c->deferred, c->bytes,
	       (double)c->bytes / c->samples, c->bytes / s,
	       1000.0 * c->unwinds / c->syscalls, (double)c->unwinds / c->samples);
}

int main(int argc, char **argv)
{
	int ms = argc > 1 ? atoi(argv[1]) : 2000;
	int hz = argc > 2 ? atoi(argv[2]) : 10000;
	static const int extra[] = { 0, 40 };
	struct counts fp[2], df[2];
	double s = ms / 1000.0;
	unsigned int i;

	if (argc > 3 || ms <= 0 || hz <= 0) {
		fprintf(stderr, "usage: defer-bench [MS [HZ]]\n"
			"  samples a syscall loop for MS ms (2000) with 2 events at HZ (10000)\n"
			"  each, --call-graph fp then deferred, with 0 and 40 more frames;\n"
			"  prints a markdown table.\n");
		return 2;
	}
	for (i = 0; i < 2; i++) {
		depth = extra[i];
		run(0, ms, 1000000000ull / hz, &fp[i]);
		run(1, ms, 1000000000ull / hz, &df[i]);
		if (!fp[i].samples || !df[i].samples || !df[i].unwinds) {
			fprintf(stderr, "defer-bench: nothing measured (fp %lu samples, deferred %lu samples, %lu unwinds; debugfs mounted?)\n",
				fp[i].samples, df[i].samples, df[i].unwinds);
			return 1;
		}
	}
	printf("| mode       | +frames | samples | records | bytes | B/sample | B/s | unwinds/1k entries | unwinds/sample |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (i = 0; i < 2; i++) {
		row("fp", extra[i], &fp[i], s);
		row("fp,defer", extra[i], &df[i], s);
		printf("| **ratio** | %5d | | | | **%.2f** | **%.2f** | **%.2f** | **%.2f** |\n",
		       extra[i],
		       ((double)df[i].bytes / df[i].samples) / ((double)fp[i].bytes / fp[i].samples),
		       (double)df[i].bytes / fp[i].bytes,
		       ((double)df[i].unwinds / df[i].syscalls) / ((double)fp[i].unwinds / fp[i].syscalls),
		       ((double)df[i].unwinds / df[i].samples) / ((double)fp[i].unwinds / fp[i].samples));
	}
	for (i = 0; i < 2; i++)
		printf("%s+%d frames: kernel entries (syscalls) fp %lu, deferred %lu; lost fp %lu, deferred %lu\n",
		       i ? "" : "\n", extra[i], fp[i].syscalls, df[i].syscalls, fp[i].lost, df[i].lost);
	return 0;
}
