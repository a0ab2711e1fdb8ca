// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-write.c - encode SFrame functions as an SFrame v2 or v3 section.
 *
 * Minimal encoding: per function the smallest FRE start size that holds
 * its last row's offset, per row the smallest data-word size that holds
 * all of its words, FLEX padding words only where a later word needs
 * them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sframe.h"

static bool rule_default_fp(const struct sf_rule *r)
{
	return r->kind == SF_UNCHANGED ||
	       (r->kind == SF_RULE && !r->reg_p && r->deref);
}

bool sf_row_default(const struct sf_row *r)
{
	if (r->ra.kind == SF_UNDEFINED)
		return true;
	return r->cfa.kind == SF_RULE && r->cfa.reg_p && !r->cfa.deref &&
	       (r->cfa.reg == DW_X86_RSP || r->cfa.reg == DW_X86_RBP) &&
	       r->ra.kind == SF_UNCHANGED && rule_default_fp(&r->fp);
}

/* A FLEX rule needs a control word that isn't 0 (0 is padding). */
static bool flex_rule_ok(const struct sf_rule *r, bool cfa)
{
	if (r->kind == SF_UNCHANGED)
		return !cfa;
	if (r->kind != SF_RULE)
		return false;
	if (cfa && !r->reg_p)
		return false;
	return (r->reg_p && r->reg <= 31) || r->deref;
}

const char *sf_func_encodable(const struct sf_func *f, int version)
{
	uint32_t last = 0;

	if (version != 2 && version != 3)
		return "unknown SFrame version";
	if (!f->size)
		return "zero-size function";
	if (version == 2 && f->signal)
		return "signal frame needs SFrame v3";
	if (version == 2 && f->flex)
		return "FLEX FDE needs SFrame v3";
	if (version == 3 && f->nrows > UINT16_MAX)
		return "more than 65535 rows";
	if (f->mask && (!f->rep_size || !f->nrows))
		return "PC-mask function without rep_size or rows";
	for (uint32_t i = 0; i < f->nrows; i++) {
		const struct sf_row *r = &f->rows[i];

		if (i && r->start <= last)
			return "rows not in ascending order";
		last = r->start;
		if (r->start >= (f->mask ? f->rep_size : f->size))
			return "row starts past the function";
		if (r->ra.kind == SF_UNDEFINED)
			continue;
		if (!f->flex && !sf_row_default(r))
			return "row needs a FLEX FDE";
		if (f->flex && (!flex_rule_ok(&r->cfa, true) ||
				!flex_rule_ok(&r->ra, false) ||
				!flex_rule_ok(&r->fp, false)))
			return "rule not expressible in a FLEX FDE";
	}
	return NULL;
}

struct buf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

static void put(struct buf *b, uint64_t v, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		uint8_t *np;

		while (cap < b->len + n)
			cap *= 2;
		np = realloc(b->p, cap);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	for (size_t i = 0; i < n; i++)
		b->p[b->len++] = (uint8_t)(v >> (8 * i));
}

static void patch(struct buf *b, size_t at, uint64_t v, size_t n)
{
	if (b->oom)
		return;
	for (size_t i = 0; i < n; i++)
		b->p[at + i] = (uint8_t)(v >> (8 * i));
}

static uint32_t flex_ctl(const struct sf_rule *r)
{
	if (r->kind != SF_RULE)
		return 0;
	return (r->reg_p ? ((uint32_t)r->reg << 3) | SFRAME_FLEX_REG_P : 0) |
	       (r->deref ? SFRAME_FLEX_DEREF_P : 0);
}

/* Data words of a row; returns their count. */
static int row_words(const struct sf_func *f, const struct sf_row *r,
		     int64_t w[6], bool *base_sp)
{
	int n = 0;

	*base_sp = false;
	if (r->ra.kind == SF_UNDEFINED)
		return 0;
	if (!f->flex) {
		*base_sp = r->cfa.reg == DW_X86_RSP;
		w[n++] = r->cfa.off;
		if (r->fp.kind == SF_RULE)
			w[n++] = r->fp.off;
		return n;
	}
	w[n++] = flex_ctl(&r->cfa);
	w[n++] = r->cfa.off;
	if (r->ra.kind != SF_RULE && r->fp.kind != SF_RULE)
		return n;		/* no padding at the end */
	w[n++] = flex_ctl(&r->ra);
	if (r->ra.kind == SF_RULE)
		w[n++] = r->ra.off;
	if (r->fp.kind != SF_RULE)
		return n;
	w[n++] = flex_ctl(&r->fp);
	w[n++] = r->fp.off;
	return n;
}

static int word_size_code(const int64_t *w, int n)
{
	int code = 0;

	for (int i = 0; i < n; i++) {
		if (w[i] < INT16_MIN || w[i] > INT16_MAX)
			code = 2;
		else if ((w[i] < INT8_MIN || w[i] > INT8_MAX) && code < 1)
			code = 1;
	}
	return code;
}

static void put_fres(struct buf *b, const struct sf_func *f, int fre_type)
{
	static const size_t start_size[] = { 1, 2, 4 };

	for (uint32_t i = 0; i < f->nrows; i++) {
		const struct sf_row *r = &f->rows[i];
		int64_t w[6];
		bool sp;
		int n = row_words(f, r, w, &sp);
		int ws = word_size_code(w, n);

		put(b, r->start, start_size[fre_type]);
		put(b, (sp ? SFRAME_FRE_BASE_SP : 0) | (n << 1) | (ws << 5), 1);
		for (int j = 0; j < n; j++)
			put(b, (uint64_t)w[j], (size_t)1 << ws);
	}
}

