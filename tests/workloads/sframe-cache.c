// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-cache - the kernel keeps the SFrame rules of recent addresses per
 * task; it must never use one of code that is gone (tests/guest/77).
 *
 * Code at a fixed address P comes in two variants whose call returns to
 * the same address, P + RET_OFF, with different frames there:
 *
 *   A: nop; nop; sub $24,%rsp; call *%rdi    CFA = SP + 32
 *   B: push %rbp; push %rbx; sub $40,%rsp;   CFA = SP + 64, FP at CFA - 16
 *      call *%rdi
 *
 * each described by its own SFrame section, registered with
 * PR_ADD_SFRAME.  sc_caller (outermost) calls P, which calls sc_leaf,
 * whose load faults: the program samples its page faults with deferred
 * callchains, and every record must be exactly
 *
 *   sc_leaf_load, P + RET_OFF, sc_caller_ret
 *
 * where a rule of the other variant reads the return address from the
 * wrong slot.  Each phase changes the code at P, then samples it
 * ITERS times:
 *
 *   munmap    A registered; then P unmapped, B mapped and registered
 *   inplace   the section removed, the code rewritten in place, the
 *             other section registered
 *   mapfixed  the other variant mapped over P (MAP_FIXED), registered
 *   fork      a child samples what it inherited, changes it and samples
 *             again; the parent's is unchanged
 *   exec      the program runs itself again in the same task, mapping
 *             the other variant at P
 *   thread    a second thread samples, rounds apart, while the first
 *             changes the code between rounds
 *
 * Each phase also reads /sys/kernel/debug/unwind_user/stats: with the
 * cache on (the default), sframe_hits must grow, or the test would not
 * test it.  -n: the cache is expected off (no hits).
 *
 * Usage: sframe-cache [-n] [-i ITERS]; prints a line per phase, exit
 * status 0 if all records were right, 1 if not, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sframe-section.h"

#ifndef PR_ADD_SFRAME
#define PR_ADD_SFRAME		79
#define PR_REMOVE_SFRAME	80
#endif
#ifndef PERF_RECORD_CALLCHAIN_DEFERRED
#define PERF_RECORD_CALLCHAIN_DEFERRED	22
#endif
#define STATS	"/sys/kernel/debug/unwind_user/stats"

/* Far from where a PIE program and its libraries are mapped. */
#define P_ADDR	((uint8_t *)0x200000000ul)
#define RET_OFF	8

static const uint8_t code_a[] = {
	0x90, 0x90,			/* nop; nop */
	0x48, 0x83, 0xec, 0x18,		/* sub $24,%rsp */
	0xff, 0xd7,			/* call *%rdi */
	0x48, 0x83, 0xc4, 0x18,		/* add $24,%rsp */
	0xc3,				/* ret */
};
static const uint8_t code_b[] = {
	0x55,				/* push %rbp */
	0x53,				/* push %rbx */
	0x48, 0x83, 0xec, 0x28,		/* sub $40,%rsp */
	0xff, 0xd7,			/* call *%rdi */
	0x48, 0x83, 0xc4, 0x28,		/* add $40,%rsp */
	0x5b,				/* pop %rbx */
	0x5d,				/* pop %rbp */
	0xc3,				/* ret */
};

void sc_caller(void *leaf, void *fn);
void sc_leaf(void);
extern char sc_leaf_load[], sc_caller_ret[];
volatile char *sc_page;

/*
 * sc_caller(leaf, fn): calls fn(leaf) as the outermost frame; sc_leaf
 * loads from sc_page, where the test dropped the page: one fault.
 */
asm(".text\n"
    ".globl sc_caller\n"
    ".type sc_caller, @function\n"
    "sc_caller:\n"
    "	.cfi_startproc\n"
    "	.cfi_undefined rip\n"
    "	push %rbp\n"
    "	.cfi_adjust_cfa_offset 8\n"
    "	xor %ebp, %ebp\n"
    "	call *%rsi\n"
    ".globl sc_caller_ret\n"
    "sc_caller_ret:\n"
    "	pop %rbp\n"
    "	.cfi_adjust_cfa_offset -8\n"
    "	ret\n"
    "	.cfi_endproc\n"
    ".size sc_caller, . - sc_caller\n"
    ".globl sc_leaf\n"
    ".type sc_leaf, @function\n"
    "sc_leaf:\n"
    "	.cfi_startproc\n"
    "	mov sc_page(%rip), %rax\n"
    ".globl sc_leaf_load\n"
    "sc_leaf_load:\n"
    "	movb (%rax), %al\n"
    "	ret\n"
    "	.cfi_endproc\n"
    ".size sc_leaf, . - sc_leaf\n");

