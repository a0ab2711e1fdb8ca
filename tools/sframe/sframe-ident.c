// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-ident.c - what ties a sidecar to the object it was made from,
 * and the sidecar's header.
 *
 * A sidecar describes one build of one object: applied to another (a
 * rebuilt plugin of the same name, a libc upgraded under a stale sidecar)
 * it makes the kernel unwind with the rules of other code.  So sframe-gen
 * writes the object's identity into the sidecar and sframe-audit.so
 * registers a sidecar only for the object whose identity it carries:
 *
 *  - the GNU build ID (NT_GNU_BUILD_ID), which every distribution's
 *    objects have;
 *  - else a hash (FNV-1a, 64 bits) of what the sidecar was made from: the
 *    PT_LOAD layout (vaddr, memsz, flags) and the .eh_frame records, found
 *    through PT_GNU_EH_FRAME, up to the terminator.
 *
 * Both are computed from the object as the loader maps it, through its
 * program headers, so that sframe-gen (reading the file) and
 * sframe-audit.so (reading memory) see the same bytes: only the
 * file-backed part of a PT_LOAD is read.  This runs inside the loader's
 * callbacks: no allocation, no stdio but snprintf.
 */
#include <elf.h>
#include <inttypes.h>
#include <string.h>

#include "sframe.h"

#define DW_EH_PE_omit		0xff
#define DW_EH_PE_FORM(e)	((e) & 0x0f)
#define DW_EH_PE_APPL(e)	((e) & 0x70)
#define DW_EH_PE_pcrel		0x10
#define DW_EH_PE_datarel	0x30

