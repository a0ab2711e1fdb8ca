// SPDX-License-Identifier: GPL-2.0
/*
 * cfi.c - turn an ELF's .eh_frame into SFrame functions.
 *
 * libdw finds the CIEs and FDEs (dwarf_next_cfi()); the CFA programs are
 * run here, each FDE's once from start to end, giving each row's rules in
 * the form libdw's dwarf_frame_cfa() and dwarf_frame_register() give them
 * (Dwarf_Op arrays).  libdw's own dwarf_cfi_addrframe() runs the program
 * from its start for every row asked for: quadratic in a function's rows
 * (a function of 100000 rows took 25 s).  One translation says such rules
 * in SFrame, for the interpreter's rows here and for the libdw frames
 * sframe-check gets (libdw stays its independent oracle).  Where the CFI
 * is well-formed the rows are libdw's; where an operand runs past the end
 * of its CIE, FDE or expression (libdw reads on), there is no rule from
 * there on.  What this file decodes by hand:
 * the FDE's initial location and range, whose pointer encoding
 * dwarf_next_cfi() leaves to the caller, the augmentation, and the CFA
 * instructions and DWARF expressions.
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

/* SFrame v3's num_fres is a u16; the kernel takes no more in v2 either. */
#define SF_MAX_ROWS	UINT16_MAX

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
	[SKIP_CFI_ERROR] = "no rule for the address: the CFA program is malformed",
};

struct range {
	uint64_t lo, hi;
};

/* An FDE that is described, and where it is in .eh_frame. */
struct fde_at {
	uint64_t lo, hi, off;
};

