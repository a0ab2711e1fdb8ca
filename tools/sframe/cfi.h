/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cfi.h - read an ELF's .eh_frame and describe every FDE as SFrame
 * functions (struct sf_func), counting what can't be said.
 */
#ifndef SFRAME_CFI_H
#define SFRAME_CFI_H

#include <elfutils/libdw.h>
#include <gelf.h>
#include "sframe.h"

/* Why an FDE (or part of one) was left out. */
enum sf_skip {
	SKIP_EMPTY,		/* zero-size FDE */
	SKIP_NOT_TEXT,		/* range outside the executable segments */
	SKIP_CFA_EXPR,		/* CFA expression SFrame can't say */
	SKIP_CFA_REG,		/* CFA on a register v2 can't say (DRAP) */
	SKIP_RA,		/* RA rule SFrame can't say */
	SKIP_FP,		/* FP rule SFrame can't say */
	SKIP_SP,		/* caller's rsp isn't the CFA */
	SKIP_FLEX_V2,		/* needs a FLEX FDE: v3 only */
	SKIP_SIGNAL_V2,		/* signal frame: v3 only */
	SKIP_TOO_BIG,		/* offsets or row count past the format's fields */
	SKIP_CFI_ERROR,		/* the CFA program has no rule (malformed) */
	SKIP_NR
};

extern const char *const sf_skip_names[SKIP_NR];

struct sf_cfi_stats {
	size_t fdes;			/* FDEs in .eh_frame */
	size_t eh_frame_bytes;
	size_t funcs;			/* SFrame FDEs produced */
	size_t rows;
	size_t flex, mask, signal, outermost;
	size_t skipped[SKIP_NR];
	uint64_t skipped_bytes[SKIP_NR];
	uint64_t first_skip[SKIP_NR];	/* first address, for the message */
	uint64_t covered_bytes;
};

/*
 * Describe elf's .eh_frame for SFrame version 'version'.  *funcs is sorted
 * by start and malloc'd (sf_funcs_free()); a function has at most 65535
 * rows.  Returns 0 (st->fdes 0: nothing to describe), or -1 with err set
 * (the file and offset are named by the caller's 'name').
 */
int sf_cfi_read(Elf *elf, const char *name, int version,
		struct sf_func **funcs, size_t *nfuncs,
		struct sf_cfi_stats *st, char *err, size_t errlen);

/* Print the statistics: what was emitted and what was left out, and why. */
void sf_cfi_print_stats(const struct sf_cfi_stats *st, const char *name,
			FILE *out);

/*
 * A rule as libdw's dwarf_frame_cfa() / dwarf_frame_register() give it,
 * and as cfi.c's own interpreter gives it: the one form the translation to
 * SFrame reads.  nops 0 is "undefined" (CFA or register), or for a
 * register "same value" when same is set.  ops points into mem, into
 * libdw's frame, or into the interpreter's buffers: don't copy the struct.
 */
struct sf_cfi_loc {
	int err;		/* SKIP_CFI_ERROR: no rule for the address */
	bool same;
	size_t nops;
	const Dwarf_Op *ops;
	Dwarf_Op mem[3];
};

/* The rules of one row that SFrame can say. */
struct sf_cfi_frame {
	struct sf_cfi_loc cfa, ra, fp, sp;
};

/*
 * One row as SFrame says it: 0, or the enum sf_skip reason it can't.
 * *plt_mask (0: none), *plt_k and *plt_shift describe ld's PLT rule.
 */
int sf_cfi_row_rules(const struct sf_cfi_frame *fr, struct sf_row *row,
		     int *plt_mask, int *plt_k, int *plt_shift);

/* The same for libdw's frame (sframe-check's oracle side). */
struct Dwarf_Frame_s;
int sf_cfi_row(struct Dwarf_Frame_s *frame, struct sf_row *row, int *plt_mask,
	       int *plt_k, int *plt_shift);

/*
 * Call cb for each FDE's [lo, hi) in .eh_frame order, with the FDE's
 * offset in .eh_frame; 0 or -1 + err.
 */
int sf_cfi_foreach_fde(Elf *elf, const char *name,
		       int (*cb)(void *arg, uint64_t lo, uint64_t hi,
				 uint64_t off),
		       void *arg, size_t *nfdes, size_t *eh_bytes, char *err,
		       size_t errlen);

/*
 * Find .eh_frame and read it: 0 with *sh and *data, 1 if there is none or
 * it is empty (nothing to describe), or -1 with err when it can't be read.
 */
int sf_cfi_eh_frame(Elf *elf, const char *name, GElf_Shdr *sh,
		    Elf_Data **data, char *err, size_t errlen);

#endif /* SFRAME_CFI_H */
