// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-audit.c - glibc rtld-audit module that registers the SFrame
 * sections of shared objects with the kernel as the loader maps them, so
 * that the kernel can unwind user stacks through them.
 *
 * Usage:
 *	LD_AUDIT=/path/to/sframe-audit.so PROGRAM [ARGS...]
 *
 * The kernel registers the main program and its ELF interpreter itself at
 * exec (from PT_GNU_SFRAME); this module handles every other object the
 * loader maps (DT_NEEDED libraries, dlopen()): la_objopen() adds it with
 * prctl(PR_ADD_SFRAME, sframe_start, sframe_end, text_start, text_end) and
 * once dlclose() has unmapped it, la_activity(LA_ACT_CONSISTENT) removes it
 * again with prctl(PR_REMOVE_SFRAME, sframe_start).  At exit nothing is
 * removed: libc and ld.so run on after _dl_fini() has called la_objclose()
 * for every object.  la_version() adds the objects of the module's own
 * namespace (its copy of libc), which ld.so does not report.  The vDSO is
 * skipped.  Where the section comes from:
 *
 *  1. PT_GNU_SFRAME: the section as mapped with the object.
 *  2. Otherwise a sidecar file, $SFRAME_SIDECAR_DIR/<basename>.sframe if
 *     that variable is set, else <realpath of the object>.sframe: the raw
 *     section bytes, encoded as if the section were at vaddr 0 of the
 *     object.  It is copied into anonymous memory (near the object, so that
 *     v2's 32-bit offsets reach), its FDE start fields are relocated for
 *     where the copy and the object really are, and it is made read-only.
 *  3. Neither: the object is skipped (silently).
 *
 * Environment:
 *	SFRAME_AUDIT_DEBUG=1	log every add, remove and skip to stderr
 *	SFRAME_SIDECAR_DIR=DIR	take sidecars from DIR
 *
 * Errors never stop the program.  Each kind of error is reported once on
 * stderr as "sframe-audit: OBJECT: what: strerror(errno)" (with
 * SFRAME_AUDIT_DEBUG=1 every occurrence is); a kernel without
 * PR_ADD_SFRAME (EINVAL) is reported once and not asked again.
 *
 * Locking: ld.so calls la_objopen() and la_objclose() with its load lock
 * held (dlopen, dlclose and _dl_fini all take GL(dl_load_lock)), so they
 * never run concurrently: the static state below needs no lock of its own.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sframe.h"

#ifndef PR_ADD_SFRAME
#define PR_ADD_SFRAME		79
#define PR_REMOVE_SFRAME	80
#endif
#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME		0x6474e554
#endif

#define SIDECAR_MAX		(256u << 20)	/* bytes; more is not a sidecar */
#define MAX_PHNUM		4096

#define PFX			"sframe-audit: "

/* The tests also build one that takes program headers from the file. */
#ifdef SFRAME_AUDIT_FILE_PHDRS
static const bool memory_phdrs;
#else
static const bool memory_phdrs = true;
#endif

/* What went wrong; each kind (with its errno) is reported once. */
enum sf_err {
	E_NOSUPPORT,	/* kernel has no PR_ADD_SFRAME */
	E_PHDR,		/* cannot find the object's program headers */
	E_TEXT,		/* no or non-contiguous executable PT_LOAD */
	E_SECTION,	/* PT_GNU_SFRAME data is not SFrame we accept */
	E_SIDECAR,	/* sidecar cannot be read or is malformed */
	E_OVERFLOW,	/* relocated v2 start does not fit in s32 */
	E_NOMEM,
	E_ADD,		/* PR_ADD_SFRAME failed */
	E_REMOVE,	/* PR_REMOVE_SFRAME failed */
};

/* A registered object: what its removal must undo. */
struct reg {
	struct link_map *map;	/* NULL for the module's own namespace */
	char *name;		/* for messages: map is freed by dlclose() */
	uintptr_t sframe;	/* registered section start */
	uintptr_t text_start, text_end;
	void *copy;		/* sidecar copy, or NULL */
	size_t copy_len;
	bool closed;		/* la_objclose() seen, text maybe still mapped */
};

/* What la_objopen() learns about an object. */
struct obj {
	struct link_map *map;
	const char *name;
	uintptr_t bias;
	const ElfW(Phdr) *phdr;
	size_t phnum;
	ElfW(Phdr) *phbuf;	/* malloc'd copy when read from the file */
	uintptr_t text_start, text_end;
	uintptr_t top;		/* end of the highest PT_LOAD, page-rounded */
	bool is_main;		/* the main program (no file name) */
};

/* A checked SFrame header. */
struct sf_hdr {
	uint8_t version, flags;
	uint32_t num_fdes;
	size_t fde_size;
	size_t fdes;		/* offset of the FDE index */
};

static struct reg *regs;
static size_t nregs, regs_cap;
static bool debug, nosupport, added_once;
static const char *sidecar_dir;
static uintptr_t page_size = 4096;
static uintptr_t ldso_bias, vdso_bias;
static bool ldso_is_program, have_vdso;
static char interp[PATH_MAX];

static struct {
	enum sf_err kind;
	int err;
} reported[32];
static size_t nreported;

static uintptr_t page_down(uintptr_t a)
{
	return a & ~(page_size - 1);
}

static uintptr_t page_up(uintptr_t a)
{
	return (a + page_size - 1) & ~(page_size - 1);
}

/* stderr without stdio: no buffering shared with the program. */
static void vsay(const char *fmt, va_list ap)
{
	char buf[1024];
	int n;

	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, n) < 0)
		return;
}