struct ctx {
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

/*
 * What the FDEs of a CIE need from its augmentation: the pointer encoding
 * ('R'), whether they are signal frames ('S', glibc's __restore_rt) and
 * whether they have augmentation data to skip ('z').
 */
static int cie_parse(const Dwarf_CIE *cie, uint8_t *enc, bool *signal,
		     bool *sized)
{
	const char *a = cie->augmentation;
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p ? p + cie->augmentation_data_size : NULL;
	uint64_t dummy;

	*enc = DW_EH_PE_absptr;
	*signal = *sized = false;
	if (!a || a[0] != 'z')
		return a && a[0] ? -1 : 0;
	*sized = true;
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
			*signal = true;
			break;
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
 * sframe-check asks for.  x86-64's DWARF registers stay far below 256
 * (APX's r31 is 145); an instruction naming one past that is refused
 * before libdw runs, by sframe-gen too, so that both take the same files.
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
		return NULL;	/* nobody runs it: no rule for the FDE */
	return cfa_bad_reg(p, end, enc, reg);
}

/* ---- the CFA program, run once per FDE ---- */

/* An FDE, and what its CIE says about it. */
struct fde_info {
	uint64_t lo, hi, off;		/* range; offset in .eh_frame */
	const Dwarf_CIE *cie;
	uint8_t enc;			/* pointer encoding */
	bool signal;			/* 'S' */
	bool sized;			/* 'z': augmentation data to skip */
	const uint8_t *insns, *end;	/* past the address range */
	uint64_t eh_addr;		/* .eh_frame's address and bytes */
	const uint8_t *eh_buf;
};

/*
 * Register rules, as libdw keeps them.  A register no instruction (nor the
 * ABI's defaults below) names is "unspecified", which libdw reports as
 * undefined on x86-64.
 */
enum {
	RR_UNSPEC, RR_UNDEF, RR_SAME, RR_OFFSET, RR_VAL_OFFSET, RR_REGISTER,
	RR_EXPR, RR_VAL_EXPR
};
/* CFA rules; "invalid" is def_cfa_register/offset without a register rule */
enum { CR_UNDEF, CR_OFFSET, CR_EXPR, CR_INVALID };

/* The registers SFrame needs a rule for; the others' rules are dropped. */
enum { T_RA, T_FP, T_SP, T_NREGS };

struct cfi_reg {
	uint8_t rule;
	int64_t value;		/* offset (bytes) or register */
	const uint8_t *expr;	/* expression block */
	uint64_t len;
};

struct cfi_state {
	uint8_t cfa_rule;
	uint64_t cfa_reg, cfa_off;
	const uint8_t *cfa_expr;
	uint64_t cfa_len;
	struct cfi_reg reg[T_NREGS];
};

/* A CIE, and the state its initial instructions leave for its FDEs. */
struct cfi_cie {
	uint64_t caf;		/* code alignment factor */
	int64_t daf;		/* data alignment factor */
	uint8_t enc;		/* pointer encoding (DW_CFA_set_loc) */
	bool signal;
	struct cfi_state init;
};

/* A DWARF expression in libdw's form, in a buffer reused row after row. */
struct opbuf {
	Dwarf_Op *ops;
	size_t cap;
};

/* An FDE's program being run. */
struct cfi_run {
	const struct cfi_cie *cie;
	const uint8_t *p, *end;		/* what is left of the program */
	uint64_t loc;			/* address of the current row */
	uint64_t eh_addr;		/* .eh_frame's: DW_EH_PE_pcrel */
	const uint8_t *eh_buf;
	bool in_cie;			/* initial instructions: no rows */
	struct cfi_state st;
	struct cfi_state *saved;	/* DW_CFA_remember_state stack */
	size_t nsaved, capsaved;
	struct opbuf buf[4];		/* CFA, RA, FP, SP expressions */
};

static int tracked(uint64_t regno)
{
	switch (regno) {
	case DW_X86_RA:
		return T_RA;
	case DW_X86_RBP:
		return T_FP;
	case DW_X86_RSP:
		return T_SP;
	}
	return -1;
}

/*
 * libdw's x86-64 defaults (backends/x86_64_cfi.c), under every CIE's own
 * initial instructions: rbp and the RA column "same value", rsp (the
 * caller's) the CFA itself, no CFA rule.
 */
static void cfi_abi_state(struct cfi_state *st)
{
	memset(st, 0, sizeof(*st));
	st->cfa_rule = CR_UNDEF;
	st->reg[T_RA].rule = RR_SAME;
	st->reg[T_FP].rule = RR_SAME;
	st->reg[T_SP].rule = RR_VAL_OFFSET;
}

/* libdw keeps a rule's value in a 61-bit signed bit-field. */
static int64_t rule_value(uint64_t v)
{
	return (int64_t)(v << 3) >> 3;
}

static void set_rule(struct cfi_run *x, uint64_t regno, int rule, uint64_t v)
{
	int t = tracked(regno);

	if (t < 0)
		return;
	x->st.reg[t] = (struct cfi_reg){ .rule = rule, .value = rule_value(v) };
}

static void set_expr(struct cfi_run *x, uint64_t regno, int rule,
		     const uint8_t *e, uint64_t len)
{
	int t = tracked(regno);

	if (t < 0)
		return;
	x->st.reg[t] = (struct cfi_reg){ .rule = rule, .expr = e, .len = len };
}

/* An operand block (ULEB128 length, bytes): its start in *e. */
static int read_block(struct cfi_run *x, const uint8_t **e, uint64_t *len)
{
	if (read_uleb(&x->p, x->end, len) || *len > (uint64_t)(x->end - x->p))
		return -1;
	*e = x->p;
	x->p += *len;
	return 0;
}

static int read_fixed(struct cfi_run *x, size_t n, uint64_t *v)
{
	if ((size_t)(x->end - x->p) < n)
		return -1;
	*v = 0;
	for (size_t i = 0; i < n; i++)
		*v |= (uint64_t)x->p[i] << (8 * i);
	x->p += n;
	return 0;
}

/*
 * The offset operand of DW_CFA_def_cfa, DW_CFA_def_cfa_offset and their
 * _sf forms: unsigned and unfactored, or signed and factored by the data
 * alignment factor.
 */
static int read_cfa_offset(struct cfi_run *x, bool sf, uint64_t *v)
{
	int64_t s;

	if (!sf)
		return read_uleb(&x->p, x->end, v);
	if (read_sleb(&x->p, x->end, &s))
		return -1;
	*v = (uint64_t)s * (uint64_t)x->cie->daf;
	return 0;
}

static int remember(struct cfi_run *x)
{
	if (x->nsaved == x->capsaved) {
		size_t cap = x->capsaved ? 2 * x->capsaved : 8;
		struct cfi_state *n = realloc(x->saved, cap * sizeof(*n));

		if (!n)
			return -1;
		x->saved = n;
		x->capsaved = cap;
	}
	x->saved[x->nsaved++] = x->st;
	return 0;
}

/* DW_CFA_restore: the CIE's rule again (not in the CIE's own program). */
static int restore(struct cfi_run *x, uint64_t regno)
{
	int t = tracked(regno);

	if (x->in_cie)
		return -1;
	if (t >= 0)
		x->st.reg[t] = x->cie->init.reg[t];
	return 0;
}

/*
 * The rule-changing instructions (not the primary ones, not those moving
 * the location); -1 for what doesn't decode or libdw refuses.
 */
static int cfi_rule_insn(struct cfi_run *x, uint8_t op)
{
	uint64_t reg, v, len;
	const uint8_t *e;
	int64_t s;

	switch (op) {
	case DW_CFA_nop:
		return 0;
	case DW_CFA_GNU_args_size:	/* the arguments pushed: not a rule */
		return read_uleb(&x->p, x->end, &v);
	case DW_CFA_offset_extended:
	case DW_CFA_val_offset:
		if (read_uleb(&x->p, x->end, &reg) ||
		    read_uleb(&x->p, x->end, &v))
			return -1;
		set_rule(x, reg, op == DW_CFA_val_offset ? RR_VAL_OFFSET :
			 RR_OFFSET, v * (uint64_t)x->cie->daf);
		return 0;
	case DW_CFA_offset_extended_sf:
	case DW_CFA_val_offset_sf:
		if (read_uleb(&x->p, x->end, &reg) ||
		    read_sleb(&x->p, x->end, &s))
			return -1;
		set_rule(x, reg, op == DW_CFA_val_offset_sf ? RR_VAL_OFFSET :
			 RR_OFFSET, (uint64_t)s * (uint64_t)x->cie->daf);
		return 0;
	case DW_CFA_GNU_negative_offset_extended:
		if (read_uleb(&x->p, x->end, &reg) ||
		    read_uleb(&x->p, x->end, &v))
			return -1;
		set_rule(x, reg, RR_OFFSET, -v * (uint64_t)x->cie->daf);
		return 0;
	case DW_CFA_restore_extended:
		if (read_uleb(&x->p, x->end, &reg))
			return -1;
		return restore(x, reg);
	case DW_CFA_undefined:
	case DW_CFA_same_value:
		if (read_uleb(&x->p, x->end, &reg))
			return -1;
		set_rule(x, reg, op == DW_CFA_undefined ? RR_UNDEF : RR_SAME, 0);
		return 0;
	case DW_CFA_register:
		if (read_uleb(&x->p, x->end, &reg) ||
		    read_uleb(&x->p, x->end, &v))
			return -1;
		set_rule(x, reg, RR_REGISTER, v);
		return 0;
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		if (read_uleb(&x->p, x->end, &reg) || read_block(x, &e, &len))
			return -1;
		set_expr(x, reg, op == DW_CFA_expression ? RR_EXPR : RR_VAL_EXPR,
			 e, len);
		return 0;
	case DW_CFA_remember_state:
		return remember(x);
	case DW_CFA_restore_state:
		if (!x->nsaved)
			return -1;
		x->st = x->saved[--x->nsaved];
		return 0;
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
		if (read_uleb(&x->p, x->end, &reg) ||
		    read_cfa_offset(x, op == DW_CFA_def_cfa_sf, &v))
			return -1;
		x->st.cfa_rule = CR_OFFSET;
		x->st.cfa_reg = reg;
		x->st.cfa_off = v;
		return 0;
	case DW_CFA_def_cfa_register:
		if (read_uleb(&x->p, x->end, &reg))
			return -1;
		if (x->st.cfa_rule != CR_OFFSET)
			x->st.cfa_rule = CR_INVALID;
		x->st.cfa_reg = reg;
		return 0;
	case DW_CFA_def_cfa_offset:
	case DW_CFA_def_cfa_offset_sf:
		if (read_cfa_offset(x, op == DW_CFA_def_cfa_offset_sf, &v))
			return -1;
		if (x->st.cfa_rule != CR_OFFSET)
			x->st.cfa_rule = CR_INVALID;
		x->st.cfa_off = v;
		return 0;
	case DW_CFA_def_cfa_expression:
		if (read_block(x, &e, &len))
			return -1;
		x->st.cfa_rule = CR_EXPR;
		x->st.cfa_expr = e;
		x->st.cfa_len = len;
		return 0;
	case DW_CFA_GNU_window_save:
		/*
		 * SPARC's shorthand, which libdw applies on x86-64 too:
		 * registers 16-31 saved at CFA + (N - 16) * 8.  Of ours,
		 * only the RA column.
		 */
		set_rule(x, DW_X86_RA, RR_OFFSET, 0);
		return 0;
	default:
		return -1;
	}
}

/* One instruction: 1 if it moved the location, 0 if not, -1 error. */
static int cfi_insn(struct cfi_run *x)
{
	uint8_t op = *x->p++;
	uint64_t v, here;

	switch (op & 0xc0) {
	case DW_CFA_advance_loc:
		x->loc += (uint64_t)(op & 0x3f) * x->cie->caf;
		return 1;
	case DW_CFA_offset:
		if (read_uleb(&x->p, x->end, &v))
			return -1;
		set_rule(x, op & 0x3f, RR_OFFSET, v * (uint64_t)x->cie->daf);
		return 0;
	case DW_CFA_restore:
		return restore(x, op & 0x3f);
	}
	switch (op) {
	case DW_CFA_set_loc:
		here = x->eh_addr + (uint64_t)(x->p - x->eh_buf);
		if (read_encoded(&x->p, x->end, x->cie->enc, here, &x->loc))
			return -1;
		return 1;
	case DW_CFA_advance_loc1:
	case DW_CFA_advance_loc2:
	case DW_CFA_advance_loc4:
	case DW_CFA_MIPS_advance_loc8:
		if (read_fixed(x, op == DW_CFA_MIPS_advance_loc8 ? 8 :
			       1 << (op - DW_CFA_advance_loc1), &v))
			return -1;
		x->loc += v * x->cie->caf;
		return 1;
	}
	return cfi_rule_insn(x, op);
}

/*
 * Run the program up to the first location past pc: 1 with it in x->loc,
 * 0 at the end of the program (the row lasts to the FDE's end), -1 when
 * an instruction doesn't decode.  The state is then the row holding pc,
 * as libdw's dwarf_cfi_addrframe() has it; the next call goes on from
 * there, as dwarf_cfi_addrframe() for that location would (every location
 * before it was <= pc).
 */
static int cfi_run(struct cfi_run *x, uint64_t pc)
{
	while (x->p < x->end) {
		int r = cfi_insn(x);

		if (r < 0)
			return -1;
		if (!r)
			continue;
		if (x->in_cie)
			return -1;	/* libdw: no rows in a CIE */
		if (pc < x->loc)
			return 1;
	}
	return 0;
}

/*
 * The operands of a DWARF operation as libdw reads them for CFI (its
 * __libdw_intern_expression() without a Dwarf: DW_OP_call_ref, the
 * implicit pointers, values and entry values need one and are refused,
 * like unknown operations):
 *   0 none, a address, 1 2 4 8 unsigned bytes, c h w q signed 1 2 4 8,
 *   u ULEB128, s SLEB128, x ULEB+SLEB, y ULEB+ULEB, t byte+ULEB,
 *   k ULEB+size byte+bytes; NUL refused.
 */
static char expr_operands(uint8_t op)
{
	if (op >= DW_OP_lit0 && op <= DW_OP_reg31)
		return '0';
	if (op >= DW_OP_breg0 && op <= DW_OP_breg31)
		return 's';
	switch (op) {
	case DW_OP_deref: case DW_OP_dup: case DW_OP_drop: case DW_OP_over:
	case DW_OP_swap: case DW_OP_rot: case DW_OP_xderef: case DW_OP_abs:
	case DW_OP_and: case DW_OP_div: case DW_OP_minus: case DW_OP_mod:
	case DW_OP_mul: case DW_OP_neg: case DW_OP_not: case DW_OP_or:
	case DW_OP_plus: case DW_OP_shl: case DW_OP_shr: case DW_OP_shra:
	case DW_OP_xor: case DW_OP_eq: case DW_OP_ge: case DW_OP_gt:
	case DW_OP_le: case DW_OP_lt: case DW_OP_ne: case DW_OP_nop:
	case DW_OP_push_object_address: case DW_OP_call_frame_cfa:
	case DW_OP_form_tls_address: case DW_OP_GNU_push_tls_address:
	case DW_OP_stack_value:
		return '0';
	case DW_OP_addr:
		return 'a';
	case DW_OP_const1u: case DW_OP_pick: case DW_OP_deref_size:
	case DW_OP_xderef_size:
		return '1';
	case DW_OP_const1s:
		return 'c';
	case DW_OP_const2u:
		return '2';
	case DW_OP_const2s: case DW_OP_skip: case DW_OP_bra: case DW_OP_call2:
		return 'h';
	case DW_OP_const4u:
		return '4';
	case DW_OP_const4s: case DW_OP_call4: case DW_OP_GNU_parameter_ref:
		return 'w';
	case DW_OP_const8u:
		return '8';
	case DW_OP_const8s:
		return 'q';
	case DW_OP_constu: case DW_OP_plus_uconst: case DW_OP_regx:
	case DW_OP_piece: case DW_OP_convert: case DW_OP_GNU_convert:
	case DW_OP_reinterpret: case DW_OP_GNU_reinterpret: case DW_OP_addrx:
	case DW_OP_GNU_addr_index: case DW_OP_constx: case DW_OP_GNU_const_index:
		return 'u';
	case DW_OP_consts: case DW_OP_fbreg:
		return 's';
	case DW_OP_bregx:
		return 'x';
	case DW_OP_bit_piece: case DW_OP_regval_type: case DW_OP_GNU_regval_type:
		return 'y';
	case DW_OP_deref_type: case DW_OP_GNU_deref_type: case DW_OP_xderef_type:
		return 't';
	case DW_OP_const_type: case DW_OP_GNU_const_type:
		return 'k';
	}
	return 0;
}

/* n little-endian bytes, sign-extended if sign; false past end */
static bool expr_fixed(const uint8_t **p, const uint8_t *end, size_t n,
		       bool sign, Dwarf_Word *v)
{
	uint64_t u = 0;

	if ((size_t)(end - *p) < n)
		return false;
	for (size_t i = 0; i < n; i++)
		u |= (uint64_t)(*p)[i] << (8 * i);
	if (sign && n < 8 && (u & (1ULL << (8 * n - 1))))
		u |= ~0ULL << (8 * n);
	*p += n;
	*v = u;
	return true;
}

/* One operation's operands into o; false if they don't decode. */
static bool expr_op(const uint8_t **p, const uint8_t *end, Dwarf_Op *o)
{
	char k = expr_operands(o->atom);
	uint64_t len;
	int64_t s;

	switch (k) {
	case '0':
		return true;
	case 'a':
	case '8':
	case 'q':
		return expr_fixed(p, end, 8, false, &o->number);
	case '1':
	case 'c':
		return expr_fixed(p, end, 1, k == 'c', &o->number);
	case '2':
	case 'h':
		return expr_fixed(p, end, 2, k == 'h', &o->number);
	case '4':
	case 'w':
		return expr_fixed(p, end, 4, k == 'w', &o->number);
	case 'u':
		return !read_uleb(p, end, &o->number);
	case 's':
		if (read_sleb(p, end, &s))
			return false;
		o->number = (Dwarf_Word)s;
		return true;
	case 'x':
		if (read_uleb(p, end, &o->number) || read_sleb(p, end, &s))
			return false;
		o->number2 = (Dwarf_Word)s;
		return true;
	case 'y':
		return !read_uleb(p, end, &o->number) &&
		       !read_uleb(p, end, &o->number2);
	case 't':
		return expr_fixed(p, end, 1, false, &o->number) &&
		       !read_uleb(p, end, &o->number2);
	case 'k':
		if (read_uleb(p, end, &o->number) ||
		    !expr_fixed(p, end, 1, false, &len) ||
		    len > (uint64_t)(end - *p))
			return false;
		*p += len;
		return true;
	}
	return false;
}

static Dwarf_Op *opbuf_add(struct opbuf *b, size_t *n)
{
	if (*n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 16;
		Dwarf_Op *ops = realloc(b->ops, cap * sizeof(*ops));

		if (!ops)
			return NULL;
		b->ops = ops;
		b->cap = cap;
	}
	memset(&b->ops[*n], 0, sizeof(b->ops[*n]));
	return &b->ops[(*n)++];
}

/*
 * A DWARF expression in libdw's form: a register's (cfa) is preceded by
 * DW_OP_call_frame_cfa, a value's (val) followed by DW_OP_stack_value.
 * An empty one is no rule: "undefined", as libdw has it.
 */
static void expr_loc(const uint8_t *p, uint64_t len, bool cfa, bool val,
		     struct opbuf *b, struct sf_cfi_loc *l)
{
	const uint8_t *end = p + len;
	size_t n = 0;
	Dwarf_Op *o;

	if (!len) {
		l->ops = l->mem;
		return;
	}
	if (cfa) {
		o = opbuf_add(b, &n);
		if (!o)
			goto bad;
		o->atom = DW_OP_call_frame_cfa;
	}
	while (p < end) {
		o = opbuf_add(b, &n);
		if (!o)
			goto bad;
		o->offset = len - (uint64_t)(end - p);
		o->atom = *p++;
		if (!expr_op(&p, end, o))
			goto bad;
	}
	if (val) {
		o = opbuf_add(b, &n);
		if (!o)
			goto bad;
		o->atom = DW_OP_stack_value;
	}
	l->ops = b->ops;
	l->nops = n;
	return;
bad:
	l->err = SKIP_CFI_ERROR;
}

/* The CFA rule of the current row, as dwarf_frame_cfa() gives it. */
static void cfa_loc(struct cfi_run *x, struct sf_cfi_loc *l)
{
	const struct cfi_state *st = &x->st;

	l->err = 0;
	l->same = false;
	l->nops = 0;
	l->ops = NULL;
	switch (st->cfa_rule) {
	case CR_OFFSET:
		l->mem[0] = (Dwarf_Op){ .atom = DW_OP_bregx,
					.number = st->cfa_reg,
					.number2 = st->cfa_off };
		l->ops = l->mem;
		l->nops = 1;
		break;
	case CR_EXPR:
		expr_loc(st->cfa_expr, st->cfa_len, false, false, &x->buf[0], l);
		break;
	case CR_INVALID:
		l->err = SKIP_CFI_ERROR;
		break;
	}
}

/* Register t's rule of the current row, as dwarf_frame_register() gives it. */
static void reg_loc(struct cfi_run *x, int t, struct sf_cfi_loc *l)
{
	const struct cfi_reg *r = &x->st.reg[t];
	size_t n = 0;

	l->err = 0;
	l->same = false;
	l->nops = 0;
	l->ops = l->mem;
	switch (r->rule) {
	case RR_SAME:
		l->same = true;
		l->ops = NULL;
		break;
	case RR_OFFSET:
	case RR_VAL_OFFSET:
		l->mem[n++] = (Dwarf_Op){ .atom = DW_OP_call_frame_cfa };
		if (r->value)
			l->mem[n++] = (Dwarf_Op){ .atom = DW_OP_plus_uconst,
						  .number = (Dwarf_Word)r->value };
		if (r->rule == RR_VAL_OFFSET)
			l->mem[n++] = (Dwarf_Op){ .atom = DW_OP_stack_value };
		l->nops = n;
		break;
	case RR_REGISTER:
		l->mem[0] = (Dwarf_Op){ .atom = DW_OP_regx,
					.number = (Dwarf_Word)r->value };
		l->nops = 1;
		break;
	case RR_EXPR:
	case RR_VAL_EXPR:
		expr_loc(r->expr, r->len, true, r->rule == RR_VAL_EXPR,
			 &x->buf[1 + t], l);
		break;
	}
}

/* The rules of the current row SFrame needs. */
static void cfi_frame(struct cfi_run *x, struct sf_cfi_frame *f)
{
	cfa_loc(x, &f->cfa);
	reg_loc(x, T_RA, &f->ra);
	reg_loc(x, T_FP, &f->fp);
	reg_loc(x, T_SP, &f->sp);
}

/*
 * Start on an FDE: the CIE's state (the ABI's defaults, then its initial
 * instructions), then the FDE's program past its augmentation data.  -1
 * if either doesn't run: libdw has no rule for any of the FDE's addresses.
 */
static int cfi_begin(struct cfi_run *x, struct cfi_cie *cie,
		     const struct fde_info *fi)
{
	const uint8_t *p = fi->insns;
	uint64_t len;

	memset(x, 0, sizeof(*x));
	memset(cie, 0, sizeof(*cie));
	cie->caf = fi->cie->code_alignment_factor;
	cie->daf = fi->cie->data_alignment_factor;
	cie->enc = fi->enc;
	cie->signal = fi->signal;
	x->cie = cie;
	x->eh_addr = fi->eh_addr;
	x->eh_buf = fi->eh_buf;
	cfi_abi_state(&x->st);
	x->in_cie = true;
	x->p = fi->cie->initial_instructions;
	x->end = fi->cie->initial_instructions_end;
	if (cfi_run(x, UINT64_MAX) < 0)
		return -1;
	cie->init = x->st;		/* what is still remembered is dropped */
	x->nsaved = 0;
	x->in_cie = false;
	if (fi->sized) {
		if (p >= fi->end || read_uleb(&p, fi->end, &len) ||
		    len > (uint64_t)(fi->end - p))
			return -1;
		p += len;
	}
	x->p = p;
	x->end = fi->end;
	x->loc = fi->lo;
	return 0;
}

static void cfi_end(struct cfi_run *x)
{
	free(x->saved);
	for (size_t i = 0; i < 4; i++)
		free(x->buf[i].ops);
}

/* ---- rules in libdw's form -> SFrame rules ---- */

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

static int cfa_rule(const struct sf_cfi_loc *l, struct sf_rule *r, int *mask,
		    int *k, int *shift)
{
	const Dwarf_Op *ops = l->ops;
	size_t nops = l->nops;
	int64_t off;
	int reg;

	*mask = *k = *shift = 0;
	if (l->err)
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
 *   register(R)      regx R
 *   expression(E)    call_frame_cfa E...   (the CFA pushed first)
 *   val_expression   call_frame_cfa E... stack_value
 * The expressions SFrame can say are a single bregN: load(reg + off), or
 * with stack_value reg + off.  Returns 0, SKIP_CFI_ERROR, or -1 for a rule
 * SFrame can't say.
 */
static int reg_rule(const struct sf_cfi_loc *l, struct sf_rule *r)
{
	const Dwarf_Op *ops = l->ops;
	size_t nops = l->nops, i = 0;
	int64_t off = 0;
	int reg;

	*r = (struct sf_rule){ .kind = SF_UNCHANGED };
	if (l->err)
		return SKIP_CFI_ERROR;
	if (nops == 0) {
		if (!l->same)
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

/* The RA or FP rule: 0, or why it can't be said. */
static int ra_fp_rule(const struct sf_cfi_loc *l, enum sf_skip why,
		      struct sf_rule *r)
{
	int ret = reg_rule(l, r);

	return ret < 0 ? (int)why : ret;
}

int sf_cfi_row_rules(const struct sf_cfi_frame *fr, struct sf_row *row,
		     int *mask, int *k, int *shift)
{
	struct sf_rule sp;
	int ret;

	memset(row, 0, sizeof(*row));
	ret = cfa_rule(&fr->cfa, &row->cfa, mask, k, shift);
	if (ret)
		return ret;
	ret = ra_fp_rule(&fr->ra, SKIP_RA, &row->ra);
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
	ret = ra_fp_rule(&fr->fp, SKIP_FP, &row->fp);
	if (ret)
		return ret;
	if (row->fp.kind == SF_UNDEFINED)
		return SKIP_FP;
	/*
	 * SFrame's caller rsp is the CFA: libdw's default val_offset(0), or
	 * (signal frames) the CFA's own expression as rsp's location.
	 */
	if (reg_rule(&fr->sp, &sp) || sp.kind != SF_RULE)
		return SKIP_SP;
	if ((sp.reg_p || sp.deref || sp.off) &&
	    !(sp.reg_p && sp.deref && row->cfa.deref &&
	      sp.reg == row->cfa.reg && sp.off == row->cfa.off))
		return SKIP_SP;
	return 0;
}

static void libdw_reg(Dwarf_Frame *fr, int regno, struct sf_cfi_loc *l)
{
	Dwarf_Op *ops = NULL;

	if (dwarf_frame_register(fr, regno, l->mem, &ops, &l->nops)) {
		l->err = SKIP_CFI_ERROR;
		return;
	}
	l->ops = ops;
	l->same = !l->nops && !ops;
}

int sf_cfi_row(Dwarf_Frame *fr, struct sf_row *row, int *mask, int *k,
	       int *shift)
{
	struct sf_cfi_frame f;
	Dwarf_Op *ops = NULL;

	memset(&f, 0, sizeof(f));
	if (dwarf_frame_cfa(fr, &ops, &f.cfa.nops))
		f.cfa.err = SKIP_CFI_ERROR;
	f.cfa.ops = ops;
	libdw_reg(fr, DW_X86_RA, &f.ra);
	libdw_reg(fr, DW_X86_RBP, &f.fp);
	libdw_reg(fr, DW_X86_RSP, &f.sp);
	return sf_cfi_row_rules(&f, row, mask, k, shift);
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

/* A PLT block: its own function, PC type MASK. */
static int plt_func(struct ctx *c, struct builder *b, uint64_t addr,
		    uint64_t re, struct sf_row *row, int mask, int k,
		    int shift, bool sig)
{
	struct sf_row r2 = *row;

	if (finish(c, b, addr))
		return -1;
	if (addr % (mask + 1)) {
		skip(c, SKIP_CFA_EXPR, addr, re);
		return 0;
	}
	start(b, addr);
	b->f.mask = true;
	b->f.rep_size = mask + 1;
	b->signal = sig;
	row->start = 0;
	r2.start = k;
	r2.cfa.off += 1 << shift;
	if (!k)
		*row = r2;	/* always the second rule */
	if (add_row(b, row) || (k && add_row(b, &r2)))
		return -1;
	return finish(c, b, re);
}

static int do_fde(struct ctx *c, const struct fde_info *fi)
{
	uint64_t lo = fi->lo, hi = fi->hi, addr = lo, skip_from = 0;
	struct builder b = { 0 };
	struct cfi_run x;
	struct cfi_cie cie;
	int skip_why = -1, ret = -1;

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
	if (push_fde(c, lo, hi, fi->off))
		return -1;
	if (cfi_begin(&x, &cie, fi)) {
		skip(c, SKIP_CFI_ERROR, lo, hi);
		ret = 0;
		goto out;
	}
	while (addr < hi) {
		struct sf_cfi_frame fr;
		struct sf_row row;
		int mask = 0, k = 0, shift = 0, why, r;
		uint64_t re;

		r = cfi_run(&x, addr);
		re = r > 0 ? x.loc : hi;
		if (r < 0 || re <= addr) {
			if (finish(c, &b, addr))
				goto out;
			skip(c, SKIP_CFI_ERROR, addr, hi);
			ret = 0;
			goto out;
		}
		if (re > hi)
			re = hi;
		cfi_frame(&x, &fr);
		why = sf_cfi_row_rules(&fr, &row, &mask, &k, &shift);
		if (why) {
			if (finish(c, &b, addr))
				goto out;
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
			if (plt_func(c, &b, addr, re, &row, mask, k, shift,
				     cie.signal))
				goto out;
			addr = re;
			continue;
		}
		if (!b.open) {
			start(&b, addr);
			b.signal = cie.signal;
		}
		row.start = (uint32_t)(addr - b.f.start);
		if (b.f.nrows == SF_MAX_ROWS &&
		    !row_eq(&b.f.rows[b.f.nrows - 1], &row)) {
			/* no room for another row: the rest is left out */
			if (finish(c, &b, addr))
				goto out;
			skip(c, SKIP_TOO_BIG, addr, hi);
			ret = 0;
			goto out;
		}
		if (add_row(&b, &row))
			goto out;
		addr = re;
	}
	if (skip_why >= 0)
		skip(c, skip_why, skip_from, hi);
	ret = finish(c, &b, hi);
out:
	cfi_end(&x);
	return ret;
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

	/* none, or an empty one: nothing to describe */
	if (!scn || sh->sh_type == SHT_NOBITS || !sh->sh_size)
		return 1;
	*data = elf_getdata(scn, NULL);
	if (!*data || !(*data)->d_buf || (*data)->d_size != sh->sh_size) {
		snprintf(err, errlen, "%s: .eh_frame at file offset 0x%" PRIx64
			 ": can't read 0x%" PRIx64 " bytes", name,
			 (uint64_t)sh->sh_offset, (uint64_t)sh->sh_size);
		return -1;
	}
	return 0;
}

/* Call cb for each FDE of .eh_frame, in its order; 0 or -1 + err. */
static int each_fde(Elf *elf, const char *name,
		    int (*cb)(void *arg, const struct fde_info *fi), void *arg,
		    size_t *nfdes, size_t *eh_bytes, char *err, size_t errlen)
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
		struct fde_info fi;
		const uint8_t *p, *end;
		uint64_t lo, len;
		uint8_t enc;
		bool signal, sized;

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
		    cie_parse(&ce.cie, &enc, &signal, &sized)) {
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
		fi = (struct fde_info){
			.lo = lo, .hi = lo + len, .off = off, .cie = &ce.cie,
			.enc = enc, .signal = signal, .sized = sized,
			.insns = p, .end = end, .eh_addr = sh.sh_addr,
			.eh_buf = data->d_buf,
		};
		if (cb(arg, &fi)) {
			snprintf(err, errlen, "%s: %s", name, strerror(ENOMEM));
			return -1;
		}
		off = next;
	}
	return 0;
}

struct foreach_arg {
	int (*cb)(void *arg, uint64_t lo, uint64_t hi, uint64_t off);
	void *arg;
};

static int foreach_cb(void *arg, const struct fde_info *fi)
{
	struct foreach_arg *a = arg;

	return a->cb(a->arg, fi->lo, fi->hi, fi->off);
}

int sf_cfi_foreach_fde(Elf *elf, const char *name,
		       int (*cb)(void *arg, uint64_t lo, uint64_t hi,
				 uint64_t off),
		       void *arg, size_t *nfdes, size_t *eh_bytes, char *err,
		       size_t errlen)
{
	struct foreach_arg a = { cb, arg };

	return each_fde(elf, name, foreach_cb, &a, nfdes, eh_bytes, err,
			errlen);
}

static int fde_cb(void *arg, const struct fde_info *fi)
{
	return do_fde(arg, fi);
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
	if (each_fde(elf, name, fde_cb, &c, &st->fdes, &st->eh_frame_bytes,
		     err, errlen) ||
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
