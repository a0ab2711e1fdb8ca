// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-read.c - decode an SFrame v2/v3 section (x86-64) defensively, and
 * print it the way GNU objdump --sframe (binutils 2.46) does.
 *
 * Nothing is trusted: every count and offset is checked against the
 * section before it is used, and every error names the offset.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sframe.h"

static uint64_t get(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static int64_t sget(const uint8_t *p, size_t n)
{
	uint64_t v = get(p, n);

	if (n < 8 && (v & (1ULL << (8 * n - 1))))
		v |= ~0ULL << (8 * n);
	return (int64_t)v;
}

static size_t fde_size(const struct sf_sec *s)
{
	return s->version == 3 ? SFRAME_V3_FDE_SIZE : SFRAME_V2_FDE_SIZE;
}

int sf_open(struct sf_sec *s, const void *buf, size_t len, uint64_t vaddr,
	    char *err, size_t errlen)
{
	struct sf_hdr h;

	memset(s, 0, sizeof(*s));
	if (sf_hdr_check(buf, len, &h, err, errlen))
		return -1;
	s->buf = buf;
	s->len = len;
	s->vaddr = vaddr;
	s->version = h.version;
	s->flags = h.flags;
	s->abi = h.abi;
	s->fp_off = h.fp_off;
	s->ra_off = h.ra_off;
	s->num_fdes = h.num_fdes;
	s->num_fres = h.num_fres;
	s->fre_len = h.fre_len;
	s->fdes = h.fdes;
	s->fres = h.fres;
	return 0;
}

size_t sf_fde_start_field(const struct sf_sec *s, uint32_t i)
{
	return s->fdes + (size_t)i * fde_size(s);
}

/* One FRE at *off (relative to the FRE sub-section). */
static int read_fre(const struct sf_sec *s, const struct sf_func *f,
		    uint32_t i, int fre_type, size_t *off, struct sf_row *r,
		    char *err, size_t errlen)
{
	static const size_t start_size[] = { 1, 2, 4 };
	const uint8_t *base = s->buf + s->fres;
	size_t ss = start_size[fre_type], at = *off, ws;
	int64_t w[15];
	uint8_t info;
	int n, k = 0;

	memset(r, 0, sizeof(*r));
	if (at + ss + 1 > s->fre_len) {
		snprintf(err, errlen, "offset 0x%zx: FRE %u of the function at "
			 "0x%" PRIx64 " runs past the FRE sub-section",
			 s->fres + at, i, f->start);
		return -1;
	}
	r->start = (uint32_t)get(base + at, ss);
	info = base[at + ss];
	n = SFRAME_FRE_NWORDS(info);
	if (SFRAME_FRE_WSIZE(info) == 3) {
		snprintf(err, errlen, "offset 0x%zx: FRE word size code 3 is "
			 "reserved", s->fres + at + ss);
		return -1;
	}
	ws = (size_t)1 << SFRAME_FRE_WSIZE(info);
	if (info & SFRAME_FRE_MANGLED_RA) {
		snprintf(err, errlen, "offset 0x%zx: mangled-RA bit set (not "
			 "amd64)", s->fres + at + ss);
		return -1;
	}
	at += ss + 1;
	if (at + n * ws > s->fre_len) {
		snprintf(err, errlen, "offset 0x%zx: FRE %u's %d words of %zu "
			 "bytes run past the FRE sub-section", s->fres + at, i,
			 n, ws);
		return -1;
	}
	for (int j = 0; j < n; j++)
		w[j] = sget(base + at + j * ws, ws);
	*off = at + n * ws;
	r->nwords = n;
	r->cfa.kind = r->ra.kind = r->fp.kind = SF_UNCHANGED;
	if (n == 0) {
		r->ra.kind = SF_UNDEFINED;
		return 0;
	}
	if (!f->flex) {
		if (n > 2) {
			snprintf(err, errlen, "offset 0x%zx: %d data words in a "
				 "DEFAULT amd64 FRE (at most 2)", s->fres + at, n);
			return -1;
		}
		r->cfa = (struct sf_rule){ .kind = SF_RULE, .reg_p = true,
			.reg = (info & SFRAME_FRE_BASE_SP) ? DW_X86_RSP : DW_X86_RBP,
			.off = (int32_t)w[0] };
		if (n == 2)
			r->fp = (struct sf_rule){ .kind = SF_RULE, .deref = true,
						  .off = (int32_t)w[1] };
		return 0;
	}
	/* FLEX: (control, offset) pairs for CFA, RA, FP; control 0 = padding */
	for (int rule = 0; rule < 3 && k < n; rule++) {
		struct sf_rule *x = rule == 0 ? &r->cfa : rule == 1 ? &r->ra : &r->fp;
		uint32_t ctl = (uint32_t)((uint64_t)w[k++] &
					  ((ws == 4) ? 0xffffffffu : ((1u << (8 * ws)) - 1)));

		if (!ctl) {
			if (rule == 0) {
				snprintf(err, errlen, "offset 0x%zx: FLEX FRE %u "
					 "has no CFA rule", s->fres + *off, i);
				return -1;
			}
			continue;
		}
		if ((ctl & 0x4) || (!(ctl & SFRAME_FLEX_REG_P) && (ctl >> 3)) ||
		    (!(ctl & SFRAME_FLEX_REG_P) && !(ctl & SFRAME_FLEX_DEREF_P)) ||
		    SFRAME_FLEX_REG(ctl) > 31 ||
		    (rule == 0 && !(ctl & SFRAME_FLEX_REG_P))) {
			snprintf(err, errlen, "offset 0x%zx: FLEX FRE %u: bad "
				 "control word 0x%x for the %s", s->fres + *off, i,
				 ctl, rule == 0 ? "CFA" : rule == 1 ? "RA" : "FP");
			return -1;
		}
		if (k >= n) {
			snprintf(err, errlen, "offset 0x%zx: FLEX FRE %u: control "
				 "word without its offset", s->fres + *off, i);
			return -1;
		}
		*x = (struct sf_rule){ .kind = SF_RULE,
			.reg_p = ctl & SFRAME_FLEX_REG_P,
			.deref = ctl & SFRAME_FLEX_DEREF_P,
			.reg = (uint8_t)SFRAME_FLEX_REG(ctl),
			.off = (int32_t)w[k++] };
	}
	if (k < n) {
		snprintf(err, errlen, "offset 0x%zx: FLEX FRE %u: %d words left "
			 "over after CFA, RA and FP", s->fres + *off, i, n - k);
		return -1;
	}
	return 0;
}

int sf_read_func(const struct sf_sec *s, uint32_t i, struct sf_func *f,
		 char *err, size_t errlen)
{
	size_t e = sf_fde_start_field(s, i), off;
	const uint8_t *p = s->buf + e;
	uint64_t field = s->vaddr + e, nfres, fre_off;
	uint8_t info, info2 = 0;
	int64_t start;

	memset(f, 0, sizeof(*f));
	if (i >= s->num_fdes) {
		snprintf(err, errlen, "FDE %u: only %u FDEs", i, s->num_fdes);
		return -1;
	}
	if (s->version == 3) {
		start = sget(p, 8);
		f->size = (uint32_t)get(p + 8, 4);
		fre_off = get(p + 12, 4);
		if (fre_off + SFRAME_V3_ATTR_SIZE > s->fre_len) {
			snprintf(err, errlen, "offset 0x%zx: FDE %u's attribute at "
				 "FRE offset 0x%" PRIx64 " is past the FREs (0x%x)",
				 e + 12, i, fre_off, s->fre_len);
			return -1;
		}
		p = s->buf + s->fres + fre_off;
		nfres = get(p, 2);
		info = p[2];
		info2 = p[3];
		f->rep_size = p[4];
		off = fre_off + SFRAME_V3_ATTR_SIZE;
		if (info2 & ~0x1f || (info2 & 0x1f) > SFRAME_FDE_TYPE_FLEX) {
			snprintf(err, errlen, "offset 0x%zx: FDE %u: unknown FDE "
				 "type 0x%x", s->fres + fre_off + 3, i, info2);
			return -1;
		}
		f->flex = (info2 & 0x1f) == SFRAME_FDE_TYPE_FLEX;
		f->signal = info & SFRAME_INFO_SIGNAL;
		if (info & 0x40) {
			snprintf(err, errlen, "offset 0x%zx: FDE %u: reserved info "
				 "bit 6 set", s->fres + fre_off + 2, i);
			return -1;
		}
	} else {
		start = sget(p, 4);
		f->size = (uint32_t)get(p + 4, 4);
		fre_off = get(p + 8, 4);
		nfres = get(p + 12, 4);
		info = p[16];
		f->rep_size = p[17];
		off = fre_off;
		if (info & 0xc0) {
			snprintf(err, errlen, "offset 0x%zx: FDE %u: reserved info "
				 "bits 0x%x set", e + 16, i, info & 0xc0);
			return -1;
		}
		if (off > s->fre_len) {
			snprintf(err, errlen, "offset 0x%zx: FDE %u's FREs at 0x%"
				 PRIx64 " are past the FREs (0x%x)", e + 8, i,
				 fre_off, s->fre_len);
			return -1;
		}
	}
	f->start = (uint64_t)start +
		   ((s->flags & SFRAME_F_FDE_FUNC_START_PCREL) ? field : s->vaddr);
	f->mask = SFRAME_INFO_PCTYPE(info) == SFRAME_FDE_PCTYPE_MASK;
	if (info & SFRAME_INFO_PAUTH) {
		snprintf(err, errlen, "offset 0x%zx: FDE %u: pauth key bit set "
			 "(aarch64 only)", e, i);
		return -1;
	}
	if (SFRAME_INFO_FRE_TYPE(info) > SFRAME_FRE_TYPE_ADDR4) {
		snprintf(err, errlen, "offset 0x%zx: FDE %u: FRE type %u is "
			 "reserved", e, i, SFRAME_INFO_FRE_TYPE(info));
		return -1;
	}
	if (f->mask && !f->rep_size) {
		snprintf(err, errlen, "offset 0x%zx: FDE %u: PC type MASK with "
			 "rep_size 0", e, i);
		return -1;
	}
	/* at least 2 bytes per FRE: a bogus count can't make us allocate */
	if (nfres > (s->fre_len - off) / 2) {
		snprintf(err, errlen, "offset 0x%zx: FDE %u: %" PRIu64 " FREs "
			 "can't fit the %zu bytes left", e, i, nfres,
			 (size_t)(s->fre_len - off));
		return -1;
	}
	f->nrows = (uint32_t)nfres;
	f->rows = nfres ? calloc(nfres, sizeof(*f->rows)) : NULL;
	if (nfres && !f->rows) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (uint32_t j = 0; j < f->nrows; j++) {
		/* the FRE's start field, for the messages */
		size_t at = s->fres + off;

		if (read_fre(s, f, j, SFRAME_INFO_FRE_TYPE(info), &off,
			     &f->rows[j], err, errlen))
			goto fail;
		if (j && f->rows[j].start <= f->rows[j - 1].start) {
			snprintf(err, errlen, "offset 0x%zx: FDE %u: FRE %u "
				 "starts at 0x%x, not after FRE %u (0x%x)", at,
				 i, j, f->rows[j].start, j - 1,
				 f->rows[j - 1].start);
			goto fail;
		}
		if (f->rows[j].start >= (f->mask ? f->rep_size : f->size)) {
			snprintf(err, errlen, "offset 0x%zx: FDE %u: FRE %u "
				 "starts at 0x%x, past the %s (0x%x)", at, i, j,
				 f->rows[j].start,
				 f->mask ? "rep_size" : "function size",
				 f->mask ? f->rep_size : f->size);
			goto fail;
		}
	}
	return 0;
fail:
	free(f->rows);
	f->rows = NULL;
	return -1;
}

/* ---- dump ---- */

static void reg_name(char *b, size_t n, unsigned int reg)
{
	if (reg == DW_X86_RSP)
		snprintf(b, n, "sp");
	else if (reg == DW_X86_RBP)
		snprintf(b, n, "fp");
	else
		snprintf(b, n, "r%u", reg);
}

static void rule_str(char *b, size_t n, const struct sf_rule *r)
{
	char reg[8];

	if (!r->reg_p) {
		snprintf(b, n, r->deref ? "c%+d" : "c%+d(value)", r->off);
		return;
	}
	reg_name(reg, sizeof(reg), r->reg);
	snprintf(b, n, r->deref ? "(%s%+d)" : "%s%+d", reg, r->off);
}

static void dump_row(const struct sf_func *f, const struct sf_row *r,
		     FILE *out)
{
	char cfa[32], fp[32], ra[32];
	uint64_t pc = f->mask ? r->start : f->start + r->start;

	if (r->ra.kind == SF_UNDEFINED) {
		/* no data words: outermost frame */
		snprintf(cfa, sizeof(cfa), "-");
		snprintf(fp, sizeof(fp), "-");
		snprintf(ra, sizeof(ra), "undefined");
	} else {
		rule_str(cfa, sizeof(cfa), &r->cfa);
		if (r->fp.kind == SF_RULE)
			rule_str(fp, sizeof(fp), &r->fp);
		else
			snprintf(fp, sizeof(fp), "u");
		if (r->ra.kind == SF_RULE)
			rule_str(ra, sizeof(ra), &r->ra);
		else
			snprintf(ra, sizeof(ra), f->flex && r->nwords > 2 ? "U" : "f");
	}
	fprintf(out, "\n    %016" PRIx64 "  %-10s%-10s%-13s", pc, cfa, fp, ra);
}

int sf_dump(const struct sf_sec *s, const char *name, FILE *out,
	    char *err, size_t errlen)
{
	static const char *const flag_names[] = {
		"SFRAME_F_FDE_SORTED", "SFRAME_F_FRAME_POINTER",
		"SFRAME_F_FDE_FUNC_START_PCREL",
	};
	int nflags = 0, ret = 0;

	(void)name;
	fprintf(out, "Contents of the SFrame section .sframe:\n  Header :\n\n");
	fprintf(out, "    Version: SFRAME_VERSION_%u\n", s->version);
	fprintf(out, "    Flags: ");
	for (int i = 0; i < 3; i++) {
		if (!(s->flags & (1 << i)))
			continue;
		fprintf(out, "%s%s", nflags ? ",\n           " : "", flag_names[i]);
		nflags++;
	}
	fprintf(out, "%s\n", nflags ? "" : "NONE");
	fprintf(out, "    CFA fixed RA offset: %d\n", s->ra_off);
	fprintf(out, "    Num FDEs: %u\n    Num FREs: %u\n\n", s->num_fdes,
		s->num_fres);
	fprintf(out, "  Function Index :\n");
	for (uint32_t i = 0; i < s->num_fdes; i++) {
		struct sf_func f;
		char attr[16] = "";

		if (sf_read_func(s, i, &f, err, errlen)) {
			fprintf(out, "\n    func idx [%u]: %s\n", i, err);
			ret = -1;
			continue;
		}
		if (f.signal || f.flex)
			snprintf(attr, sizeof(attr), ", attr = \"%s%s\"",
				 f.signal ? "S" : "", f.flex ? "F" : "");
		fprintf(out, "\n    func idx [%u]: pc = 0x%" PRIx64 ", size = %u "
			"bytes%s", i, f.start, f.size, attr);
		fprintf(out, "\n    %-7s%-9s%-10s%-10s%-13s", "STARTPC",
			f.mask ? "[m]" : "", "CFA", "FP", "RA");
		for (uint32_t j = 0; j < f.nrows; j++)
			dump_row(&f, &f.rows[j], out);
		fprintf(out, "\n");
		free(f.rows);
	}
	if (ret)
		snprintf(err, errlen, "%s: some FDEs could not be decoded", name);
	return ret;
}