static void dbg(const char *fmt, ...)
{
	va_list ap;

	if (!debug)
		return;
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

/* Has (kind, err) been reported already?  Marks it as reported if not. */
static bool seen(enum sf_err kind, int err)
{
	size_t i;

	for (i = 0; i < nreported; i++)
		if (reported[i].kind == kind && reported[i].err == err)
			return true;
	if (nreported == sizeof(reported) / sizeof(reported[0]))
		return true;	/* table full: quiet from now on */
	reported[nreported].kind = kind;
	reported[nreported].err = err;
	nreported++;
	return false;
}

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

/*
 * Report an error about object obj, with errno value err: once per
 * (kind, err), or every time with SFRAME_AUDIT_DEBUG=1.
 */
static void report(enum sf_err kind, int err, const char *obj,
		   const char *fmt, ...)
{
	char what[512];
	va_list ap;

	if (seen(kind, err) && !debug)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	say(PFX "%s: %s: %s", obj, what, strerror(err));
}

static const char *reg_name(const struct reg *r)
{
	return r->name ? r->name : "object";
}

static long sys_prctl(int op, uintptr_t a, uintptr_t b, uintptr_t c,
		      uintptr_t d)
{
	return syscall(SYS_prctl, op, a, b, c, d);
}

/*
 * PR_ADD_SFRAME said EINVAL before anything was ever registered: is that
 * the call, or a kernel without the interface (which says EINVAL to any
 * unknown prctl)?  One with it says ENOENT to removing an address that
 * was never registered.
 */
static bool kernel_lacks_prctl(void)
{
	static char probe;

	return sys_prctl(PR_REMOVE_SFRAME, (uintptr_t)&probe, 0, 0, 0) &&
	       errno == EINVAL;
}

/* The program's PT_INTERP, as ld.so names its own link_map. */
static void find_interp(void)
{
	const ElfW(Phdr) *ph = (const void *)getauxval(AT_PHDR);
	size_t i, n = getauxval(AT_PHNUM);
	uintptr_t bias = 0;
	bool have_bias = false;

	if (!ph)
		return;
	for (i = 0; i < n; i++) {
		if (ph[i].p_type == PT_PHDR) {
			bias = (uintptr_t)ph - ph[i].p_vaddr;
			have_bias = true;
		}
	}
	if (!have_bias)
		return;
	for (i = 0; i < n; i++)
		if (ph[i].p_type == PT_INTERP)
			snprintf(interp, sizeof(interp), "%s",
				 (const char *)(bias + ph[i].p_vaddr));
}

/* The vDSO's load bias, computed the way ld.so computes its l_addr. */
static void find_vdso(void)
{
	const ElfW(Ehdr) *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	const ElfW(Phdr) *ph;
	size_t i;

	if (!eh)
		return;
	ph = (const void *)((const char *)eh + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD) {
			vdso_bias = (uintptr_t)eh - ph[i].p_vaddr;
			have_vdso = true;
			return;
		}
	}
}

