// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-hdr.c - the rules an SFrame header must meet, in one place.
 *
 * The decoder (sframe-read.c, behind sframe-dump and sframe-check),
 * sframe-audit.so and the tests' stand-in for the kernel
 * (tests/prctl-stub.c) all check a header here, and the rules are the
 * kernel's own (sframe_check_header() in kernel/unwind/sframe.c), in the
 * kernel's order: what the tools accept is what PR_ADD_SFRAME accepts.
 *
 * It runs inside the loader's callbacks (sframe-audit.so): no allocation,
 * no stdio but snprintf.  Every message starts with the offset, in the
 * section, of the field that is wrong.
 */
#include <inttypes.h>
#include <string.h>

#include "sframe.h"

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

int sf_hdr_check(const void *buf, size_t len, struct sf_hdr *h, char *why,
		 size_t whylen)
{
	const uint8_t *p = buf;
	uint8_t allowed;
	uint64_t hdr_end;

	memset(h, 0, sizeof(*h));
	if (len < SFRAME_HDR_SIZE) {
		snprintf(why, whylen, "offset 0: %zu bytes, shorter than the "
			 "%d-byte SFrame header", len, SFRAME_HDR_SIZE);
		return -1;
	}
	if ((p[0] | p[1] << 8) != SFRAME_MAGIC) {
		snprintf(why, whylen, "offset 0: bad magic 0x%04x (want 0x%04x)",
			 p[0] | p[1] << 8, SFRAME_MAGIC);
		return -1;
	}
	h->version = p[2];
	h->flags = p[3];
	h->abi = p[4];
	h->fp_off = (int8_t)p[5];
	h->ra_off = (int8_t)p[6];
	h->auxhdr_len = p[7];
	h->num_fdes = get32(p + 8);
	h->num_fres = get32(p + 12);
	h->fre_len = get32(p + 16);
	if (h->version != SFRAME_VERSION_2 && h->version != SFRAME_VERSION_3) {
		snprintf(why, whylen, "offset 2: SFrame version %u (only 2 and 3"
			 " are supported%s)", h->version,
			 h->version == 1 ? "; v1 is obsolete" : "");
		return -1;
	}
	allowed = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL;
	if (h->version == SFRAME_VERSION_2)
		allowed |= SFRAME_F_FRAME_POINTER;
	if (h->flags & ~allowed) {
		snprintf(why, whylen, "offset 3: unknown flags 0x%02x for "
			 "version %u", h->flags & ~allowed, h->version);
		return -1;
	}
	/* the kernel looks functions up by binary search */
	if (!(h->flags & SFRAME_F_FDE_SORTED)) {
		snprintf(why, whylen, "offset 3: FDEs not sorted "
			 "(SFRAME_F_FDE_SORTED is clear)");
		return -1;
	}
	if (h->abi != SFRAME_ABI_AMD64_LE) {
		snprintf(why, whylen, "offset 4: ABI/arch %u, not amd64 (%d)",
			 h->abi, SFRAME_ABI_AMD64_LE);
		return -1;
	}
	if (h->ra_off != SFRAME_AMD64_RA_OFFSET) {
		snprintf(why, whylen, "offset 6: fixed RA offset %d, amd64 "
			 "needs %d", h->ra_off, SFRAME_AMD64_RA_OFFSET);
		return -1;
	}
	if (h->fp_off) {
		snprintf(why, whylen, "offset 5: fixed FP offset %d, amd64 has "
			 "none", h->fp_off);
		return -1;
	}
	if (!h->num_fdes) {
		snprintf(why, whylen, "offset 8: no FDEs");
		return -1;
	}

	/* sums of 32-bit fields: no overflow in 64 bits */
	h->fde_size = h->version == SFRAME_VERSION_2 ? SFRAME_V2_FDE_SIZE :
						       SFRAME_V3_FDE_SIZE;
	hdr_end = SFRAME_HDR_SIZE + (uint64_t)h->auxhdr_len;
	h->fdes = hdr_end + get32(p + 20);
	h->fdes_end = h->fdes + (uint64_t)h->num_fdes * h->fde_size;
	h->fres = hdr_end + get32(p + 24);
	h->fres_end = h->fres + h->fre_len;
	if (hdr_end > len) {
		snprintf(why, whylen, "offset 7: auxiliary header of %u bytes "
			 "ends at 0x%" PRIx64 ", past the section (0x%zx)",
			 h->auxhdr_len, hdr_end, len);
		return -1;
	}
	if (h->fdes_end > len) {
		snprintf(why, whylen, "offset 8: %u FDEs at offset 0x%" PRIx64
			 " end at 0x%" PRIx64 ", past the section (0x%zx)",
			 h->num_fdes, h->fdes, h->fdes_end, len);
		return -1;
	}
	if (h->fres_end > len) {
		snprintf(why, whylen, "offset 16: %u bytes of FREs at offset 0x%"
			 PRIx64 " end at 0x%" PRIx64 ", past the section (0x%zx)",
			 h->fre_len, h->fres, h->fres_end, len);
		return -1;
	}
	if (h->fdes < h->fres_end && h->fres < h->fdes_end) {
		snprintf(why, whylen, "offset 20: FDE index [0x%" PRIx64 ", 0x%"
			 PRIx64 ") overlaps the FREs [0x%" PRIx64 ", 0x%" PRIx64
			 ")", h->fdes, h->fdes_end, h->fres, h->fres_end);
		return -1;
	}
	/* an FRE has at least a start offset and an info byte */
	if ((uint64_t)h->num_fres * 2 > h->fre_len) {
		snprintf(why, whylen, "offset 12: %u FREs can't fit in %u bytes "
			 "of FREs", h->num_fres, h->fre_len);
		return -1;
	}
	return 0;
}