static uint64_t get(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static void put(uint8_t *p, uint64_t v, size_t n)
{
	while (n--) {
		*p++ = v;
		v >>= 8;
	}
}

/*
 * The file-backed bytes [vaddr, vaddr + len) of one readable PT_LOAD, or
 * NULL.
 */
static const uint8_t *at(const struct sf_image *img, uint64_t vaddr,
			 uint64_t len)
{
	size_t i;

	for (i = 0; i < img->phnum; i++) {
		const Elf64_Phdr *p = &img->phdr[i];

		if (p->p_type != PT_LOAD || !(p->p_flags & PF_R) ||
		    vaddr < p->p_vaddr || vaddr - p->p_vaddr > p->p_filesz ||
		    len > p->p_filesz - (vaddr - p->p_vaddr))
			continue;
		if (!img->file)
			return (const uint8_t *)(img->bias + vaddr);
		if (p->p_offset > img->file_len ||
		    p->p_filesz > img->file_len - p->p_offset)
			return NULL;
		return img->file + p->p_offset + (vaddr - p->p_vaddr);
	}
	return NULL;
}

/* NT_GNU_BUILD_ID in a PT_NOTE: 1 found, 0 none. */
static int build_id(const struct sf_image *img, struct sf_ident *id)
{
	size_t i;

	for (i = 0; i < img->phnum; i++) {
		const Elf64_Phdr *p = &img->phdr[i];
		uint64_t align = p->p_align == 8 ? 8 : 4, off = 0;
		const uint8_t *n;

		if (p->p_type != PT_NOTE)
			continue;
		n = at(img, p->p_vaddr, p->p_filesz);
		if (!n)
			continue;
		while (off <= p->p_filesz && p->p_filesz - off >= 12) {
			uint64_t namesz = get(n + off, 4), descsz = get(n + off + 4, 4);
			uint64_t name = off + 12;
			uint64_t desc = name + ((namesz + align - 1) & ~(align - 1));

			if (desc > p->p_filesz || descsz > p->p_filesz - desc)
				break;
			if (get(n + off + 8, 4) == NT_GNU_BUILD_ID &&
			    namesz == 4 && !memcmp(n + name, "GNU", 4) &&
			    descsz && descsz <= SF_ID_MAX) {
				id->kind = SF_ID_BUILD_ID;
				id->len = descsz;
				memcpy(id->id, n + desc, descsz);
				return 1;
			}
			off = desc + ((descsz + align - 1) & ~(align - 1));
		}
	}
	return 0;
}

static uint64_t fnv(uint64_t h, const uint8_t *p, uint64_t len)
{
	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* The pointer at vaddr, in DWARF EH encoding enc; 0 or -1. */
static int eh_pointer(const struct sf_image *img, uint64_t vaddr, uint8_t enc,
		      uint64_t hdr, uint64_t *val)
{
	static const uint8_t size[16] = {
		[0x0] = 8, [0x2] = 2, [0x3] = 4, [0x4] = 8,
		[0xa] = 2, [0xb] = 4, [0xc] = 8,
	};
	unsigned int n = size[DW_EH_PE_FORM(enc)];
	const uint8_t *p;
	uint64_t v;

	if (enc == DW_EH_PE_omit || !n || !(p = at(img, vaddr, n)))
		return -1;
	v = get(p, n);
	if ((enc & 0x08) && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~0ULL << (8 * n);		/* sdata */
	switch (DW_EH_PE_APPL(enc)) {
	case 0:
		break;
	case DW_EH_PE_pcrel:
		v += vaddr;
		break;
	case DW_EH_PE_datarel:
		v += hdr;
		break;
	default:
		return -1;
	}
	*val = v;
	return 0;
}

/* The hash of the PT_LOAD layout and of .eh_frame: 0, or -1 with why. */
static int eh_frame_hash(const struct sf_image *img, struct sf_ident *id,
			 char *why, size_t whylen)
{
	uint64_t h = 0xcbf29ce484222325ULL, cur, len;
	const Elf64_Phdr *eh = NULL;
	const uint8_t *p;
	uint8_t b[20];
	size_t i;

	for (i = 0; i < img->phnum; i++) {
		const Elf64_Phdr *ph = &img->phdr[i];

		if (ph->p_type == PT_GNU_EH_FRAME)
			eh = ph;
		if (ph->p_type != PT_LOAD)
			continue;
		put(b, ph->p_vaddr, 8);
		put(b + 8, ph->p_memsz, 8);
		put(b + 16, ph->p_flags, 4);
		h = fnv(h, b, sizeof(b));
	}
	if (!eh) {
		snprintf(why, whylen, "no build ID and no PT_GNU_EH_FRAME");
		return -1;
	}
	p = at(img, eh->p_vaddr, 4);
	if (!p || p[0] != 1 ||
	    eh_pointer(img, eh->p_vaddr + 4, p[1], eh->p_vaddr, &cur)) {
		snprintf(why, whylen, "no build ID, and PT_GNU_EH_FRAME at %#"
			 PRIx64 " has no usable .eh_frame pointer",
			 (uint64_t)eh->p_vaddr);
		return -1;
	}
	/* CIEs and FDEs up to the terminator, or what is mapped */
	while ((p = at(img, cur, 4)) && (len = get(p, 4))) {
		if (len == 0xffffffff) {
			p = at(img, cur + 4, 8);
			if (!p || get(p, 8) > UINT64_MAX - 12)
				break;
			len = 12 + get(p, 8);
		} else {
			len += 4;
		}
		p = at(img, cur, len);
		if (!p)
			break;
		h = fnv(h, p, len);
		cur += len;
	}
	id->kind = SF_ID_EH_FRAME;
	id->len = 8;
	put(id->id, h, 8);
	return 0;
}

int sf_ident_of(const struct sf_image *img, struct sf_ident *id, char *why,
		size_t whylen)
{
	memset(id, 0, sizeof(*id));
	if (build_id(img, id))
		return 0;
	return eh_frame_hash(img, id, why, whylen);
}

bool sf_ident_eq(const struct sf_ident *a, const struct sf_ident *b)
{
	return a->kind == b->kind && a->len == b->len &&
	       !memcmp(a->id, b->id, a->len);
}

void sf_ident_str(const struct sf_ident *id, char *buf, size_t len)
{
	size_t i, n;

	n = snprintf(buf, len, "%s ", id->kind == SF_ID_BUILD_ID ?
		     "build ID" : ".eh_frame hash");
	for (i = 0; i < id->len && n + 2 < len; i++, n += 2)
		snprintf(buf + n, len - n, "%02x", id->id[i]);
}

void sf_sidecar_hdr_make(uint8_t *hdr, const struct sf_ident *id,
			 uint32_t sec_len)
{
	memset(hdr, 0, SF_SIDECAR_HDR_SIZE);
	memcpy(hdr, SF_SIDECAR_MAGIC, 8);
	put(hdr + 8, SF_SIDECAR_HDR_SIZE, 4);
	put(hdr + 12, id->kind, 4);
	put(hdr + 16, id->len, 4);
	put(hdr + 20, sec_len, 4);
	memcpy(hdr + 24, id->id, id->len);
}

int sf_sidecar_hdr_parse(const uint8_t *hdr, uint64_t file_len,
			 struct sf_ident *id, uint32_t *sec_len, char *why,
			 size_t whylen)
{
	uint64_t i;

	memset(id, 0, sizeof(*id));
	if (file_len < SF_SIDECAR_HDR_SIZE) {
		snprintf(why, whylen, "offset 0: %" PRIu64 " bytes, shorter "
			 "than a sidecar header (%d)", file_len,
			 SF_SIDECAR_HDR_SIZE);
		return -1;
	}
	if (memcmp(hdr, SF_SIDECAR_MAGIC, 8)) {
		snprintf(why, whylen, "offset 0: not a sidecar (no \"%s\"; a raw "
			 "section says nothing of the object it describes: "
			 "make it with sframe-gen)", SF_SIDECAR_MAGIC);
		return -1;
	}
	if (get(hdr + 8, 4) != SF_SIDECAR_HDR_SIZE) {
		snprintf(why, whylen, "offset 8: header size %" PRIu64
			 ", want %d", get(hdr + 8, 4), SF_SIDECAR_HDR_SIZE);
		return -1;
	}
	id->kind = get(hdr + 12, 4);
	id->len = get(hdr + 16, 4);
	*sec_len = get(hdr + 20, 4);
	if (id->kind != SF_ID_BUILD_ID && id->kind != SF_ID_EH_FRAME) {
		snprintf(why, whylen, "offset 12: unknown identity kind %u",
			 id->kind);
		return -1;
	}
	if (!id->len || id->len > SF_ID_MAX ||
	    (id->kind == SF_ID_EH_FRAME && id->len != 8)) {
		snprintf(why, whylen, "offset 16: identity of %u bytes",
			 id->len);
		return -1;
	}
	for (i = 24 + id->len; i < SF_SIDECAR_HDR_SIZE; i++) {
		if (hdr[i]) {
			snprintf(why, whylen, "offset %" PRIu64 ": reserved "
				 "byte is not zero", i);
			return -1;
		}
	}
	if (*sec_len != file_len - SF_SIDECAR_HDR_SIZE) {
		snprintf(why, whylen, "offset 20: a section of %u bytes, but "
			 "%" PRIu64 " follow the header", *sec_len,
			 file_len - SF_SIDECAR_HDR_SIZE);
		return -1;
	}
	memcpy(id->id, hdr + 24, id->len);
	return 0;
}