static void register_own_namespace(void);

unsigned int la_version(unsigned int version)
{
	const char *s = getenv("SFRAME_AUDIT_DEBUG");

	(void)version;
	debug = s && *s && strcmp(s, "0");
	sidecar_dir = getenv("SFRAME_SIDECAR_DIR");
	if (sidecar_dir && !*sidecar_dir)
		sidecar_dir = NULL;
	if (getauxval(AT_PAGESZ))
		page_size = getauxval(AT_PAGESZ);
	/*
	 * AT_BASE is ld.so's base, 0 if ld.so was run as the program
	 * ("ld.so PROG"): then the kernel registered ld.so, not PROG, and
	 * only _r_debug knows where ld.so is.
	 */
	ldso_bias = getauxval(AT_BASE);
	if (!ldso_bias) {
		ldso_bias = _r_debug.r_ldbase;
		ldso_is_program = ldso_bias != 0;
	}
	find_interp();
	find_vdso();
	register_own_namespace();
	return LAV_CURRENT;
}

/*
 * Check an SFrame header and that every count and offset in it stays
 * within len bytes.  0, or -1 with the reason in why.
 */
static int sf_check(const uint8_t *b, size_t len, struct sf_hdr *h,
		    char *why, size_t whylen)
{
	uint32_t fre_len, fdes_off, fres_off;
	uint64_t hlen, fdes_end, fres_end;
	uint16_t magic;
	uint8_t allowed;

	if (len < SFRAME_HDR_SIZE) {
		snprintf(why, whylen, "%zu bytes, shorter than the header",
			 len);
		return -1;
	}
	memcpy(&magic, b, 2);	/* little-endian, like the host */
	if (magic != SFRAME_MAGIC) {
		snprintf(why, whylen, "bad magic 0x%04x", magic);
		return -1;
	}
	h->version = b[2];
	h->flags = b[3];
	if (h->version != SFRAME_VERSION_2 && h->version != SFRAME_VERSION_3) {
		snprintf(why, whylen, "version %u not supported (2 or 3)",
			 h->version);
		return -1;
	}
	allowed = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL;
	if (h->version == SFRAME_VERSION_2)
		allowed |= SFRAME_F_FRAME_POINTER;
	if (h->flags & ~allowed) {
		snprintf(why, whylen, "unknown flags 0x%02x", h->flags);
		return -1;
	}
	if (b[4] != SFRAME_ABI_AMD64_LE) {
		snprintf(why, whylen, "abi %u is not amd64 (3)", b[4]);
		return -1;
	}
	memcpy(&h->num_fdes, b + 8, 4);
	memcpy(&fre_len, b + 16, 4);
	memcpy(&fdes_off, b + 20, 4);
	memcpy(&fres_off, b + 24, 4);
	h->fde_size = h->version == SFRAME_VERSION_2 ? SFRAME_V2_FDE_SIZE :
						       SFRAME_V3_FDE_SIZE;
	hlen = SFRAME_HDR_SIZE + (uint64_t)b[7];
	fdes_end = hlen + fdes_off + (uint64_t)h->num_fdes * h->fde_size;
	fres_end = hlen + fres_off + (uint64_t)fre_len;
	if (fdes_end > len) {
		snprintf(why, whylen,
			 "num_fdes %u: FDE index ends at %#llx, past the %#zx bytes",
			 h->num_fdes, (unsigned long long)fdes_end, len);
		return -1;
	}
	if (fres_end > len) {
		snprintf(why, whylen,
			 "FRE sub-section ends at %#llx, past the %#zx bytes",
			 (unsigned long long)fres_end, len);
		return -1;
	}
	h->fdes = hlen + fdes_off;
	return 0;
}

static const ElfW(Phdr) *find_phdr(const struct obj *o, uint32_t type)
{
	size_t i;

	for (i = 0; i < o->phnum; i++)
		if (o->phdr[i].p_type == type)
			return &o->phdr[i];
	return NULL;
}