static long pagesz;
static int iters = 20;
static bool cache_off;
/* The section of each variant, on a page of its own, and its size. */
static uint8_t *sect[2];
static size_t sect_size[2];
static int cur = -1;		/* the variant at P, -1: none */
static int failed, printed;	/* wrong records printed, 10 at most */

static void die(const char *what)
{
	fprintf(stderr, "sframe-cache: %s: %s\n", what, strerror(errno));
	exit(1);
}

/*
 * The section of variant @v: one function at P, one row, whose rule is
 * the one at the return address (the only address looked up in P).
 */
static void make_section(int v)
{
	uint8_t *sf = mmap(NULL, pagesz, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *row = sf + SF_INDEX_SIZE;
	uint32_t fre_len;

	if (sf == MAP_FAILED)
		die("mmap(section)");
	sf_write(sf, (uintptr_t)P_ADDR, v ? 0x05 : 0x03);
	/* The row after the FDE attributes: start 0, info, data words. */
	row[7] = v ? 64 : 32;
	sect_size[v] = SF_SIZE;
	if (v) {
		row[8] = (uint8_t)-16;
		fre_len = SF_FRES_SIZE + 1;
		memcpy(sf + 16, &fre_len, 4);
		sect_size[v]++;
	}
	sect[v] = sf;
}

static void do_prctl(int op, int v)
{
	unsigned long s = (unsigned long)sect[v];

	if (op == PR_ADD_SFRAME ?
	    prctl(op, s, s + sect_size[v], (unsigned long)P_ADDR,
		  (unsigned long)P_ADDR + pagesz) :
	    prctl(op, s, 0, 0, 0))
		die(op == PR_ADD_SFRAME ? "PR_ADD_SFRAME" : "PR_REMOVE_SFRAME");
}

/* Map variant @v at P (over what is there if @fixed), executable. */
static void map_code(int v, bool fixed)
{
	uint8_t *p = mmap(P_ADDR, pagesz, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS |
			  (fixed ? MAP_FIXED : MAP_FIXED_NOREPLACE), -1, 0);

	if (p != P_ADDR)
		die("mmap(P)");
	memcpy(p, v ? code_b : code_a, v ? sizeof(code_b) : sizeof(code_a));
	if (mprotect(p, pagesz, PROT_READ | PROT_EXEC))
		die("mprotect(P)");
	cur = v;
}

/* The ways a phase changes the code at P to variant @v. */
static void change_munmap(int v)
{
	if (cur >= 0 && munmap(P_ADDR, pagesz))
		die("munmap(P)");
	map_code(v, false);
	do_prctl(PR_ADD_SFRAME, v);
}

static void change_inplace(int v)
{
	do_prctl(PR_REMOVE_SFRAME, cur);
	if (mprotect(P_ADDR, pagesz, PROT_READ | PROT_WRITE))
		die("mprotect(P, RW)");
	memset(P_ADDR, 0xcc, 32);
	memcpy(P_ADDR, v ? code_b : code_a, v ? sizeof(code_b) : sizeof(code_a));
	if (mprotect(P_ADDR, pagesz, PROT_READ | PROT_EXEC))
		die("mprotect(P, RX)");
	cur = v;
	do_prctl(PR_ADD_SFRAME, v);
}

static void change_mapfixed(int v)
{
	map_code(v, true);
	do_prctl(PR_ADD_SFRAME, v);
}

static unsigned long read_hits(void)
{
	char buf[1024], *p;
	ssize_t n;
	int fd = open(STATS, O_RDONLY);

	if (fd < 0)
		die(STATS);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		die("read " STATS);
	buf[n] = 0;
	p = strstr(buf, "sframe_hits:");
	if (!p) {
		fprintf(stderr, "sframe-cache: no sframe_hits in " STATS "\n");
		exit(1);
	}
	return strtoul(p + 12, NULL, 10);
}

/* Page-fault samples of this thread, deferred callchains, one ring. */
struct sampler {
	int fd[2];
	struct perf_event_mmap_page *pc;
	size_t len;
};

static void sampler_open(struct sampler *s)
{
	struct perf_event_attr attr;
	size_t pages = 64;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.disabled = 1;
	attr.sample_id_all = 1;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	attr.defer_output = 1;
	s->fd[0] = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (s->fd[0] < 0)
		die("perf_event_open(dummy)");
	attr.config = PERF_COUNT_SW_PAGE_FAULTS;
	attr.sample_period = 1;
	attr.defer_output = 0;
	attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
	attr.exclude_callchain_kernel = 1;
	attr.defer_callchain = 1;
	s->fd[1] = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (s->fd[1] < 0)
		die("perf_event_open(page-faults)");
	s->len = (pages + 1) * pagesz;
	s->pc = mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_SHARED,
		     s->fd[0], 0);
	if (s->pc == MAP_FAILED)
		die("mmap(ring buffer)");
	if (ioctl(s->fd[1], PERF_EVENT_IOC_SET_OUTPUT, s->fd[0]))
		die("PERF_EVENT_IOC_SET_OUTPUT");
}

