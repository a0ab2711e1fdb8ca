// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-kfuzz - feed the kernel mutated SFrame sections over real code,
 * through PR_ADD_SFRAME, and make it unwind through them.
 *
 * kfuzz-lib.so (no frame pointers, SFrame injected) is the code:
 *
 *   main -> fuzz_one -> kf_entry -> kf_mid -> kf_leaf (ours) -> page faults
 *   (program, its      (library, the      (program)
 *   own SFrame)         fuzzed section)
 *
 * Its section is decoded (tools/sframe's reader) and re-encoded for a
 * buffer of ours as v3, v2 PC-relative and v2 section-relative, the three
 * bases.  Each iteration takes a base, mutates it (bit flips; truncation;
 * header counts and offsets at and past their limits; FDEs swapped
 * (unsorted) or moved onto each other (overlapping); FRE offsets past the
 * end; zero and huge function sizes; the version byte of the other
 * layout; FLEX rows with every register number and random offsets, made
 * by the encoder so that they are well formed), registers it over the
 * library's text, samples its own page faults in kf_leaf with a deferred
 * callchain (page-faults, period 1, defer_callchain and defer_output, as
 * perf record --call-graph fp,defer), then removes it.  Checked:
 *
 *  - PR_ADD_SFRAME returns 0 or EINVAL, nothing else (a bad section
 *    rejected at registration is EINVAL; EEXIST would be a section the
 *    kernel forgot to drop);
 *  - PR_REMOVE_SFRAME returns 0, or ENOENT when the kernel found the
 *    section corrupt while unwinding and removed it (counted);
 *  - every record: user addresses only (Linux 6.19's form; this series'
 *    earlier kernels put PERF_CONTEXT_USER first, also read, but not both
 *    forms in one run), no kernel address, at most the event's max_stack
 *    entries, and for a fault at kfuzz_fault_ip the return addresses of
 *    fault_page and kf_leaf next (their frames are described by the
 *    program's good section, whatever the library's is);
 *  - every -g iterations (and at the end) the unmutated v3 base gives the
 *    whole chain, IP for IP, as at the start: good sections keep working.
 *
 * Iteration I of seed S mutates the same way on every run: "-s S -i I
 * -n 1" replays one.  Exit 0 when every check held, 1 otherwise (each
 * failure names its iteration), 2 on bad usage.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sframe.h"

#ifndef PR_ADD_SFRAME
#define PR_ADD_SFRAME			79
#define PR_REMOVE_SFRAME		80
#endif
#ifndef PERF_RECORD_CALLCHAIN_DEFERRED
#define PERF_RECORD_CALLCHAIN_DEFERRED	22
#endif
#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME			0x6474e554
#endif

#define BUF_MAX		(1 << 20)	/* the biggest section we register */
#define MAX_STACK	127		/* the event's sample_max_stack */
#define FAULTS		2		/* sampled faults per iteration */
#define KERNEL_START	0x800000000000ULL

typedef long (*kf_cb)(long);

static const char *prog = "sframe-kfuzz";
static int verbose;
static long pagesz;
static volatile char *page;

/* The library */
static long (*kf_entry)(kf_cb, long);
static volatile uintptr_t *kf_mid_ret, *kf_entry_ret;	/* set by the library */
static uintptr_t text_start, text_end;	/* its executable segment */
/* The chain as the program knows it: return addresses of each frame */
static uintptr_t leaf_ret, fuzz_one_ret;

/* The bases: the library's rows, encoded for buf */
static struct sf_func *funcs;
static size_t nfuncs;
static uint8_t *buf;			/* BUF_MAX, near the library */
static struct {
	const char *name;
	uint8_t *data;
	size_t len;
} base[3];

/* Expected: the whole chain with the good section, from the start */
static uint64_t good_ips[MAX_STACK];
static uint64_t good_nr;

static struct {
	unsigned long iters, added, rejected, efault, enomem, removed_by_kernel;
	unsigned long records, old_form, chain_records, samples, lost, whole, good_checks,
		failures;
	unsigned long by_mutation[16];
} st;

static void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
	exit(1);
}

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd(uint64_t *x, uint64_t n)
{
	return n ? splitmix(x) % n : 0;
}

/*
 * One sampled page fault, always at kfuzz_fault_ip (other faults, on a
 * first touch of code or stack, have their records checked less).
 */