/* Copy len bytes at address src of this process; -EFAULT if unmapped. */
static int read_self(void *dst, uintptr_t src, size_t len)
{
	struct iovec local = { .iov_base = dst, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)src, .iov_len = len };

	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) !=
	    (ssize_t)len)
		return -EFAULT;
	return 0;
}

static bool ehdr_ok(const ElfW(Ehdr) *eh)
{
	return !memcmp(eh->e_ident, ELFMAG, SELFMAG) &&
	       eh->e_ident[EI_CLASS] == (sizeof(void *) == 8 ? ELFCLASS64 :
							       ELFCLASS32) &&
	       eh->e_phentsize == sizeof(ElfW(Phdr)) && eh->e_phnum &&
	       eh->e_phnum <= MAX_PHNUM;
}

/* Are these the headers of what is mapped: PT_DYNAMIC + bias == l_ld? */
static int phdrs_match(const struct obj *o)
{
	const ElfW(Phdr) *dyn = find_phdr(o, PT_DYNAMIC);

	if (!o->map->l_ld)
		return 0;
	if (!dyn || o->bias + dyn->p_vaddr != (uintptr_t)o->map->l_ld)
		return -ESTALE;
	return 0;
}

static int phdrs_alloc(struct obj *o, size_t phnum)
{
	o->phbuf = malloc(phnum * sizeof(ElfW(Phdr)));
	if (!o->phbuf)
		return -ENOMEM;
	o->phdr = o->phbuf;
	o->phnum = phnum;
	return 0;
}

/*
 * Program headers from memory: ld-produced objects map their ELF header
 * at l_addr (first PT_LOAD at vaddr 0, file offset 0).  Read with
 * process_vm_readv() so an object laid out otherwise gives EFAULT, not
 * SIGSEGV.  0 or -errno.
 */
static int phdr_from_memory(struct obj *o)
{
	const ElfW(Phdr) *p;
	ElfW(Ehdr) eh;
	size_t i;
	int err;

	err = read_self(&eh, o->bias, sizeof(eh));
	if (err)
		return err;
	if (!ehdr_ok(&eh))
		return -ENOEXEC;
	err = phdrs_alloc(o, eh.e_phnum);
	if (err)
		return err;
	err = read_self(o->phbuf, o->bias + eh.e_phoff,
			eh.e_phnum * sizeof(ElfW(Phdr)));
	if (err)
		return err;
	for (i = 0; i < o->phnum; i++) {
		p = &o->phdr[i];
		if (p->p_type == PT_LOAD && !p->p_offset && !p->p_vaddr &&
		    eh.e_phoff + eh.e_phnum * sizeof(*p) <= p->p_filesz)
			return phdrs_match(o);
	}
	return -ENOEXEC;	/* the header is not where we read it */
}

/*
 * Program headers from the object's file; it must be the one that is
 * mapped (phdrs_match()).  0 or -errno.
 */
static int phdr_from_file(struct obj *o)
{
	ElfW(Ehdr) eh;
	size_t len;
	int fd, err;

	fd = open(o->name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = -ENOEXEC;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || !ehdr_ok(&eh))
		goto out;
	err = phdrs_alloc(o, eh.e_phnum);
	if (err)
		goto out;
	len = eh.e_phnum * sizeof(ElfW(Phdr));
	err = -ENOEXEC;
	if (pread(fd, o->phbuf, len, eh.e_phoff) != (ssize_t)len)
		goto out;
	err = phdrs_match(o);
out:
	close(fd);
	return err;
}

static void phdrs_drop(struct obj *o)
{
	free(o->phbuf);
	o->phbuf = NULL;
	o->phdr = NULL;
	o->phnum = 0;
}

/*
 * Find the object's program headers.  The public link_map does not carry
 * them, and dl_iterate_phdr() is no help: called from an audit module it
 * walks only the audit module's own namespace.  So: memory, else the
 * file.  0, or -1 (reported).
 */