static void sampler_close(struct sampler *s)
{
	munmap(s->pc, s->len);
	close(s->fd[0]);
	close(s->fd[1]);
}

/*
 * Run @n sampled faults through P and check every record against the
 * variant there. Return: the number of wrong or missing records.
 */
static int sample(struct sampler *s, const char *phase)
{
	const uintptr_t want[3] = { (uintptr_t)sc_leaf_load,
				    (uintptr_t)P_ADDR + RET_OFF,
				    (uintptr_t)sc_caller_ret };
	unsigned char *data = (unsigned char *)s->pc + pagesz;
	uint64_t head, tail = s->pc->data_tail, size = s->pc->data_size;
	static uint64_t buf[65536 / 8];
	int i, records = 0, bad = 0;

	for (i = 0; i < 2; i++)
		ioctl(s->fd[i], PERF_EVENT_IOC_ENABLE, 0);
	for (i = 0; i < iters; i++) {
		if (madvise((void *)sc_page, pagesz, MADV_DONTNEED))
			die("madvise");
		sc_caller((void *)sc_leaf, P_ADDR);
	}
	for (i = 0; i < 2; i++)
		ioctl(s->fd[i], PERF_EVENT_IOC_DISABLE, 0);

	head = __atomic_load_n(&s->pc->data_head, __ATOMIC_ACQUIRE);
	while (tail < head) {
		struct perf_event_header h;
		size_t k, n;

		for (k = 0; k < sizeof(h); k++)
			((unsigned char *)&h)[k] = data[(tail + k) & (size - 1)];
		n = h.size;
		if (!n)
			break;
		for (k = 0; k < n; k++)
			((unsigned char *)buf)[k] = data[(tail + k) & (size - 1)];
		tail += n;
		if (h.type != PERF_RECORD_CALLCHAIN_DEFERRED)
			continue;
		/* header, cookie, nr, ips[nr] */
		records++;
		if (buf[2] != 3 || buf[3] != want[0] || buf[4] != want[1] ||
		    buf[5] != want[2]) {
			bad++;
			if (printed++ < 10)
				printf("%s: variant %c: wrong record: nr %llu: %#llx %#llx %#llx, want %#lx %#lx %#lx\n",
				       phase, 'A' + cur,
				       (unsigned long long)buf[2],
				       (unsigned long long)buf[3],
				       (unsigned long long)buf[4],
				       (unsigned long long)buf[5],
				       (unsigned long)want[0],
				       (unsigned long)want[1],
				       (unsigned long)want[2]);
		}
	}
	__atomic_store_n(&s->pc->data_tail, tail, __ATOMIC_RELEASE);
	if (records != iters) {
		printf("%s: variant %c: %d records for %d samples\n", phase,
		       'A' + cur, records, iters);
		bad += iters > records ? iters - records : records - iters;
	}
	return bad;
}

/*
 * A phase: change the code at P to @v with @change (if any), sample, and
 * check that the cache was used (or not, with -n).
 */
static void phase(const char *name, void (*change)(int), int v)
{
	struct sampler s;
	unsigned long hits;
	int bad;

	if (change)
		change(v);
	sampler_open(&s);
	hits = read_hits();
	bad = sample(&s, name);
	hits = read_hits() - hits;
	sampler_close(&s);
	if (cache_off ? hits != 0 : hits == 0) {
		printf("%s: %lu cache hits with the cache %s\n", name, hits,
		       cache_off ? "off" : "on");
		bad++;
	}
	printf("%s: variant %c: %d samples, %s\n", name, 'A' + cur, iters,
	       bad ? "WRONG" : "ok");
	if (bad)
		failed = 1;
}

