/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the sframe-* workloads: the smallest SFrame v3 section, one
 * function of SF_FUNC_SIZE bytes with one row (CFA = rsp + 8, RA at
 * CFA - 8), written in memory for text the kernel only checks.  Header,
 * FDE index and rows follow each other: SF_INDEX_SIZE bytes, then
 * SF_FRES_SIZE.
 */
#ifndef SFRAME_SECTION_H
#define SFRAME_SECTION_H

#include <stdint.h>
#include <string.h>

#define SF_FUNC_SIZE	64
#define SF_HDR_SIZE	28
#define SF_FDE_SIZE	16
#define SF_INDEX_SIZE	(SF_HDR_SIZE + SF_FDE_SIZE)
/* FDE attributes (num_fres 1, info, info2, rep_size), then one row. */
#define SF_FRES_SIZE	8
#define SF_SIZE		(SF_INDEX_SIZE + SF_FRES_SIZE)
/* The row's info byte: CFA on SP, one 1-byte offset ... */
#define SF_FRE_INFO_GOOD	0x03
/* ... and a mangled RA, which is invalid on x86-64. */
#define SF_FRE_INFO_BAD		0x83

/* The rows, with the row's info byte. */
static inline void sf_write_fres(uint8_t *fres, uint8_t info)
{
	const uint8_t f[SF_FRES_SIZE] = { 1, 0, 0, 0, 0, 0, info, 8 };

	memcpy(fres, f, sizeof(f));
}

/* At sf, a section describing [text, text + SF_FUNC_SIZE). */
static inline void sf_write(uint8_t *sf, uintptr_t text, uint8_t info)
{
	uint8_t *fde = sf + SF_HDR_SIZE;
	int64_t start = (int64_t)(text - (uintptr_t)fde);	/* PC-relative */
	uint32_t u32;

	memset(sf, 0, SF_INDEX_SIZE);
	sf[0] = 0xe2;		/* magic 0xdee2 */
	sf[1] = 0xde;
	sf[2] = 3;		/* version */
	sf[3] = 0x1 | 0x4;	/* FDEs sorted, PC-relative starts */
	sf[4] = 3;		/* AMD64 */
	sf[6] = (uint8_t)-8;	/* RA at CFA - 8 */
	u32 = 1;		/* num_fdes, num_fres */
	memcpy(sf + 8, &u32, 4);
	memcpy(sf + 12, &u32, 4);
	u32 = SF_FRES_SIZE;	/* fre_len */
	memcpy(sf + 16, &u32, 4);
	u32 = SF_FDE_SIZE;	/* fres_off; fdes_off 0 */
	memcpy(sf + 24, &u32, 4);
	memcpy(fde, &start, 8);
	u32 = SF_FUNC_SIZE;	/* func_size; start_fre_off 0 */
	memcpy(fde + 8, &u32, 4);
	sf_write_fres(sf + SF_INDEX_SIZE, info);
}

#endif /* SFRAME_SECTION_H */
