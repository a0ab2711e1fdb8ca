// SPDX-License-Identifier: GPL-2.0
/*
 * profile-work - a CPU-bound program to profile, with the call structure
 * of a real one: each block of work generates text, counts its words in a
 * hash table, compresses it (LZ77 in the style of LZ4, whose 16 KiB hash
 * table lives on the compressor's stack as in LZ4_compress_default),
 * hashes the output, sorts keys with a recursive quicksort and evaluates
 * a random expression tree recursively; libc's memcpy and memcmp do some
 * of the copying.  The call graph (tests/bench/profile-report.py checks
 * the stacks against it):
 *
 *   main -> run_work -> process_block -> gen_text -> pick_word
 *                                     -> count_words -> ht_insert -> hash_bytes -> mix64
 *                                     -> lz_compress -> lz_match_len
 *                                     -> hash_bytes -> mix64
 *                                     -> sort_keys -> qs_sort (recursive) -> qs_partition
 *                                                             -> ins_sort
 *                                     -> tree_build (recursive)
 *                                     -> tree_eval (recursive)
 *
 * Usage: profile-work ITERS      run ITERS blocks, print
 *                                "work_ns=N cpu_ns=N iters=N checksum=X"
 *        profile-work -c MS      print the ITERS that take about MS ms
 *        profile-work -p ITERS   also print the time of each phase
 * work_ns is CLOCK_MONOTONIC around the work alone (not the program's
 * start or exit), cpu_ns the process's CPU time over the same work.  The
 * checksum depends only on ITERS: every build computes the same.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
#define BLOCK	16384		/* bytes of text per block */
#define NKEYS	1024		/* keys sorted per block */
#define HT_SIZE	1024		/* word-count table slots */
#define LZ_HASH_LOG	12	/* 4096 x 4 bytes: the 16 KiB table of LZ4 */
#define TREE_NODES	4096

static uint64_t rng_state;

static inline uint64_t rng(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

/* gen_text: words from a small vocabulary, so that there is something to compress. */
static const char *const words[] = {
	"the", "kernel", "unwinds", "user", "stacks", "from", "sframe", "data",
	"frame", "pointer", "deferred", "callchain", "sample", "perf", "record",
	"profile", "return", "address", "function", "table", "lookup", "binary",
	"search", "section", "program", "header", "offset", "register", "stack",
	"of", "and", "a", "to", "in", "is", "it", "that", "for", "on", "with",
};
#define NWORDS (sizeof(words) / sizeof(words[0]))

NOINLINE const char *pick_word(size_t *len)
{
	/* Zipf-like: low indices more often. */
	uint64_t r = rng();
	size_t i = (r & 0xff) < 160 ? (r >> 8) % 10 : (r >> 8) % NWORDS;

	*len = strlen(words[i]);
	return words[i];
}

NOINLINE size_t gen_text(char *buf, size_t size)
{
	size_t n = 0, len;

	while (n + 16 < size) {
		const char *w = pick_word(&len);

		memcpy(buf + n, w, len);
		n += len;
		buf[n++] = (rng() & 7) ? ' ' : '\n';
	}
	memset(buf + n, ' ', size - n);
	return size;
}

NOINLINE uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* FNV-1a over the bytes, 8 at a time, finished by mix64. */
NOINLINE uint64_t hash_bytes(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ s[i]) * 0x100000001b3ULL;
	return mix64(h);
}

/* Word counting: open addressing, keys compared with memcmp. */
struct ht_slot {
	const char *word;
	uint32_t len, count;
};

NOINLINE void ht_insert(struct ht_slot *ht, const char *w, size_t len)
{
	size_t i = hash_bytes(w, len) & (HT_SIZE - 1);

	while (ht[i].word) {
		if (ht[i].len == len && !memcmp(ht[i].word, w, len)) {
			ht[i].count++;
			return;
		}
		i = (i + 1) & (HT_SIZE - 1);
	}
	ht[i].word = w;
	ht[i].len = len;
	ht[i].count = 1;
}

