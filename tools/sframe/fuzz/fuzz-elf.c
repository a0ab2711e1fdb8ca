// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-elf - libFuzzer target: an ELF file through the whole generator.
 *
 *   elfin_memory -> sf_cfi_read (v3, v2) -> sf_encode (vaddr 0 and others,
 *   v2 also without PCREL) -> sf_open + sf_read_func of every FDE, which
 *   must give back exactly the functions encoded (round-trip oracle) ->
 *   sf_inject_plan + sf_inject, whose output must open again with a
 *   .sframe section holding exactly the encoded bytes at the planned
 *   vaddr, covered by a PT_GNU_SFRAME.
 *
 * Any broken invariant abort()s with a line on stderr saying which.
 * Built by fuzz.mk: make OUT=... $(OUT)/fuzz-elf
 */
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cfi.h"
#include "../elfin.h"
#include "../sframe-inject.h"
#include "../sframe.h"

static FILE *devnull;

#define FAIL(...)                                                        \
	do {                                                             \
		fprintf(stderr, "fuzz-elf: oracle: " __VA_ARGS__);       \
		fputc('\n', stderr);                                     \
		abort();                                                 \
	} while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	elf_version(EV_CURRENT);
	return 0;
}

/* ---- comparing the model ---- */

static bool row_eq(const struct sf_row *a, const struct sf_row *b)
{
	if (a->start != b->start || a->ra.kind != b->ra.kind)
		return false;
	if (a->ra.kind == SF_UNDEFINED)
		return true;	/* outermost: nothing else is said */
	return sf_rule_eq(&a->cfa, &b->cfa) && sf_rule_eq(&a->ra, &b->ra) &&
	       sf_rule_eq(&a->fp, &b->fp);
}

static void func_cmp(const struct sf_func *want, const struct sf_func *got,
		     const char *what, size_t i)
{
	if (want->start != got->start || want->size != got->size)
		FAIL("%s: FDE %zu: [0x%" PRIx64 ", +0x%x) decoded as [0x%" PRIx64
		     ", +0x%x)", what, i, want->start, want->size, got->start,
		     got->size);
	if (want->signal != got->signal || want->flex != got->flex ||
	    want->mask != got->mask ||
	    (want->mask && want->rep_size != got->rep_size))
		FAIL("%s: FDE %zu at 0x%" PRIx64 ": flags signal %d flex %d "
		     "mask %d rep %u decoded as %d %d %d %u", what, i,
		     want->start, want->signal, want->flex, want->mask,
		     want->rep_size, got->signal, got->flex, got->mask,
		     got->rep_size);
	if (want->nrows != got->nrows)
		FAIL("%s: FDE %zu at 0x%" PRIx64 ": %u rows decoded as %u",
		     what, i, want->start, want->nrows, got->nrows);
	for (uint32_t j = 0; j < want->nrows; j++)
		if (!row_eq(&want->rows[j], &got->rows[j]))
			FAIL("%s: FDE %zu at 0x%" PRIx64 ": row %u differs "
			     "(start 0x%x / 0x%x)", what, i, want->start, j,
			     want->rows[j].start, got->rows[j].start);
}

/* sf_encode's contract, which sf_cfi_read promises to meet. */
static void check_cfi_output(const struct sf_func *f, size_t n, int version)
{
	for (size_t i = 0; i < n; i++) {
		const char *why = sf_func_encodable(&f[i], version);

		if (why)
			FAIL("sf_cfi_read v%d: function %zu at 0x%" PRIx64
			     " not encodable: %s", version, i, f[i].start, why);
		if (i && f[i].start < f[i - 1].start + f[i - 1].size)
			FAIL("sf_cfi_read v%d: function %zu at 0x%" PRIx64
			     " overlaps or precedes the one before", version, i,
			     f[i].start);
		if (f[i].start + f[i].size < f[i].start)
			FAIL("sf_cfi_read v%d: function at 0x%" PRIx64
			     " wraps around", version, f[i].start);
	}
}

