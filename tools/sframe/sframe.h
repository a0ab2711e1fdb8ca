/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sframe.h - SFrame v2/v3 on-disk format (x86-64) and the in-memory model
 * shared by sframe-gen, sframe-dump and sframe-check.
 *
 * Format: ../../shared/docs/sframe-format.md.  Everything on disk is
 * little-endian; the readers here never assume alignment.
 */
#ifndef SFRAME_H
#define SFRAME_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SFRAME_MAGIC			0xdee2
#define SFRAME_VERSION_2		2
#define SFRAME_VERSION_3		3

#define SFRAME_F_FDE_SORTED		0x1
#define SFRAME_F_FRAME_POINTER		0x2	/* v2 only */
#define SFRAME_F_FDE_FUNC_START_PCREL	0x4

#define SFRAME_ABI_AMD64_LE		3
#define SFRAME_AMD64_RA_OFFSET		(-8)

#define SFRAME_HDR_SIZE			28
#define SFRAME_V2_FDE_SIZE		20
#define SFRAME_V3_FDE_SIZE		16
#define SFRAME_V3_ATTR_SIZE		5

#define SFRAME_FRE_TYPE_ADDR1		0
#define SFRAME_FRE_TYPE_ADDR2		1
#define SFRAME_FRE_TYPE_ADDR4		2

#define SFRAME_FDE_PCTYPE_INC		0
#define SFRAME_FDE_PCTYPE_MASK		1

#define SFRAME_FDE_TYPE_DEFAULT		0
#define SFRAME_FDE_TYPE_FLEX		1

/* FDE info byte (v2 and v3) */
#define SFRAME_INFO_FRE_TYPE(i)		((i) & 0xf)
#define SFRAME_INFO_PCTYPE(i)		(((i) >> 4) & 0x1)
#define SFRAME_INFO_PAUTH		0x20
#define SFRAME_INFO_SIGNAL		0x80	/* v3 only */

/* FRE info byte */
#define SFRAME_FRE_BASE_SP		0x1	/* else FP; DEFAULT FDEs only */
#define SFRAME_FRE_NWORDS(i)		(((i) >> 1) & 0xf)
#define SFRAME_FRE_WSIZE(i)		(((i) >> 5) & 0x3)	/* 0:1 1:2 2:4 */
#define SFRAME_FRE_MANGLED_RA		0x80

/* FLEX control word */
#define SFRAME_FLEX_REG_P		0x1
#define SFRAME_FLEX_DEREF_P		0x2
#define SFRAME_FLEX_REG(c)		((c) >> 3)

/* x86-64 DWARF register numbers */
#define DW_X86_RBP			6
#define DW_X86_RSP			7
#define DW_X86_RA			16

/*
 * A rule, as SFrame can say it:
 *   SF_UNCHANGED  no rule: FP unchanged, RA the default load(CFA - 8)
 *   SF_UNDEFINED  RA only: no caller (outermost frame)
 *   SF_RULE       value = base + off, loaded from there if deref;
 *                 base = DWARF register 'reg' if reg_p, else the CFA.
 * The CFA is always SF_RULE with reg_p set.
 */
enum sf_kind { SF_UNCHANGED, SF_UNDEFINED, SF_RULE };

struct sf_rule {
	uint8_t kind;
	bool reg_p;
	bool deref;
	uint8_t reg;
	int32_t off;
};

struct sf_row {
	uint32_t start;		/* offset from the function start (MASK: modulo rep) */
	struct sf_rule cfa, ra, fp;
	uint8_t nwords;		/* decoder only: data words on disk */
};

/* Two rules say the same thing. */
static inline bool sf_rule_eq(const struct sf_rule *a, const struct sf_rule *b)
{
	return a->kind == b->kind && (a->kind != SF_RULE ||
		(a->reg_p == b->reg_p && a->deref == b->deref &&
		 a->off == b->off && (!a->reg_p || a->reg == b->reg)));
}

struct sf_func {
	uint64_t start;		/* vaddr in the object */
	uint32_t size;
	bool signal;
	bool flex;		/* needs a FLEX FDE */
	bool mask;		/* PC type MASK */
	uint8_t rep_size;
	uint32_t nrows;		/* 0: outermost */
	struct sf_row *rows;
};

/* Encoder: sframe-write.c */
struct sf_enc_opts {
	int version;		/* 2 or 3 */
	bool pcrel;		/* SFRAME_F_FDE_FUNC_START_PCREL (v3: always) */
	uint64_t vaddr;		/* where the section will live */
};

/*
 * Encode funcs[] (sorted by start, not overlapping, every one encodable in
 * opts->version: see sf_func_encodable()) into a malloc'd buffer.
 * Returns 0, or -1 with a message in err.
 */
int sf_encode(const struct sf_func *funcs, size_t nfuncs,
	      const struct sf_enc_opts *opts, uint8_t **out, size_t *outlen,
	      char *err, size_t errlen);