NOINLINE uint64_t count_words(const char *buf, size_t size, struct ht_slot *ht)
{
	uint64_t sum = 0;
	size_t i = 0;

	memset(ht, 0, HT_SIZE * sizeof(*ht));
	while (i < size) {
		size_t j = i;

		while (j < size && buf[j] != ' ' && buf[j] != '\n')
			j++;
		if (j > i)
			ht_insert(ht, buf + i, j - i);
		i = j + 1;
	}
	for (i = 0; i < HT_SIZE; i++)
		sum += (uint64_t)ht[i].count * ht[i].len;
	return sum;
}

/* LZ77 in the style of LZ4: 4-byte hash, greedy matches. */
NOINLINE size_t lz_match_len(const unsigned char *a, const unsigned char *b,
			     const unsigned char *end)
{
	const unsigned char *start = a;

	while (a + 8 <= end) {
		uint64_t x, y;

		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		if (x != y)
			return a - start + (__builtin_ctzll(x ^ y) >> 3);
		a += 8;
		b += 8;
	}
	while (a < end && *a == *b)
		a++, b++;
	return a - start;
}

NOINLINE size_t lz_compress(const unsigned char *in, size_t len, unsigned char *out)
{
	uint32_t table[1 << LZ_HASH_LOG];	/* on the stack, as in LZ4 */
	size_t ip = 0, anchor = 0, op = 0;

	memset(table, 0, sizeof(table));
	while (ip + 12 < len) {
		uint32_t seq, h, ref;
		size_t m;

		memcpy(&seq, in + ip, 4);
		h = (seq * 2654435761U) >> (32 - LZ_HASH_LOG);
		ref = table[h];
		table[h] = ip;
		if (ref >= ip || ip - ref > 65535 || memcmp(in + ref, in + ip, 4)) {
			ip++;
			continue;
		}
		m = 4 + lz_match_len(in + ip + 4, in + ref + 4, in + len - 5);
		/* token, literal run, offset, match length */
		out[op++] = (ip - anchor) > 15 ? 0xf0 : (ip - anchor) << 4;
		memcpy(out + op, in + anchor, ip - anchor);
		op += ip - anchor;
		out[op++] = (ip - ref) & 0xff;
		out[op++] = (ip - ref) >> 8;
		out[op++] = m > 255 ? 255 : m;
		ip += m;
		anchor = ip;
	}
	memcpy(out + op, in + anchor, len - anchor);
	return op + len - anchor;
}

/* Sorting: recursive quicksort, median of three, insertion sort below 16. */
NOINLINE void ins_sort(uint64_t *a, long n)
{
	for (long i = 1; i < n; i++) {
		uint64_t v = a[i];
		long j = i - 1;

		while (j >= 0 && a[j] > v) {
			a[j + 1] = a[j];
			j--;
		}
		a[j + 1] = v;
	}
}

