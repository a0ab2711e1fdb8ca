// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-check - compare an SFrame section with the ELF's .eh_frame, PC by
 * PC, and report how much of the text SFrame covers.
 *
 * For every address an .eh_frame FDE covers, both descriptions are
 * evaluated on the same made-up machine state (registers with distinct
 * values, memory whose every word is a hash of its address): the CFA, the
 * return address, the caller's rbp and the caller's rsp (SFrame: the
 * CFA) must come out the same.  libdw gives the CFI rule; the small DWARF
 * expression evaluator here is the test oracle, independent of how
 * sframe-gen translated the rules.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfi.h"
#include "elfin.h"
#include "sframe.h"

static const char usage[] =
"Usage: sframe-check [OPTIONS] ELF\n"
"Check ELF's SFrame against its .eh_frame at every address .eh_frame covers,\n"
"and report the coverage of text bytes and functions, with the reasons for\n"
"what isn't covered.\n"
"\n"
"  --sframe FILE   check this sidecar (or raw section) instead of ELF's .sframe\n"
"  --vaddr ADDR    address FILE's function starts are relative to (default 0)\n"
"  -n, --max N     list at most N mismatches (default 20)\n"
"  -v, --verbose   list every function not covered\n"
"  -h, --help      this text\n"
"\n"
"Exit status: 0 no mismatch; 1 mismatches, or a section that doesn't decode.\n";

/* ---- the made-up machine ---- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

struct mstate {
	uint64_t reg[17];
};

static uint64_t load(uint64_t addr)
{
	return mix(addr ^ 0x5f3759df);
}

static void mstate_init(struct mstate *m, uint64_t pc)
{
	for (int i = 0; i < 17; i++)
		m->reg[i] = 0x7ff000000000ULL + mix(pc * 31 + i) % 0x100000000ULL * 8;
	m->reg[DW_X86_RA] = pc;
}

/* ---- DWARF expressions (oracle) ---- */

enum { V_ERR, V_UNDEF, V_VAL };

/*
 * Evaluate ops; is_loc: a location (load the result unless stack_value or
 * a register location).  Returns V_VAL with *out, or V_ERR.
 */
