// SPDX-License-Identifier: GPL-2.0
/*
 * cfi.c - turn an ELF's .eh_frame into SFrame functions.
 *
 * libdw interprets the CFI: for each FDE we ask it for the frame state at
 * the FDE's first address, then at the end of each row it returns, and
 * describe the CFA, RA and FP rules of each row as SFrame can say them.
 * All this file decodes by hand is the FDE's initial location and range,
 * whose pointer encoding libdw's dwarf_next_cfi() leaves to the caller.
 *
 * A row SFrame can't say ends the function there; the bytes up to the next
 * row it can say are left out and counted by reason (the kernel then uses
 * frame pointers for them).  ld's PLT rule
 *   CFA = rsp + A + (((rip & M) >= K) << S)
 * becomes a PC type MASK function with rep_size M + 1.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cfi.h"

const char *const sf_skip_names[SKIP_NR] = {
	[SKIP_EMPTY]	 = "zero-size FDE",
	[SKIP_NOT_TEXT]	 = "FDE outside the executable segments",
	[SKIP_CFA_EXPR]	 = "CFA expression SFrame can't express",
	[SKIP_CFA_REG]	 = "CFA on a register other than rsp/rbp (v2)",
	[SKIP_RA]	 = "return-address rule SFrame can't express",
	[SKIP_FP]	 = "frame-pointer rule SFrame can't express",
	[SKIP_SP]	 = "caller's rsp is not the CFA",
	[SKIP_FLEX_V2]	 = "needs a FLEX FDE (SFrame v3 only)",
	[SKIP_SIGNAL_V2] = "signal frame (SFrame v3 only)",
	[SKIP_TOO_BIG]	 = "too many rows or offsets too large for the format",
	[SKIP_CFI_ERROR] = "libdw has no rule for the address",
};

struct range {
	uint64_t lo, hi;
};

/* An FDE that is described, and where it is in .eh_frame. */
struct fde_at {
	uint64_t lo, hi, off;
};

struct ctx {
	Dwarf_CFI *cfi;
	int version;
	struct range *text;
	size_t ntext;
	struct sf_func *funcs;
	size_t nfuncs, cap;
	struct fde_at *fdes;
	size_t nfdes, capfdes;
	struct sf_cfi_stats *st;
	char *err;
	size_t errlen;
};

static void skip(struct ctx *c, enum sf_skip why, uint64_t lo, uint64_t hi)
{
	if (!c->st->skipped[why] || lo < c->st->first_skip[why])
		c->st->first_skip[why] = lo;
	c->st->skipped[why]++;
	c->st->skipped_bytes[why] += hi - lo;
}

/* ---- pointer encodings of .eh_frame (initial location, range) ---- */

static int read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (*p < end) {
		uint8_t b = *(*p)++;

		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

static int read_sleb(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	unsigned int shift = 0;
	uint64_t r = 0;
	uint8_t b = 0;

	while (*p < end) {
		b = *(*p)++;
		if (shift < 64)
			r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				r |= ~0ULL << shift;
			*v = (int64_t)r;
			return 0;
		}
	}
	return -1;
}

/*
 * Read a pointer encoded with 'enc' at *p; 'here' is the address of *p
 * (for DW_EH_PE_pcrel).  Returns 0 or -1 for what we don't know.
 */
static int read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc,
			uint64_t here, uint64_t *val)
{
	const uint8_t *q = *p;
	uint64_t v = 0;
	int64_t s;
	size_t n = 0;
	bool sign = false;

	if (enc == DW_EH_PE_omit)
		return -1;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		n = 8;
		break;
	case DW_EH_PE_udata2:
		n = 2;
		break;
	case DW_EH_PE_sdata2:
		n = 2;
		sign = true;
		break;
	case DW_EH_PE_udata4:
		n = 4;
		break;
	case DW_EH_PE_sdata4:
		n = 4;
		sign = true;
		break;
	case DW_EH_PE_uleb128:
		if (read_uleb(&q, end, &v))
			return -1;
		break;
	case DW_EH_PE_sleb128:
		if (read_sleb(&q, end, &s))
			return -1;
		v = (uint64_t)s;
		break;
	default:
		return -1;
	}
	if (n) {
		if ((size_t)(end - q) < n)
			return -1;
		for (size_t i = 0; i < n; i++)
			v |= (uint64_t)q[i] << (8 * i);
		if (sign && n < 8 && (v & (1ULL << (8 * n - 1))))
			v |= ~0ULL << (8 * n);
		q += n;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += here;
		break;
	default:		/* textrel, datarel, funcrel: not in .eh_frame FDEs */
		return -1;
	}
	if (enc & DW_EH_PE_indirect)
		return -1;
	*p = q;
	*val = v;
	return 0;
}

