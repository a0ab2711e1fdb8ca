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
 * loader maps (DT_NEEDED libraries, dlopen(), dlmopen()): la_objopen()
 * adds it with prctl(PR_ADD_SFRAME, sframe_start, sframe_end, text_start,
 * text_end), and once the object is unmapped its entry is reaped: the
 * kernel dropped the section with the text, PR_REMOVE_SFRAME says ENOENT,
 * and a sidecar mapping is unmapped.  At exit nothing is removed: libc and
 * ld.so run on after _dl_fini() has called la_objclose() for every
 * object.  la_version() adds the objects of the module's own namespace
 * (its copy of libc), which ld.so does not report.  The vDSO is skipped.
 * Where the section comes from:
 *
 *  1. PT_GNU_SFRAME: the section as mapped with the object.
 *  2. Otherwise a sidecar file from sframe-gen,
 *     $SFRAME_SIDECAR_DIR/<basename>.sframe if that variable is set, else
 *     <realpath of the object>.sframe: a header with the identity of the
 *     object it was made from (build ID, else a hash of .eh_frame and the
 *     layout: sframe-ident.c), then the section, encoded as if it were at
 *     vaddr 0 of the object.  Used only for that object.  It is mapped
 *     privately (near the object, so that v2's 32-bit offsets reach), its
 *     FDE start fields are relocated for where the mapping and the object
 *     are (only the index pages become private copies), and it is made
 *     read-only.
 *  3. Neither: the object is skipped.
 *
 * Environment (ignored in secure-execution mode, AT_SECURE):
 *	SFRAME_SIDECAR_DIR=DIR	take sidecars from DIR
 *	SFRAME_AUDIT_WARN=1	report each kind of problem once on stderr
 *	SFRAME_AUDIT_DEBUG=1	report every problem, and log every add,
 *				remove and skip
 *
 * It lives inside programs that have nothing to do with profiling, during
 * the loader's own callbacks, so:
 *  - it never writes to stderr unless asked to (the output of programs
 *    run under it is theirs);
 *  - errors never stop the program;
 *  - cancellation is disabled in each callback: open(), pread(), msync()
 *    are cancellation points, and a thread cancelled inside dlopen()
 *    would unwind with the loader's lock held and hang every later
 *    dlopen();
 *  - a sidecar is looked at (stat) before it is opened, and opened
 *    non-blocking, so that a FIFO or a device in its place can't block;
 *  - the program headers come from the loader (dlinfo(RTLD_DI_PHDR)), the
 *    file if not: no unusual system call for a sandbox to kill it for.
 *
 * Memory: the callbacks allocate nothing with malloc(): the module runs
 * on a libc of its own, whose malloc would give every thread that
 * dlopen()s an arena and a cache no one frees at thread exit.  The table
 * is mmap()ed chunks, names are fixed-size copies.
 *
 * Concurrency: ld.so calls la_objopen() and la_activity() with its load
 * lock held (dlopen, dlmopen, dlclose), so they never run concurrently,
 * except at exit: _dl_fini() calls la_objclose() for every object and
 * then la_activity(LA_ACT_CONSISTENT) without that lock, while other
 * threads may still dlopen().  So every slot of the table has a state
 * word (state and generation) changed only by compare-and-swap: a slot
 * is taken (FREE -> BUSY) before it is filled, claimed (LIVE or CLOSED
 * -> BUSY) before it is removed, and la_objclose() only marks it
 * (LIVE -> CLOSED).  Chunks are never moved or freed.  A wrong mark is
 * harmless: an entry is reaped only once its text is unmapped (or mapped
 * by something else).
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
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
#define MAX_PHNUM		256	/* from the file: more is not a library */

#define PFX			"sframe-audit: "
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define EXPORT			__attribute__((visibility("default")))

/* The tests also build one that takes program headers from the file. */
#ifdef SFRAME_AUDIT_FILE_PHDRS
static const bool loader_phdrs;
#else
static const bool loader_phdrs = true;
#endif

/* What went wrong; each kind (with its errno) is reported once. */
enum sf_err {
	E_NOSUPPORT = 1, /* kernel has no PR_ADD_SFRAME (or may not call it) */
	E_PHDR,		/* cannot find the object's program headers */
	E_TEXT,		/* no or non-contiguous executable PT_LOAD */
	E_SECTION,	/* PT_GNU_SFRAME data is not SFrame we accept */
	E_SIDECAR,	/* sidecar cannot be read or is malformed */
	E_MISMATCH,	/* sidecar of another object */
	E_OVERFLOW,	/* relocated v2 start does not fit in s32 */
	E_NOMEM,
	E_ADD,		/* PR_ADD_SFRAME failed */
	E_REMOVE,	/* PR_REMOVE_SFRAME failed */
};

/*
 * A slot's state word: the state in the low two bits, above them a
 * generation that changes each time the slot is taken, so that a
 * compare-and-swap from a state seen earlier fails if the slot has been
 * emptied and refilled since (ABA).  Only the owner of a BUSY slot
 * writes its other fields.
 */
enum { SLOT_FREE, SLOT_LIVE, SLOT_CLOSED, SLOT_BUSY };
#define SLOT_STATE(sw)		((sw) & 3u)
#define SLOT_AS(sw, st)		(((sw) & ~3u) | (st))

/* A registered object: what its removal must undo. */
struct reg {
	unsigned int sw;	/* state word: read and changed atomically */
	struct link_map *map;	/* atomic too; NULL: the module's namespace */
	uintptr_t sframe;	/* registered section start */
	uintptr_t text_start, text_end;
	uintptr_t lo, hi;	/* all the object's PT_LOADs, page-rounded */
	dev_t dev;		/* the object's file, 0 if unknown */
	ino_t ino;
	void *copy;		/* sidecar mapping, or NULL */
	size_t copy_len;
	char name[128];		/* for messages (truncated) */
};

/* The table: chunks appended under the load lock, never freed. */
#define CHUNK_SLOTS	63
struct chunk {
	struct chunk *next;
	struct reg slot[CHUNK_SLOTS];
};

#define for_each_slot(c, r, i)						\
	for (c = __atomic_load_n(&chunks, __ATOMIC_ACQUIRE); c;		\
	     c = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE))		\
		for (i = 0, r = c->slot; i < CHUNK_SLOTS; i++, r++)

