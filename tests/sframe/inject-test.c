// SPDX-License-Identifier: GPL-2.0
/*
 * inject-test - drive sframe-inject: inject-test IN OUT SECFILE
 *
 * Reads SECFILE's bytes as the .sframe section, plans, injects them as
 * they are and writes OUT (with IN's permission bits).  Prints
 * "vaddr 0x... (in place|new segment)".  Exit 1 with the library's
 * message on any error.
 *
 * Built with -DSF_FUZZ it is instead a libFuzzer target: the first two
 * bytes give seclen, the rest is the ELF; every output must plan again,
 * in place at the same vaddr, and re-injecting the same bytes must give
 * the same file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sframe-inject.h"

#ifndef SF_FUZZ

static int read_file(const char *path, uint8_t **buf, size_t *len, mode_t *mode)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	size_t n;

	if (!f || fstat(fileno(f), &st)) {
		fprintf(stderr, "inject-test: %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	*len = st.st_size;
	*buf = malloc(*len ? *len : 1);
	n = *buf ? fread(*buf, 1, *len, f) : 0;
	fclose(f);
	if (!*buf || n != *len) {
		fprintf(stderr, "inject-test: %s: short read\n", path);
		free(*buf);
		return -1;
	}
	if (mode)
		*mode = st.st_mode & 07777;
	return 0;
}

static int write_file(const char *path, const uint8_t *buf, size_t len, mode_t mode)
{
	FILE *f = fopen(path, "wb");

	if (!f) {
		fprintf(stderr, "inject-test: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fwrite(buf, 1, len, f) != len || fchmod(fileno(f), mode) || fclose(f)) {
		fprintf(stderr, "inject-test: %s: write failed: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint8_t *elf, *sec, *out = NULL;
	size_t len, seclen, outlen;
	char err[256];
	uint64_t vaddr;
	mode_t mode;
	int ret = 1;

	if (argc != 4) {
		fprintf(stderr, "usage: inject-test IN OUT SECFILE\n");
		return 2;
	}
	if (read_file(argv[1], &elf, &len, &mode))
		return 1;
	if (read_file(argv[3], &sec, &seclen, NULL)) {
		free(elf);
		return 1;
	}
	if (sf_inject_plan(elf, len, seclen, &vaddr, err, sizeof(err)) ||
	    sf_inject(elf, len, sec, seclen, vaddr, &out, &outlen, err, sizeof(err))) {
		fprintf(stderr, "inject-test: %s: %s\n", argv[1], err);
		goto out;
	}
	if (write_file(argv[2], out, outlen, mode))
		goto out;
	printf("vaddr 0x%llx (%s)\n", (unsigned long long)vaddr,
	       outlen == len ? "in place" : "new segment");
	ret = 0;
out:
	free(out);
	free(sec);
	free(elf);
	return ret;
}

#else /* SF_FUZZ */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *out = NULL, *out2 = NULL, *sec;
	size_t seclen, outlen, outlen2;
	uint64_t vaddr, vaddr2;
	char err[256];

	if (size < 2)
		return 0;
	seclen = data[0] | (size_t)data[1] << 8;
	data += 2;
	size -= 2;
	if (sf_inject_plan(data, size, seclen, &vaddr, err, sizeof(err)))
		return 0;
	sec = malloc(seclen);
	if (!sec)
		return 0;
	memset(sec, 0xa5, seclen);
	if (sf_inject(data, size, sec, seclen, vaddr, &out, &outlen, err, sizeof(err)))
		abort();	/* planned, so it must work */
	if (sf_inject_plan(out, outlen, seclen, &vaddr2, err, sizeof(err)) || vaddr2 != vaddr)
		abort();	/* our output must take the same section in place */
	if (sf_inject(out, outlen, sec, seclen, vaddr2, &out2, &outlen2, err, sizeof(err)) ||
	    outlen2 != outlen || memcmp(out, out2, outlen))
		abort();
	free(out2);
	free(out);
	free(sec);
	return 0;
}

#endif /* SF_FUZZ */
