// SPDX-License-Identifier: GPL-2.0
/*
 * elfin.c - input ELF files for the SFrame tools (see elfin.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfin.h"

/*
 * libelf quietly shows no sections for a section header table past the
 * end of the file, and sections without names for a bad e_shstrndx: the
 * tools would then say "no .eh_frame" or "no .sframe".  Name the field.
 */
static int check_shdrs(struct elfin *in, const GElf_Ehdr *eh, char *err,
		       size_t errlen)
{
	uint64_t n = eh->e_shnum, strndx = eh->e_shstrndx;
	Elf64_Shdr s0;

	if (!eh->e_shoff)
		return 0;	/* no section headers */
	if (eh->e_shoff > in->len || in->len - eh->e_shoff < sizeof(s0)) {
		snprintf(err, errlen, "%s: offset 0x%zx: e_shoff 0x%" PRIx64
			 ": section header 0 runs past the end of the file "
			 "(0x%zx bytes)", in->name,
			 offsetof(Elf64_Ehdr, e_shoff), (uint64_t)eh->e_shoff,
			 in->len);
		return -1;
	}
	/* extended numbering: the real values are in section 0 */
	memcpy(&s0, in->buf + eh->e_shoff, sizeof(s0));
	if (!n)
		n = s0.sh_size;
	if (strndx == SHN_XINDEX)
		strndx = s0.sh_link;
	if (n > (in->len - eh->e_shoff) / sizeof(s0)) {
		snprintf(err, errlen, "%s: offset 0x%zx: e_shoff 0x%" PRIx64
			 ": %" PRIu64 " section headers end past the end of "
			 "the file (0x%zx bytes)", in->name,
			 offsetof(Elf64_Ehdr, e_shoff), (uint64_t)eh->e_shoff,
			 n, in->len);
		return -1;
	}
	if (strndx && strndx >= n) {
		snprintf(err, errlen, "%s: offset 0x%zx: e_shstrndx %" PRIu64
			 " out of range (%" PRIu64 " sections): no section "
			 "names", in->name, offsetof(Elf64_Ehdr, e_shstrndx),
			 strndx, n);
		return -1;
	}
	return 0;
}

static int check(struct elfin *in, char *err, size_t errlen)
{
	GElf_Ehdr eh;

	if (in->len < EI_NIDENT || memcmp(in->buf, ELFMAG, SELFMAG)) {
		snprintf(err, errlen, "%s: offset 0: not an ELF file", in->name);
		return -1;
	}
	if (in->buf[EI_CLASS] != ELFCLASS64) {
		snprintf(err, errlen, "%s: offset 0x%x: ELF class %u, only "
			 "64-bit (x86-64) is supported", in->name, EI_CLASS,
			 in->buf[EI_CLASS]);
		return -1;
	}
	if (in->buf[EI_DATA] != ELFDATA2LSB) {
		snprintf(err, errlen, "%s: offset 0x%x: not little-endian",
			 in->name, EI_DATA);
		return -1;
	}
	elf_version(EV_CURRENT);
	in->elf = elf_memory((char *)in->buf, in->len);
	if (!in->elf || !gelf_getehdr(in->elf, &eh)) {
		snprintf(err, errlen, "%s: offset 0: bad ELF header: %s",
			 in->name, elf_errmsg(-1));
		return -1;
	}
	if (eh.e_machine != EM_X86_64) {
		snprintf(err, errlen, "%s: offset 0x12: machine %u, only x86-64 "
			 "(%u) is supported", in->name, eh.e_machine, EM_X86_64);
		return -1;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		snprintf(err, errlen, "%s: offset 0x10: ELF type %u: only "
			 "executables and shared objects have final addresses",
			 in->name, eh.e_type);
		return -1;
	}
	return check_shdrs(in, &eh, err, errlen);
}

int elfin_memory(struct elfin *in, const char *name, uint8_t *buf, size_t len,
		 char *err, size_t errlen)
{
	memset(in, 0, sizeof(*in));
	in->name = name;
	in->buf = buf;
	in->len = len;
	if (check(in, err, errlen)) {
		if (in->elf)
			elf_end(in->elf);
		in->elf = NULL;
		return -1;
	}
	return 0;
}

int elfin_open(struct elfin *in, const char *path, char *err, size_t errlen)
{
	struct stat st;
	uint8_t *buf;
	size_t done = 0;
	int fd;

	memset(in, 0, sizeof(*in));
	in->name = path;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf) {
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		close(fd);
		return -1;
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + done, st.st_size - done);

		if (n <= 0) {
			snprintf(err, errlen, "%s: offset 0x%zx: %s", path, done,
				 n ? strerror(errno) : "file shrank while read");
			free(buf);
			close(fd);
			return -1;
		}
		done += n;
	}
	close(fd);
	if (elfin_memory(in, path, buf, done, err, errlen)) {
		free(buf);
		in->buf = NULL;
		return -1;
	}
	in->owned = 1;
	return 0;
}

void elfin_close(struct elfin *in)
{
	if (in->elf)
		elf_end(in->elf);
	if (in->owned)
		free(in->buf);
	memset(in, 0, sizeof(*in));
}

Elf_Scn *elfin_section(struct elfin *in, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(in->elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(in->elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, sh))
			continue;
		name = elf_strptr(in->elf, shstrndx, sh->sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

int elfin_ident(struct elfin *in, struct sf_ident *id, char *err,
		size_t errlen)
{
	struct sf_image img = { .file = in->buf, .file_len = in->len };
	char why[200];
	size_t n;

	img.phdr = elf64_getphdr(in->elf);
	if (!img.phdr || elf_getphdrnum(in->elf, &n)) {
		snprintf(err, errlen, "%s: no program headers: a sidecar "
			 "can't be tied to it", in->name);
		return -1;
	}
	img.phnum = n;
	if (sf_ident_of(&img, id, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s: a sidecar can't be tied to it "
			 "(use --inject)", in->name, why);
		return -1;
	}
	return 0;
}
