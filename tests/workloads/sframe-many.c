// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-many - register N SFrame sections, for what they cost the
 * kernel (tests/guest/79: charged to the memory cgroup).
 *
 * Usage: sframe-many N: maps N * 64 bytes of text and of section data,
 * writes N sections (SFrame v3, one function of 64 bytes each, one after
 * the other), prints "mapped", waits for a line on stdin, registers the N
 * with PR_ADD_SFRAME, prints "registered N", waits for a line and exits.
 * Exit status: 0; 1 if a registration fails (its errno on stderr); 2 on
 * bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#ifndef PR_ADD_SFRAME
#define PR_ADD_SFRAME	79
#endif

#define FUNC_SIZE	64

struct sf_header {
	uint16_t magic;
	uint8_t version, flags, abi_arch;
	int8_t cfa_fixed_fp_offset, cfa_fixed_ra_offset;
	uint8_t auxhdr_len;
	uint32_t num_fdes, num_fres, fre_len, fdes_off, fres_off;
} __attribute__((packed));

struct sf_fde_v3 {
	int64_t func_start_off;
	uint32_t func_size, start_fre_off;
} __attribute__((packed));

/* FDE attributes (5 bytes) and one row: start 0, CFA = rsp + 8 */
static const uint8_t fres[] = { 1, 0, 0, 0, 0, 0, 0x03, 8 };

static void make_section(uint8_t *sf, uintptr_t text)
{
	struct sf_header h = {
		.magic = 0xdee2, .version = 3, .flags = 0x1 | 0x4, /* sorted, pcrel */
		.abi_arch = 3, .cfa_fixed_ra_offset = -8,
		.num_fdes = 1, .num_fres = 1, .fre_len = sizeof(fres),
		.fdes_off = 0, .fres_off = sizeof(struct sf_fde_v3),
	};
	uint8_t *fde_at = sf + sizeof(h);
	struct sf_fde_v3 fde = {
		.func_start_off = (int64_t)(text - (uintptr_t)fde_at),
		.func_size = FUNC_SIZE,
	};

	memcpy(sf, &h, sizeof(h));
	memcpy(fde_at, &fde, sizeof(fde));
	memcpy(fde_at + sizeof(fde), fres, sizeof(fres));
}

static void wait_line(void)
{
	char line[64];

	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		exit(0);
}

int main(int argc, char **argv)
{
	size_t len, sf_len = sizeof(struct sf_header) + sizeof(struct sf_fde_v3) + sizeof(fres);
	uint8_t *text, *data;
	char *end;
	long n, i;

	n = argc == 2 ? strtol(argv[1], &end, 0) : 0;
	if (argc != 2 || *end || n < 1 || n > 1 << 20) {
		fprintf(stderr, "usage: sframe-many N (1 to %d)\n", 1 << 20);
		return 2;
	}
	len = n * FUNC_SIZE;
	text = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	data = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (text == MAP_FAILED || data == MAP_FAILED) {
		perror("sframe-many: mmap");
		return 1;
	}
	for (i = 0; i < n; i++)
		make_section(data + i * FUNC_SIZE, (uintptr_t)text + i * FUNC_SIZE);
	printf("mapped\n");
	wait_line();
	for (i = 0; i < n; i++) {
		uintptr_t t = (uintptr_t)text + i * FUNC_SIZE;

		if (prctl(PR_ADD_SFRAME, (unsigned long)(data + i * FUNC_SIZE),
			  (unsigned long)(data + i * FUNC_SIZE + sf_len), t, t + FUNC_SIZE)) {
			fprintf(stderr, "sframe-many: PR_ADD_SFRAME of section %ld: %s\n",
				i, strerror(errno));
			return 1;
		}
	}
	printf("registered %ld\n", n);
	wait_line();
	return 0;
}
