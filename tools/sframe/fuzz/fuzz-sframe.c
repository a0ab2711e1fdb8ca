// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-sframe - libFuzzer target: raw SFrame section bytes through the
 * decoder and the dumper.
 *
 * Input: 8 bytes of section vaddr (little-endian), then the section.
 * sf_open() with that vaddr, sf_read_func() on every FDE, sf_dump() to
 * /dev/null: no crash, no leak, no UB.  When every FDE decodes and the
 * functions are sorted, disjoint and encodable, they are encoded again
 * (same version, start encoding and vaddr) and must decode to the same
 * functions: decode -> encode -> decode.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sframe.h"

static FILE *devnull;

#define FAIL(...)                                                        \
	do {                                                             \
		fprintf(stderr, "fuzz-sframe: oracle: " __VA_ARGS__);    \
		fputc('\n', stderr);                                     \
		abort();                                                 \
	} while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	return 0;
}

static bool row_eq(const struct sf_row *a, const struct sf_row *b)
{
	if (a->start != b->start || a->ra.kind != b->ra.kind)
		return false;
	if (a->ra.kind == SF_UNDEFINED)
		return true;
	return sf_rule_eq(&a->cfa, &b->cfa) && sf_rule_eq(&a->ra, &b->ra) &&
	       sf_rule_eq(&a->fp, &b->fp);
}

static void func_cmp(const struct sf_func *a, const struct sf_func *b,
		     uint32_t i)
{
	if (a->start != b->start || a->size != b->size ||
	    a->signal != b->signal || a->flex != b->flex ||
	    a->mask != b->mask || (a->mask && a->rep_size != b->rep_size) ||
	    a->nrows != b->nrows)
		FAIL("re-encoded FDE %u at 0x%" PRIx64 "+0x%x (s%d f%d m%d "
		     "rep %u, %u rows) decodes as 0x%" PRIx64 "+0x%x (s%d f%d "
		     "m%d rep %u, %u rows)", i, a->start, a->size, a->signal,
		     a->flex, a->mask, a->rep_size, a->nrows, b->start,
		     b->size, b->signal, b->flex, b->mask, b->rep_size,
		     b->nrows);
	for (uint32_t j = 0; j < a->nrows; j++)
		if (!row_eq(&a->rows[j], &b->rows[j]))
			FAIL("re-encoded FDE %u at 0x%" PRIx64 ": row %u "
			     "differs", i, a->start, j);
}

static void reencode(const struct sf_sec *s, const struct sf_func *f,
		     uint32_t n)
{
	struct sf_enc_opts o = {
		.version = s->version,
		.pcrel = s->flags & SFRAME_F_FDE_FUNC_START_PCREL,
		.vaddr = s->vaddr,
	};
	struct sf_sec s2;
	uint8_t *sec = NULL;
	size_t len;
	char err[512];

	for (uint32_t i = 0; i < n; i++) {
		if (sf_func_encodable(&f[i], s->version))
			return;
		if (i && f[i].start < f[i - 1].start + f[i - 1].size)
			return;
		/* the encoder refuses a function that wraps around */
		if (f[i].start + f[i].size < f[i].start)
			return;
	}
	if (sf_encode(f, n, &o, &sec, &len, err, sizeof(err))) {
		/* v2's 32-bit start offsets are relative to other fields now */
		if (s->version == 2 && strstr(err, "doesn't fit"))
			return;
		FAIL("sf_encode of decodable functions: %s", err);
	}
	if (sf_open(&s2, sec, len, s->vaddr, err, sizeof(err)))
		FAIL("sf_open of the re-encoding: %s", err);
	if (s2.num_fdes != n || s2.version != s->version)
		FAIL("re-encoding: v%u with %u FDEs, want v%u with %u",
		     s2.version, s2.num_fdes, s->version, n);
	for (uint32_t i = 0; i < n; i++) {
		struct sf_func g;

		if (sf_read_func(&s2, i, &g, err, sizeof(err)))
			FAIL("re-encoded FDE %u doesn't decode: %s", i, err);
		func_cmp(&f[i], &g, i);
		free(g.rows);
	}
	free(sec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sf_sec s;
	struct sf_func *funcs;
	uint64_t vaddr = 0;
	uint8_t *buf;
	uint32_t n = 0;
	bool all = true;
	char err[512];

	if (size < 8)
		return 0;
	for (int i = 0; i < 8; i++)
		vaddr |= (uint64_t)data[i] << (8 * i);
	size -= 8;
	/* exactly the section's size, so that ASan sees every overread */
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 8, size);
	if (sf_open(&s, buf, size, vaddr, err, sizeof(err))) {
		if (!strstr(err, "offset "))
			FAIL("sf_open error without an offset: %s", err);
		free(buf);
		return 0;
	}
	/* one entry per FDE at most: sf_open checked the index fits */
	funcs = calloc(s.num_fdes ? s.num_fdes : 1, sizeof(*funcs));
	if (!funcs)
		abort();
	for (uint32_t i = 0; i < s.num_fdes; i++) {
		if (sf_read_func(&s, i, &funcs[n], err, sizeof(err))) {
			if (funcs[n].rows)
				FAIL("sf_read_func failed but left rows");
			all = false;
			continue;
		}
		n++;
	}
	if (all)
		reencode(&s, funcs, n);
	sf_funcs_free(funcs, n);
	if (sf_dump(&s, "fuzz", devnull, err, sizeof(err)) != (all ? 0 : -1))
		FAIL("sf_dump's result disagrees with sf_read_func's");
	if (memcmp(buf, data + 8, size))
		FAIL("the input was modified");
	free(buf);
	return 0;
}