static int eval(const Dwarf_Op *ops, size_t n, const struct mstate *m,
		uint64_t cfa, bool is_loc, uint64_t *out)
{
	uint64_t st[64];
	int sp = 0;
	bool value = !is_loc;

#define PUSH(v) do { if (sp >= 64) return V_ERR; st[sp++] = (v); } while (0)
#define POP(v) do { if (sp <= 0) return V_ERR; (v) = st[--sp]; } while (0)
	if (n == 1 && (ops[0].atom == DW_OP_regx ||
		       (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31))) {
		uint64_t r = ops[0].atom == DW_OP_regx ? ops[0].number :
				(uint64_t)(ops[0].atom - DW_OP_reg0);

		if (r > 16)
			return V_ERR;
		*out = m->reg[r];
		return V_VAL;
	}
	for (size_t i = 0; i < n; i++) {
		const Dwarf_Op *o = &ops[i];
		uint64_t a, b;

		if (o->atom >= DW_OP_lit0 && o->atom <= DW_OP_lit31) {
			PUSH(o->atom - DW_OP_lit0);
			continue;
		}
		if (o->atom >= DW_OP_breg0 && o->atom <= DW_OP_breg31) {
			if (o->atom - DW_OP_breg0 > 16)
				return V_ERR;
			PUSH(m->reg[o->atom - DW_OP_breg0] + o->number);
			continue;
		}
		switch (o->atom) {
		case DW_OP_bregx:
			if (o->number > 16)
				return V_ERR;
			PUSH(m->reg[o->number] + o->number2);
			break;
		case DW_OP_call_frame_cfa:
			PUSH(cfa);
			break;
		case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u:
		case DW_OP_const2s: case DW_OP_const4u: case DW_OP_const4s:
		case DW_OP_const8u: case DW_OP_const8s: case DW_OP_constu:
		case DW_OP_consts:
			PUSH(o->number);
			break;
		case DW_OP_plus_uconst:
			POP(a);
			PUSH(a + o->number);
			break;
		case DW_OP_deref:
			POP(a);
			PUSH(load(a));
			break;
		case DW_OP_dup:
			POP(a);
			PUSH(a);
			PUSH(a);
			break;
		case DW_OP_drop:
			POP(a);
			break;
		case DW_OP_swap:
			POP(a);
			POP(b);
			PUSH(a);
			PUSH(b);
			break;
		case DW_OP_neg:
			POP(a);
			PUSH(-a);
			break;
		case DW_OP_not:
			POP(a);
			PUSH(~a);
			break;
		case DW_OP_stack_value:
			value = true;
			break;
		case DW_OP_plus: case DW_OP_minus: case DW_OP_and: case DW_OP_or:
		case DW_OP_xor: case DW_OP_mul: case DW_OP_shl: case DW_OP_shr:
		case DW_OP_shra: case DW_OP_ge: case DW_OP_gt: case DW_OP_le:
		case DW_OP_lt: case DW_OP_eq: case DW_OP_ne:
			POP(b);
			POP(a);
			switch (o->atom) {
			case DW_OP_plus:  a += b; break;
			case DW_OP_minus: a -= b; break;
			case DW_OP_and:   a &= b; break;
			case DW_OP_or:    a |= b; break;
			case DW_OP_xor:   a ^= b; break;
			case DW_OP_mul:   a *= b; break;
			case DW_OP_shl:   a = b < 64 ? a << b : 0; break;
			case DW_OP_shr:   a = b < 64 ? a >> b : 0; break;
			case DW_OP_shra:  a = (uint64_t)((int64_t)a >> (b < 63 ? b : 63)); break;
			case DW_OP_ge:    a = (int64_t)a >= (int64_t)b; break;
			case DW_OP_gt:    a = (int64_t)a > (int64_t)b; break;
			case DW_OP_le:    a = (int64_t)a <= (int64_t)b; break;
			case DW_OP_lt:    a = (int64_t)a < (int64_t)b; break;
			case DW_OP_eq:    a = a == b; break;
			case DW_OP_ne:    a = a != b; break;
			}
			PUSH(a);
			break;
		default:
			return V_ERR;
		}
	}
	if (sp < 1)
		return V_ERR;
	*out = value ? st[sp - 1] : load(st[sp - 1]);
	return V_VAL;
#undef PUSH
#undef POP
}

/* What .eh_frame says the caller's CFA, RA, rbp, rsp are. */
struct frame_vals {
	int ra_kind;			/* V_UNDEF: outermost */
	uint64_t cfa, ra, fp, sp;
};

static int cfi_vals(Dwarf_Frame *fr, const struct mstate *m,
		    struct frame_vals *v)
{
	int regs[3] = { DW_X86_RA, DW_X86_RBP, DW_X86_RSP };
	uint64_t *dst[3] = { &v->ra, &v->fp, &v->sp };
	Dwarf_Op *ops, mem[3];
	size_t n;

	memset(v, 0, sizeof(*v));
	if (dwarf_frame_register(fr, DW_X86_RA, mem, &ops, &n))
		return V_ERR;
	if (!n && ops) {
		v->ra_kind = V_UNDEF;
		return V_VAL;
	}
	v->ra_kind = V_VAL;
	if (dwarf_frame_cfa(fr, &ops, &n) || !n ||
	    eval(ops, n, m, 0, false, &v->cfa) != V_VAL)
		return V_ERR;
	for (int i = 0; i < 3; i++) {
		if (dwarf_frame_register(fr, regs[i], mem, &ops, &n))
			return V_ERR;
		if (!n && !ops)
			*dst[i] = m->reg[regs[i]];	/* same value */
		else if (!n)
			return V_ERR;			/* undefined: not a frame */
		else if (eval(ops, n, m, v->cfa, true, dst[i]) != V_VAL)
			return V_ERR;
	}
	return V_VAL;
}