/* The FDE pointer encoding ('R') from a CIE's augmentation. */
static int cie_fde_encoding(const Dwarf_CIE *cie, uint8_t *enc)
{
	const char *a = cie->augmentation;
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p ? p + cie->augmentation_data_size : NULL;
	uint64_t dummy;

	*enc = DW_EH_PE_absptr;
	if (!a || a[0] != 'z')
		return a && a[0] ? -1 : 0;
	for (a++; *a; a++) {
		switch (*a) {
		case 'R':
			if (!p || p >= end)
				return -1;
			*enc = *p++;
			break;
		case 'L':
			if (!p || p >= end)
				return -1;
			p++;
			break;
		case 'P': {
			uint8_t penc;

			if (!p || p >= end)
				return -1;
			penc = *p++;
			/* only its size matters: the address is not used */
			if (read_encoded(&p, end, penc & ~(DW_EH_PE_indirect | 0x70),
					 0, &dummy))
				return -1;
			break;
		}
		case 'S':
		case 'B':
		case 'G':
			break;
		default:
			return -1;
		}
	}
	return 0;
}

/*
 * libdw sizes a frame for the largest register number a CFA instruction
 * names, up to 2^28 of them: one stray ULEB costs gigabytes on every row
 * we ask for.  x86-64's DWARF registers stay far below 256 (APX's r31 is
 * 145); an instruction naming one past that is refused before libdw runs.
 */
#define CFA_REG_LIMIT	256

/* Operands: r register, u (s)LEB128, b block, a address, 1 2 4 8 bytes. */
static const char *const cfa_operands[0x30] = {
	[DW_CFA_nop]				= "",
	[DW_CFA_set_loc]			= "a",
	[DW_CFA_advance_loc1]			= "1",
	[DW_CFA_advance_loc2]			= "2",
	[DW_CFA_advance_loc4]			= "4",
	[DW_CFA_offset_extended]		= "ru",
	[DW_CFA_restore_extended]		= "r",
	[DW_CFA_undefined]			= "r",
	[DW_CFA_same_value]			= "r",
	[DW_CFA_register]			= "rr",
	[DW_CFA_remember_state]			= "",
	[DW_CFA_restore_state]			= "",
	[DW_CFA_def_cfa]			= "ru",
	[DW_CFA_def_cfa_register]		= "r",
	[DW_CFA_def_cfa_offset]			= "u",
	[DW_CFA_def_cfa_expression]		= "b",
	[DW_CFA_expression]			= "rb",
	[DW_CFA_offset_extended_sf]		= "ru",
	[DW_CFA_def_cfa_sf]			= "ru",
	[DW_CFA_def_cfa_offset_sf]		= "u",
	[DW_CFA_val_offset]			= "ru",
	[DW_CFA_val_offset_sf]			= "ru",
	[DW_CFA_val_expression]			= "rb",
	[DW_CFA_MIPS_advance_loc8]		= "8",
	[DW_CFA_GNU_window_save]		= "",
	[DW_CFA_GNU_args_size]			= "u",
	[DW_CFA_GNU_negative_offset_extended]	= "ru",
};

/* Skip one operand of kind k; false if it doesn't decode. */
static bool cfa_operand(const uint8_t **p, const uint8_t *end, char k,
			uint8_t enc, uint64_t *v)
{
	*v = 0;
	switch (k) {
	case 'r':
	case 'u':
		return !read_uleb(p, end, v);	/* an SLEB's bytes too */
	case 'b':
		if (read_uleb(p, end, v) || *v > (uint64_t)(end - *p))
			return false;
		*p += *v;
		return true;
	case 'a':
		return !read_encoded(p, end, enc, 0, v);
	default:
		if ((size_t)(end - *p) < (size_t)(k - '0'))
			return false;
		*p += k - '0';
		return true;
	}
}

/*
 * The first instruction in [p, end) naming a register >= CFA_REG_LIMIT,
 * with the register in *reg; NULL if none.  The scan stops at what
 * doesn't decode: so does libdw.
 */
