// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-gen - generate SFrame v3 (or v2) from an ELF's .eh_frame.
 *
 * The rules come from .eh_frame's CFA programs (cfi.c); what SFrame can't
 * say is left out and counted (--stats).  The result goes to a sidecar
 * file (the raw section, encoded as if it were at address 0 of the
 * object: sframe-audit.so relocates it when it maps it) or into the ELF
 * itself as a .sframe section covered by PT_GNU_SFRAME (--inject), where
 * the kernel finds it at exec and sframe-audit.so at dlopen.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfi.h"
#include "elfin.h"
#include "sframe-inject.h"
#include "sframe.h"

static const char usage[] =
"Usage: sframe-gen [OPTIONS] ELF\n"
"Generate an SFrame section from ELF's .eh_frame (x86-64 executables, PIEs\n"
"and shared objects), for the kernel's user stack unwinder.\n"
"\n"
"  -o, --output FILE    where to write (default: ELF.sframe, or ELF itself\n"
"                       with --inject)\n"
"  -i, --inject         write ELF with the section injected as .sframe,\n"
"                       covered by a PT_GNU_SFRAME program header; an\n"
"                       existing .sframe (e.g. obsolete v1) is replaced.\n"
"                       The file (ELF, or an existing -o FILE) is replaced\n"
"                       atomically, through a symlink its target, keeping\n"
"                       mode, owner and group; one with other hard links\n"
"                       is refused (they would keep the old contents)\n"
"  -V, --sframe-version N\n"
"                       3 (default) or 2; v2 can't describe DRAP/realigned\n"
"                       frames or signal frames, they are left out\n"
"      --no-pcrel       v2: function starts relative to the section\n"
"                       (binutils 2.41-2.44), not to the field (2.45)\n"
"  -s, --stats          print what was generated and what was left out, why\n"
"      --raw            write the bare section, without the sidecar header\n"
"                       (for sframe-dump, fuzzing; sframe-audit.so refuses it)\n"
"  -h, --help           this text\n"
"\n"
"A sidecar (without --inject) is a header naming the object (its build ID,\n"
"else a hash of its .eh_frame and layout), then the section, encoded as if\n"
"it lived at address 0 of the object; sframe-audit.so maps and relocates\n"
"it for that object only.\n"
"Code without a rule here is unwound by the kernel with frame pointers.\n"
"Exit status: 0 success; 1 error (the message names the file and offset);\n"
"2 nothing to describe: no .eh_frame FDEs (no .eh_frame, an empty one, only\n"
"CIEs), or none SFrame can say (--stats says why); nothing is written.\n";

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * Write path through a temporary file next to it and rename(): a reader
 * sees the old file or the new one, never a part of one.  owner: give the
 * new file that one's owner and group, before the mode (chown clears the
 * set-user-ID bits).  On any error the temporary file is removed.
 */
static int put_file(const char *path, const void *buf, size_t len,
		    mode_t mode, const struct stat *owner, char *err,
		    size_t errlen)
{
	size_t n = strlen(path) + sizeof(".tmpXXXXXX");
	char *tmp = malloc(n);
	int fd;

	if (!tmp) {
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		return -1;
	}
	snprintf(tmp, n, "%s.tmpXXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		free(tmp);
		return -1;
	}
	if (owner && fchown(fd, owner->st_uid, owner->st_gid)) {
		snprintf(err, errlen, "%s: owner %u, group %u: the new file "
			 "can't be given them (%s): nothing written", path,
			 (unsigned int)owner->st_uid,
			 (unsigned int)owner->st_gid, strerror(errno));
		goto fail;
	}
	if (write_all(fd, buf, len) || fchmod(fd, mode) || fsync(fd)) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		goto fail;
	}
	if (close(fd)) {
		fd = -1;
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	free(tmp);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	return -1;
}

static int write_file(const char *path, const void *buf, size_t len,
		      mode_t mode, char *err, size_t errlen)
{
	return put_file(path, buf, len, mode, NULL, err, errlen);
}