/* The same, as the kernel's SFrame unwinder computes them. */
static uint64_t sf_rule_val(const struct sf_rule *r, const struct mstate *m,
			    uint64_t cfa)
{
	uint64_t v = (r->reg_p ? m->reg[r->reg > 16 ? 0 : r->reg] : cfa) +
		     (int64_t)r->off;

	return r->deref ? load(v) : v;
}

static void sf_vals(const struct sf_func *f, const struct sf_row *r,
		    const struct mstate *m, struct frame_vals *v)
{
	memset(v, 0, sizeof(*v));
	if (!r || r->ra.kind == SF_UNDEFINED) {
		v->ra_kind = V_UNDEF;
		return;
	}
	(void)f;
	v->ra_kind = V_VAL;
	v->cfa = sf_rule_val(&r->cfa, m, 0);
	v->sp = v->cfa;
	v->ra = r->ra.kind == SF_RULE ? sf_rule_val(&r->ra, m, v->cfa) :
					load(v->cfa + SFRAME_AMD64_RA_OFFSET);
	v->fp = r->fp.kind == SF_RULE ? sf_rule_val(&r->fp, m, v->cfa) :
					m->reg[DW_X86_RBP];
}

/* ---- SFrame lookup ---- */

struct sfx {
	struct sf_func *f;
	uint32_t n;
};