static int get_phdrs(struct obj *o)
{
	int err;

	if (memory_phdrs) {
		err = phdr_from_memory(o);
		if (!err)
			return 0;
		dbg(PFX "%s: program headers not in memory at %#lx: %s",
		    o->name, (unsigned long)o->bias, strerror(-err));
		phdrs_drop(o);
	}
	err = phdr_from_file(o);
	if (!err) {
		dbg(PFX "%s: program headers from the file", o->name);
		return 0;
	}
	phdrs_drop(o);
	report(E_PHDR, -err, o->name, "cannot read its program headers");
	return -1;
}

/*
 * The executable text as mapped: the PF_X PT_LOADs, page-rounded.  Also
 * notes the end of the highest PT_LOAD.  0, or -1 (reported).
 */
static int find_text(struct obj *o)
{
	uintptr_t s, e, prev_s = 0, prev_e = 0;
	bool any = false;
	size_t i;

	for (i = 0; i < o->phnum; i++) {
		const ElfW(Phdr) *p = &o->phdr[i];

		if (p->p_type != PT_LOAD)
			continue;
		s = page_down(o->bias + p->p_vaddr);
		e = page_up(o->bias + p->p_vaddr + p->p_memsz);
		if (e > o->top)
			o->top = e;
		if (!(p->p_flags & PF_X))
			continue;
		if (!any) {
			o->text_start = s;
			o->text_end = e;
			any = true;
		} else if (s <= o->text_end && e >= o->text_start) {
			if (s < o->text_start)
				o->text_start = s;
			if (e > o->text_end)
				o->text_end = e;
		} else {
			prev_s = o->text_start;
			prev_e = o->text_end;
			report(E_TEXT, EINVAL, o->name,
			       "executable segments not contiguous (%#lx-%#lx, %#lx-%#lx)",
			       (unsigned long)prev_s, (unsigned long)prev_e,
			       (unsigned long)s, (unsigned long)e);
			return -1;
		}
	}
	if (!any) {
		report(E_TEXT, ENOEXEC, o->name, "no executable PT_LOAD");
		return -1;
	}
	return 0;
}

/* Does [vaddr, vaddr + len) lie in one readable PT_LOAD of the object? */
static bool in_load(const struct obj *o, uint64_t vaddr, uint64_t len)
{
	size_t i;

	for (i = 0; i < o->phnum; i++) {
		const ElfW(Phdr) *p = &o->phdr[i];

		if (p->p_type == PT_LOAD && (p->p_flags & PF_R) &&
		    vaddr >= p->p_vaddr && vaddr + len >= vaddr &&
		    vaddr + len <= p->p_vaddr + p->p_memsz)
			return true;
	}
	return false;
}

static int reserve(void)
{
	struct reg *p;
	size_t n;

	if (nregs < regs_cap)
		return 0;
	n = regs_cap ? 2 * regs_cap : 16;
	p = realloc(regs, n * sizeof(*p));
	if (!p)
		return -1;
	regs = p;
	regs_cap = n;
	return 0;
}

/*
 * prctl(PR_ADD_SFRAME) for [start, start + len) and the object's text;
 * on success remember it (with the sidecar copy, if any) for
 * la_objclose(), else unmap the copy.
 */
static void add(struct obj *o, uintptr_t start, size_t len, void *copy,
		size_t copy_len, const char *src)
{
	struct reg *r;
	int err;

	if (reserve()) {
		report(E_NOMEM, ENOMEM, o->name,
		       "no memory for the table of registered objects");
		goto undo;
	}
	if (sys_prctl(PR_ADD_SFRAME, start, start + len, o->text_start,
		      o->text_end)) {
		err = errno;
		if (err == EINVAL && !added_once && kernel_lacks_prctl()) {
			nosupport = true;
			report(E_NOSUPPORT, err, o->name,
			       "kernel has no PR_ADD_SFRAME support, not registering SFrame sections");
		} else {
			report(E_ADD, err, o->name,
			       "PR_ADD_SFRAME sframe=%#lx-%#lx text=%#lx-%#lx (%s)",
			       (unsigned long)start,
			       (unsigned long)(start + len),
			       (unsigned long)o->text_start,
			       (unsigned long)o->text_end, src);
		}
		goto undo;
	}
	added_once = true;
	r = &regs[nregs++];
	r->map = o->map;
	r->name = strdup(o->name);	/* NULL: messages say "object" */
	r->sframe = start;
	r->text_start = o->text_start;
	r->text_end = o->text_end;
	r->copy = copy;
	r->copy_len = copy_len;
	r->closed = false;
	dbg(PFX "add %s sframe=%#lx-%#lx text=%#lx-%#lx (%s)", o->name,
	    (unsigned long)start, (unsigned long)(start + len),
	    (unsigned long)o->text_start, (unsigned long)o->text_end, src);
	return;
undo:
	if (copy)
		munmap(copy, copy_len);
}