NOINLINE long qs_partition(uint64_t *a, long n)
{
	uint64_t x = a[0], y = a[n / 2], z = a[n - 1], p, t;
	long i = -1, j = n;

	p = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
	for (;;) {
		do i++; while (a[i] < p);
		do j--; while (a[j] > p);
		if (i >= j)
			return j + 1;
		t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

NOINLINE void qs_sort(uint64_t *a, long n)
{
	long k;

	if (n < 16) {
		ins_sort(a, n);
		return;
	}
	k = qs_partition(a, n);
	qs_sort(a, k);
	qs_sort(a + k, n - k);
}

NOINLINE uint64_t sort_keys(const unsigned char *buf, size_t size, uint64_t *keys)
{
	uint64_t sum = 0;

	for (long i = 0; i < NKEYS; i++) {
		uint64_t k;

		memcpy(&k, buf + (rng() % (size - 8)), 8);
		keys[i] = k ^ rng();
	}
	qs_sort(keys, NKEYS);
	for (long i = 1; i < NKEYS; i++)
		sum += (keys[i] - keys[i - 1]) >> 40;
	return sum;
}

/* A random expression tree, built and evaluated recursively. */
struct node {
	int op;			/* 0: leaf, 1: +, 2: *, 3: ^ */
	uint64_t val;
	struct node *l, *r;
};

NOINLINE struct node *tree_build(struct node *pool, int *used, int depth)
{
	struct node *n = &pool[(*used)++];

	if (depth == 0 || *used >= TREE_NODES || (rng() & 7) == 0) {
		n->op = 0;
		n->val = rng() & 0xffff;
		n->l = n->r = NULL;
		return n;
	}
	n->op = 1 + rng() % 3;
	n->l = tree_build(pool, used, depth - 1);
	n->r = tree_build(pool, used, depth - 1);
	return n;
}

NOINLINE uint64_t tree_eval(const struct node *n)
{
	uint64_t a, b;

	if (!n->op)
		return n->val;
	a = tree_eval(n->l);
	b = tree_eval(n->r);
	switch (n->op) {
	case 1: return a + b;
	case 2: return a * (b | 1);
	default: return (a ^ b) + (a >> 3);
	}
}

struct work {
	char text[BLOCK];
	unsigned char packed[BLOCK + BLOCK / 8 + 64];
	uint64_t keys[NKEYS];
	struct ht_slot ht[HT_SIZE];
	struct node pool[TREE_NODES + 16];	/* + the right children pending */
	double phase_ns[6];
};

static int show_phases;

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

#define PHASE(i, expr) do {						\
	uint64_t t0_ = show_phases ? now_ns(CLOCK_MONOTONIC) : 0;	\
	expr;								\
	if (show_phases)						\
		w->phase_ns[i] += now_ns(CLOCK_MONOTONIC) - t0_;	\
} while (0)

NOINLINE uint64_t process_block(struct work *w)
{
	uint64_t sum = 0;
	size_t plen = 0;
	int used = 0;
	struct node *root = NULL;

	PHASE(0, gen_text(w->text, BLOCK));
	PHASE(1, sum += count_words(w->text, BLOCK, w->ht));
	PHASE(2, plen = lz_compress((unsigned char *)w->text, BLOCK, w->packed));
	PHASE(3, sum ^= hash_bytes(w->packed, plen) + plen);
	PHASE(4, sum += sort_keys((unsigned char *)w->text, BLOCK, w->keys));
	PHASE(5, root = tree_build(w->pool, &used, 16); sum += tree_eval(root) + used);
	return sum;
}

NOINLINE uint64_t run_work(struct work *w, long iters)
{
	uint64_t sum = 0;

	rng_state = 0x9e3779b97f4a7c15ULL;
	for (long i = 0; i < iters; i++)
		sum = mix64(sum + process_block(w));
	return sum;
}

int main(int argc, char **argv)
{
	static const char *const names[] = {
		"gen_text", "count_words", "lz_compress", "hash_bytes", "sort_keys", "tree",
	};
	struct work *w = calloc(1, sizeof(*w));
	uint64_t t0, c0, t1, c1, sum;
	long iters;
	char *end;

	if (argc == 3 && !strcmp(argv[1], "-p"))
		show_phases = 1, argv++, argc--;
	if (!w || (argc != 2 && !(argc == 3 && !strcmp(argv[1], "-c")))) {
		fprintf(stderr, "usage: %s [-p] ITERS | -c MILLISECONDS\n", argv[0]);
		return 2;
	}
	if (argc == 3) {
		/* Calibrate: double the work until it takes 200 ms. */
		double ms = strtod(argv[2], &end);

		if (*end || ms <= 0)
			return 2;
		for (iters = 1; ; iters *= 2) {
			t0 = now_ns(CLOCK_MONOTONIC);
			run_work(w, iters);
			t1 = now_ns(CLOCK_MONOTONIC) - t0;
			if (t1 >= 200000000ULL)
				break;
		}
		printf("%ld\n", (long)(iters * ms * 1e6 / t1 + 0.5) ?: 1);
		return 0;
	}
	iters = strtol(argv[1], &end, 10);
	if (*end || iters <= 0) {
		fprintf(stderr, "%s: ITERS must be a positive number\n", argv[0]);
		return 2;
	}
	t0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	sum = run_work(w, iters);
	c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	t1 = now_ns(CLOCK_MONOTONIC);
	printf("work_ns=%llu cpu_ns=%llu iters=%ld checksum=%016llx\n",
	       (unsigned long long)(t1 - t0), (unsigned long long)(c1 - c0), iters,
	       (unsigned long long)sum);
	for (int i = 0; show_phases && i < 6; i++)
		printf("phase %-12s %5.1f%%\n", names[i],
		       100 * w->phase_ns[i] / (t1 - t0));
	return 0;
}