extern const char kfuzz_fault_ip[];
static uintptr_t fault_ret;
static volatile int faults = FAULTS;

__attribute__((noinline, noclone)) static void fault_page(void)
{
	long r;

	asm volatile("syscall" : "=a"(r)
		     : "0"((long)SYS_madvise), "D"(page), "S"(pagesz),
		       "d"((long)MADV_DONTNEED)
		     : "rcx", "r11", "memory");
	asm volatile(".globl kfuzz_fault_ip\nkfuzz_fault_ip:\n\tmovb (%0), %%al"
		     : : "r"(page) : "rax", "memory");
	fault_ret = (uintptr_t)__builtin_return_address(0);
}

/* kf_leaf: FAULTS sampled page faults, called back from the library. */
__attribute__((noinline)) static long kf_leaf(long x)
{
	int i;

	/* a loop, not unrolled: one call site, one return address to check */
	for (i = 0; i < faults; i++) {
		fault_page();
		asm volatile("" : "+r"(x) : : "memory");
	}
	leaf_ret = (uintptr_t)__builtin_return_address(0);
	return x;
}

__attribute__((noinline)) static long fuzz_one(long x)
{
	long r = kf_entry(kf_leaf, x);

	fuzz_one_ret = (uintptr_t)__builtin_return_address(0);

	asm volatile("" : "+r"(r) : : "memory");
	return r;
}

static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *want = arg;
	int i;

	(void)size;
	if (!strstr(info->dlpi_name, want))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			text_start = a;
			text_end = a + ph->p_memsz;
		} else if (ph->p_type == PT_GNU_SFRAME) {
			base[0].data = (uint8_t *)a;	/* the library's own, for now */
			base[0].len = ph->p_memsz;
		}
	}
	return 1;
}

/* Decode the library's own section; encode the three bases for buf. */
static void make_bases(const char *lib)
{
	static const struct { const char *name; int version; bool pcrel; } b[3] = {
		{ "v3", 3, true }, { "v2", 2, true }, { "v2s", 2, false },
	};
	struct sf_enc_opts o;
	struct sf_sec s;
	char err[256];
	size_t i;

	if (!base[0].data) {
		fprintf(stderr, "%s: %s has no PT_GNU_SFRAME (sframe-gen --inject)\n", prog, lib);
		exit(1);
	}
	if (sf_open(&s, base[0].data, base[0].len, (uintptr_t)base[0].data, err, sizeof(err))) {
		fprintf(stderr, "%s: %s's .sframe: %s\n", prog, lib, err);
		exit(1);
	}
	nfuncs = s.num_fdes;
	funcs = calloc(nfuncs, sizeof(*funcs));
	if (!funcs)
		die("calloc");
	for (i = 0; i < nfuncs; i++) {
		if (sf_read_func(&s, i, &funcs[i], err, sizeof(err))) {
			fprintf(stderr, "%s: %s's .sframe: %s\n", prog, lib, err);
			exit(1);
		}
		if (funcs[i].start < text_start || funcs[i].start + funcs[i].size > text_end) {
			fprintf(stderr, "%s: %s's .sframe: FDE %zu at %#llx is outside the text %#lx-%#lx\n",
				prog, lib, i, (unsigned long long)funcs[i].start,
				(unsigned long)text_start, (unsigned long)text_end);
			exit(1);
		}
	}
	for (i = 0; i < 3; i++) {
		memset(&o, 0, sizeof(o));
		o.version = b[i].version;
		o.pcrel = b[i].pcrel;
		o.vaddr = (uintptr_t)buf;
		base[i].name = b[i].name;
		if (sf_encode(funcs, nfuncs, &o, &base[i].data, &base[i].len, err, sizeof(err))) {
			fprintf(stderr, "%s: encoding %s for %p: %s\n", prog, b[i].name, buf, err);
			exit(1);
		}
		if (base[i].len > BUF_MAX / 2) {
			fprintf(stderr, "%s: %s's section is too big (%zu)\n", prog, lib, base[i].len);
			exit(1);
		}
	}
}

/* Little-endian field access, any alignment. */
static void put(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = v >> (8 * i);
}