/*
 * The object's own PT_GNU_SFRAME, as mapped.  0 if it is usable (and then
 * added), else -1 with the reason in why.
 */
static int add_mapped(struct obj *o, const ElfW(Phdr) *sf, char *why,
		      size_t whylen)
{
	struct sf_hdr h;

	if (!in_load(o, sf->p_vaddr, sf->p_memsz)) {
		snprintf(why, whylen, "PT_GNU_SFRAME %#lx+%#lx not in a readable PT_LOAD",
			 (unsigned long)sf->p_vaddr,
			 (unsigned long)sf->p_memsz);
		return -1;
	}
	if (sf_check((const uint8_t *)(o->bias + sf->p_vaddr), sf->p_memsz,
		     &h, why, whylen))
		return -1;
	if (find_text(o) == 0)
		add(o, o->bias + sf->p_vaddr, sf->p_memsz, NULL, 0,
		    "PT_GNU_SFRAME");
	return 0;
}

static int sidecar_path(const struct obj *o, char *buf, size_t len)
{
	char real[PATH_MAX];
	const char *base;
	int n;

	if (sidecar_dir) {
		base = strrchr(o->name, '/');
		base = base ? base + 1 : o->name;
		n = snprintf(buf, len, "%s/%s.sframe", sidecar_dir, base);
	} else {
		if (!realpath(o->name, real))
			return -errno;
		n = snprintf(buf, len, "%s.sframe", real);
	}
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done, done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;	/* shrank under us */
		done += n;
	}
	return 0;
}

/*
 * Rewrite every FDE start of a sidecar copied to sec (its real address S)
 * from "vaddr 0 of the object" to the real addresses, bias B:
 *	PCREL:	func_vaddr = field_off + value, value' = B + func_vaddr - (S + field_off)
 *	else:	func_vaddr = value,              value' = B + func_vaddr - S
 * Every function must lie in the object's text.  0, or -1 (reported).
 */
static int sidecar_relocate(struct obj *o, const char *path, uint8_t *sec,
			    const struct sf_hdr *h)
{
	bool pcrel = h->flags & SFRAME_F_FDE_FUNC_START_PCREL;
	bool v2 = h->version == SFRAME_VERSION_2;
	uint64_t func, addr, S = (uintptr_t)sec;
	size_t off, i;
	uint32_t size;
	int64_t val;
	int32_t v32;

	for (i = 0; i < h->num_fdes; i++) {
		off = h->fdes + i * h->fde_size;
		if (v2) {
			memcpy(&v32, sec + off, 4);
			val = v32;
		} else {
			memcpy(&val, sec + off, 8);
		}
		memcpy(&size, sec + off + (v2 ? 4 : 8), 4);
		func = (pcrel ? off : 0) + (uint64_t)val;
		addr = o->bias + func;
		if (addr < o->text_start || addr + size > o->text_end ||
		    addr + size < addr) {
			report(E_SIDECAR, EINVAL, o->name,
			       "sidecar %s: FDE %zu: function %#llx+%#x outside the text %#lx-%#lx",
			       path, i, (unsigned long long)func, size,
			       (unsigned long)(o->text_start - o->bias),
			       (unsigned long)(o->text_end - o->bias));
			return -1;
		}
		val = (int64_t)(addr - S - (pcrel ? off : 0));
		if (!v2) {
			memcpy(sec + off, &val, 8);
			continue;
		}
		if (val < INT32_MIN || val > INT32_MAX) {
			report(E_OVERFLOW, ERANGE, o->name,
			       "sidecar %s: FDE %zu: start does not fit v2's 32 bits with the copy at %#lx",
			       path, i, (unsigned long)S);
			return -1;
		}
		v32 = val;
		memcpy(sec + off, &v32, 4);
	}
	return 0;
}