static const uint8_t *cfa_bad_reg(const uint8_t *p, const uint8_t *end,
				  uint8_t enc, uint64_t *reg)
{
	while (p < end) {
		const uint8_t *at = p;
		uint8_t op = *p++;
		const char *k;
		uint64_t v;

		if (op & 0xc0) {	/* advance_loc, offset, restore */
			if ((op & 0xc0) == DW_CFA_offset &&
			    !cfa_operand(&p, end, 'u', enc, &v))
				return NULL;
			continue;
		}
		k = op < 0x30 ? cfa_operands[op] : NULL;
		if (!k)
			return NULL;
		for (; *k; k++) {
			if (!cfa_operand(&p, end, *k, enc, &v))
				return NULL;
			if (*k == 'r' && v >= CFA_REG_LIMIT) {
				*reg = v;
				return at;
			}
		}
	}
	return NULL;
}

/*
 * Check the CIE's initial instructions and the FDE's, p just past its
 * address range.  Returns the bad instruction, or NULL.
 */
static const uint8_t *fde_bad_reg(const Dwarf_CIE *cie, const uint8_t *p,
				  const uint8_t *end, uint8_t enc,
				  uint64_t *reg)
{
	const uint8_t *bad;
	uint64_t n;

	bad = cfa_bad_reg(cie->initial_instructions,
			  cie->initial_instructions_end, enc, reg);
	if (bad)
		return bad;
	if (cie->augmentation && cie->augmentation[0] == 'z' &&
	    !cfa_operand(&p, end, 'b', enc, &n))
		return NULL;	/* libdw won't run it either */
	return cfa_bad_reg(p, end, enc, reg);
}

/* ---- libdw rules -> SFrame rules ---- */

static bool op_breg(const Dwarf_Op *op, int *reg, int64_t *off)
{
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t)op->number;
		return true;
	}
	if (op->atom == DW_OP_bregx) {
		if (op->number > 255)
			return false;
		*reg = (int)op->number;
		*off = (int64_t)op->number2;
		return true;
	}
	return false;
}

static bool op_const(const Dwarf_Op *op, uint64_t *v)
{
	if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31) {
		*v = op->atom - DW_OP_lit0;
		return true;
	}
	switch (op->atom) {
	case DW_OP_const1u:
	case DW_OP_const2u:
	case DW_OP_const4u:
	case DW_OP_constu:
		*v = op->number;
		return true;
	}
	return false;
}

static bool fits_s32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/*
 * ld's PLT rule: breg7 A; breg16 0; lit M; and; lit K; ge; lit S; shl; plus
 */
static bool plt_rule(const Dwarf_Op *ops, size_t nops, struct sf_rule *r,
		     int *mask, int *k, int *shift)
{
	uint64_t m, kk, s;
	int64_t a, zero;
	int reg, rip;

	if (nops != 9 || !op_breg(&ops[0], &reg, &a) || reg != DW_X86_RSP ||
	    !op_breg(&ops[1], &rip, &zero) || rip != DW_X86_RA || zero ||
	    !op_const(&ops[2], &m) || ops[3].atom != DW_OP_and ||
	    !op_const(&ops[4], &kk) || ops[5].atom != DW_OP_ge ||
	    !op_const(&ops[6], &s) || ops[7].atom != DW_OP_shl ||
	    ops[8].atom != DW_OP_plus)
		return false;
	/* rep_size is a u8 and the mask must be 2^n - 1 */
	if (m == 0 || m > 254 || (m & (m + 1)) || kk > m || s > 16 ||
	    !fits_s32(a) || !fits_s32(a + (1LL << s)))
		return false;
	*r = (struct sf_rule){ .kind = SF_RULE, .reg_p = true,
			       .reg = DW_X86_RSP, .off = (int32_t)a };
	*mask = (int)m;
	*k = (int)kk;
	*shift = (int)s;
	return true;
}

static int cfa_rule(Dwarf_Frame *fr, struct sf_rule *r, int *mask, int *k,
		    int *shift)
{
	Dwarf_Op *ops;
	size_t nops;
	int64_t off;
	int reg;

	*mask = *k = *shift = 0;
	if (dwarf_frame_cfa(fr, &ops, &nops))
		return SKIP_CFI_ERROR;
	if (nops == 0) {
		r->kind = SF_UNDEFINED;
		return 0;
	}
	if (!op_breg(&ops[0], &reg, &off))
		return SKIP_CFA_EXPR;
	if (reg > 31 || !fits_s32(off))
		return SKIP_CFA_EXPR;
	*r = (struct sf_rule){ .kind = SF_RULE, .reg_p = true, .reg = reg,
			       .off = (int32_t)off };
	if (nops == 1)
		return 0;
	if (nops == 2 && ops[1].atom == DW_OP_deref) {
		r->deref = true;
		return 0;
	}
	if (plt_rule(ops, nops, r, mask, k, shift))
		return 0;
	return SKIP_CFA_EXPR;
}