static const struct sf_func *sf_find(const struct sfx *x, uint64_t pc)
{
	uint32_t lo = 0, hi = x->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (x->f[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (pc - x->f[lo - 1].start >= x->f[lo - 1].size)
		return NULL;
	return &x->f[lo - 1];
}

static const struct sf_row *sf_row_at(const struct sf_func *f, uint64_t pc)
{
	uint64_t off = pc - f->start;
	const struct sf_row *r = NULL;

	if (f->mask)
		off %= f->rep_size;
	for (uint32_t i = 0; i < f->nrows && f->rows[i].start <= off; i++)
		r = &f->rows[i];
	return r;
}

/* ---- symbols ---- */

struct sym {
	uint64_t lo, hi;
	const char *name;
};

struct checker {
	struct elfin in;
	Dwarf_CFI *cfi;
	struct sfx sx;
	struct sym *syms;
	size_t nsyms;
	const char *symtab;		/* ".symtab" or ".dynsym" */
	unsigned long max_report;
	bool verbose;
	/* results */
	uint64_t cfi_bytes, checked, covered, mismatches, unchecked;
	uint64_t cfi_fdes;
	struct sym *fdes;		/* .eh_frame FDE ranges */
	size_t nfdes, capfdes;
	char err[1024];
};

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void load_syms(struct checker *c)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	for (int pass = 0; pass < 2 && !c->nsyms; pass++) {
		Elf64_Word want = pass ? SHT_DYNSYM : SHT_SYMTAB;

		c->symtab = pass ? ".dynsym" : ".symtab";
		while ((scn = elf_nextscn(c->in.elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != want ||
			    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
				continue;
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym s;
				GElf_Shdr ts;
				Elf_Scn *t;

				if (!gelf_getsym(d, i, &s) || !s.st_size ||
				    (GELF_ST_TYPE(s.st_info) != STT_FUNC &&
				     GELF_ST_TYPE(s.st_info) != STT_GNU_IFUNC))
					continue;
				t = elf_getscn(c->in.elf, s.st_shndx);
				if (!t || !gelf_getshdr(t, &ts) ||
				    !(ts.sh_flags & SHF_EXECINSTR))
					continue;
				if (c->nsyms == cap) {
					struct sym *n = realloc(c->syms,
						(cap = cap ? 2 * cap : 1024) * sizeof(*n));

					if (!n)
						return;
					c->syms = n;
				}
				c->syms[c->nsyms++] = (struct sym){ s.st_value,
					s.st_value + s.st_size,
					elf_strptr(c->in.elf, sh.sh_link, s.st_name) };
			}
		}
		scn = NULL;
	}
	if (c->nsyms > 1)
		qsort(c->syms, c->nsyms, sizeof(*c->syms), cmp_sym);
	/* one entry per address (aliases) */
	{
		size_t w = 0;

		for (size_t i = 0; i < c->nsyms; i++)
			if (!w || c->syms[i].lo != c->syms[w - 1].lo)
				c->syms[w++] = c->syms[i];
		c->nsyms = w;
	}
}

static const char *sym_name(const struct checker *c, uint64_t pc, uint64_t *off)
{
	const char *name = NULL;

	for (size_t lo = 0, hi = c->nsyms; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->syms[mid].lo <= pc) {
			if (pc < c->syms[mid].hi) {
				name = c->syms[mid].name;
				*off = pc - c->syms[mid].lo;
			}
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return name;
}

/* The executable section holding pc, for addresses without a symbol. */
static const char *sec_name(const struct checker *c, uint64_t pc, uint64_t *off)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(c->in.elf, &shstrndx))
		return "?";
	while ((scn = elf_nextscn(c->in.elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC) &&
		    pc >= sh.sh_addr && pc - sh.sh_addr < sh.sh_size) {
			const char *n = elf_strptr(c->in.elf, shstrndx, sh.sh_name);

			*off = pc - sh.sh_addr;
			return n ? n : "?";
		}
	}
	return "?";
}

static void report(struct checker *c, uint64_t pc, const char *what,
		   const struct frame_vals *cv, const struct frame_vals *sv)
{
	uint64_t off = 0;
	const char *name;

	c->mismatches++;
	if (c->mismatches > c->max_report)
		return;
	name = sym_name(c, pc, &off);
	if (!name)
		name = sec_name(c, pc, &off);
	printf("%s: MISMATCH at 0x%" PRIx64 " (%s+0x%" PRIx64 "): %s", c->in.name,
	       pc, name ? name : "?", off, what);
	if (cv && sv)
		printf(" (.eh_frame 0x%" PRIx64 ", SFrame 0x%" PRIx64 ")",
		       !strcmp(what, "CFA") ? cv->cfa : !strcmp(what, "RA") ? cv->ra :
		       !strcmp(what, "FP") ? cv->fp : cv->sp,
		       !strcmp(what, "CFA") ? sv->cfa : !strcmp(what, "RA") ? sv->ra :
		       !strcmp(what, "FP") ? sv->fp : sv->sp);
	printf("\n");
}

static void check_pc(struct checker *c, Dwarf_Frame *fr, uint64_t pc)
{
	const struct sf_func *f = sf_find(&c->sx, pc);
	struct frame_vals cv, sv;
	struct mstate m;

	c->cfi_bytes++;
	if (!f)
		return;
	c->covered++;
	mstate_init(&m, pc);
	if (cfi_vals(fr, &m, &cv) != V_VAL) {
		c->unchecked++;
		report(c, pc, "SFrame covers a rule .eh_frame can't evaluate",
		       NULL, NULL);
		return;
	}
	c->checked++;
	sf_vals(f, sf_row_at(f, pc), &m, &sv);
	if (cv.ra_kind != sv.ra_kind)
		report(c, pc, cv.ra_kind == V_UNDEF ? "outermost in .eh_frame, "
		       "not in SFrame" : "outermost in SFrame, not in .eh_frame",
		       NULL, NULL);
	else if (cv.ra_kind == V_UNDEF)
		return;
	else if (cv.cfa != sv.cfa)
		report(c, pc, "CFA", &cv, &sv);
	else if (cv.ra != sv.ra)
		report(c, pc, "RA", &cv, &sv);
	else if (cv.fp != sv.fp)
		report(c, pc, "FP", &cv, &sv);
	else if (cv.sp != sv.sp)
		report(c, pc, "caller's rsp", &cv, &sv);
}

static int check_fde(void *arg, uint64_t lo, uint64_t hi, uint64_t off)
{
	struct checker *c = arg;
	uint64_t pc = lo;

	(void)off;
	c->cfi_fdes++;
	if (c->nfdes == c->capfdes) {
		struct sym *n = realloc(c->fdes, (c->capfdes = c->capfdes ?
					2 * c->capfdes : 1024) * sizeof(*n));

		if (!n)
			return -1;
		c->fdes = n;
	}
	c->fdes[c->nfdes++] = (struct sym){ lo, hi, NULL };
	while (pc < hi) {
		Dwarf_Frame *fr;
		Dwarf_Addr rs, re;
		bool sig;

		if (dwarf_cfi_addrframe(c->cfi, pc, &fr))
			return 0;	/* libdw refuses the rest: not CFI */
		if (dwarf_frame_info(fr, &rs, &re, &sig) < 0 || re <= pc)
			re = pc + 1;
		if (re > hi)
			re = hi;
		for (; pc < re; pc++)
			check_pc(c, fr, pc);
		free(fr);
	}
	return 0;
}

/* Bytes of [lo, hi) inside .eh_frame FDEs (c->fdes sorted). */
static uint64_t cfi_inside(const struct checker *c, uint64_t lo, uint64_t hi)
{
	uint64_t in = 0, done = lo;

	for (size_t i = 0; i < c->nfdes && c->fdes[i].lo < hi; i++) {
		uint64_t a = c->fdes[i].lo > done ? c->fdes[i].lo : done;
		uint64_t b = c->fdes[i].hi < hi ? c->fdes[i].hi : hi;

		if (a < b) {
			in += b - a;
			done = b;
		}
	}
	return in;
}

/* Why isn't pc covered? */
static const char *why_not(struct checker *c, uint64_t pc)
{
	Dwarf_Frame *fr;
	struct sf_row row;
	int m, k, s, why;

	if (dwarf_cfi_addrframe(c->cfi, pc, &fr))
		return "no .eh_frame FDE";
	why = sf_cfi_row(fr, &row, &m, &k, &s);
	free(fr);
	if (why)
		return sf_skip_names[why];
	return "expressible, but not in this SFrame section (v2, past a "
	       "function's 65535 rows, or overlaps)";
}

struct reason {
	const char *why;
	size_t n;
	const char *example;
};

static void coverage(struct checker *c)
{
	struct reason rs[SKIP_NR + 4] = { { 0 } };
	size_t nrs = 0, full = 0, part = 0, none = 0;
	uint64_t text = 0, sf_bytes = 0;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(c->in.elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) &&
		    sh.sh_type == SHT_PROGBITS)
			text += sh.sh_size;
	}
	for (uint32_t i = 0; i < c->sx.n; i++)
		sf_bytes += c->sx.f[i].size;
	for (size_t i = 0; i < c->nsyms; i++) {
		const struct sym *s = &c->syms[i];
		uint64_t pc, missing = 0, first = 0;
		const char *why;
		size_t j;

		for (pc = s->lo; pc < s->hi; pc++) {
			const struct sf_func *f = sf_find(&c->sx, pc);

			if (f) {
				pc = f->start + f->size - 1;
				continue;
			}
			if (!missing)
				first = pc;
			missing++;
		}
		if (!missing) {
			full++;
			continue;
		}
		if (missing < s->hi - s->lo)
			part++;
		else
			none++;
		why = why_not(c, first);
		for (j = 0; j < nrs && strcmp(rs[j].why, why); j++)
			;
		if (j == nrs && nrs < sizeof(rs) / sizeof(rs[0])) {
			rs[nrs++] = (struct reason){ why, 0, s->name };
		}
		if (j < nrs)
			rs[j].n++;
		if (c->verbose)
			printf("%s: not covered: %s at 0x%" PRIx64 " (%" PRIu64
			       " of %" PRIu64 " bytes): %s\n", c->in.name,
			       s->name ? s->name : "?", first, missing,
			       s->hi - s->lo, why);
	}
	printf("%s: text %" PRIu64 " bytes: SFrame covers %" PRIu64 " (%.1f%%), "
	       ".eh_frame %" PRIu64 " (%.1f%%)\n", c->in.name, text, sf_bytes,
	       text ? 100.0 * sf_bytes / text : 0, c->cfi_bytes,
	       text ? 100.0 * c->cfi_bytes / text : 0);
	printf("%s: functions (%s): %zu, covered %zu (%.1f%%), partly %zu, not "
	       "at all %zu\n", c->in.name, c->nsyms ? c->symtab : "no symbols",
	       c->nsyms, full,
	       c->nsyms ? 100.0 * full / c->nsyms : 0, part, none);
	for (size_t j = 0; j < nrs; j++)
		printf("%s:   %zu not or partly covered: %s (e.g. %s)\n",
		       c->in.name, rs[j].n, rs[j].why,
		       rs[j].example ? rs[j].example : "?");
}