/*
 * Register the sidecar at path, if there is one.  1: there is none;
 * 0: handled (added, or an error reported).
 */
static int add_sidecar(struct obj *o, const char *path)
{
	size_t len, map_len;
	char why[160];
	struct sf_hdr h;
	struct stat st;
	void *sec;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 1;
		report(E_SIDECAR, errno, o->name, "sidecar %s", path);
		return 0;
	}
	if (find_text(o))
		goto out_close;
	if (fstat(fd, &st)) {
		report(E_SIDECAR, errno, o->name, "sidecar %s: fstat", path);
		goto out_close;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < SFRAME_HDR_SIZE ||
	    st.st_size > SIDECAR_MAX) {
		report(E_SIDECAR, EINVAL, o->name,
		       "sidecar %s: %s (%lld bytes)", path,
		       S_ISREG(st.st_mode) ? "bad size" : "not a regular file",
		       (long long)st.st_size);
		goto out_close;
	}
	len = st.st_size;
	map_len = page_up(len);
	/* Near the object, for v2's s32 offsets: a hint, never MAP_FIXED. */
	sec = mmap((void *)o->top, map_len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (sec == MAP_FAILED) {
		report(E_NOMEM, errno, o->name, "sidecar %s: mmap %zu bytes",
		       path, map_len);
		goto out_close;
	}
	err = read_full(fd, sec, len);
	if (err) {
		report(E_SIDECAR, -err, o->name, "sidecar %s: read", path);
		goto out_unmap;
	}
	if (sf_check(sec, len, &h, why, sizeof(why))) {
		report(E_SIDECAR, EINVAL, o->name, "sidecar %s: %s", path, why);
		goto out_unmap;
	}
	if (sidecar_relocate(o, path, sec, &h))
		goto out_unmap;
	if (mprotect(sec, map_len, PROT_READ)) {
		report(E_NOMEM, errno, o->name, "sidecar %s: mprotect", path);
		goto out_unmap;
	}
	close(fd);
	add(o, (uintptr_t)sec, len, sec, map_len, path);
	return 0;

out_unmap:
	munmap(sec, map_len);
out_close:
	close(fd);
	return 0;
}

static void register_object(struct obj *o)
{
	const ElfW(Phdr) *sf = find_phdr(o, PT_GNU_SFRAME);
	char path[PATH_MAX], why[160];
	int err;

	if (sf) {
		if (add_mapped(o, sf, why, sizeof(why)) == 0)
			return;
		dbg(PFX "%s: PT_GNU_SFRAME not usable: %s", o->name, why);
	}
	err = o->is_main ? -ENOENT : sidecar_path(o, path, sizeof(path));
	if (err && err != -ENOENT) {
		report(E_SIDECAR, -err, o->name, "sidecar path");
		return;
	}
	if (!err && add_sidecar(o, path) == 0)
		return;
	if (sf)
		report(E_SECTION, EINVAL, o->name,
		       "PT_GNU_SFRAME: %s, and no sidecar%s%s", why,
		       err ? "" : " ", err ? "" : path);
	else
		dbg(PFX "skip %s: no PT_GNU_SFRAME, no sidecar %s", o->name,
		    err ? "(no realpath)" : path);
}

/*
 * Objects this module leaves alone: the main program and the interpreter
 * (the kernel registered them at exec) and the vDSO (no file).
 */
static const char *skip_reason(const struct obj *o)
{
	if (o->is_main && !ldso_is_program)
		return "main program";
	if (o->bias == ldso_bias)
		return "interpreter";
	if (*interp && !strcmp(o->name, interp))
		return "interpreter (PT_INTERP)";
	if (have_vdso && o->bias == vdso_bias)
		return "vDSO";
	if (!*o->name && !o->is_main)
		return "no file name";
	return NULL;
}

