// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-dump - print an SFrame section the way GNU objdump --sframe
 * (binutils 2.46) does, from an ELF's .sframe or a raw section file.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfin.h"
#include "sframe.h"

static const char usage[] =
"Usage: sframe-dump [--vaddr ADDR] FILE...\n"
"Print the SFrame section of each FILE like GNU objdump --sframe 2.46.\n"
"FILE is an ELF with a .sframe section, a sidecar from sframe-gen (its\n"
"header line names the object's identity), or a raw section (sframe-gen\n"
"--raw, objcopy -O binary --only-section=.sframe): the function starts of\n"
"the last two are relative to ADDR (default 0, as sframe-gen writes them).\n"
"\n"
"Columns: CFA 'sp+16' = rsp + 16, '(fp-8)' = load(rbp - 8), 'r10+0' a\n"
"DWARF register; FP 'u' unchanged, 'c-16' saved at CFA - 16; RA 'f' at\n"
"the fixed CFA - 8, 'U' a FLEX padding word (the same), 'undefined' an\n"
"outermost frame; STARTPC[m]: PC-mask rows (offsets modulo rep_size).\n"
"Exit status: 0, or 1 if a file or an FDE could not be read.\n";

static int dump_raw(const char *path, uint64_t vaddr)
{
	struct sf_sec s;
	char err[512], what[160] = "";
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	FILE *f = fopen(path, "rb");
	int ret;

	if (!f) {
		fprintf(stderr, "sframe-dump: %s: %s\n", path, strerror(errno));
		return 1;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			uint8_t *nb = realloc(buf, cap = cap ? 2 * cap : 65536);

			if (!nb) {
				fprintf(stderr, "sframe-dump: %s: out of memory\n", path);
				free(buf);
				fclose(f);
				return 1;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		if (!n)
			break;
		len += n;
	}
	fclose(f);
	if (len >= 8 && !memcmp(buf, SF_SIDECAR_MAGIC, 8)) {
		struct sf_ident id;
		uint32_t seclen;

		ret = sf_sidecar_hdr_parse(buf, len, &id, &seclen, err,
					   sizeof(err));
		if (ret) {
			fprintf(stderr, "sframe-dump: %s: %s\n", path, err);
			free(buf);
			return 1;
		}
		sf_ident_str(&id, what, sizeof(what));
		memmove(buf, buf + SF_SIDECAR_HDR_SIZE, seclen);
		len = seclen;
	}
	ret = sf_open(&s, buf, len, vaddr, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "sframe-dump: %s: %s%s\n", path,
			*what ? "(section) " : "", err);
	} else {
		if (*what)
			printf("\n%s:     SFrame sidecar of %s, section at 0x%"
			       PRIx64 "\n\n", path, what, vaddr);
		else
			printf("\n%s:     raw SFrame section at 0x%" PRIx64
			       "\n\n", path, vaddr);
		/* sf_dump's message names the file already */
		ret = sf_dump(&s, path, stdout, err, sizeof(err));
		if (ret)
			fprintf(stderr, "sframe-dump: %s\n", err);
	}
	free(buf);
	return ret ? 1 : 0;
}

static int dump_elf(struct elfin *in)
{
	struct sf_sec s;
	char err[512];
	GElf_Shdr sh;
	Elf_Scn *scn = elfin_section(in, ".sframe", &sh);
	Elf_Data *d;

	if (!scn) {
		fprintf(stderr, "sframe-dump: %s: no .sframe section\n", in->name);
		return 1;
	}
	d = elf_getdata(scn, NULL);
	if (sh.sh_type == SHT_NOBITS || !d || !d->d_buf ||
	    d->d_size != sh.sh_size) {
		fprintf(stderr, "sframe-dump: %s: .sframe at file offset 0x%"
			PRIx64 ": can't read %" PRIu64 " bytes\n", in->name,
			(uint64_t)sh.sh_offset, (uint64_t)sh.sh_size);
		return 1;
	}
	if (sf_open(&s, d->d_buf, d->d_size, sh.sh_addr, err, sizeof(err))) {
		fprintf(stderr, "sframe-dump: %s: .sframe (file offset 0x%" PRIx64
			") %s\n", in->name, (uint64_t)sh.sh_offset, err);
		return 1;
	}
	printf("\n%s:     file format elf64-x86-64\n\n", in->name);
	if (sf_dump(&s, in->name, stdout, err, sizeof(err))) {
		fprintf(stderr, "sframe-dump: %s\n", err);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "vaddr", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	uint64_t vaddr = 0;
	int c, ret = 0;

	while ((c = getopt_long(argc, argv, "a:h", opts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'a':
			errno = 0;
			vaddr = strtoull(optarg, &end, 0);
			if (errno || *end || !*optarg) {
				fprintf(stderr, "sframe-dump: --vaddr %s: not an "
					"address\n", optarg);
				return 1;
			}
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 1;
		}
	}
	if (optind >= argc) {
		fputs(usage, stderr);
		return 1;
	}
	for (; optind < argc; optind++) {
		const char *path = argv[optind];
		struct elfin in;
		char err[512];
		unsigned char magic[4] = { 0 };
		FILE *f = fopen(path, "rb");

		if (!f) {
			fprintf(stderr, "sframe-dump: %s: %s\n", path, strerror(errno));
			ret = 1;
			continue;
		}
		if (fread(magic, 1, 4, f) != 4)
			memset(magic, 0, 4);
		fclose(f);
		fflush(stdout);
		if (memcmp(magic, ELFMAG, SELFMAG)) {
			ret |= dump_raw(path, vaddr);
			continue;
		}
		if (elfin_open(&in, path, err, sizeof(err))) {
			fprintf(stderr, "sframe-dump: %s\n", err);
			ret = 1;
			continue;
		}
		ret |= dump_elf(&in);
		elfin_close(&in);
	}
	return ret;
}
