// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-inject.c - put a .sframe section and a PT_GNU_SFRAME program
 * header into an x86-64 ELF executable, PIE or shared object.
 *
 * Raw byte manipulation with <elf.h> structures: every structure is
 * memcpy'd out of and into the (possibly unaligned) buffer, every offset
 * and size is checked against the file and for overflow before use.
 *
 * Two placements:
 *
 *  in place   The file already has a .sframe section (or, without section
 *             headers, a PT_GNU_SFRAME) inside a read-only PT_LOAD and the
 *             new bytes fit the old section plus the padding after it up to
 *             the next section or the end of the segment.  The bytes are
 *             overwritten (rest zeroed), sh_size and PT_GNU_SFRAME (or a
 *             PT_NULL slot turned into one) are updated.  Same file size.
 *
 *  appended   A new read-only PT_LOAD at the end of the file and above
 *             every segment in memory holds a new copy of the program
 *             header table (old entries, the new PT_LOAD after the last
 *             PT_LOAD, PT_GNU_SFRAME) followed by the section.  PT_PHDR,
 *             e_phoff and e_phnum point at the new table.  Linux (since
 *             5.18) sets AT_PHDR from the PT_LOAD whose file range holds
 *             e_phoff, so the table must be inside a PT_LOAD; glibc's ld.so
 *             takes the main program's load bias from AT_PHDR - PT_PHDR's
 *             p_vaddr, and ld.so itself (and the kernel before 5.18) use
 *             first PT_LOAD's (p_vaddr - p_offset) + e_phoff: when that costs
 *             little padding, the segment keeps that same vaddr - offset
 *             delta, so both computations agree.  A new section header
 *             table (old entries + .sframe) and, if needed, a new
 *             .shstrtab follow the segment.
 */
#include <elf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sframe-inject.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "sframe-inject uses <elf.h> structures in host order: little-endian hosts only"
#endif

#define SF_PAGE		0x1000ULL		/* x86-64 page, glibc's minimum */
#define SF_MAX_PHNUM	(0x1000 / sizeof(Elf64_Phdr)) /* kernel: ELF_MIN_ALIGN */
#define SF_MAX_SECLEN	(1ULL << 30)
#define SF_MAX_PAD	(1ULL << 20)		/* to keep the first load's delta */
#define SF_USER_TOP	(1ULL << 47)		/* x86-64 TASK_SIZE, 4-level */
#define SF_SEC_ALIGN	8

static const char sf_name[] = ".sframe";	/* with its NUL: 8 bytes */

struct sf_elf {
	const uint8_t *buf;
	size_t len;
	Elf64_Ehdr eh;
	Elf64_Phdr *ph;
	size_t phnum;
	Elf64_Shdr *sh;		/* NULL: no section headers */
	size_t shnum;
	size_t shstrndx;	/* 0: no section name table */
	bool sh_ext;		/* section count in section 0's sh_size */
	long sf_sec;		/* first .sframe section, -1: none */
	long sf_ph;		/* the PT_GNU_SFRAME (one at most), -1: none */
	long eh_ph;		/* first PT_GNU_EH_FRAME, -1: none */
	long last_load;		/* index of the last PT_LOAD */
};

struct sf_plan {
	bool inplace;
	uint64_t vaddr;		/* of the section */
	uint64_t off;		/* file offset of the section */
	/* in place */
	uint64_t oldsize;	/* old bytes to clear */
	long slot;		/* program header to make PT_GNU_SFRAME */
	/* appended */
	uint64_t seg_off, seg_vaddr, align;
	size_t phnum;		/* entries of the new table */
};