static int fre_type_of(const struct sf_func *f)
{
	uint32_t max = f->nrows ? f->rows[f->nrows - 1].start : 0;

	if (max <= UINT8_MAX)
		return SFRAME_FRE_TYPE_ADDR1;
	if (max <= UINT16_MAX)
		return SFRAME_FRE_TYPE_ADDR2;
	return SFRAME_FRE_TYPE_ADDR4;
}

int sf_encode(const struct sf_func *funcs, size_t nfuncs,
	      const struct sf_enc_opts *o, uint8_t **out, size_t *outlen,
	      char *err, size_t errlen)
{
	size_t ent = o->version == 3 ? SFRAME_V3_FDE_SIZE : SFRAME_V2_FDE_SIZE;
	bool pcrel = o->version == 3 || o->pcrel;
	struct buf fres = { 0 }, b = { 0 };
	uint64_t num_fres = 0;
	size_t idx;

	if (o->version != 2 && o->version != 3) {
		snprintf(err, errlen, "SFrame version %d: only 2 and 3", o->version);
		return -1;
	}
	if (nfuncs > UINT32_MAX / ent) {
		snprintf(err, errlen, "%zu functions: too many for one section",
			 nfuncs);
		return -1;
	}
	put(&b, SFRAME_MAGIC, 2);
	put(&b, o->version, 1);
	put(&b, SFRAME_F_FDE_SORTED | (pcrel ? SFRAME_F_FDE_FUNC_START_PCREL : 0), 1);
	put(&b, SFRAME_ABI_AMD64_LE, 1);
	put(&b, 0, 1);				/* cfa_fixed_fp_offset */
	put(&b, (uint8_t)SFRAME_AMD64_RA_OFFSET, 1);
	put(&b, 0, 1);				/* auxhdr_len */
	put(&b, nfuncs, 4);
	put(&b, 0, 4);				/* num_fres, patched */
	put(&b, 0, 4);				/* fre_len, patched */
	put(&b, 0, 4);				/* fdes_off */
	put(&b, nfuncs * ent, 4);		/* fres_off */

	idx = b.len;
	for (size_t i = 0; i < nfuncs; i++) {
		const struct sf_func *f = &funcs[i];
		uint64_t field = o->vaddr + idx + i * ent;
		int64_t start = (int64_t)(f->start - (pcrel ? field : o->vaddr));
		const char *why = sf_func_encodable(f, o->version);
		int ft = fre_type_of(f);
		uint8_t info = ft | (f->mask ? SFRAME_FDE_PCTYPE_MASK << 4 : 0);

		if (why) {
			snprintf(err, errlen, "function at 0x%" PRIx64 ": %s",
				 f->start, why);
			goto fail;
		}
		if (i && f->start < funcs[i - 1].start + funcs[i - 1].size) {
			snprintf(err, errlen, "function at 0x%" PRIx64
				 " overlaps or precedes the one before",
				 f->start);
			goto fail;
		}
		if (fres.len > UINT32_MAX) {
			snprintf(err, errlen, "FRE sub-section over 4 GiB");
			goto fail;
		}
		if (o->version == 2) {
			if (start < INT32_MIN || start > INT32_MAX) {
				snprintf(err, errlen, "function at 0x%" PRIx64
					 ": start offset %" PRId64
					 " doesn't fit SFrame v2's 32 bits",
					 f->start, start);
				goto fail;
			}
			put(&b, (uint64_t)start, 4);
			put(&b, f->size, 4);
			put(&b, fres.len, 4);
			put(&b, f->nrows, 4);
			put(&b, info, 1);
			put(&b, f->rep_size, 1);
			put(&b, 0, 2);
		} else {
			if (f->signal)
				info |= SFRAME_INFO_SIGNAL;
			put(&b, (uint64_t)start, 8);
			put(&b, f->size, 4);
			put(&b, fres.len, 4);
			put(&fres, f->nrows, 2);
			put(&fres, info, 1);
			put(&fres, f->flex ? SFRAME_FDE_TYPE_FLEX :
					     SFRAME_FDE_TYPE_DEFAULT, 1);
			put(&fres, f->rep_size, 1);
		}
		put_fres(&fres, f, ft);
		num_fres += f->nrows;
	}
	if (fres.len > UINT32_MAX || num_fres > UINT32_MAX) {
		snprintf(err, errlen, "FRE sub-section too large");
		goto fail;
	}
	patch(&b, 12, num_fres, 4);
	patch(&b, 16, fres.len, 4);
	for (size_t i = 0; i < fres.len && !fres.oom; i++)
		put(&b, fres.p[i], 1);
	if (b.oom || fres.oom) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	free(fres.p);
	*out = b.p;
	*outlen = b.len;
	return 0;
fail:
	free(fres.p);
	free(b.p);
	return -1;
}

void sf_funcs_free(struct sf_func *funcs, size_t n)
{
	if (!funcs)
		return;
	for (size_t i = 0; i < n; i++)
		free(funcs[i].rows);
	free(funcs);
}
