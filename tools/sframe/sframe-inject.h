/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sframe-inject.h - put a .sframe section into an x86-64 ELF executable,
 * PIE or shared object, with a PT_GNU_SFRAME program header covering it.
 *
 * Pure in-memory: no file IO, no global state; every input byte is checked.
 * Two steps, because the section's bytes depend on its final address:
 *
 *	sf_inject_plan(elf, len, seclen, &vaddr, ...);
 *	... encode the section for vaddr ...
 *	sf_inject(elf, len, sec, seclen, vaddr, &out, &outlen, ...);
 *
 * The input is never modified.  On error both return -1 and leave a
 * message naming the file offset in err ("offset 0x40: ...").
 */
#ifndef SFRAME_INJECT_H
#define SFRAME_INJECT_H

#include <stddef.h>
#include <stdint.h>

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME		0x6474e554
#endif
#ifndef SHT_GNU_SFRAME
#define SHT_GNU_SFRAME		0x6ffffff4
#endif

/*
 * Where would a section of seclen bytes be placed in this ELF?
 * Returns 0 and the section's vaddr, or -1 with a message in err.
 */
int sf_inject_plan(const uint8_t *elf, size_t len, size_t seclen,
		   uint64_t *vaddr, char *err, size_t errlen);

/*
 * Produce the new file image (malloc'd, free() it) with sec placed at
 * vaddr, which must be what sf_inject_plan() returned for this seclen.
 * Returns 0, or -1 with a message in err (*out is then NULL).
 */
int sf_inject(const uint8_t *elf, size_t len, const uint8_t *sec,
	      size_t seclen, uint64_t vaddr, uint8_t **out, size_t *outlen,
	      char *err, size_t errlen);

#endif /* SFRAME_INJECT_H */