static int load_sframe(struct checker *c, const char *file, uint64_t vaddr,
		       uint8_t **owned)
{
	struct sf_sec s;
	const uint8_t *buf;
	size_t len;
	uint64_t at;
	int bad = 0;

	*owned = NULL;
	if (file) {
		FILE *f = fopen(file, "rb");
		size_t cap = 1 << 16;

		if (!f) {
			snprintf(c->err, sizeof(c->err), "%s: %s", file, strerror(errno));
			return -1;
		}
		*owned = malloc(cap);
		len = 0;
		while (*owned) {
			size_t n = fread(*owned + len, 1, cap - len, f);

			len += n;
			if (len < cap)
				break;
			uint8_t *nb = realloc(*owned, cap *= 2);

			if (!nb) {
				free(*owned);
				*owned = NULL;
				break;
			}
			*owned = nb;
		}
		fclose(f);
		if (!*owned) {
			snprintf(c->err, sizeof(c->err), "%s: out of memory", file);
			return -1;
		}
		buf = *owned;
		at = vaddr;
		/* a sidecar: it must be of this ELF */
		if (len >= 8 && !memcmp(buf, SF_SIDECAR_MAGIC, 8)) {
			struct sf_ident want, got;
			char a[160], b[160];
			uint32_t seclen;

			if (sf_sidecar_hdr_parse(buf, len, &got, &seclen, c->err,
						 sizeof(c->err)) ||
			    elfin_ident(&c->in, &want, c->err, sizeof(c->err)))
				goto bad_sec;
			if (!sf_ident_eq(&want, &got)) {
				sf_ident_str(&got, a, sizeof(a));
				sf_ident_str(&want, b, sizeof(b));
				snprintf(c->err, sizeof(c->err), "sidecar of another "
					 "object (%s; %s is %s)", a, c->in.name, b);
				goto bad_sec;
			}
			buf += SF_SIDECAR_HDR_SIZE;
			len = seclen;
		}
	} else {
		GElf_Shdr sh;
		Elf_Scn *scn = elfin_section(&c->in, ".sframe", &sh);
		Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;

		if (!scn || sh.sh_type == SHT_NOBITS || !d || !d->d_buf) {
			snprintf(c->err, sizeof(c->err), "%s: no readable .sframe "
				 "section (use --sframe for a sidecar)", c->in.name);
			return -1;
		}
		buf = d->d_buf;
		len = d->d_size;
		at = sh.sh_addr;
		file = c->in.name;
	}
	if (sf_open(&s, buf, len, at, c->err, sizeof(c->err)))
		goto bad_sec;
	c->sx.f = calloc(s.num_fdes ? s.num_fdes : 1, sizeof(*c->sx.f));
	if (!c->sx.f) {
		snprintf(c->err, sizeof(c->err), "out of memory");
		goto bad_sec;
	}
	for (uint32_t i = 0; i < s.num_fdes; i++) {
		struct sf_func *f = &c->sx.f[c->sx.n];

		if (sf_read_func(&s, i, f, c->err, sizeof(c->err))) {
			printf("%s: FDE %u doesn't decode: %s\n", file, i, c->err);
			bad++;
			continue;
		}
		if (c->sx.n && f->start < c->sx.f[c->sx.n - 1].start +
					  c->sx.f[c->sx.n - 1].size) {
			printf("%s: FDE %u at 0x%" PRIx64 " overlaps or precedes "
			       "FDE %u (FDE_SORTED broken)\n", file, i, f->start,
			       i - 1);
			free(f->rows);
			bad++;
			continue;
		}
		c->sx.n++;
	}
	if (bad) {
		snprintf(c->err, sizeof(c->err), "%d bad FDEs", bad);
		goto bad_sec;
	}
	printf("%s: SFrame v%u, %u FDEs, %u FREs, %zu bytes\n", file, s.version,
	       s.num_fdes, s.num_fres, len);
	return 0;
bad_sec:
	{
		char tmp[sizeof(c->err)];

		snprintf(tmp, sizeof(tmp), "%.300s: %.700s", file, c->err);
		memcpy(c->err, tmp, sizeof(tmp));
	}
	return -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sframe", required_argument, NULL, 's' },
		{ "vaddr", required_argument, NULL, 'a' },
		{ "max", required_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct checker c = { .max_report = 20 };
	const char *file = NULL;
	uint64_t vaddr = 0;
	uint8_t *owned = NULL;
	size_t nfdes, ehb;
	int opt, ret = 1, r;
	Elf_Data *eh_data;
	GElf_Shdr eh_sh;
	char *end;

	while ((opt = getopt_long(argc, argv, "n:vh", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			file = optarg;
			break;
		case 'a':
		case 'n':
			errno = 0;
			(opt == 'a' ? (void)(vaddr = strtoull(optarg, &end, 0)) :
				      (void)(c.max_report = strtoul(optarg, &end, 0)));
			if (errno || *end || !*optarg) {
				fprintf(stderr, "sframe-check: %s: not a number\n",
					optarg);
				return 1;
			}
			break;
		case 'v':
			c.verbose = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 1;
		}
	}
	if (optind + 1 != argc) {
		fputs(usage, stderr);
		return 1;
	}
	if (elfin_open(&c.in, argv[optind], c.err, sizeof(c.err)))
		goto fail;
	if (load_sframe(&c, file, vaddr, &owned))
		goto fail;
	/* libdw says "invalid ELF file" for an .eh_frame it can't read */
	r = sf_cfi_eh_frame(c.in.elf, c.in.name, &eh_sh, &eh_data, c.err,
			    sizeof(c.err));
	if (r > 0)
		snprintf(c.err, sizeof(c.err), "%s: no .eh_frame", c.in.name);
	if (r)
		goto fail;
	c.cfi = dwarf_getcfi_elf(c.in.elf);
	if (!c.cfi) {
		snprintf(c.err, sizeof(c.err), "%s: .eh_frame at file offset "
			 "0x%" PRIx64 ": %s", c.in.name,
			 (uint64_t)eh_sh.sh_offset, dwarf_errmsg(-1));
		goto fail;
	}
	load_syms(&c);
	if (sf_cfi_foreach_fde(c.in.elf, c.in.name, check_fde, &c, &nfdes, &ehb,
			       c.err, sizeof(c.err)))
		goto fail;
	/* SFrame must not describe code .eh_frame doesn't */
	if (c.nfdes > 1)
		qsort(c.fdes, c.nfdes, sizeof(*c.fdes), cmp_sym);
	for (uint32_t i = 0; i < c.sx.n; i++) {
		const struct sf_func *f = &c.sx.f[i];

		if (cfi_inside(&c, f->start, f->start + f->size) != f->size)
			report(&c, f->start, "SFrame FDE covers code without "
			       ".eh_frame", NULL, NULL);
	}
	printf("%s: checked %" PRIu64 " addresses in %" PRIu64 " .eh_frame FDEs "
	       "against SFrame: %" PRIu64 " mismatches%s\n", c.in.name,
	       c.checked, c.cfi_fdes, c.mismatches,
	       c.mismatches > c.max_report ? " (first ones listed)" : "");
	coverage(&c);
	ret = c.mismatches ? 1 : 0;
	goto out;
fail:
	fprintf(stderr, "sframe-check: %s\n", c.err);
out:
	if (c.cfi)
		dwarf_cfi_end(c.cfi);
	for (uint32_t i = 0; i < c.sx.n; i++)
		free(c.sx.f[i].rows);
	free(c.sx.f);
	free(c.syms);
	free(c.fdes);
	free(owned);
	elfin_close(&c.in);
	return ret;
}