/*
 * libdw's forms (dwarf_frame_register()):
 *   undefined        nops 0, ops == ops_mem
 *   same value       nops 0, ops NULL
 *   offset(N)        call_frame_cfa [plus_uconst N]
 *   val_offset(N)    call_frame_cfa [plus_uconst N] stack_value
 *   register(R)      bregx R 0 stack_value
 *   expression(E)    call_frame_cfa E...   (the CFA pushed first)
 *   val_expression   call_frame_cfa E... stack_value
 * The expressions SFrame can say are a single bregN: load(reg + off), or
 * with stack_value reg + off.
 */
static int reg_rule(Dwarf_Frame *fr, int regno, struct sf_rule *r)
{
	Dwarf_Op mem[3], *ops;
	size_t nops, i = 0;
	int64_t off = 0;
	int reg;

	*r = (struct sf_rule){ .kind = SF_UNCHANGED };
	if (dwarf_frame_register(fr, regno, mem, &ops, &nops))
		return SKIP_CFI_ERROR;
	if (nops == 0) {
		if (ops)
			r->kind = SF_UNDEFINED;
		return 0;
	}
	r->kind = SF_RULE;
	r->deref = true;
	/* register(R): the value is in register R */
	if (nops == 1 && (ops[0].atom == DW_OP_regx ||
			  (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31))) {
		reg = ops[0].atom == DW_OP_regx ? (int)ops[0].number :
						  ops[0].atom - DW_OP_reg0;
		if (reg > 31)
			return -1;
		r->reg_p = true;
		r->deref = false;
		r->reg = reg;
		return 0;
	}
	if (nops && ops[nops - 1].atom == DW_OP_stack_value) {
		r->deref = false;
		nops--;
	}
	if (i < nops && ops[i].atom == DW_OP_call_frame_cfa) {
		i++;
		if (i == nops)
			return 0;	/* CFA + 0 */
		if (ops[i].atom == DW_OP_plus_uconst && i + 1 == nops) {
			off = (int64_t)ops[i].number;
			if (!fits_s32(off))
				return -1;
			r->off = (int32_t)off;
			return 0;
		}
	}
	/* expression: the CFA pushed first is unused by a lone bregN */
	if (i + 1 == nops && op_breg(&ops[i], &reg, &off) && reg <= 31 &&
	    fits_s32(off)) {
		r->reg_p = true;
		r->reg = reg;
		r->off = (int32_t)off;
		return 0;
	}
	return -1;
}

int sf_cfi_rule(Dwarf_Frame *fr, int regno, struct sf_rule *r,
		int *plt_mask, int *plt_k, int *plt_shift)
{
	int m = 0, k = 0, s = 0, ret;

	if (regno < 0) {
		ret = cfa_rule(fr, r, &m, &k, &s);
		if (plt_mask) {
			*plt_mask = m;
			*plt_k = k;
			*plt_shift = s;
		} else if (!ret && m) {
			ret = SKIP_CFA_EXPR;
		}
		return ret;
	}
	ret = reg_rule(fr, regno, r);
	if (ret < 0)
		ret = regno == DW_X86_RA ? SKIP_RA : SKIP_FP;
	return ret;
}

/* One row from libdw's frame; 0 or the reason it can't be said. */
int sf_cfi_row(Dwarf_Frame *fr, struct sf_row *row, int *mask,
	       int *k, int *shift)
{
	struct sf_rule sp;
	int ret;

	memset(row, 0, sizeof(*row));
	ret = sf_cfi_rule(fr, -1, &row->cfa, mask, k, shift);
	if (ret)
		return ret;
	ret = sf_cfi_rule(fr, DW_X86_RA, &row->ra, NULL, NULL, NULL);
	if (ret)
		return ret;
	if (row->ra.kind == SF_UNDEFINED) {
		/* outermost: nothing else matters */
		row->cfa = row->fp = (struct sf_rule){ .kind = SF_UNCHANGED };
		*mask = 0;
		return 0;
	}
	if (row->cfa.kind != SF_RULE)
		return SKIP_CFA_EXPR;
	/* x86-64: the default RA is load(CFA - 8) */
	if (row->ra.kind == SF_UNCHANGED)
		return SKIP_RA;		/* "same value": not a call frame */
	if (!row->ra.reg_p && row->ra.deref &&
	    row->ra.off == SFRAME_AMD64_RA_OFFSET)
		row->ra = (struct sf_rule){ .kind = SF_UNCHANGED };
	ret = sf_cfi_rule(fr, DW_X86_RBP, &row->fp, NULL, NULL, NULL);
	if (ret)
		return ret;
	if (row->fp.kind == SF_UNDEFINED)
		return SKIP_FP;
	/*
	 * SFrame's caller rsp is the CFA: libdw's default val_offset(0), or
	 * (signal frames) the CFA's own expression as rsp's location.
	 */
	if (reg_rule(fr, DW_X86_RSP, &sp) || sp.kind != SF_RULE)
		return SKIP_SP;
	if ((sp.reg_p || sp.deref || sp.off) &&
	    !(sp.reg_p && sp.deref && row->cfa.deref &&
	      sp.reg == row->cfa.reg && sp.off == row->cfa.off))
		return SKIP_SP;
	return 0;
}