static int own_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct obj o = {
		.name = info->dlpi_name ? info->dlpi_name : "",
		.bias = info->dlpi_addr,
		.phdr = info->dlpi_phdr,
		.phnum = info->dlpi_phnum,
	};
	const char *why;

	(void)size;
	(void)data;
	if (nosupport)
		return 1;
	why = skip_reason(&o);
	if (why)
		dbg(PFX "skip %s: %s", *o.name ? o.name : "\"\"", why);
	else
		register_object(&o);
	return 0;
}

/*
 * ld.so calls la_objopen() for the objects of the program's namespaces,
 * not for those of the audit module's own: this module and the copy of
 * libc it runs on.  Its destructors run in that libc at exit, as do the
 * callbacks here.  Called from here, dl_iterate_phdr() walks exactly that
 * namespace.  These stay registered until exit.
 */
static void register_own_namespace(void)
{
	dl_iterate_phdr(own_object, NULL);
}

unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	struct obj o = {
		.map = map,
		.name = map->l_name ? map->l_name : "",
		.bias = map->l_addr,
	};
	const char *why;

	*cookie = (uintptr_t)map;
	if (nosupport)
		return 0;
	o.is_main = lmid == LM_ID_BASE && !*o.name;
	why = skip_reason(&o);
	if (why) {
		dbg(PFX "skip %s: %s", *o.name ? o.name : "\"\"", why);
		return 0;
	}
	if (o.is_main) {
		/* ld.so PROG: ld.so has made AT_PHDR PROG's */
		o.name = "main program";
		o.phdr = (const void *)getauxval(AT_PHDR);
		o.phnum = getauxval(AT_PHNUM);
	} else if (get_phdrs(&o)) {
		return 0;
	}
	register_object(&o);
	free(o.phbuf);
	return 0;
}

/*
 * la_objclose() comes from dlclose(), before the object is unmapped, and
 * from _dl_fini() at exit, after which __run_exit_handlers(), ld.so and
 * other threads still run code of libc and of the objects it closed.
 * Removing the section here would leave the kernel to unwind that code
 * with frame pointers, which skips the caller of every function sampled
 * before its frame is set up.  So only mark the object closed:
 * la_activity(LA_ACT_CONSISTENT), which dlclose() calls once it has
 * unmapped what it unloads, removes the sections whose text is gone.
 */
unsigned int la_objclose(uintptr_t *cookie)
{
	struct link_map *map = (struct link_map *)*cookie;
	size_t i;

	for (i = 0; i < nregs; i++) {
		if (regs[i].map == map && !regs[i].closed) {
			regs[i].closed = true;
			dbg(PFX "close %s sframe=%#lx", reg_name(&regs[i]),
			    (unsigned long)regs[i].sframe);
			break;
		}
	}
	return 0;
}

/* Is any of r's text no longer mapped?  msync() says ENOMEM then. */
static bool text_gone(const struct reg *r)
{
	return msync((void *)r->text_start, r->text_end - r->text_start,
		     MS_ASYNC) && errno == ENOMEM;
}

/*
 * Remove a closed object whose text is gone.  The kernel drops a section
 * with its text, so ENOENT is the usual answer; 0 comes from a kernel (or
 * the test stub) that does not.  On any other error the kernel may still
 * read the sidecar copy: it stays mapped.
 */
static void remove_reg(struct reg *r)
{
	int err = 0;

	if (sys_prctl(PR_REMOVE_SFRAME, r->sframe, 0, 0, 0))
		err = errno;
	if (err && err != ENOENT) {
		report(E_REMOVE, err, reg_name(r), "PR_REMOVE_SFRAME sframe=%#lx",
		       (unsigned long)r->sframe);
	} else {
		dbg(PFX "remove %s sframe=%#lx%s", reg_name(r),
		    (unsigned long)r->sframe,
		    err ? " (gone with its text)" : "");
		if (r->copy)
			munmap(r->copy, r->copy_len);
	}
	free(r->name);
}

void la_activity(uintptr_t *cookie, unsigned int flag)
{
	size_t i = 0;

	(void)cookie;
	if (flag != LA_ACT_CONSISTENT)
		return;
	while (i < nregs) {
		if (regs[i].closed && text_gone(&regs[i])) {
			remove_reg(&regs[i]);
			regs[i] = regs[--nregs];
		} else {
			i++;
		}
	}
}