static uint64_t get(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static const uint64_t limits[] = {
	0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 20, 21, 27, 28, 0x7f, 0x80, 0xff, 0x100,
	0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
};

/* A value at or past a limit, near @orig or @len. */
static uint64_t limit_value(uint64_t *r, uint64_t orig, size_t len)
{
	switch (rnd(r, 4)) {
	case 0: return limits[rnd(r, sizeof(limits) / sizeof(limits[0]))];
	case 1: return orig + rnd(r, 9) - 4;
	case 2: return len + rnd(r, 9) - 4;
	default: return splitmix(r);
	}
}

enum {
	M_NONE, M_FLIP, M_TRUNC, M_HDR, M_SWAP, M_OVERLAP, M_FREOFF, M_SIZE,
	M_VERSION, M_FLEX, M_GROW, M_NR
};
static const char *const mname[M_NR] = {
	"none", "bitflip", "truncate", "header", "unsorted", "overlap",
	"fre-offset", "func-size", "version", "flex", "extend",
};

/* FLEX rows with random registers and offsets, from the encoder. */
static int mutate_flex(uint64_t *r, int version, uint8_t **out, size_t *len)
{
	struct sf_func *f = calloc(nfuncs, sizeof(*f));
	struct sf_enc_opts o = { .version = 3, .pcrel = true, .vaddr = (uintptr_t)buf };
	char err[256];
	size_t i, j, k, n = 1 + rnd(r, 3);
	int ret;

	(void)version;
	if (!f)
		die("calloc");
	memcpy(f, funcs, nfuncs * sizeof(*f));
	for (k = 0; k < n; k++) {
		struct sf_func *g;
		struct sf_row *rows;

		i = rnd(r, nfuncs);
		g = &f[i];
		if (!g->nrows)
			continue;
		if (g->rows == funcs[i].rows) {
			rows = malloc(g->nrows * sizeof(*rows));
			if (!rows)
				die("malloc");
			memcpy(rows, g->rows, g->nrows * sizeof(*rows));
			g->rows = rows;
		}
		g->flex = true;
		j = rnd(r, g->nrows);
		g->rows[j].cfa = (struct sf_rule){ SF_RULE, true, rnd(r, 4) == 0,
						   (uint8_t)rnd(r, 32), (int32_t)splitmix(r) % 4096 };
		if (rnd(r, 2))
			g->rows[j].ra = (struct sf_rule){ SF_RULE, rnd(r, 2), true,
							  (uint8_t)rnd(r, 32), (int32_t)splitmix(r) % 256 };
		if (rnd(r, 2))
			g->rows[j].fp = (struct sf_rule){ SF_RULE, rnd(r, 2), rnd(r, 2),
							  (uint8_t)rnd(r, 32), (int32_t)splitmix(r) % 256 };
	}
	ret = sf_encode(f, nfuncs, &o, out, len, err, sizeof(err));
	for (i = 0; i < nfuncs; i++)
		if (f[i].rows != funcs[i].rows)
			free(f[i].rows);
	free(f);
	return ret;
}

/* Mutate a copy of a base into buf; returns its length. */
static size_t mutate(uint64_t *r, int *which, int *how)
{
	int b = rnd(r, 3), m = 1 + rnd(r, M_NR - 1), k, n;
	struct sf_sec s;
	size_t len = base[b].len, fde_size, i, j, off;
	uint8_t *tmp;
	char err[200];

	if (m == M_FLEX) {
		if (mutate_flex(r, 3, &tmp, &len) || len > BUF_MAX / 2) {
			m = M_NONE;
		} else {
			memcpy(buf, tmp, len);
			free(tmp);
			*which = 0;
			*how = m;
			return len;
		}
	}
	memcpy(buf, base[b].data, len);
	sf_open(&s, buf, len, (uintptr_t)buf, err, sizeof(err));
	fde_size = s.version == 2 ? SFRAME_V2_FDE_SIZE : SFRAME_V3_FDE_SIZE;
	switch (m) {
	case M_FLIP:
		n = 1 + rnd(r, 8);
		for (k = 0; k < n; k++) {
			off = rnd(r, 8) ? rnd(r, len) : rnd(r, SFRAME_HDR_SIZE);
			buf[off] ^= 1 << rnd(r, 8);
		}
		break;
	case M_TRUNC:
		len = rnd(r, len);
		break;
	case M_HDR: {
		static const int fields[][2] = {
			{ 7, 1 }, { 8, 4 }, { 12, 4 }, { 16, 4 }, { 20, 4 }, { 24, 4 },
			{ 3, 1 }, { 4, 1 }, { 5, 1 }, { 6, 1 }, { 0, 2 },
		};
		k = rnd(r, sizeof(fields) / sizeof(fields[0]));
		put(buf + fields[k][0],
		    limit_value(r, get(buf + fields[k][0], fields[k][1]), len), fields[k][1]);
		break;
	}
	case M_SWAP:
		if (s.num_fdes < 2)
			break;
		i = rnd(r, s.num_fdes);
		j = rnd(r, s.num_fdes);
		{
			uint8_t t[SFRAME_V2_FDE_SIZE];
			uint8_t *a = buf + s.fdes + i * fde_size, *c = buf + s.fdes + j * fde_size;
			int w = s.version == 2 ? 4 : 8;
			int64_t da = (int64_t)get(a, w), dc = (int64_t)get(c, w);

			/* Swap the entries; PC-relative starts keep their targets. */
			memcpy(t, a, fde_size);
			memcpy(a, c, fde_size);
			memcpy(c, t, fde_size);
			if (s.flags & SFRAME_F_FDE_FUNC_START_PCREL) {
				put(a, dc + (int64_t)(j - i) * (int64_t)fde_size, w);
				put(c, da + (int64_t)(i - j) * (int64_t)fde_size, w);
			}
		}
		break;
	case M_OVERLAP:
		if (s.num_fdes < 2)
			break;
		i = 1 + rnd(r, s.num_fdes - 1);
		{
			uint8_t *a = buf + s.fdes + i * fde_size;
			int w = s.version == 2 ? 4 : 8;
			int64_t prev = (int64_t)get(a - fde_size, w);

			/* FDE i starts inside FDE i-1 (or before it) */
			prev += (s.flags & SFRAME_F_FDE_FUNC_START_PCREL) ? -(int64_t)fde_size : 0;
			put(a, prev + (int64_t)rnd(r, 16) - 4 +
			    ((s.flags & SFRAME_F_FDE_FUNC_START_PCREL) ? (int64_t)fde_size : 0), w);
		}
		break;
	case M_FREOFF:
		if (!s.num_fdes)
			break;
		i = rnd(r, s.num_fdes);
		off = s.fdes + i * fde_size + (s.version == 2 ? 8 : 12);
		put(buf + off, limit_value(r, get(buf + off, 4), len), 4);
		if (s.version == 2 && rnd(r, 2))	/* and its FRE count */
			put(buf + off + 4, limit_value(r, get(buf + off + 4, 4), len), 4);
		break;
	case M_SIZE:
		if (!s.num_fdes)
			break;
		i = rnd(r, s.num_fdes);
		off = s.fdes + i * fde_size + (s.version == 2 ? 4 : 8);
		put(buf + off, rnd(r, 2) ? 0 : limit_value(r, get(buf + off, 4), len), 4);
		break;
	case M_VERSION:
		buf[2] = rnd(r, 4) ? (s.version == 2 ? 3 : 2) : (uint8_t)splitmix(r);
		break;
	case M_GROW:
		/* spare bytes after the section, random or zero */
		n = 1 + rnd(r, 64);
		for (k = 0; k < n; k++)
			buf[len + k] = rnd(r, 2) ? (uint8_t)splitmix(r) : 0;
		len += n;
		break;
	}
	*which = b;
	*how = m;
	return len;
}

static int perf_open(struct perf_event_attr *attr, int group)
{
	return syscall(SYS_perf_event_open, attr, 0, -1, group, 0);
}

static int fd_out = -1, fd_pf = -1;
static struct perf_event_mmap_page *pc;
static size_t pc_len;

static void open_events(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.disabled = 1;
	attr.sample_id_all = 1;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	attr.defer_output = 1;
	fd_out = perf_open(&attr, -1);
	if (fd_out < 0)
		die("perf_event_open(dummy, defer_output)");
	attr.config = PERF_COUNT_SW_PAGE_FAULTS;
	attr.sample_period = 1;
	attr.defer_output = 0;
	attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
	attr.exclude_callchain_kernel = 1;
	attr.defer_callchain = 1;
	attr.sample_max_stack = MAX_STACK;
	fd_pf = perf_open(&attr, -1);
	if (fd_pf < 0)
		die("perf_event_open(page-faults, defer_callchain)");
	pc_len = 65 * pagesz;
	pc = mmap(NULL, pc_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd_out, 0);
	if (pc == MAP_FAILED)
		die("mmap(ring buffer)");
	if (ioctl(fd_pf, PERF_EVENT_IOC_SET_OUTPUT, fd_out))
		die("PERF_EVENT_IOC_SET_OUTPUT");
}

static void fail(unsigned long iter, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(unsigned long iter, const char *fmt, ...)
{
	va_list ap;

	st.failures++;
	if (st.failures > 20)
		return;
	fprintf(stdout, "FAIL: iteration %lu: ", iter);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

/*
 * One record: cookie, nr, ips[nr], the user addresses (after
 * PERF_CONTEXT_USER in the old form). Returns true if it is the whole chain.
 */
static bool check_record(unsigned long iter, const uint64_t *w, size_t words,
			 bool save)
{
	static bool first_old;
	const uint64_t *ips = w + 2;
	uint64_t nr, i;
	bool old;

	st.records++;
	if (words < 2 || (nr = w[1]) > words - 2) {
		fail(iter, "record of %zu words, nr %llu", words,
		     words > 1 ? (unsigned long long)w[1] : 0ULL);
		return false;
	}
	old = nr && ips[0] == (uint64_t)PERF_CONTEXT_USER;
	if (old) {
		st.old_form++;
		ips++;
		nr--;
	}
	/* One kernel writes one form: the first record's. */
	if (st.records == 1)
		first_old = old;
	else if (old != first_old)
		fail(iter, "record %s PERF_CONTEXT_USER, the first one %s", old ? "starts with" :
		     "does not start with", first_old ? "did" : "didn't");
	/* The interrupted IP is always there: a record is never empty. */
	if (!nr)
		fail(iter, "record without user address");
	if (nr > MAX_STACK)
		fail(iter, "record of %llu entries, max_stack %d",
		     (unsigned long long)nr, MAX_STACK);
	for (i = 0; i < nr; i++)
		if (ips[i] >= KERNEL_START)
			fail(iter, "entry %llu is a kernel address or context %#llx",
			     (unsigned long long)i, (unsigned long long)ips[i]);
	if (verbose > 2) {
		printf("%lu: record of %llu:", iter, (unsigned long long)nr);
		for (i = 0; i < nr; i++)
			printf(" %#llx", (unsigned long long)ips[i]);
		printf("\n");
	}
	if (!nr || ips[0] != (uintptr_t)kfuzz_fault_ip)
		return false;		/* another fault: not the chain */
	st.chain_records++;
	/* fault_page's and kf_leaf's frames are the program's (good section) */
	if (nr < 3 || ips[1] != fault_ret || ips[2] != leaf_ret) {
		fail(iter, "entries 1, 2 are %#llx %#llx, want fault_page's and kf_leaf's "
		     "return addresses %#lx %#lx", (unsigned long long)(nr > 1 ? ips[1] : 0),
		     (unsigned long long)(nr > 2 ? ips[2] : 0),
		     (unsigned long)fault_ret, (unsigned long)leaf_ret);
		return false;
	}
	if (save) {
		/* The whole chain: kf_mid, kf_entry, fuzz_one, sample, main... */
		if (nr < 7 || ips[3] != *kf_mid_ret || ips[4] != *kf_entry_ret ||
		    ips[5] != fuzz_one_ret) {
			fail(iter, "good section: not the whole chain (%llu entries: "
			     "%#llx %#llx %#llx, want %#lx %#lx %#lx)", (unsigned long long)nr,
			     (unsigned long long)(nr > 3 ? ips[3] : 0),
			     (unsigned long long)(nr > 4 ? ips[4] : 0),
			     (unsigned long long)(nr > 5 ? ips[5] : 0),
			     (unsigned long)*kf_mid_ret, (unsigned long)*kf_entry_ret,
			     (unsigned long)fuzz_one_ret);
			return false;
		}
		if (!good_nr) {
			good_nr = nr;
			memcpy(good_ips, ips, nr * 8);
		}
	}
	/* Up to sample(): its callers differ (the loop, good_check()). */
	return good_nr && nr >= 7 && !memcmp(good_ips, ips, 6 * 8);
}

static void drain(unsigned long iter, bool save, unsigned long *whole, unsigned long *recs)
{
	unsigned char *data = (unsigned char *)pc + pagesz;
	uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pc->data_tail, size = pc->data_size;
	static uint64_t w[65536 / 8];

	while (tail < head) {
		struct perf_event_header h;
		size_t i, n;

		for (i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(tail + i) & (size - 1)];
		n = h.size;
		if (n < sizeof(h))
			break;
		for (i = 0; i < n; i++)
			((unsigned char *)w)[i] = data[(tail + i) & (size - 1)];
		if (h.type == PERF_RECORD_SAMPLE) {
			st.samples++;
		} else if (h.type == PERF_RECORD_CALLCHAIN_DEFERRED) {
			(*recs)++;
			if (check_record(iter, w + 1, (n - sizeof(h)) / 8, save))
				(*whole)++;
		} else if (h.type == PERF_RECORD_LOST) {
			st.lost += w[2];
		}
		tail += n;
	}
	__atomic_store_n(&pc->data_tail, tail, __ATOMIC_RELEASE);
}

/* Sample the chain once: the records' count, and how many were whole. */
static void sample(unsigned long iter, bool save, unsigned long *whole, unsigned long *recs)
{
	ioctl(fd_out, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(fd_pf, PERF_EVENT_IOC_ENABLE, 0);
	fuzz_one(iter);
	ioctl(fd_pf, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(fd_out, PERF_EVENT_IOC_DISABLE, 0);
	drain(iter, save, whole, recs);
}

static long add(const void *sec, size_t len)
{
	return prctl(PR_ADD_SFRAME, (uintptr_t)sec, (uintptr_t)sec + len, text_start, text_end);
}

/* The unmutated v3 base: the whole chain, as at the start. */
static void good_check(unsigned long iter)
{
	unsigned long whole = 0, recs = 0;

	memcpy(buf, base[0].data, base[0].len);
	if (add(buf, base[0].len)) {
		fail(iter, "PR_ADD_SFRAME of the good section: %s", strerror(errno));
		return;
	}
	sample(iter, true, &whole, &recs);
	if (prctl(PR_REMOVE_SFRAME, (uintptr_t)buf, 0, 0, 0))
		fail(iter, "PR_REMOVE_SFRAME of the good section: %s", strerror(errno));
	st.good_checks++;
	if (whole < FAULTS)
		fail(iter, "good section: %lu of %lu records are the whole chain, want %d",
		     whole, recs, FAULTS);
}

int main(int argc, char **argv)
{
	unsigned long n = 10000, first = 0, good_every = 1000, i;
	uint64_t seed = 1;
	double seconds = 0, t0;
	const char *lib = NULL;
	struct timespec ts;
	void *h;
	int opt;

	while ((opt = getopt(argc, argv, "s:n:i:g:t:vh")) != -1) {
		switch (opt) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'n': n = strtoul(optarg, NULL, 0); break;
		case 'i': first = strtoul(optarg, NULL, 0); break;
		case 'g': good_every = strtoul(optarg, NULL, 0); break;
		case 't': seconds = atof(optarg); break;
		case 'v': verbose++; break;
		default: goto usage;
		}
	}
	if (optind != argc - 1 || !good_every)
		goto usage;
	lib = argv[optind];

	pagesz = sysconf(_SC_PAGESIZE);
	page = mmap(NULL, pagesz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		die("mmap");
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s: %s\n", prog, dlerror());
		return 1;
	}
	kf_entry = (long (*)(kf_cb, long))dlsym(h, "kf_entry");
	if (!kf_entry) {
		fprintf(stderr, "%s: %s has no kf_entry\n", prog, lib);
		return 1;
	}
	kf_mid_ret = dlsym(h, "kf_mid_ret");
	kf_entry_ret = dlsym(h, "kf_entry_ret");
	if (!kf_mid_ret || !kf_entry_ret) {
		fprintf(stderr, "%s: %s has no kf_mid_ret, kf_entry_ret\n", prog, lib);
		return 1;
	}
	dl_iterate_phdr(find_lib, (void *)strrchr(lib, '/') ? strrchr(lib, '/') + 1 : (void *)lib);
	if (!text_start) {
		fprintf(stderr, "%s: no executable segment for %s\n", prog, lib);
		return 1;
	}
	/* Near the library, for v2's 32-bit starts: a hint only. */
	buf = mmap((void *)(text_end + (64 << 20)), BUF_MAX, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap(section buffer)");
	make_bases(lib);
	open_events();
	good_check(0);
	if (st.failures)
		return 1;
	printf("# %s: text %#lx-%#lx, %zu FDEs; v3 %zu, v2 %zu, v2s %zu bytes; whole chain %llu entries\n",
	       lib, (unsigned long)text_start, (unsigned long)text_end, nfuncs,
	       base[0].len, base[1].len, base[2].len, (unsigned long long)good_nr);
	fflush(stdout);

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec + ts.tv_nsec / 1e9;
	for (i = first; i < first + n; i++) {
		uint64_t r = seed * 0x9e3779b97f4a7c15ULL ^ (i * 0xd1b54a32d192ed03ULL);
		unsigned long whole = 0, recs = 0;
		int which, how;
		size_t len;
		long ret;

		if (i > first && (i - first) % good_every == 0)
			good_check(i);
		if (seconds > 0 && (i - first) % 64 == 0) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			if (ts.tv_sec + ts.tv_nsec / 1e9 - t0 >= seconds)
				break;
		}
		st.iters++;
		len = mutate(&r, &which, &how);
		st.by_mutation[how]++;
		ret = add(buf, len);
		if (ret) {
			switch (errno) {
			case EINVAL: st.rejected++; break;
			default:
				fail(i, "PR_ADD_SFRAME (%s, %s, %zu bytes): %s, want 0 or EINVAL",
				     base[which].name, mname[how], len, strerror(errno));
				continue;
			}
			if (verbose > 1)
				printf("%lu: %s %s: EINVAL\n", i, base[which].name, mname[how]);
			/* No section: frame pointers, in code without them. */
			if (i % 16 == 0)
				sample(i, false, &whole, &recs);
			continue;
		}
		st.added++;
		sample(i, false, &whole, &recs);
		st.whole += whole;
		ret = prctl(PR_REMOVE_SFRAME, (uintptr_t)buf, 0, 0, 0);
		if (ret && errno == ENOENT)
			st.removed_by_kernel++;
		else if (ret)
			fail(i, "PR_REMOVE_SFRAME: %s, want 0 or ENOENT", strerror(errno));
		if (verbose > 1)
			printf("%lu: %s %s: added, %lu/%lu records whole, %s\n", i,
			       base[which].name, mname[how], whole, recs,
			       ret ? "removed by the kernel" : "removed");
		if (verbose && (i + 1) % 10000 == 0) {
			printf("# %lu sections\n", i + 1);
			fflush(stdout);
		}
	}
	good_check(i);
	clock_gettime(CLOCK_MONOTONIC, &ts);

	printf("sections: %lu (seed %llu, iterations %lu-%lu) in %.1f s\n", st.iters,
	       (unsigned long long)seed, first, i - 1, ts.tv_sec + ts.tv_nsec / 1e9 - t0);
	printf("  rejected by PR_ADD_SFRAME (EINVAL): %lu\n", st.rejected);
	printf("  registered: %lu, of them removed by the kernel when unwinding: %lu\n",
	       st.added, st.removed_by_kernel);
	printf("  samples %lu, records %lu (%lu of the old form), %lu at the sampled fault, "
	       "%lu of them whole, lost %lu\n", st.samples, st.records, st.old_form,
	       st.chain_records, st.whole, st.lost);
	printf("  good-section checks: %lu\n", st.good_checks);
	printf("  mutations:");
	for (i = 0; i < M_NR; i++)
		printf(" %s %lu", mname[i], st.by_mutation[i]);
	printf("\n%lu failures\n", st.failures);
	return st.failures ? 1 : 0;

usage:
	fprintf(stderr,
		"usage: %s [-s SEED] [-n COUNT] [-i FIRST] [-g EVERY] [-t SECONDS] [-v] LIB.so\n"
		"  Registers COUNT (10000) mutated copies of LIB.so's SFrame section over\n"
		"  its text with PR_ADD_SFRAME, iterations FIRST.. of SEED (1), samples a\n"
		"  call through LIB.so with a deferred callchain after each one that is\n"
		"  accepted, and checks every record; the good section is checked every\n"
		"  EVERY (1000) iterations.  -t stops after SECONDS.  -v: progress, -vv:\n"
		"  every iteration.  LIB.so: kfuzz-lib.so with SFrame (sframe-gen --inject).\n"
		"  Exit 0: every check held; 1: failures (named by iteration); 2: usage.\n",
		prog);
	return 2;
}