static bool row_eq(const struct sf_row *a, const struct sf_row *b)
{
	return sf_rule_eq(&a->cfa, &b->cfa) && sf_rule_eq(&a->ra, &b->ra) &&
	       sf_rule_eq(&a->fp, &b->fp);
}

/* ---- building functions ---- */

struct builder {
	struct sf_func f;
	size_t cap;
	bool open;
	bool signal;
};

static int push_func(struct ctx *c, struct sf_func *f)
{
	if (c->nfuncs == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct sf_func *n = realloc(c->funcs, cap * sizeof(*n));

		if (!n)
			return -1;
		c->funcs = n;
		c->cap = cap;
	}
	c->funcs[c->nfuncs++] = *f;
	return 0;
}

static int add_row(struct builder *b, const struct sf_row *row)
{
	if (b->f.nrows && row_eq(&b->f.rows[b->f.nrows - 1], row))
		return 0;
	if (b->f.nrows == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 8;
		struct sf_row *n = realloc(b->f.rows, cap * sizeof(*n));

		if (!n)
			return -1;
		b->f.rows = n;
		b->cap = cap;
	}
	b->f.rows[b->f.nrows++] = *row;
	return 0;
}

/* Close the function being built at 'end'. */
static int finish(struct ctx *c, struct builder *b, uint64_t end)
{
	struct sf_func *f = &b->f;
	bool outermost = true;
	const char *why;

	if (!b->open)
		return 0;
	b->open = false;
	if (end <= f->start) {
		free(f->rows);
		goto out;
	}
	f->size = (uint32_t)(end - f->start);
	f->signal = b->signal;
	for (uint32_t i = 0; i < f->nrows; i++) {
		if (f->rows[i].ra.kind != SF_UNDEFINED)
			outermost = false;
		if (!sf_row_default(&f->rows[i]))
			f->flex = true;
	}
	if (outermost && !f->mask) {
		free(f->rows);
		f->rows = NULL;
		f->nrows = 0;
		f->flex = false;
	}
	why = sf_func_encodable(f, c->version);
	if (why) {
		enum sf_skip s = SKIP_TOO_BIG;

		if (f->signal && c->version == 2)
			s = SKIP_SIGNAL_V2;
		else if (f->flex && c->version == 2)
			s = SKIP_FLEX_V2;
		skip(c, s, f->start, end);
		free(f->rows);
		goto out;
	}
	if (push_func(c, f)) {
		free(f->rows);
		return -1;
	}
out:
	memset(f, 0, sizeof(*f));
	b->cap = 0;
	return 0;
}

static void start(struct builder *b, uint64_t at)
{
	memset(&b->f, 0, sizeof(b->f));
	b->cap = 0;
	b->f.start = at;
	b->open = true;
}

static bool in_text(struct ctx *c, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < c->ntext; i++)
		if (lo >= c->text[i].lo && hi <= c->text[i].hi)
			return true;
	return false;
}

/* Remember a described FDE, for the overlap check. */
static int push_fde(struct ctx *c, uint64_t lo, uint64_t hi, uint64_t off)
{
	if (c->nfdes == c->capfdes) {
		size_t cap = c->capfdes ? c->capfdes * 2 : 256;
		struct fde_at *n = realloc(c->fdes, cap * sizeof(*n));

		if (!n)
			return -1;
		c->fdes = n;
		c->capfdes = cap;
	}
	c->fdes[c->nfdes++] = (struct fde_at){ lo, hi, off };
	return 0;
}