/*
 * --inject's output.  A new file gets the input's mode.  An existing one
 * is replaced as its users expect: through a symlink, its target (the link
 * stays), with the target's mode, owner and group.  A file with other hard
 * links is refused: they would go on naming the old contents.
 */
static int write_output(const char *out, bool in_place, const char *in,
			const void *buf, size_t len, char *err, size_t errlen)
{
	struct stat st;
	char *target;
	int ret = -1;

	if (lstat(out, &st)) {
		if (errno != ENOENT) {
			snprintf(err, errlen, "%s: %s", out, strerror(errno));
			return -1;
		}
		if (stat(in, &st))
			st.st_mode = 0755;
		return put_file(out, buf, len, st.st_mode & 07777, NULL, err,
				errlen);
	}
	target = realpath(out, NULL);
	if (!target || stat(target, &st)) {
		snprintf(err, errlen, "%s: %s%s", out, S_ISLNK(st.st_mode) ?
			 "a symlink to nothing: " : "", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", target);
		goto out;
	}
	if (st.st_nlink > 1) {
		snprintf(err, errlen, "%s has %ju hard links; replacing it "
			 "would break them: %s", target, (uintmax_t)st.st_nlink,
			 in_place ? "use -o" : "choose another -o FILE");
		goto out;
	}
	ret = put_file(target, buf, len, st.st_mode & 07777, &st, err, errlen);
out:
	free(target);
	return ret;
}

/*
 * Exit status 2, nothing written: no FDEs (no .eh_frame, an empty one,
 * only CIEs), or none SFrame can say.  A section without FDEs would be of
 * no use: the kernel and sframe-audit.so refuse it, and the object is
 * unwound with frame pointers as it is without one.
 */
static void say_nothing(const char *path, const struct sf_cfi_stats *st,
			int version)
{
	if (!st->fdes)
		fprintf(stderr, "sframe-gen: %s: no .eh_frame FDEs: nothing to "
			"describe, nothing written\n", path);
	else
		fprintf(stderr, "sframe-gen: %s: none of its %zu .eh_frame FDEs "
			"can be said in SFrame v%d (--stats says why): nothing "
			"written\n", path, st->fdes, version);
}

/*
 * Put the sidecar header in front of the section: the identity of the
 * object it describes, which sframe-audit.so checks before using it.
 */
static int add_sidecar_hdr(struct elfin *in, uint8_t **sec, size_t *seclen,
			   char *err, size_t errlen)
{
	struct sf_ident id;
	uint8_t *buf;

	if (elfin_ident(in, &id, err, errlen))
		return -1;
	if (*seclen > UINT32_MAX - SF_SIDECAR_HDR_SIZE) {
		snprintf(err, errlen, "%s: a section of %zu bytes is too big "
			 "for a sidecar", in->name, *seclen);
		return -1;
	}
	buf = malloc(SF_SIDECAR_HDR_SIZE + *seclen);
	if (!buf) {
		snprintf(err, errlen, "%s: out of memory", in->name);
		return -1;
	}
	sf_sidecar_hdr_make(buf, &id, *seclen);
	memcpy(buf + SF_SIDECAR_HDR_SIZE, *sec, *seclen);
	free(*sec);
	*sec = buf;
	*seclen += SF_SIDECAR_HDR_SIZE;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "inject", no_argument, NULL, 'i' },
		{ "sframe-version", required_argument, NULL, 'V' },
		{ "no-pcrel", no_argument, NULL, 'P' },
		{ "stats", no_argument, NULL, 's' },
		{ "raw", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct sf_enc_opts eo = { .version = 3, .pcrel = true };
	const char *output = NULL, *path;
	bool inject = false, stats = false, no_pcrel = false, raw = false;
	struct sf_cfi_stats st;
	struct sf_func *funcs = NULL;
	size_t nfuncs = 0, seclen = 0, outlen = 0;
	uint8_t *sec = NULL, *image = NULL;
	char err[1024], sidecar[4096];
	struct elfin in;
	int c, ret = 1;

	while ((c = getopt_long(argc, argv, "o:iV:sh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'i':
			inject = true;
			break;
		case 'V':
			if (strcmp(optarg, "2") && strcmp(optarg, "3")) {
				fprintf(stderr, "sframe-gen: --sframe-version %s: "
					"only 2 and 3\n", optarg);
				return 1;
			}
			eo.version = atoi(optarg);
			break;
		case 'P':
			no_pcrel = true;
			break;
		case 's':
			stats = true;
			break;
		case 'R':
			raw = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 1;
		}
	}
	if (optind + 1 != argc) {
		fputs(usage, stderr);
		return 1;
	}
	if (no_pcrel && eo.version != 2) {
		fprintf(stderr, "sframe-gen: --no-pcrel needs --sframe-version 2 "
			"(v3 starts are always PC-relative)\n");
		return 1;
	}
	if (raw && inject) {
		fprintf(stderr, "sframe-gen: --raw is for sidecars, not with "
			"--inject\n");
		return 1;
	}
	eo.pcrel = !no_pcrel;
	path = argv[optind];
	if (elfin_open(&in, path, err, sizeof(err)))
		goto fail;
	if (sf_cfi_read(in.elf, path, eo.version, &funcs, &nfuncs, &st, err,
			sizeof(err)))
		goto fail;
	if (stats)
		sf_cfi_print_stats(&st, path, stdout);
	if (!nfuncs) {
		say_nothing(path, &st, eo.version);
		ret = 2;
		goto out;
	}

	if (!inject) {
		eo.vaddr = 0;
		if (sf_encode(funcs, nfuncs, &eo, &sec, &seclen, err, sizeof(err)))
			goto fail_msg;
		if (!output) {
			snprintf(sidecar, sizeof(sidecar), "%s.sframe", path);
			output = sidecar;
		}
		if (!raw && add_sidecar_hdr(&in, &sec, &seclen, err,
					    sizeof(err)))
			goto fail;
		if (write_file(output, sec, seclen, 0644, err, sizeof(err)))
			goto fail;
	} else {
		/* the size doesn't depend on the address: encode, plan, encode */
		if (sf_encode(funcs, nfuncs, &eo, &sec, &seclen, err, sizeof(err)))
			goto fail_msg;
		free(sec);
		sec = NULL;
		if (sf_inject_plan(in.buf, in.len, seclen, &eo.vaddr, err,
				   sizeof(err)))
			goto fail_msg;
		if (sf_encode(funcs, nfuncs, &eo, &sec, &seclen, err, sizeof(err)))
			goto fail_msg;
		if (sf_inject(in.buf, in.len, sec, seclen, eo.vaddr, &image,
			      &outlen, err, sizeof(err)))
			goto fail_msg;
		if (write_output(output ? output : path, !output, path, image,
				 outlen, err, sizeof(err)))
			goto fail;
	}
	if (stats)
		printf("%s: wrote %zu bytes of SFrame v%d (%.1f%% of .eh_frame)"
		       ", section at vaddr 0x%" PRIx64 "\n",
		       output ? output : path, seclen, eo.version,
		       st.eh_frame_bytes ? 100.0 * seclen / st.eh_frame_bytes : 0,
		       eo.vaddr);
	ret = 0;
	goto out;
fail_msg:
	{
		char tmp[sizeof(err)];

		snprintf(tmp, sizeof(tmp), "%.400s: %.600s", path, err);
		memcpy(err, tmp, sizeof(err));
	}
fail:
	fprintf(stderr, "sframe-gen: %s\n", err);
out:
	free(image);
	free(sec);
	sf_funcs_free(funcs, nfuncs);
	elfin_close(&in);
	return ret;
}
