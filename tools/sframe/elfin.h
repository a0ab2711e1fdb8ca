/* SPDX-License-Identifier: GPL-2.0 */
/*
 * elfin.h - open an input ELF for the SFrame tools: read it whole (the
 * injector works on the bytes), hand libelf the same buffer, and refuse
 * what the tools can't describe, with the reason.
 */
#ifndef SFRAME_ELFIN_H
#define SFRAME_ELFIN_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

#include "sframe.h"

struct elfin {
	const char *name;
	uint8_t *buf;
	size_t len;
	Elf *elf;
	int owned;		/* buf is ours to free */
};

/* 0, or -1 with err ("FILE: ..."). */
int elfin_open(struct elfin *in, const char *path, char *err, size_t errlen);
/* Same, on bytes the caller owns (fuzzing). */
int elfin_memory(struct elfin *in, const char *name, uint8_t *buf, size_t len,
		 char *err, size_t errlen);
void elfin_close(struct elfin *in);
/* The section called name, or NULL. */
Elf_Scn *elfin_section(struct elfin *in, const char *name, GElf_Shdr *sh);

/*
 * The identity sframe-audit.so checks a sidecar of this object against
 * (sframe-ident.c): 0, or -1 with err.
 */
int elfin_ident(struct elfin *in, struct sf_ident *id, char *err,
		size_t errlen);

#endif