static int do_fde(struct ctx *c, uint64_t lo, uint64_t hi, uint64_t off)
{
	struct builder b = { 0 };
	uint64_t addr = lo, skip_from = 0;
	int skip_why = -1;

	/*
	 * lld keeps the FDE gcc emits for a function of no bytes (one that
	 * is only __builtin_unreachable()): there is nothing to describe.
	 */
	if (hi <= lo) {
		skip(c, SKIP_EMPTY, lo, lo);
		return 0;
	}
	if (!in_text(c, lo, hi)) {
		skip(c, SKIP_NOT_TEXT, lo, hi);
		return 0;
	}
	if (push_fde(c, lo, hi, off))
		return -1;
	while (addr < hi) {
		Dwarf_Frame *fr = NULL;
		Dwarf_Addr rs, re;
		struct sf_row row;
		int mask = 0, k = 0, shift = 0, why;
		bool sig = false;

		if (dwarf_cfi_addrframe(c->cfi, addr, &fr) ||
		    dwarf_frame_info(fr, &rs, &re, &sig) < 0 || re <= addr) {
			free(fr);
			if (finish(c, &b, addr))
				return -1;
			skip(c, SKIP_CFI_ERROR, addr, hi);
			return 0;
		}
		if (re > hi)
			re = hi;
		why = sf_cfi_row(fr, &row, &mask, &k, &shift);
		free(fr);
		if (why) {
			if (finish(c, &b, addr))
				return -1;
			if (skip_why != why) {
				if (skip_why >= 0)
					skip(c, skip_why, skip_from, addr);
				skip_why = why;
				skip_from = addr;
			}
			addr = re;
			continue;
		}
		if (skip_why >= 0) {
			skip(c, skip_why, skip_from, addr);
			skip_why = -1;
		}
		if (mask) {
			/* a PLT block: its own function, PC type MASK */
			struct sf_row r2 = row;

			if (finish(c, &b, addr))
				return -1;
			if (addr % (mask + 1)) {
				skip(c, SKIP_CFA_EXPR, addr, re);
				addr = re;
				continue;
			}
			start(&b, addr);
			b.f.mask = true;
			b.f.rep_size = mask + 1;
			b.signal = sig;
			row.start = 0;
			r2.start = k;
			r2.cfa.off += 1 << shift;
			if (!k)
				row = r2;	/* always the second rule */
			if (add_row(&b, &row) || (k && add_row(&b, &r2)))
				return -1;
			if (finish(c, &b, re))
				return -1;
			addr = re;
			continue;
		}
		if (!b.open) {
			start(&b, addr);
			b.signal = sig;
		}
		row.start = (uint32_t)(addr - b.f.start);
		if (add_row(&b, &row))
			return -1;
		addr = re;
	}
	if (skip_why >= 0)
		skip(c, skip_why, skip_from, hi);
	return finish(c, &b, hi);
}

static int cmp_func(const void *a, const void *b)
{
	const struct sf_func *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde_at *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * The kernel needs sorted, disjoint FDEs, and which of two overlapping
 * ones is right can't be told: an error, naming the later one.
 */
static int check_overlap(struct ctx *c, const char *name,
			 const GElf_Shdr *sh)
{
	const struct fde_at *prev = NULL;

	if (c->nfdes > 1)
		qsort(c->fdes, c->nfdes, sizeof(*c->fdes), cmp_fde);
	for (size_t i = 0; i < c->nfdes; i++) {
		const struct fde_at *f = &c->fdes[i];

		if (prev && f->lo < prev->hi) {
			snprintf(c->err, c->errlen, "%s: .eh_frame offset 0x%"
				 PRIx64 " (file offset 0x%" PRIx64 "): FDE [0x%"
				 PRIx64 ", 0x%" PRIx64 ") overlaps the FDE at "
				 ".eh_frame offset 0x%" PRIx64 " [0x%" PRIx64
				 ", 0x%" PRIx64 ")", name, f->off,
				 (uint64_t)sh->sh_offset + f->off, f->lo, f->hi,
				 prev->off, prev->lo, prev->hi);
			return -1;
		}
		if (!prev || f->hi > prev->hi)
			prev = f;
	}
	return 0;
}

/*
 * libelf says just "invalid data" for a program header table that starts
 * past the end of the file, and quietly cuts one that runs past it.
 */
static int check_phdr_table(Elf *elf, const char *name, char *err,
			    size_t errlen)
{
	GElf_Ehdr eh;
	GElf_Shdr s0;
	size_t len = 0;
	uint64_t n;

	if (!gelf_getehdr(elf, &eh) || !elf_rawfile(elf, &len))
		return 0;	/* libelf will say what is wrong */
	n = eh.e_phnum;
	/* extended numbering: the count is in section 0 */
	if (n == PN_XNUM && gelf_getshdr(elf_getscn(elf, 0), &s0))
		n = s0.sh_info;
	if (!n || (eh.e_phoff <= len &&
		   n <= (len - eh.e_phoff) / sizeof(Elf64_Phdr)))
		return 0;
	snprintf(err, errlen, "%s: offset 0x%zx: e_phoff 0x%" PRIx64 ": %"
		 PRIu64 " program headers end past the end of the file (0x%zx "
		 "bytes)", name, offsetof(Elf64_Ehdr, e_phoff),
		 (uint64_t)eh.e_phoff, n, len);
	return -1;
}

static int text_ranges(Elf *elf, struct ctx *c)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -1;
	c->text = calloc(n ? n : 1, sizeof(*c->text));
	if (!c->text)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph))
			return -1;
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
			return -1;
		c->text[c->ntext++] = (struct range){ ph.p_vaddr,
						      ph.p_vaddr + ph.p_memsz };
	}
	return 0;
}