/* The thread phase: rounds of samples, the code changed between them. */
static pthread_mutex_t round_lock = PTHREAD_MUTEX_INITIALIZER;
static int rounds = 16, round_bad;

static void *sampling_thread(void *arg)
{
	struct sampler s;
	int r;

	(void)arg;
	sampler_open(&s);
	for (r = 0; r < rounds; r++) {
		pthread_mutex_lock(&round_lock);
		round_bad += sample(&s, "thread");
		pthread_mutex_unlock(&round_lock);
		sched_yield();
	}
	sampler_close(&s);
	return NULL;
}

static void phase_thread(void)
{
	static void (*const changes[])(int) = {
		change_munmap, change_inplace, change_mapfixed,
	};
	unsigned long hits = read_hits();
	pthread_t t;
	int r;

	if (pthread_create(&t, NULL, sampling_thread, NULL))
		die("pthread_create");
	for (r = 0; r < 4 * rounds; r++) {
		pthread_mutex_lock(&round_lock);
		changes[r % 3](!cur);
		pthread_mutex_unlock(&round_lock);
		sched_yield();
	}
	pthread_join(t, NULL);
	hits = read_hits() - hits;
	if (cache_off ? hits != 0 : hits == 0) {
		printf("thread: %lu cache hits with the cache %s\n", hits,
		       cache_off ? "off" : "on");
		round_bad++;
	}
	printf("thread: %d rounds of %d samples, %s\n", rounds, iters,
	       round_bad ? "WRONG" : "ok");
	if (round_bad)
		failed = 1;
}

static void setup(void)
{
	pagesz = sysconf(_SC_PAGESIZE);
	sc_page = mmap(NULL, pagesz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (sc_page == MAP_FAILED)
		die("mmap(page)");
	make_section(0);
	make_section(1);
}

int main(int argc, char **argv)
{
	char n_arg[16], *exe, *args[8];
	int opt, status, a = 0;
	pid_t pid;

	while ((opt = getopt(argc, argv, "ni:")) != -1) {
		switch (opt) {
		case 'n': cache_off = true; break;
		case 'i': iters = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (iters < 2 || iters > 1000)
		goto usage;
	setup();

	/* After exec: the other variant at P, in the same task. */
	if (optind + 2 == argc && !strcmp(argv[optind], "exec")) {
		phase("exec", change_munmap, argv[optind + 1][0] == 'B');
		return failed;
	}
	if (optind != argc)
		goto usage;

	phase("first", change_munmap, 0);
	phase("munmap", change_munmap, 1);
	phase("inplace", change_inplace, 0);
	phase("mapfixed", change_mapfixed, 1);

	/* fork: the child's stacks are of what it maps, the parent's stay. */
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		phase("fork-child", NULL, cur);
		phase("fork-child", change_munmap, !cur);
		fflush(stdout);
		_exit(failed);
	}
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		failed = 1;
	phase("fork-parent", NULL, cur);

	phase_thread();

	/* exec: this task's rules are of P's variant; the new image maps the other. */
	phase("before-exec", NULL, cur);
	fflush(stdout);
	if (failed)
		return 1;
	exe = "/proc/self/exe";
	snprintf(n_arg, sizeof(n_arg), "%d", iters);
	args[a++] = exe;
	if (cache_off)
		args[a++] = "-n";
	args[a++] = "-i";
	args[a++] = n_arg;
	args[a++] = "exec";
	args[a++] = cur ? "A" : "B";
	args[a] = NULL;
	execv(exe, args);
	die("execv");

usage:
	fprintf(stderr, "usage: sframe-cache [-n] [-i ITERS]\n"
		"  samples the code at a fixed address through changes of it and\n"
		"  of its SFrame section (munmap, in place, MAP_FIXED, fork, exec,\n"
		"  another thread), ITERS (20, 2-1000) page faults a phase, and checks\n"
		"  every deferred callchain; -n: the kernel's cache of SFrame rules\n"
		"  is off (unwind_user/sframe_cache N), no hits are expected.\n");
	return 2;
}