/* Decode sec at vaddr; every FDE must come back as funcs[]. */
static void roundtrip(const struct sf_func *funcs, size_t n,
		      const uint8_t *sec, size_t seclen, uint64_t vaddr,
		      int version, const char *what)
{
	struct sf_sec s;
	char err[512];

	if (sf_open(&s, sec, seclen, vaddr, err, sizeof(err)))
		FAIL("%s: sf_open of our own encoding: %s", what, err);
	if (s.version != version || s.num_fdes != n)
		FAIL("%s: version %u, %u FDEs; encoded v%d with %zu", what,
		     s.version, s.num_fdes, version, n);
	for (uint32_t i = 0; i < s.num_fdes; i++) {
		struct sf_func f;

		if (sf_read_func(&s, i, &f, err, sizeof(err)))
			FAIL("%s: sf_read_func %u of our own encoding: %s",
			     what, i, err);
		func_cmp(&funcs[i], &f, what, i);
		free(f.rows);
	}
	if (sf_dump(&s, "fuzz", devnull, err, sizeof(err)))
		FAIL("%s: sf_dump of our own encoding: %s", what, err);
}

/* The injected image must be an ELF whose .sframe is sec, at vaddr. */
static void check_injected(uint8_t *img, size_t len, const uint8_t *sec,
			   size_t seclen, uint64_t vaddr,
			   const struct sf_func *funcs, size_t n, int version)
{
	struct elfin out;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *d;
	size_t phnum;
	bool found = false;
	char err[512];

	if (elfin_memory(&out, "injected", img, len, err, sizeof(err)))
		FAIL("injected image doesn't open: %s", err);
	scn = elfin_section(&out, ".sframe", &sh);
	if (scn) {
		if (sh.sh_addr != vaddr || sh.sh_size != seclen)
			FAIL(".sframe at 0x%" PRIx64 " size 0x%" PRIx64
			     ", planned 0x%" PRIx64 " size 0x%zx",
			     (uint64_t)sh.sh_addr, (uint64_t)sh.sh_size, vaddr,
			     seclen);
		if (sh.sh_offset > len || seclen > len - sh.sh_offset ||
		    memcmp(img + sh.sh_offset, sec, seclen))
			FAIL(".sframe at file offset 0x%" PRIx64
			     " doesn't hold the injected bytes",
			     (uint64_t)sh.sh_offset);
		if (!(sh.sh_flags & SHF_ALLOC))
			FAIL(".sframe is not SHF_ALLOC");
		d = elf_getdata(scn, NULL);
		if (!d || d->d_size != seclen || !d->d_buf ||
		    memcmp(d->d_buf, sec, seclen))
			FAIL("libelf's data of .sframe isn't the injected bytes");
	} else {
		/* only an input without section headers may have none */
		size_t shnum = 0;

		if (elf_getshdrnum(out.elf, &shnum) || shnum)
			FAIL("injected image has %zu sections but no .sframe",
			     shnum);
	}
	if (elf_getphdrnum(out.elf, &phnum))
		FAIL("injected image: no program headers: %s", elf_errmsg(-1));
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(out.elf, i, &ph))
			FAIL("injected image: phdr %zu unreadable", i);
		if (ph.p_type != PT_GNU_SFRAME)
			continue;
		if (found)
			FAIL("injected image: two PT_GNU_SFRAME");
		found = true;
		if (ph.p_vaddr != vaddr || ph.p_filesz != seclen ||
		    ph.p_offset > len || seclen > len - ph.p_offset ||
		    memcmp(img + ph.p_offset, sec, seclen))
			FAIL("PT_GNU_SFRAME (0x%" PRIx64 ", +0x%" PRIx64
			     ") isn't the injected section (0x%" PRIx64
			     ", +0x%zx)", (uint64_t)ph.p_vaddr,
			     (uint64_t)ph.p_filesz, vaddr, seclen);
		if (scn && ph.p_offset != sh.sh_offset)
			FAIL("PT_GNU_SFRAME at file offset 0x%" PRIx64
			     ", .sframe at 0x%" PRIx64, (uint64_t)ph.p_offset,
			     (uint64_t)sh.sh_offset);
	}
	if (!found)
		FAIL("injected image has no PT_GNU_SFRAME");
	/* the section, where it is, says what was encoded */
	roundtrip(funcs, n, sec, seclen, vaddr, version, "injected");
	elfin_close(&out);
}