static Elf_Scn *find_section(Elf *elf, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

int sf_cfi_eh_frame(Elf *elf, const char *name, GElf_Shdr *sh,
		    Elf_Data **data, char *err, size_t errlen)
{
	Elf_Scn *scn = find_section(elf, ".eh_frame", sh);

	if (!scn || sh->sh_type == SHT_NOBITS)
		return 1;		/* nothing to describe */
	*data = elf_getdata(scn, NULL);
	if (!*data || !(*data)->d_buf || (*data)->d_size != sh->sh_size) {
		snprintf(err, errlen, "%s: .eh_frame at file offset 0x%" PRIx64
			 ": can't read 0x%" PRIx64 " bytes", name,
			 (uint64_t)sh->sh_offset, (uint64_t)sh->sh_size);
		return -1;
	}
	return 0;
}

int sf_cfi_foreach_fde(Elf *elf, const char *name,
		       int (*cb)(void *arg, uint64_t lo, uint64_t hi,
				 uint64_t off),
		       void *arg, size_t *nfdes, size_t *eh_bytes, char *err,
		       size_t errlen)
{
	const unsigned char *ident;
	const uint8_t *bad;
	Dwarf_Off off = 0, next;
	Elf_Data *data;
	GElf_Shdr sh;
	uint64_t reg;
	int r;

	*nfdes = *eh_bytes = 0;
	ident = (const unsigned char *)elf_getident(elf, NULL);
	if (!ident) {
		snprintf(err, errlen, "%s: not an ELF file", name);
		return -1;
	}
	r = sf_cfi_eh_frame(elf, name, &sh, &data, err, errlen);
	if (r)
		return r < 0 ? -1 : 0;
	*eh_bytes = data->d_size;
	for (;;) {
		Dwarf_CFI_Entry e, ce;
		Dwarf_Off cnext;
		const uint8_t *p, *end;
		uint64_t lo, len;
		uint8_t enc;

		r = dwarf_next_cfi(ident, data, true, off, &next, &e);
		if (r > 0)
			break;
		if (r < 0) {
			snprintf(err, errlen, "%s: .eh_frame offset 0x%" PRIx64
				 " (file offset 0x%" PRIx64 "): %s", name,
				 (uint64_t)off, (uint64_t)(sh.sh_offset + off),
				 dwarf_errmsg(-1));
			return -1;
		}
		if (next <= off)
			break;
		if (dwarf_cfi_cie_p(&e)) {
			off = next;
			continue;
		}
		(*nfdes)++;
		if (dwarf_next_cfi(ident, data, true, e.fde.CIE_pointer,
				   &cnext, &ce) || !dwarf_cfi_cie_p(&ce) ||
		    cie_fde_encoding(&ce.cie, &enc)) {
			snprintf(err, errlen, "%s: .eh_frame offset 0x%" PRIx64
				 " (file offset 0x%" PRIx64 "): the FDE's CIE at "
				 "0x%" PRIx64 " is unreadable", name,
				 (uint64_t)off, (uint64_t)(sh.sh_offset + off),
				 (uint64_t)e.fde.CIE_pointer);
			return -1;
		}
		p = e.fde.start;
		end = e.fde.end;
		if (read_encoded(&p, end, enc, sh.sh_addr +
				 (p - (const uint8_t *)data->d_buf), &lo) ||
		    read_encoded(&p, end, enc & 0x0f, 0, &len) ||
		    lo + len < lo) {
			snprintf(err, errlen, "%s: .eh_frame offset 0x%" PRIx64
				 " (file offset 0x%" PRIx64 "): FDE address "
				 "range unreadable (encoding 0x%02x)", name,
				 (uint64_t)off, (uint64_t)(sh.sh_offset + off),
				 enc);
			return -1;
		}
		bad = fde_bad_reg(&ce.cie, p, end, enc, &reg);
		if (bad) {
			snprintf(err, errlen, "%s: .eh_frame offset 0x%" PRIx64
				 " (file offset 0x%" PRIx64 "): the CFA "
				 "instruction at .eh_frame offset 0x%tx names "
				 "register %" PRIu64 ", not an x86-64 DWARF "
				 "register", name, (uint64_t)off,
				 (uint64_t)(sh.sh_offset + off),
				 bad - (const uint8_t *)data->d_buf, reg);
			return -1;
		}
		if (cb(arg, lo, lo + len, off)) {
			snprintf(err, errlen, "%s: %s", name, strerror(ENOMEM));
			return -1;
		}
		off = next;
	}
	return 0;
}

static int fde_cb(void *arg, uint64_t lo, uint64_t hi, uint64_t off)
{
	return do_fde(arg, lo, hi, off);
}

int sf_cfi_read(Elf *elf, const char *name, int version,
		struct sf_func **funcs, size_t *nfuncs,
		struct sf_cfi_stats *st, char *err, size_t errlen)
{
	struct ctx c = { .version = version, .st = st, .err = err,
			 .errlen = errlen };
	Elf_Data *data;
	GElf_Shdr sh;
	int ret = -1, r;

	memset(st, 0, sizeof(*st));
	*funcs = NULL;
	*nfuncs = 0;
	if (check_phdr_table(elf, name, err, errlen))
		goto out;
	if (text_ranges(elf, &c)) {
		snprintf(err, errlen, "%s: bad program headers: %s", name,
			 elf_errmsg(-1));
		goto out;
	}
	/* no .eh_frame at all is not an error: nothing to describe */
	r = sf_cfi_eh_frame(elf, name, &sh, &data, err, errlen);
	if (r) {
		ret = r < 0 ? -1 : 0;
		goto out;
	}
	if (!c.ntext) {
		GElf_Ehdr eh;

		snprintf(err, errlen, "%s: offset 0x%" PRIx64 ": no PT_LOAD in "
			 "the program header table is executable (PF_X): no "
			 "text for .eh_frame to describe", name,
			 gelf_getehdr(elf, &eh) ? (uint64_t)eh.e_phoff : 0);
		goto out;
	}
	c.cfi = dwarf_getcfi_elf(elf);
	if (!c.cfi) {
		snprintf(err, errlen, "%s: .eh_frame at file offset 0x%" PRIx64
			 ": %s", name, (uint64_t)sh.sh_offset,
			 dwarf_errmsg(-1));
		goto out;
	}
	if (sf_cfi_foreach_fde(elf, name, fde_cb, &c, &st->fdes,
			       &st->eh_frame_bytes, err, errlen) ||
	    check_overlap(&c, name, &sh))
		goto out;

	/* disjoint FDEs give disjoint functions: sorting is all it takes */
	if (c.nfuncs > 1)
		qsort(c.funcs, c.nfuncs, sizeof(*c.funcs), cmp_func);
	for (size_t i = 0; i < c.nfuncs; i++) {
		struct sf_func *f = &c.funcs[i];

		st->rows += f->nrows;
		st->covered_bytes += f->size;
		st->flex += f->flex;
		st->mask += f->mask;
		st->signal += f->signal;
		st->outermost += !f->nrows;
	}
	st->funcs = c.nfuncs;
	*funcs = c.funcs;
	*nfuncs = c.nfuncs;
	c.funcs = NULL;
	ret = 0;
out:
	if (ret)
		sf_funcs_free(c.funcs, c.nfuncs);
	if (c.cfi)
		dwarf_cfi_end(c.cfi);
	free(c.fdes);
	free(c.text);
	return ret;
}

void sf_cfi_print_stats(const struct sf_cfi_stats *st, const char *name,
			FILE *out)
{
	fprintf(out, "%s: .eh_frame %zu bytes, %zu FDEs -> %zu SFrame FDEs "
		"(%zu FLEX, %zu PC-mask, %zu signal, %zu outermost), %zu rows, "
		"%" PRIu64 " text bytes covered\n", name, st->eh_frame_bytes,
		st->fdes, st->funcs, st->flex, st->mask, st->signal,
		st->outermost, st->rows, st->covered_bytes);
	for (int i = 0; i < SKIP_NR; i++)
		if (st->skipped[i])
			fprintf(out, "%s: left out: %zu x %s (%" PRIu64
				" bytes, first at 0x%" PRIx64 ")\n", name,
				st->skipped[i], sf_skip_names[i],
				st->skipped_bytes[i], st->first_skip[i]);
}