/* NULL if f can be encoded in this version, else why not. */
const char *sf_func_encodable(const struct sf_func *f, int version);
/* Does the row fit a DEFAULT FDE? */
bool sf_row_default(const struct sf_row *r);

/*
 * A checked header: sframe-hdr.c, the kernel's rules, shared by the
 * decoder, sframe-audit.so and tests/prctl-stub.c.
 */
struct sf_hdr {
	uint8_t version, flags, abi, auxhdr_len;
	int8_t fp_off, ra_off;
	uint32_t num_fdes, num_fres, fre_len;
	size_t fde_size;
	uint64_t fdes, fdes_end;	/* the FDE index, offsets in the section */
	uint64_t fres, fres_end;	/* the FRE sub-section */
};

/*
 * Check the header at buf (at least SFRAME_HDR_SIZE bytes readable if len
 * says so) of a section of len bytes: that every count and offset stays
 * inside it.  0, or -1 with "offset N: what" in why.
 */
int sf_hdr_check(const void *buf, size_t len, struct sf_hdr *h, char *why,
		 size_t whylen);

/*
 * A sidecar file (sframe-gen without --inject): a header naming the
 * object it was made from, then the SFrame section, encoded as if it
 * lived at address 0 of the object.  Little-endian:
 *
 *	 0  char[8]	"SFRMSIDE"
 *	 8  u32		header size: 96, the section follows
 *	12  u32		identity kind: SF_ID_BUILD_ID or SF_ID_EH_FRAME
 *	16  u32		identity length (1-64; 8 for SF_ID_EH_FRAME)
 *	20  u32		section length: the rest of the file, exactly
 *	24  u8[64]	the identity, then zeros
 *	88  u8[8]	zero
 *
 * sframe-ident.c, shared by sframe-gen, -dump, -check and -audit.so.
 */
#define SF_SIDECAR_MAGIC	"SFRMSIDE"
#define SF_SIDECAR_HDR_SIZE	96
#define SF_ID_MAX		64
#define SF_ID_BUILD_ID		1	/* the GNU build ID */
#define SF_ID_EH_FRAME		2	/* FNV-1a of PT_LOADs and .eh_frame */

struct sf_ident {
	uint32_t kind, len;
	uint8_t id[SF_ID_MAX];
};

/*
 * An object as the loader maps it: its program headers, and either the
 * file's bytes (file, file_len) or the mapping (file NULL, at bias).
 */
struct sf_image {
	const Elf64_Phdr *phdr;
	size_t phnum;
	const uint8_t *file;
	size_t file_len;
	uintptr_t bias;
};

/* The object's identity: 0, or -1 with why (it has none we can use). */
int sf_ident_of(const struct sf_image *img, struct sf_ident *id, char *why,
		size_t whylen);
bool sf_ident_eq(const struct sf_ident *a, const struct sf_ident *b);
/* "build ID 0123..." or ".eh_frame hash 0123..." */
void sf_ident_str(const struct sf_ident *id, char *buf, size_t len);
/* Write the SF_SIDECAR_HDR_SIZE-byte header. */
void sf_sidecar_hdr_make(uint8_t *hdr, const struct sf_ident *id,
			 uint32_t sec_len);
/*
 * Check the SF_SIDECAR_HDR_SIZE bytes at hdr of a file of file_len bytes:
 * 0 with the identity and the section's length, or -1 with why.
 */
int sf_sidecar_hdr_parse(const uint8_t *hdr, uint64_t file_len,
			 struct sf_ident *id, uint32_t *sec_len, char *why,
			 size_t whylen);

/* Decoder: sframe-read.c.  Every offset and count is checked. */
struct sf_sec {
	const uint8_t *buf;
	size_t len;
	uint64_t vaddr;
	uint8_t version, flags, abi;
	int8_t fp_off, ra_off;
	uint32_t num_fdes, num_fres, fre_len;
	size_t fdes, fres;	/* offsets in buf */
};

/*
 * Check the header and bounds; vaddr is the section's address (PCREL and
 * v2 section-relative starts are relative to it).  Returns 0, or -1 with
 * a message naming the offset in err.
 */
int sf_open(struct sf_sec *s, const void *buf, size_t len, uint64_t vaddr,
	    char *err, size_t errlen);
/* Decode FDE i; f->rows is malloc'd (free it).  0 or -1 with err. */
int sf_read_func(const struct sf_sec *s, uint32_t i, struct sf_func *f,
		 char *err, size_t errlen);
/* Offset in the section of FDE i's start field. */
size_t sf_fde_start_field(const struct sf_sec *s, uint32_t i);
/* Print like GNU objdump --sframe (binutils 2.46). */
int sf_dump(const struct sf_sec *s, const char *name, FILE *out,
	    char *err, size_t errlen);

void sf_funcs_free(struct sf_func *funcs, size_t n);

#endif /* SFRAME_H */