static void try_inject(const uint8_t *elf, size_t len,
		       const struct sf_func *funcs, size_t n,
		       const struct sf_enc_opts *o0)
{
	struct sf_enc_opts o = *o0;
	uint8_t *sec = NULL, *sec2 = NULL, *img = NULL;
	size_t seclen, seclen2, imglen = 0;
	uint64_t vaddr;
	char err[512];

	if (sf_encode(funcs, n, &o, &sec, &seclen, err, sizeof(err)))
		return;
	if (sf_inject_plan(elf, len, seclen, &vaddr, err, sizeof(err)))
		goto out;
	o.vaddr = vaddr;
	if (sf_encode(funcs, n, &o, &sec2, &seclen2, err, sizeof(err)))
		goto out;	/* v2: a start offset may not fit from there */
	if (seclen2 != seclen)
		FAIL("encoding at 0x%" PRIx64 " is 0x%zx bytes, at 0x%" PRIx64
		     " 0x%zx", o0->vaddr, seclen, vaddr, seclen2);
	if (sf_inject(elf, len, sec2, seclen2, vaddr, &img, &imglen, err,
		      sizeof(err))) {
		if (img)
			FAIL("sf_inject failed but left *out set");
		/* the plan succeeded for these same inputs */
		FAIL("sf_inject failed after sf_inject_plan succeeded: %s", err);
	}
	if (!img || imglen < len)
		FAIL("sf_inject: %zu-byte image for a %zu-byte input", imglen,
		     len);
	check_injected(img, imglen, sec2, seclen2, vaddr, funcs, n, o.version);
out:
	free(img);
	free(sec2);
	free(sec);
}

static void one_version(struct elfin *in, const uint8_t *elf, size_t len,
			int version)
{
	static const uint64_t vaddrs[] = { 0, 0x2188, 0x7fff00001000ULL,
					   0xffffffffff000000ULL };
	struct sf_cfi_stats st;
	struct sf_func *funcs = NULL;
	size_t n = 0;
	char err[512], what[64];

	if (sf_cfi_read(in->elf, "fuzz", version, &funcs, &n, &st, err,
			sizeof(err)))
		return;
	if (st.funcs != n)
		FAIL("sf_cfi_read v%d: %zu functions, stats say %zu", version,
		     n, st.funcs);
	check_cfi_output(funcs, n, version);
	/* no function: a section the kernel refuses, sframe-gen writes none */
	if (!n) {
		sf_funcs_free(funcs, n);
		return;
	}
	for (size_t v = 0; v < sizeof(vaddrs) / sizeof(vaddrs[0]); v++) {
		for (int pcrel = 1; pcrel >= (version == 2 ? 0 : 1); pcrel--) {
			struct sf_enc_opts o = { .version = version,
						 .pcrel = pcrel,
						 .vaddr = vaddrs[v] };
			uint8_t *sec = NULL;
			size_t seclen;

			if (sf_encode(funcs, n, &o, &sec, &seclen, err,
				      sizeof(err))) {
				/* only v2's 32-bit start offsets may not fit */
				if (version == 3 || !strstr(err, "doesn't fit"))
					FAIL("sf_encode v%d at 0x%" PRIx64
					     " of sf_cfi_read's output: %s",
					     version, vaddrs[v], err);
				continue;
			}
			snprintf(what, sizeof(what), "v%d%s at 0x%" PRIx64,
				 version, pcrel ? "" : " no-pcrel", vaddrs[v]);
			roundtrip(funcs, n, sec, seclen, vaddrs[v], version,
				  what);
			free(sec);
		}
	}
	/* as sframe-gen --inject does (v2: also the older start encoding) */
	{
		struct sf_enc_opts o = { .version = version, .pcrel = true };

		try_inject(elf, len, funcs, n, &o);
		if (version == 2 && len & 1) {
			o.pcrel = false;
			try_inject(elf, len, funcs, n, &o);
		}
	}
	sf_funcs_free(funcs, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* exactly the input's size, so that ASan sees every overread */
	uint8_t *buf = malloc(size ? size : 1);
	struct elfin in;
	char err[512];

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (elfin_memory(&in, "fuzz", buf, size, err, sizeof(err))) {
		if (in.elf)
			FAIL("elfin_memory failed but left an Elf open");
		free(buf);
		return 0;
	}
	one_version(&in, buf, size, 3);
	one_version(&in, buf, size, 2);
	elfin_close(&in);
	/* nothing may have written to the input */
	if (size && memcmp(buf, data, size))
		FAIL("the input buffer was modified");
	free(buf);
	return 0;
}