static int sf_errx(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int sf_err(char *err, size_t errlen, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int sf_errx(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* "offset 0x40: what": off is where in the file the problem is. */
static int sf_err(char *err, size_t errlen, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !errlen)
		return -1;
	n = snprintf(err, errlen, "offset 0x%llx: ", (unsigned long long)off);
	if (n < 0 || (size_t)n >= errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}

typedef unsigned long long ull;

/* a + b <= lim, without overflow. */
static bool sf_fits(uint64_t a, uint64_t b, uint64_t lim)
{
	return a <= lim && b <= lim - a;
}

/* Round up to a power of two; the caller has checked for overflow. */
static uint64_t sf_align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Do [a, a + n) and [lo, hi) share a byte? */
static bool sf_overlaps(uint64_t a, uint64_t n, uint64_t lo, uint64_t hi)
{
	return n && a < hi && lo < a + n;
}

static const char *sf_ptype(uint32_t t)
{
	switch (t) {
	case PT_NULL:		return "PT_NULL";
	case PT_LOAD:		return "PT_LOAD";
	case PT_DYNAMIC:	return "PT_DYNAMIC";
	case PT_INTERP:		return "PT_INTERP";
	case PT_NOTE:		return "PT_NOTE";
	case PT_PHDR:		return "PT_PHDR";
	case PT_TLS:		return "PT_TLS";
	case PT_GNU_EH_FRAME:	return "PT_GNU_EH_FRAME";
	case PT_GNU_STACK:	return "PT_GNU_STACK";
	case PT_GNU_RELRO:	return "PT_GNU_RELRO";
	case PT_GNU_PROPERTY:	return "PT_GNU_PROPERTY";
	case PT_GNU_SFRAME:	return "PT_GNU_SFRAME";
	default:		return "segment";
	}
}

static const char *sf_etype(uint16_t t)
{
	switch (t) {
	case ET_NONE:	return "ET_NONE";
	case ET_REL:	return "ET_REL, a relocatable object";
	case ET_CORE:	return "ET_CORE, a core dump";
	default:	return "unknown";
	}
}

/* ------------------------------------------------------------------ */
/* Reading and checking                                                */

static int sf_check_ident(const struct sf_elf *e, char *err, size_t errlen)
{
	const unsigned char *id = e->eh.e_ident;

	if (memcmp(id, ELFMAG, SELFMAG))
		return sf_err(err, errlen, 0, "not an ELF file (bad magic %02x %02x %02x %02x)",
			      id[0], id[1], id[2], id[3]);
	if (id[EI_CLASS] != ELFCLASS64)
		return sf_err(err, errlen, EI_CLASS, "not a 64-bit ELF file (EI_CLASS %u, want %u)",
			      id[EI_CLASS], ELFCLASS64);
	if (id[EI_DATA] != ELFDATA2LSB)
		return sf_err(err, errlen, EI_DATA, "not a little-endian ELF file (EI_DATA %u, want %u)",
			      id[EI_DATA], ELFDATA2LSB);
	if (id[EI_VERSION] != EV_CURRENT)
		return sf_err(err, errlen, EI_VERSION, "unknown ELF version %u", id[EI_VERSION]);
	return 0;
}

static int sf_read_ehdr(struct sf_elf *e, char *err, size_t errlen)
{
	const Elf64_Ehdr *h = &e->eh;

	if (e->len < sizeof(*h))
		return sf_err(err, errlen, 0, "file too short for an ELF header (0x%zx < 0x%zx)",
			      e->len, sizeof(*h));
	memcpy(&e->eh, e->buf, sizeof(e->eh));
	if (sf_check_ident(e, err, errlen))
		return -1;
	if (h->e_type != ET_EXEC && h->e_type != ET_DYN)
		return sf_err(err, errlen, offsetof(Elf64_Ehdr, e_type),
			      "e_type %u (%s): only ET_EXEC and ET_DYN files can be injected",
			      h->e_type, sf_etype(h->e_type));
	if (h->e_machine != EM_X86_64)
		return sf_err(err, errlen, offsetof(Elf64_Ehdr, e_machine),
			      "e_machine %u is not EM_X86_64 (%u)", h->e_machine, EM_X86_64);
	if (h->e_version != EV_CURRENT)
		return sf_err(err, errlen, offsetof(Elf64_Ehdr, e_version),
			      "unknown e_version %u", h->e_version);
	if (h->e_ehsize != sizeof(*h))
		return sf_err(err, errlen, offsetof(Elf64_Ehdr, e_ehsize),
			      "e_ehsize %u, want %zu", h->e_ehsize, sizeof(*h));
	return 0;
}

static int sf_read_phdrs(struct sf_elf *e, char *err, size_t errlen)
{
	const Elf64_Ehdr *h = &e->eh;
	uint64_t size;

	if (h->e_phentsize != sizeof(Elf64_Phdr))
		return sf_err(err, errlen, offsetof(Elf64_Ehdr, e_phentsize),
			      "e_phentsize %u, want %zu", h->e_phentsize, sizeof(Elf64_Phdr));
	if (h->e_phnum == 0 || h->e_phoff == 0)
		return sf_err(err, errlen, offsetof(Elf64_Ehdr, e_phnum),
			      "no program header table (e_phoff 0x%llx, e_phnum %u)",
			      (ull)h->e_phoff, h->e_phnum);
	if (h->e_phnum == PN_XNUM)
		return sf_err(err, errlen, offsetof(Elf64_Ehdr, e_phnum),
			      "e_phnum PN_XNUM (extended program header numbering) is not supported");
	size = (uint64_t)h->e_phnum * sizeof(Elf64_Phdr);
	if (!sf_fits(h->e_phoff, size, e->len)) {
		if (h->e_phoff > UINT64_MAX - size)
			return sf_err(err, errlen, offsetof(Elf64_Ehdr, e_phoff),
				      "e_phoff 0x%llx + 0x%llx overflows",
				      (ull)h->e_phoff, (ull)size);
		return sf_err(err, errlen, h->e_phoff,
			      "program header table past end of file (0x%llx > 0x%zx)",
			      (ull)(h->e_phoff + size), e->len);
	}
	e->phnum = h->e_phnum;
	e->ph = malloc(size);
	if (!e->ph)
		return sf_errx(err, errlen, "out of memory");
	memcpy(e->ph, e->buf + h->e_phoff, size);
	return 0;
}

static int sf_check_load(const struct sf_elf *e, size_t i, const Elf64_Phdr *prev,
			 char *err, size_t errlen)
{
	const Elf64_Phdr *p = &e->ph[i];
	uint64_t at = e->eh.e_phoff + i * sizeof(*p);

	if (p->p_filesz > p->p_memsz)
		return sf_err(err, errlen, at, "PT_LOAD %zu: p_filesz 0x%llx > p_memsz 0x%llx",
			      i, (ull)p->p_filesz, (ull)p->p_memsz);
	if (!sf_fits(p->p_vaddr, p->p_memsz, UINT64_MAX))
		return sf_err(err, errlen, at, "PT_LOAD %zu: p_vaddr 0x%llx + p_memsz 0x%llx overflows",
			      i, (ull)p->p_vaddr, (ull)p->p_memsz);
	if ((p->p_vaddr - p->p_offset) % SF_PAGE)
		return sf_err(err, errlen, at,
			      "PT_LOAD %zu: p_vaddr 0x%llx and p_offset 0x%llx differ modulo the page size",
			      i, (ull)p->p_vaddr, (ull)p->p_offset);
	if (!prev)
		return 0;
	if (p->p_vaddr < prev->p_vaddr)
		return sf_err(err, errlen, at, "PT_LOAD %zu: not sorted by p_vaddr (0x%llx < 0x%llx)",
			      i, (ull)p->p_vaddr, (ull)prev->p_vaddr);
	if (p->p_vaddr < prev->p_vaddr + prev->p_memsz)
		return sf_err(err, errlen, at,
			      "PT_LOAD %zu: overlaps the previous PT_LOAD (0x%llx < 0x%llx)",
			      i, (ull)p->p_vaddr, (ull)(prev->p_vaddr + prev->p_memsz));
	return 0;
}

static int sf_check_phdrs(struct sf_elf *e, char *err, size_t errlen)
{
	const Elf64_Phdr *prev = NULL;
	size_t i;

	e->sf_ph = e->eh_ph = e->last_load = -1;
	for (i = 0; i < e->phnum; i++) {
		const Elf64_Phdr *p = &e->ph[i];
		uint64_t at = e->eh.e_phoff + i * sizeof(*p);

		if (p->p_type == PT_NULL)
			continue;
		if (p->p_filesz && !sf_fits(p->p_offset, p->p_filesz, e->len))
			return sf_err(err, errlen, at,
				      "%s %zu: contents past end of file (0x%llx + 0x%llx > 0x%zx)",
				      sf_ptype(p->p_type), i, (ull)p->p_offset,
				      (ull)p->p_filesz, e->len);
		/* which one would the kernel use?  Only one is replaced */
		if (p->p_type == PT_GNU_SFRAME && e->sf_ph >= 0)
			return sf_err(err, errlen, at,
				      "PT_GNU_SFRAME %zu: a second one (the first is %ld)",
				      i, e->sf_ph);
		if (p->p_type == PT_GNU_SFRAME)
			e->sf_ph = i;
		if (p->p_type == PT_GNU_EH_FRAME && e->eh_ph < 0)
			e->eh_ph = i;
		if (p->p_type != PT_LOAD)
			continue;
		if (sf_check_load(e, i, prev, err, errlen))
			return -1;
		prev = p;
		e->last_load = i;
	}
	if (e->last_load < 0)
		return sf_err(err, errlen, e->eh.e_phoff, "no PT_LOAD in the program header table");
	return 0;
}

/* e_shnum, e_shstrndx, or their extended forms in section 0. */
static int sf_shdr_counts(struct sf_elf *e, char *err, size_t errlen)
{
	const Elf64_Ehdr *h = &e->eh;
	Elf64_Shdr s0;

	e->shnum = h->e_shnum;
	e->shstrndx = h->e_shstrndx;
	if (h->e_shnum && h->e_shstrndx != SHN_XINDEX)
		return 0;
	if (!sf_fits(h->e_shoff, sizeof(s0), e->len))
		return sf_err(err, errlen, h->e_shoff,
			      "section header 0 past end of file (0x%zx bytes)", e->len);
	memcpy(&s0, e->buf + h->e_shoff, sizeof(s0));
	if (!h->e_shnum) {
		e->shnum = s0.sh_size;
		e->sh_ext = true;
	}
	if (h->e_shstrndx == SHN_XINDEX)
		e->shstrndx = s0.sh_link;
	return 0;
}

static int sf_read_shdrs(struct sf_elf *e, char *err, size_t errlen)
{
	const Elf64_Ehdr *h = &e->eh;
	uint64_t size;

	if (!h->e_shoff) {
		if (h->e_shnum)
			return sf_err(err, errlen, offsetof(Elf64_Ehdr, e_shnum),
				      "e_shnum %u but no section header table (e_shoff 0)",
				      h->e_shnum);
		return 0;
	}
	if (h->e_shentsize != sizeof(Elf64_Shdr))
		return sf_err(err, errlen, offsetof(Elf64_Ehdr, e_shentsize),
			      "e_shentsize %u, want %zu", h->e_shentsize, sizeof(Elf64_Shdr));
	if (sf_shdr_counts(e, err, errlen))
		return -1;
	/* before the early return: with no sections, e->sh stays NULL */
	if (e->shstrndx && e->shstrndx >= e->shnum)
		return sf_err(err, errlen, offsetof(Elf64_Ehdr, e_shstrndx),
			      "e_shstrndx %zu out of range (%zu sections)",
			      e->shstrndx, e->shnum);
	if (!e->shnum)
		return 0;
	if (e->shnum > e->len / sizeof(Elf64_Shdr) ||
	    !sf_fits(h->e_shoff, e->shnum * sizeof(Elf64_Shdr), e->len)) {
		if (e->shnum > e->len / sizeof(Elf64_Shdr) ||
		    h->e_shoff > UINT64_MAX - e->shnum * sizeof(Elf64_Shdr))
			return sf_err(err, errlen, h->e_shoff,
				      "section header table of %zu entries past end of file (0x%zx bytes)",
				      e->shnum, e->len);
		return sf_err(err, errlen, h->e_shoff,
			      "section header table past end of file (0x%llx > 0x%zx)",
			      (ull)(h->e_shoff + e->shnum * sizeof(Elf64_Shdr)), e->len);
	}
	size = e->shnum * sizeof(Elf64_Shdr);
	e->sh = malloc(size);
	if (!e->sh)
		return sf_errx(err, errlen, "out of memory");
	memcpy(e->sh, e->buf + h->e_shoff, size);
	return 0;
}

static uint64_t sf_shdr_at(const struct sf_elf *e, size_t i)
{
	return e->eh.e_shoff + i * sizeof(Elf64_Shdr);
}

static bool sf_has_bytes(const Elf64_Shdr *s)
{
	return s->sh_type != SHT_NOBITS && s->sh_type != SHT_NULL && s->sh_size;
}

/* Is section i named ".sframe"?  Names outside .shstrtab match nothing. */
static bool sf_is_sframe(const struct sf_elf *e, size_t i)
{
	const Elf64_Shdr *str = &e->sh[e->shstrndx];

	if (!e->shstrndx || !sf_fits(e->sh[i].sh_name, sizeof(sf_name), str->sh_size))
		return false;
	return !memcmp(e->buf + str->sh_offset + e->sh[i].sh_name, sf_name, sizeof(sf_name));
}

static int sf_check_shdrs(struct sf_elf *e, char *err, size_t errlen)
{
	size_t i;

	e->sf_sec = -1;
	for (i = 1; i < e->shnum; i++) {
		const Elf64_Shdr *s = &e->sh[i];

		if (sf_has_bytes(s) && !sf_fits(s->sh_offset, s->sh_size, e->len))
			return sf_err(err, errlen, sf_shdr_at(e, i),
				      "section %zu: contents past end of file (0x%llx + 0x%llx > 0x%zx)",
				      i, (ull)s->sh_offset, (ull)s->sh_size, e->len);
	}
	if (e->shstrndx && e->sh[e->shstrndx].sh_type != SHT_STRTAB)
		return sf_err(err, errlen, sf_shdr_at(e, e->shstrndx),
			      "section %zu (e_shstrndx) is not SHT_STRTAB (sh_type 0x%x)",
			      e->shstrndx, e->sh[e->shstrndx].sh_type);
	/* libelf reads no names from it, nor ".sframe" from our copy */
	if (e->shstrndx && (e->sh[e->shstrndx].sh_flags & SHF_COMPRESSED))
		return sf_err(err, errlen, sf_shdr_at(e, e->shstrndx),
			      "section %zu (e_shstrndx) is SHF_COMPRESSED",
			      e->shstrndx);
	/* lookups by name would find it before the .sframe we add */
	if (e->shstrndx && sf_is_sframe(e, e->shstrndx))
		return sf_err(err, errlen, sf_shdr_at(e, e->shstrndx),
			      "section %zu (e_shstrndx) is named .sframe",
			      e->shstrndx);
	for (i = 1; i < e->shnum && e->sf_sec < 0; i++)
		if (i != e->shstrndx && sf_is_sframe(e, i))
			e->sf_sec = i;
	return 0;
}

static void sf_close(struct sf_elf *e)
{
	free(e->ph);
	free(e->sh);
	e->ph = NULL;
	e->sh = NULL;
}

static int sf_open(struct sf_elf *e, const uint8_t *buf, size_t len, char *err, size_t errlen)
{
	memset(e, 0, sizeof(*e));
	e->buf = buf;
	e->len = len;
	e->sf_sec = e->sf_ph = e->eh_ph = e->last_load = -1;
	if (!buf && len)
		return sf_errx(err, errlen, "no ELF buffer");
	if (sf_read_ehdr(e, err, errlen) || sf_read_phdrs(e, err, errlen) ||
	    sf_check_phdrs(e, err, errlen) || sf_read_shdrs(e, err, errlen) ||
	    sf_check_shdrs(e, err, errlen)) {
		sf_close(e);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Planning                                                            */

/* The read-only PT_LOAD whose file part holds [off, off + n) at addr. */
static bool sf_in_ro_load(const struct sf_elf *e, uint64_t off, uint64_t n, uint64_t addr)
{
	size_t i;

	for (i = 0; i < e->phnum; i++) {
		const Elf64_Phdr *p = &e->ph[i];

		if (p->p_type != PT_LOAD || off < p->p_offset ||
		    !sf_fits(off - p->p_offset, n, p->p_filesz) ||
		    addr - p->p_vaddr != off - p->p_offset)
			continue;
		return !(p->p_flags & (PF_W | PF_X));
	}
	return false;
}

/* Does anything but the old section and slot live in [lo, hi)? */
static bool sf_region_free(const struct sf_elf *e, uint64_t lo, uint64_t hi, long slot)
{
	size_t i;

	if (sf_overlaps(0, sizeof(Elf64_Ehdr), lo, hi) ||
	    sf_overlaps(e->eh.e_phoff, e->phnum * sizeof(Elf64_Phdr), lo, hi) ||
	    (e->sh && sf_overlaps(e->eh.e_shoff, e->shnum * sizeof(Elf64_Shdr), lo, hi)))
		return false;
	for (i = 0; i < e->phnum; i++) {
		const Elf64_Phdr *p = &e->ph[i];

		if ((long)i == slot || p->p_type == PT_LOAD || p->p_type == PT_NULL)
			continue;
		if (sf_overlaps(p->p_offset, p->p_filesz, lo, hi))
			return false;
	}
	for (i = 1; i < e->shnum; i++) {
		if ((long)i == e->sf_sec || !sf_has_bytes(&e->sh[i]))
			continue;
		if (sf_overlaps(e->sh[i].sh_offset, e->sh[i].sh_size, lo, hi))
			return false;
	}
	return true;
}

static long sf_ph_slot(const struct sf_elf *e)
{
	size_t i;

	if (e->sf_ph >= 0)
		return e->sf_ph;
	for (i = 0; i < e->phnum; i++)
		if (e->ph[i].p_type == PT_NULL)
			return i;
	return -1;
}

/*
 * The old section's bytes, plus the padding after it that nothing else
 * uses, up to the end of its read-only PT_LOAD's file part.
 */
static bool sf_plan_inplace(const struct sf_elf *e, size_t seclen, struct sf_plan *p)
{
	uint64_t off, size, addr, w;
	long slot = sf_ph_slot(e);

	if (slot < 0)
		return false;
	if (e->sf_sec >= 0) {
		const Elf64_Shdr *s = &e->sh[e->sf_sec];

		if (s->sh_type == SHT_NOBITS || !(s->sh_flags & SHF_ALLOC))
			return false;
		off = s->sh_offset;
		size = s->sh_size;
		addr = s->sh_addr;
	} else if (!e->sh && e->sf_ph >= 0) {
		off = e->ph[e->sf_ph].p_offset;
		size = e->ph[e->sf_ph].p_filesz;
		addr = e->ph[e->sf_ph].p_vaddr;
	} else {
		return false;
	}
	w = seclen > size ? seclen : size;
	if (!sf_fits(off, w, e->len) || !sf_in_ro_load(e, off, w, addr) ||
	    !sf_region_free(e, off, off + w, slot))
		return false;
	p->inplace = true;
	p->vaddr = addr;
	p->off = off;
	p->oldsize = size;
	p->slot = slot;
	return true;
}

static uint64_t sf_load_end(const struct sf_elf *e)
{
	uint64_t end = 0;
	size_t i;

	for (i = 0; i < e->phnum; i++) {
		const Elf64_Phdr *p = &e->ph[i];

		if (p->p_type == PT_LOAD && p->p_vaddr + p->p_memsz > end)
			end = p->p_vaddr + p->p_memsz;
	}
	return end;
}

static const Elf64_Phdr *sf_first_load(const struct sf_elf *e)
{
	size_t i;

	for (i = 0; i < e->phnum; i++)
		if (e->ph[i].p_type == PT_LOAD)
			return &e->ph[i];
	return NULL;
}

/*
 * Page offset of the end of the last PT_LOAD's file contents.  objcopy and
 * strip (BFD) lay a PT_LOAD that holds the program headers out right after
 * the previous segment's contents, then align its first section to its
 * vaddr: the segment survives them unchanged only if that needs no padding.
 */
static uint64_t sf_bfd_phase(const struct sf_elf *e)
{
	size_t i = e->phnum;

	while (i--) {
		const Elf64_Phdr *p = &e->ph[i];

		if (p->p_type == PT_LOAD && p->p_filesz)
			return sf_align_up((p->p_vaddr + p->p_filesz) % SF_PAGE,
					   SF_SEC_ALIGN) % SF_PAGE;
	}
	return 0;
}

/* Smallest v >= min with v % SF_PAGE == phase. */
static uint64_t sf_phase_up(uint64_t min, uint64_t phase)
{
	uint64_t v = (min & ~(SF_PAGE - 1)) + phase;

	return v < min ? v + SF_PAGE : v;
}

/*
 * Offset and vaddr of the new segment: at or past the end of the file, on
 * a page of its own above every segment, at sf_bfd_phase() in the page.
 * Preferred: vaddr - offset equal to the first PT_LOAD's, so that ld.so
 * (ehdr + e_phoff) and pre-5.18 kernels find the table in memory too.
 */
static void sf_place_segment(const struct sf_elf *e, uint64_t vmin, struct sf_plan *p)
{
	const Elf64_Phdr *first = sf_first_load(e);
	uint64_t phase = sf_bfd_phase(e);
	uint64_t off0 = sf_phase_up(e->len, phase);
	uint64_t delta, off1;

	p->align = SF_PAGE;
	if (first->p_vaddr >= first->p_offset) {
		delta = first->p_vaddr - first->p_offset;	/* page multiple */
		off1 = sf_phase_up(vmin > delta ? vmin - delta : 0, phase);
		off1 = off1 > off0 ? off1 : off0;
		if (off1 - off0 <= SF_MAX_PAD) {
			p->seg_off = off1;
			p->seg_vaddr = off1 + delta;
			return;
		}
	}
	p->seg_off = off0;
	p->seg_vaddr = sf_phase_up(vmin, phase);
}

static int sf_plan_append(const struct sf_elf *e, size_t seclen, struct sf_plan *p,
			  char *err, size_t errlen)
{
	uint64_t end, phsize;

	p->phnum = e->phnum + 1 + (e->sf_ph < 0);
	if (p->phnum > SF_MAX_PHNUM)
		return sf_err(err, errlen, offsetof(Elf64_Ehdr, e_phnum),
			      "%zu program headers needed, the kernel reads at most %zu",
			      p->phnum, SF_MAX_PHNUM);
	if (e->len > SF_USER_TOP)
		return sf_errx(err, errlen, "file too large (0x%zx bytes)", e->len);
	end = sf_load_end(e);
	if (end > SF_USER_TOP - 2 * SF_PAGE)
		return sf_err(err, errlen, e->eh.e_phoff,
			      "segments end at 0x%llx: no room above for another",
			      (ull)end);
	sf_place_segment(e, sf_align_up(end, SF_PAGE), p);
	phsize = p->phnum * sizeof(Elf64_Phdr);
	if (!sf_fits(p->seg_vaddr, phsize + seclen, SF_USER_TOP))
		return sf_err(err, errlen, e->eh.e_phoff,
			      "no room for a 0x%llx byte segment at 0x%llx",
			      (ull)(phsize + seclen), (ull)p->seg_vaddr);
	p->inplace = false;
	p->off = p->seg_off + phsize;
	p->vaddr = p->seg_vaddr + phsize;
	return 0;
}

static int sf_plan(const struct sf_elf *e, size_t seclen, struct sf_plan *p,
		   char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->slot = -1;
	if (sf_plan_inplace(e, seclen, p))
		return 0;
	return sf_plan_append(e, seclen, p, err, errlen);
}

static int sf_check_seclen(size_t seclen, char *err, size_t errlen)
{
	if (!seclen)
		return sf_errx(err, errlen, "section is empty (seclen 0)");
	if (seclen > SF_MAX_SECLEN)
		return sf_errx(err, errlen, "section too large (0x%zx > 0x%llx bytes)",
			       seclen, (ull)SF_MAX_SECLEN);
	return 0;
}

int sf_inject_plan(const uint8_t *elf, size_t len, size_t seclen,
		   uint64_t *vaddr, char *err, size_t errlen)
{
	struct sf_elf e;
	struct sf_plan p;
	int ret;

	if (sf_check_seclen(seclen, err, errlen) || sf_open(&e, elf, len, err, errlen))
		return -1;
	ret = sf_plan(&e, seclen, &p, err, errlen);
	sf_close(&e);
	if (!ret && vaddr)
		*vaddr = p.vaddr;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */

static Elf64_Phdr sf_sframe_phdr(uint64_t off, uint64_t vaddr, size_t seclen)
{
	Elf64_Phdr p = {
		.p_type = PT_GNU_SFRAME,
		.p_flags = PF_R,
		.p_offset = off,
		.p_vaddr = vaddr,
		.p_paddr = vaddr,
		.p_filesz = seclen,
		.p_memsz = seclen,
		.p_align = SF_SEC_ALIGN,
	};
	return p;
}

static int sf_write_inplace(const struct sf_elf *e, const struct sf_plan *p,
			    const uint8_t *sec, size_t seclen, uint8_t **out,
			    size_t *outlen, char *err, size_t errlen)
{
	Elf64_Phdr ph = sf_sframe_phdr(p->off, p->vaddr, seclen);
	uint8_t *buf = malloc(e->len);

	if (!buf)
		return sf_errx(err, errlen, "out of memory (0x%zx bytes)", e->len);
	memcpy(buf, e->buf, e->len);
	memcpy(buf + p->off, sec, seclen);
	if (p->oldsize > seclen)
		memset(buf + p->off + seclen, 0, p->oldsize - seclen);
	memcpy(buf + e->eh.e_phoff + p->slot * sizeof(ph), &ph, sizeof(ph));
	if (e->sf_sec >= 0) {
		Elf64_Shdr s = e->sh[e->sf_sec];

		s.sh_size = seclen;
		memcpy(buf + sf_shdr_at(e, e->sf_sec), &s, sizeof(s));
	}
	*out = buf;
	*outlen = e->len;
	return 0;
}

/* The new program header table: old entries, new PT_LOAD, PT_GNU_SFRAME. */
static void sf_build_phdrs(const struct sf_elf *e, const struct sf_plan *p,
			   size_t seclen, Elf64_Phdr *out)
{
	uint64_t phsize = p->phnum * sizeof(Elf64_Phdr);
	Elf64_Phdr sf = sf_sframe_phdr(p->off, p->vaddr, seclen);
	Elf64_Phdr load = {
		.p_type = PT_LOAD,
		.p_flags = PF_R,
		.p_offset = p->seg_off,
		.p_vaddr = p->seg_vaddr,
		.p_paddr = p->seg_vaddr,
		.p_filesz = phsize + seclen,
		.p_memsz = phsize + seclen,
		.p_align = p->align,
	};
	long anchor = e->eh_ph >= 0 ? e->eh_ph : (long)e->phnum - 1;
	size_t i, n = 0;

	for (i = 0; i < e->phnum; i++) {
		Elf64_Phdr q = e->ph[i];

		if (q.p_type == PT_PHDR) {
			q.p_offset = p->seg_off;
			q.p_vaddr = q.p_paddr = p->seg_vaddr;
			q.p_filesz = q.p_memsz = phsize;
		}
		if ((long)i == e->sf_ph)
			q = sf;
		out[n++] = q;
		if ((long)i == e->last_load)
			out[n++] = load;
		if (e->sf_ph < 0 && (long)i == anchor)
			out[n++] = sf;
	}
}

/* How the section header table changes. */
struct sf_shplan {
	size_t shnum;		/* new count, 0: no section headers */
	size_t sfidx;		/* index of .sframe */
	size_t stridx;		/* index of the name table */
	uint64_t name;		/* sh_name of .sframe */
	size_t stroff;		/* new name table's file offset, 0: unchanged */
	size_t strlen;		/* and size */
	size_t strcopy;		/* old bytes copied into it */
	size_t shoff;		/* new section header table */
};

/* Where ".sframe" already is in the name table, or SIZE_MAX. */
static size_t sf_find_name(const struct sf_elf *e)
{
	const Elf64_Shdr *str = &e->sh[e->shstrndx];
	const uint8_t *s = e->buf + str->sh_offset;
	size_t i;

	for (i = 1; i + sizeof(sf_name) <= str->sh_size; i++)
		if (s[i] == '.' && !memcmp(s + i, sf_name, sizeof(sf_name)))
			return i;
	return SIZE_MAX;
}

/*
 * Smallest offset >= base that no section's sh_name holds: a malformed
 * sh_name past the old table's end must not turn into ".sframe".
 */
static int sf_free_name(const struct sf_elf *e, uint64_t base, uint64_t *name)
{
	uint8_t *used = calloc(e->shnum / 8 + 1, 1);
	size_t i;

	if (!used)
		return -1;
	for (i = 0; i < e->shnum; i++) {
		uint64_t n = e->sh[i].sh_name;

		if (n >= base && n - base <= e->shnum)
			used[(n - base) / 8] |= 1 << ((n - base) % 8);
	}
	for (i = 0; used[i / 8] & (1 << (i % 8)); i++)
		;
	free(used);
	*name = base + i;
	return 0;
}

/*
 * The name of .sframe: its old one, an existing ".sframe" string, or one
 * appended to a copy of the name table (a new table if there is none).
 */
static int sf_plan_names(const struct sf_elf *e, struct sf_shplan *s, size_t *end)
{
	const Elf64_Shdr *str = &e->sh[e->shstrndx];
	size_t at;

	s->stridx = e->shstrndx;
	if (e->sf_sec >= 0) {
		s->sfidx = e->sf_sec;
		return 0;
	}
	s->sfidx = s->shnum++;
	if (e->shstrndx) {
		at = sf_find_name(e);
		if (at != SIZE_MAX) {
			s->name = at;
			return 0;
		}
		s->strcopy = str->sh_size;
	} else {
		s->stridx = s->shnum++;
	}
	/* A NUL after the old bytes; offset 0 (unnamed) is never ".sframe". */
	if (sf_free_name(e, s->strcopy + 1, &s->name))
		return -1;
	s->stroff = *end;
	s->strlen = s->name + sizeof(sf_name) + (e->shstrndx ? 0 : sizeof(".shstrtab"));
	*end += s->strlen;
	return 0;
}

static int sf_plan_shdrs(const struct sf_elf *e, struct sf_shplan *s, size_t *end)
{
	memset(s, 0, sizeof(*s));
	if (!e->sh)
		return 0;
	s->shnum = e->shnum;
	if (sf_plan_names(e, s, end))
		return -1;
	s->shoff = sf_align_up(*end, SF_SEC_ALIGN);
	*end = s->shoff + s->shnum * sizeof(Elf64_Shdr);
	return 0;
}

/* Old bytes, NULs up to the new name, ".sframe" (and ".shstrtab"). */
static void sf_write_strtab(const struct sf_elf *e, const struct sf_shplan *s, uint8_t *buf)
{
	uint8_t *d = buf + s->stroff;

	if (s->strcopy)
		memcpy(d, e->buf + e->sh[e->shstrndx].sh_offset, s->strcopy);
	memcpy(d + s->name, sf_name, sizeof(sf_name));
	if (!e->shstrndx)
		memcpy(d + s->name + sizeof(sf_name), ".shstrtab", sizeof(".shstrtab"));
}

static void sf_fill_sframe_shdr(const struct sf_elf *e, const struct sf_plan *p,
				const struct sf_shplan *s, size_t seclen, Elf64_Shdr *sh)
{
	Elf64_Shdr n = {
		.sh_name = s->name,
		.sh_type = SHT_GNU_SFRAME,
		.sh_flags = SHF_ALLOC,
		.sh_addralign = SF_SEC_ALIGN,
	};

	if (e->sf_sec >= 0) {
		n = e->sh[e->sf_sec];
		if (n.sh_type != SHT_PROGBITS && n.sh_type != SHT_GNU_SFRAME)
			n.sh_type = SHT_GNU_SFRAME;
		n.sh_flags |= SHF_ALLOC;
		n.sh_addralign = SF_SEC_ALIGN;
	}
	n.sh_addr = p->vaddr;
	n.sh_offset = p->off;
	n.sh_size = seclen;
	sh[s->sfidx] = n;
}

/* Section 0 holds the counts that do not fit the ELF header. */
static void sf_shdr_numbers(const struct sf_elf *e, const struct sf_shplan *s,
			    Elf64_Shdr *sh, Elf64_Ehdr *eh)
{
	if (e->sh_ext || s->shnum >= SHN_LORESERVE) {
		eh->e_shnum = 0;
		sh[0].sh_size = s->shnum;
	} else {
		eh->e_shnum = s->shnum;
	}
	if (e->eh.e_shstrndx == SHN_XINDEX || s->stridx >= SHN_LORESERVE) {
		eh->e_shstrndx = SHN_XINDEX;
		sh[0].sh_link = s->stridx;
	} else {
		eh->e_shstrndx = s->stridx;
	}
	eh->e_shoff = s->shoff;
}

static int sf_write_shdrs(const struct sf_elf *e, const struct sf_plan *p,
			  const struct sf_shplan *s, size_t seclen, uint8_t *buf,
			  Elf64_Ehdr *eh)
{
	Elf64_Shdr strh = {
		.sh_name = s->name + sizeof(sf_name),
		.sh_type = SHT_STRTAB,
		.sh_addralign = 1,
	};
	Elf64_Shdr *sh = calloc(s->shnum, sizeof(*sh));

	if (!sh)
		return -1;
	memcpy(sh, e->sh, e->shnum * sizeof(*sh));
	sf_fill_sframe_shdr(e, p, s, seclen, sh);
	if (s->stroff) {
		sf_write_strtab(e, s, buf);
		if (e->shstrndx)
			strh = sh[s->stridx];
		strh.sh_offset = s->stroff;
		strh.sh_size = s->strlen;
		sh[s->stridx] = strh;
	}
	sf_shdr_numbers(e, s, sh, eh);
	memcpy(buf + s->shoff, sh, s->shnum * sizeof(*sh));
	free(sh);
	return 0;
}

static int sf_write_append(const struct sf_elf *e, const struct sf_plan *p,
			   const uint8_t *sec, size_t seclen, uint8_t **out,
			   size_t *outlen, char *err, size_t errlen)
{
	Elf64_Phdr ph[SF_MAX_PHNUM];
	size_t end = p->off + seclen;
	Elf64_Ehdr eh = e->eh;
	struct sf_shplan s;
	uint8_t *buf;

	if (sf_plan_shdrs(e, &s, &end))
		return sf_errx(err, errlen, "out of memory");
	buf = calloc(1, end);
	if (!buf)
		return sf_errx(err, errlen, "out of memory (0x%zx bytes)", end);
	memcpy(buf, e->buf, e->len);
	sf_build_phdrs(e, p, seclen, ph);
	memcpy(buf + p->seg_off, ph, p->phnum * sizeof(*ph));
	memcpy(buf + p->off, sec, seclen);
	if (s.shnum && sf_write_shdrs(e, p, &s, seclen, buf, &eh)) {
		free(buf);
		return sf_errx(err, errlen, "out of memory");
	}
	eh.e_phoff = p->seg_off;
	eh.e_phnum = p->phnum;
	memcpy(buf, &eh, sizeof(eh));
	*out = buf;
	*outlen = end;
	return 0;
}

int sf_inject(const uint8_t *elf, size_t len, const uint8_t *sec, size_t seclen,
	      uint64_t vaddr, uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
	struct sf_elf e;
	struct sf_plan p;
	int ret;

	if (!out || !outlen)
		return sf_errx(err, errlen, "no place for the result");
	*out = NULL;
	*outlen = 0;
	if (sf_check_seclen(seclen, err, errlen))
		return -1;
	if (!sec)
		return sf_errx(err, errlen, "no section bytes");
	if (sf_open(&e, elf, len, err, errlen))
		return -1;
	ret = sf_plan(&e, seclen, &p, err, errlen);
	if (!ret && p.vaddr != vaddr)
		ret = sf_errx(err, errlen,
			      "vaddr 0x%llx is not where a 0x%zx byte section goes (0x%llx): plan again",
			      (ull)vaddr, seclen, (ull)p.vaddr);
	if (ret)
		goto out;
	if (p.inplace)
		ret = sf_write_inplace(&e, &p, sec, seclen, out, outlen, err, errlen);
	else
		ret = sf_write_append(&e, &p, sec, seclen, out, outlen, err, errlen);
out:
	sf_close(&e);
	return ret;
}