/* What la_objopen() learns about an object. */
struct obj {
	struct link_map *map;
	const char *name;
	uintptr_t bias;
	const ElfW(Phdr) *phdr;
	size_t phnum;
	bool phdr_file;		/* phdr is file_phdrs[] */
	uintptr_t text_start, text_end;
	uintptr_t lo, top;	/* all its PT_LOADs, page-rounded */
	bool is_main;		/* the main program (no file name) */
};

static struct chunk *chunks;
static int verbosity;		/* 0 quiet, 1 SFRAME_AUDIT_WARN, 2 _DEBUG */
static bool nosupport, added_once;
static const char *sidecar_dir;
static uintptr_t page_size = 4096;
static uintptr_t ldso_bias, vdso_bias;
static bool ldso_is_program, have_vdso;
static char interp[PATH_MAX];

static struct {
	enum sf_err kind;
	int err;
} reported[32];
static unsigned int nreported;

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

	if (verbosity < 2)
		return;
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

/*
 * Has (kind, err) been reported already?  Marks it as reported if not.
 * Two threads may get here at once at exit (see la_activity()): the
 * index is taken atomically, so the table can't overflow; at worst a
 * message comes twice.
 */
static bool seen(enum sf_err kind, int err)
{
	unsigned int i, n = __atomic_load_n(&nreported, __ATOMIC_ACQUIRE);

	for (i = 0; i < n && i < ARRAY_SIZE(reported); i++)
		if (reported[i].kind == kind && reported[i].err == err)
			return true;
	i = __atomic_fetch_add(&nreported, 1, __ATOMIC_ACQ_REL);
	if (i >= ARRAY_SIZE(reported))
		return true;	/* table full: quiet from now on */
	reported[i].kind = kind;
	reported[i].err = err;
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
 * Report an error about object obj, with errno value err (0: none, the
 * message says it all): nothing by
 * default, once per (kind, err) with SFRAME_AUDIT_WARN=1, every time with
 * SFRAME_AUDIT_DEBUG=1.
 */
static void report(enum sf_err kind, int err, const char *obj,
		   const char *fmt, ...)
{
	char what[512];
	va_list ap;

	if (!verbosity || (seen(kind, err) && verbosity < 2))
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (err)
		say(PFX "%s: %s: %s", obj, what, strerror(err));
	else
		say(PFX "%s: %s", obj, what);
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

/* An environment switch: set and neither empty nor "0". */
static bool env_on(const char *name)
{
	const char *s = secure_getenv(name);

	return s && *s && strcmp(s, "0");
}

EXPORT unsigned int la_version(unsigned int version)
{
	verbosity = env_on("SFRAME_AUDIT_DEBUG") ? 2 :
		    env_on("SFRAME_AUDIT_WARN") ? 1 : 0;
	sidecar_dir = secure_getenv("SFRAME_SIDECAR_DIR");
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
	/* the callbacks used here are in every version */
	return version < LAV_CURRENT ? version : LAV_CURRENT;
}

static const ElfW(Phdr) *find_phdr(const struct obj *o, uint32_t type)
{
	size_t i;

	for (i = 0; i < o->phnum; i++)
		if (o->phdr[i].p_type == type)
			return &o->phdr[i];
	return NULL;
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

/*
 * Program headers read from a file go here: la_objopen() runs under the
 * loader's lock, and the callbacks allocate nothing (see the top).
 */
static ElfW(Phdr) file_phdrs[MAX_PHNUM];

static void phdrs_use_file(struct obj *o, size_t phnum)
{
	o->phdr = file_phdrs;
	o->phnum = phnum;
	o->phdr_file = true;
}

/*
 * Program headers from the loader, which has them (glibc 2.36's
 * RTLD_DI_PHDR).  0 or -errno.
 */
static int phdr_from_loader(struct obj *o)
{
#if __GLIBC_PREREQ(2, 36)	/* RTLD_DI_PHDR */
	const ElfW(Phdr) *ph;
	int n;

	n = dlinfo(o->map, RTLD_DI_PHDR, &ph);
	if (n <= 0 || !ph)
		return -ENOENT;
	o->phdr = ph;
	o->phnum = n;
	return phdrs_match(o);
#else
	(void)o;
	return -ENOSYS;
#endif
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

	fd = open(o->name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	err = -ENOEXEC;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || !ehdr_ok(&eh))
		goto out;
	phdrs_use_file(o, eh.e_phnum);
	len = eh.e_phnum * sizeof(ElfW(Phdr));
	if (pread(fd, file_phdrs, len, eh.e_phoff) != (ssize_t)len)
		goto out;
	err = phdrs_match(o);
out:
	close(fd);
	return err;
}

static void phdrs_drop(struct obj *o)
{
	o->phdr_file = false;
	o->phdr = NULL;
	o->phnum = 0;
}

/*
 * Find the object's program headers.  The public link_map does not carry
 * them, and dl_iterate_phdr() is no help: called from an audit module it
 * walks only the audit module's own namespace.  So: the loader's
 * dlinfo(), else the file.  0, or -1 (reported).
 */
static int get_phdrs(struct obj *o)
{
	int err;

	if (loader_phdrs) {
		err = phdr_from_loader(o);
		if (!err)
			return 0;
		dbg(PFX "%s: no program headers from dlinfo(): %s", o->name,
		    strerror(-err));
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
 * notes where all the PT_LOADs are.  0, or -1 (reported).
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
		if (!o->lo || s < o->lo)
			o->lo = s;
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
			report(E_TEXT, 0, o->name,
			       "executable segments not contiguous (%#lx-%#lx, %#lx-%#lx)",
			       (unsigned long)prev_s, (unsigned long)prev_e,
			       (unsigned long)s, (unsigned long)e);
			return -1;
		}
	}
	if (!any) {
		report(E_TEXT, 0, o->name, "no executable PT_LOAD");
		return -1;
	}
	return 0;
}

/* Where all the object's PT_LOADs are, page-rounded: [o->lo, o->top). */
static void object_range(struct obj *o)
{
	size_t i;

	for (i = 0; i < o->phnum; i++) {
		const ElfW(Phdr) *p = &o->phdr[i];
		uintptr_t s = page_down(o->bias + p->p_vaddr);
		uintptr_t e = page_up(o->bias + p->p_vaddr + p->p_memsz);

		if (p->p_type != PT_LOAD)
			continue;
		if (!o->lo || s < o->lo)
			o->lo = s;
		if (e > o->top)
			o->top = e;
	}
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

/*
 * Take a free slot of the table (BUSY, ours), or NULL if there is no
 * memory.  Chunks come from mmap(), not malloc(): the module runs on a
 * libc of its own, whose malloc would give every thread that dlopen()s
 * an arena and a cache that no one frees at thread exit.
 */
static struct reg *slot_get(void)
{
	struct chunk *c, *last = NULL, *n;
	struct reg *r;
	size_t i;

	for_each_slot(c, r, i) {
		unsigned int sw = __atomic_load_n(&r->sw, __ATOMIC_ACQUIRE);

		last = c;
		if (SLOT_STATE(sw) == SLOT_FREE &&
		    __atomic_compare_exchange_n(&r->sw, &sw,
						SLOT_AS(sw + 4, SLOT_BUSY), false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			return r;
	}
	n = mmap(NULL, sizeof(*n), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (n == MAP_FAILED)
		return NULL;
	n->slot[0].sw = SLOT_BUSY;
	/* published whole: la_objclose() may walk it at once */
	__atomic_store_n(last ? &last->next : &chunks, n, __ATOMIC_RELEASE);
	return n->slot;
}

static void slot_put(struct reg *r, unsigned int state)
{
	unsigned int sw = __atomic_load_n(&r->sw, __ATOMIC_RELAXED);

	__atomic_store_n(&r->sw, SLOT_AS(sw, state), __ATOMIC_RELEASE);
}

/*
 * prctl(PR_ADD_SFRAME) for [start, start + len) and the object's text;
 * on success remember it (with the sidecar mapping, if any), else unmap
 * the mapping.
 */
static void add(struct obj *o, uintptr_t start, size_t len, void *copy,
		size_t copy_len, const char *src)
{
	struct stat st;
	struct reg *r;
	int err;

	r = slot_get();
	if (!r) {
		report(E_NOMEM, ENOMEM, o->name,
		       "no memory for the table of registered objects");
		goto undo;
	}
	if (sys_prctl(PR_ADD_SFRAME, start, start + len, o->text_start,
		      o->text_end)) {
		err = errno;
		slot_put(r, SLOT_FREE);
		if (err == EINVAL && !added_once && kernel_lacks_prctl()) {
			nosupport = true;
			report(E_NOSUPPORT, err, o->name,
			       "kernel has no PR_ADD_SFRAME support, not registering SFrame sections");
		} else if (err == ENOSYS || err == EPERM) {
			/* a seccomp filter, or a policy, says no */
			nosupport = true;
			report(E_NOSUPPORT, err, o->name,
			       "PR_ADD_SFRAME not allowed here, not registering SFrame sections");
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
	snprintf(r->name, sizeof(r->name), "%s", o->name);
	r->sframe = start;
	r->text_start = o->text_start;
	r->text_end = o->text_end;
	r->lo = o->lo;
	r->hi = o->top;
	r->dev = r->ino = 0;
	if (*o->name == '/' && !stat(o->name, &st)) {
		r->dev = st.st_dev;
		r->ino = st.st_ino;
	}
	r->copy = copy;
	r->copy_len = copy_len;
	__atomic_store_n(&r->map, o->map, __ATOMIC_RELAXED);
	slot_put(r, SLOT_LIVE);
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
	if (sf_hdr_check((const uint8_t *)(o->bias + sf->p_vaddr), sf->p_memsz,
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

/* pread() all of [off, off + len): 0 or -errno (-EIO: the file shrank) */
static int read_full(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done, off + done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		done += n;
	}
	return 0;
}

/*
 * Rewrite every FDE start of a sidecar's section mapped at sec (its real
 * address S) from "vaddr 0 of the object" to the real addresses, bias B:
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
			report(E_SIDECAR, 0, o->name,
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
 * Is the sidecar, whose header says id, the one of this object?  0, or
 * -1 (reported).
 */
static int sidecar_is_ours(struct obj *o, const char *path,
			   const struct sf_ident *id)
{
	struct sf_image img = {
		.phdr = (const Elf64_Phdr *)o->phdr,
		.phnum = o->phnum,
		.bias = o->bias,
	};
	char why[200], a[160], b[160];
	struct sf_ident mine;

	if (sf_ident_of(&img, &mine, why, sizeof(why))) {
		report(E_MISMATCH, 0, o->name,
		       "sidecar %s: can't tell it is this object's: %s", path,
		       why);
		return -1;
	}
	if (!sf_ident_eq(&mine, id)) {
		sf_ident_str(id, a, sizeof(a));
		sf_ident_str(&mine, b, sizeof(b));
		report(E_MISMATCH, 0, o->name,
		       "sidecar %s is of another object (%s; this one has %s), not used",
		       path, a, b);
		return -1;
	}
	return 0;
}

/*
 * Register the sidecar at path, if there is one.  1: there is none;
 * 0: handled (added, or an error reported).
 *
 * Only a regular file is opened (a FIFO or a device would block, or do
 * something on open), and that without blocking.  Its header is read
 * and checked before anything is mapped.  The mapping is private: the
 * pages of the FDE index, which are relocated, are read into it with
 * pread(), so they become private copies and a file truncated under us
 * gives an error here rather than SIGBUS in the relocation; the FRE pages
 * stay shared with the page cache (the kernel reads them with uaccess).
 */
static int add_sidecar(struct obj *o, const char *path)
{
	uint8_t head[SF_SIDECAR_HDR_SIZE + SFRAME_HDR_SIZE];
	struct stat st, fst;
	struct sf_ident id;
	struct sf_hdr h;
	uint32_t seclen;
	size_t map_len, priv;
	char why[200];
	uint8_t *map;
	int fd, err;

	if (stat(path, &st)) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 1;
		report(E_SIDECAR, errno, o->name, "sidecar %s", path);
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		report(E_SIDECAR, 0, o->name,
		       "sidecar %s: not a regular file", path);
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		report(E_SIDECAR, errno, o->name, "sidecar %s", path);
		return 0;
	}
	if (fstat(fd, &fst)) {
		report(E_SIDECAR, errno, o->name, "sidecar %s: fstat", path);
		goto out_close;
	}
	if (!S_ISREG(fst.st_mode) || fst.st_dev != st.st_dev ||
	    fst.st_ino != st.st_ino) {
		report(E_SIDECAR, 0, o->name,
		       "sidecar %s: replaced while opened", path);
		goto out_close;
	}
	if (fst.st_size < (off_t)sizeof(head) || fst.st_size > SIDECAR_MAX) {
		report(E_SIDECAR, 0, o->name, "sidecar %s: %lld bytes",
		       path, (long long)fst.st_size);
		goto out_close;
	}
	err = read_full(fd, head, sizeof(head), 0);
	if (err) {
		report(E_SIDECAR, -err, o->name, "sidecar %s: read", path);
		goto out_close;
	}
	if (sf_sidecar_hdr_parse(head, fst.st_size, &id, &seclen, why,
				 sizeof(why))) {
		report(E_SIDECAR, 0, o->name, "sidecar %s: %s", path, why);
		goto out_close;
	}
	if (sidecar_is_ours(o, path, &id))
		goto out_close;
	if (sf_hdr_check(head + SF_SIDECAR_HDR_SIZE, seclen, &h, why,
			 sizeof(why))) {
		report(E_SIDECAR, 0, o->name, "sidecar %s: section %s",
		       path, why);
		goto out_close;
	}
	if ((h.fdes_end > h.fres_end ? h.fdes_end : h.fres_end) != seclen) {
		report(E_SIDECAR, 0, o->name,
		       "sidecar %s: %u bytes, but its SFrame header accounts for %llu",
		       path, seclen, (unsigned long long)(h.fdes_end > h.fres_end ?
							   h.fdes_end : h.fres_end));
		goto out_close;
	}
	if (find_text(o))
		goto out_close;

	map_len = page_up(fst.st_size);
	/*
	 * Near the object, for v2's s32 offsets: a hint, never MAP_FIXED.
	 * Read-only, so that only the pages made writable below count
	 * against a strict overcommit limit.
	 */
	map = mmap((void *)o->top, map_len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		report(E_NOMEM, errno, o->name, "sidecar %s: mmap %zu bytes",
		       path, map_len);
		goto out_close;
	}
	priv = SF_SIDECAR_HDR_SIZE + h.fdes_end;
	if (mprotect(map, page_up(priv), PROT_READ | PROT_WRITE)) {
		report(E_NOMEM, errno, o->name, "sidecar %s: mprotect", path);
		goto out_unmap;
	}
	err = read_full(fd, map, priv, 0);
	if (err) {
		report(E_SIDECAR, -err, o->name, "sidecar %s: read", path);
		goto out_unmap;
	}
	if (memcmp(map, head, sizeof(head))) {
		report(E_SIDECAR, 0, o->name,
		       "sidecar %s: changed while read", path);
		goto out_unmap;
	}
	if (sidecar_relocate(o, path, map + SF_SIDECAR_HDR_SIZE, &h))
		goto out_unmap;
	if (mprotect(map, page_up(priv), PROT_READ)) {
		report(E_NOMEM, errno, o->name, "sidecar %s: mprotect", path);
		goto out_unmap;
	}
	close(fd);
	add(o, (uintptr_t)map + SF_SIDECAR_HDR_SIZE, seclen, map, map_len,
	    path);
	return 0;

out_unmap:
	munmap(map, map_len);
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
		report(E_SECTION, 0, o->name,
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

/* Is any of r's text no longer mapped?  msync() says ENOMEM then. */
static bool text_gone(const struct reg *r)
{
	return msync((void *)r->text_start, r->text_end - r->text_start,
		     MS_ASYNC) && errno == ENOMEM;
}

/*
 * Drop an entry (ours: BUSY) whose object is unmapped.  The kernel drops
 * a section with its text, so ENOENT is the usual answer; 0 comes from a
 * kernel (or the test stub) that does not.  On any other error the kernel
 * may still read the sidecar mapping: it stays mapped.
 */
static void remove_reg(struct reg *r)
{
	int err = 0;

	if (sys_prctl(PR_REMOVE_SFRAME, r->sframe, 0, 0, 0))
		err = errno;
	if (err && err != ENOENT) {
		report(E_REMOVE, err, r->name, "PR_REMOVE_SFRAME sframe=%#lx",
		       (unsigned long)r->sframe);
	} else {
		dbg(PFX "remove %s sframe=%#lx%s", r->name,
		    (unsigned long)r->sframe,
		    err ? " (gone with its text)" : "");
		if (r->copy)
			munmap(r->copy, r->copy_len);
	}
	r->copy = NULL;
	__atomic_store_n(&r->map, NULL, __ATOMIC_RELAXED);
	slot_put(r, SLOT_FREE);
}

/* Take r, seen in state word sw, to remove it: false if it changed. */
static bool claim(struct reg *r, unsigned int sw)
{
	return __atomic_compare_exchange_n(&r->sw, &sw,
					   SLOT_AS(sw, SLOT_BUSY), false,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/*
 * A closed entry whose text is still mapped, by something else?  The
 * loader sends no LA_ACT_CONSISTENT when a dlmopen() namespace becomes
 * empty: its objects are unmapped, and before the next callback the
 * program may map anything there.  /proc/self/maps says whose file the
 * mapping at each such text start is: one read for all of them, only
 * when there are such entries.  Each that is not its object's is
 * removed.
 */
static void reap_remapped(void)
{
	char buf[4096], *line, *nl;
	unsigned long lo, hi, off, ino;
	unsigned int maj, mnr;
	size_t have = 0, i;
	struct chunk *c;
	struct reg *r;
	ssize_t n;
	int fd;

	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (;;) {
		n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += n;
		buf[have] = 0;
		line = buf;
		while ((nl = strchr(line, '\n'))) {
			*nl = 0;
			if (sscanf(line, "%lx-%lx %*s %lx %x:%x %lu", &lo, &hi,
				   &off, &maj, &mnr, &ino) == 6) {
				for_each_slot(c, r, i) {
					unsigned int sw = __atomic_load_n(&r->sw,
									  __ATOMIC_ACQUIRE);

					if (SLOT_STATE(sw) != SLOT_CLOSED ||
					    !r->ino || r->text_start < lo ||
					    r->text_start >= hi)
						continue;
					if ((r->ino == ino &&
					     r->dev == makedev(maj, mnr)) ||
					    !claim(r, sw))
						continue;
					dbg(PFX "%s: its text is mapped by something else",
					    r->name);
					remove_reg(r);
				}
			}
			line = nl + 1;
		}
		have -= line - buf;
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			have = 0;	/* a line this long is not a mapping */
	}
	close(fd);
}

/*
 * Reap the entries of objects that are gone: closed ones whose text is
 * unmapped, and any that overlap [lo, hi), where an object is being
 * mapped now (the loader sends nothing when a dlmopen() namespace
 * becomes empty, and the next one maps its objects where those were).
 * With remapped, also closed ones whose text is mapped again by
 * something else.  Entries are claimed with a compare-and-swap first: at
 * exit two threads may reap at once (see la_activity()).
 */
static void reap(uintptr_t lo, uintptr_t hi, bool remapped)
{
	bool closed_mapped = false;
	struct chunk *c;
	struct reg *r;
	size_t i;

	for_each_slot(c, r, i) {
		unsigned int sw = __atomic_load_n(&r->sw, __ATOMIC_ACQUIRE);
		unsigned int state = SLOT_STATE(sw);

		if (state != SLOT_LIVE && state != SLOT_CLOSED)
			continue;
		if ((r->lo < hi && lo < r->hi) ||
		    (state == SLOT_CLOSED && text_gone(r))) {
			if (claim(r, sw))
				remove_reg(r);
		} else if (state == SLOT_CLOSED && r->ino) {
			closed_mapped = true;
		}
	}
	if (remapped && closed_mapped)
		reap_remapped();
}

/* The callbacks run with cancellation disabled and errno kept. */
struct cb_state {
	int cancel, err;
};

static void cb_enter(struct cb_state *cs)
{
	cs->err = errno;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs->cancel);
}

static void cb_leave(struct cb_state *cs)
{
	int dummy;

	pthread_setcancelstate(cs->cancel, &dummy);
	errno = cs->err;
}

EXPORT unsigned int la_objopen(struct link_map *map, Lmid_t lmid,
			       uintptr_t *cookie)
{
	struct obj o = {
		.map = map,
		.name = map->l_name ? map->l_name : "",
		.bias = map->l_addr,
	};
	struct cb_state cs;
	const char *why;

	*cookie = (uintptr_t)map;
	if (nosupport)
		return 0;
	cb_enter(&cs);
	o.is_main = lmid == LM_ID_BASE && !*o.name;
	why = skip_reason(&o);
	if (why) {
		dbg(PFX "skip %s: %s", *o.name ? o.name : "\"\"", why);
		goto out;
	}
	if (o.is_main) {
		/* ld.so PROG: ld.so has made AT_PHDR PROG's */
		o.name = "main program";
		o.phdr = (const void *)getauxval(AT_PHDR);
		o.phnum = getauxval(AT_PHNUM);
	} else if (get_phdrs(&o)) {
		goto out;
	}
	object_range(&o);
	reap(o.lo, o.top, true);
	register_object(&o);
out:
	cb_leave(&cs);
	return 0;
}

/*
 * la_objclose() comes from dlclose(), before the object is unmapped, and
 * from _dl_fini() at exit, after which __run_exit_handlers(), ld.so and
 * other threads still run code of libc and of the objects it closed.
 * Removing the section here would leave the kernel to unwind that code
 * with frame pointers, which skips the caller of every function sampled
 * before its frame is set up.  So only mark the object closed: the
 * entry is reaped once its text is gone (reap()).  From _dl_fini() this
 * runs without the load lock: atomic operations only, no allocation.
 */
EXPORT unsigned int la_objclose(uintptr_t *cookie)
{
	struct link_map *map = (struct link_map *)*cookie;
	struct cb_state cs;
	struct chunk *c;
	struct reg *r;
	size_t i;

	cb_enter(&cs);
	for_each_slot(c, r, i) {
		unsigned int sw = __atomic_load_n(&r->sw, __ATOMIC_ACQUIRE);

		if (SLOT_STATE(sw) != SLOT_LIVE ||
		    __atomic_load_n(&r->map, __ATOMIC_RELAXED) != map)
			continue;
		if (__atomic_compare_exchange_n(&r->sw, &sw,
						SLOT_AS(sw, SLOT_CLOSED), false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			dbg(PFX "close link_map %p", (void *)map);
		break;
	}
	cb_leave(&cs);
	return 0;
}

/*
 * dlclose() calls LA_ACT_CONSISTENT once it has unmapped what it unloads
 * (not when a dlmopen() namespace became empty: la_objopen() reaps
 * those), as do dlopen() and dlmopen(): reap what is gone.  _dl_fini()
 * sends it too, after dropping the loader's lock, so this can run beside
 * another thread's la_objopen(): reap() claims what it removes.
 */
EXPORT void la_activity(uintptr_t *cookie, unsigned int flag)
{
	struct cb_state cs;

	(void)cookie;
	if (flag != LA_ACT_CONSISTENT)
		return;
	cb_enter(&cs);
	reap(0, 0, false);
	cb_leave(&cs);
}
