// SPDX-License-Identifier: GPL-2.0
/*
 * soak-jit - text with registered SFrame mapped, run and unmapped over and
 * over, also under the feet of the code running in it.
 *
 * Usage: soak-jit MS JITLIB
 *
 * JITLIB (jitlib.c: no relocations, SFrame injected) is mapped by hand,
 * segment by segment, at an address the kernel picks, and its section is
 * registered with PR_ADD_SFRAME over its text.  The main thread runs
 *
 *   main -> run_copy -> jit_entry -> jit_mid -> jit_leaf -> callback
 *   (program, SFrame)   (the copy: registered SFrame)       (program:
 *                                                             getppid...)
 *
 * for about a millisecond, so that deferred user stacks are unwound through
 * it, then takes the copy down one of four ways, and checks what the
 * kernel says about the section afterwards:
 *
 *   remove   PR_REMOVE_SFRAME (0), then munmap
 *   munmap   munmap; then PR_REMOVE_SFRAME is ENOENT (dropped with its text)
 *   over     an anonymous mapping over the text; ENOENT; munmap
 *   mremap   the text moved elsewhere; ENOENT; munmap
 *
 * Meanwhile a second thread, at random, takes the copy the main thread is
 * running in and unmaps it: the main thread may be in the kernel with a
 * deferred unwind pending (the stack's return addresses are now in no
 * mapping and no section), and faults when it returns into the copy; the
 * SIGSEGV handler, on an alternate stack, jumps back to main.  The section
 * must be gone then too (ENOENT).  Every 16th copy a child is forked that
 * runs in it (the child inherits the registration) and exits.
 *
 * PR_ADD_SFRAME must succeed every time (EEXIST would be a section the
 * kernel forgot to drop).  SIGUSR1 runs a handler that computes.  Prints
 * the counts; exit 0, or 1 with a message when a check failed.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_ADD_SFRAME
#define PR_ADD_SFRAME		79
#define PR_REMOVE_SFRAME	80
#endif
#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME		0x6474e554
#endif

typedef long (*jit_cb)(long);
typedef long (*jit_fn)(long, jit_cb);

struct copy {
	char *base;
	size_t span;
	unsigned long text, text_end, sframe, sframe_end;
	jit_fn entry;
};

static struct {
	Elf64_Phdr ph[16];
	int nph, fd;
	size_t span;
	unsigned long entry_off;
} lib;

static const char *prog = "soak-jit";

#include "soak.h"

static _Atomic(struct copy *) running;	/* the copy main runs in */
static _Atomic(struct copy *) zapped;	/* ... that the zapper unmapped */
static atomic_int stop;
static sigjmp_buf jmp;
static volatile sig_atomic_t in_copy;
static unsigned long rnd = 88172645463325252UL;

static unsigned long xorshift(unsigned long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

__attribute__((format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static struct copy copy;		/* the one copy; static: live across siglongjmp */

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	/*
	 * Only a fault in the copy main runs in is ours to catch (the
	 * zapper unmapped it; main checks that afterwards).
	 */
	if (in_copy && (char *)si->si_addr >= copy.base &&
	    (char *)si->si_addr < copy.base + copy.span)
		siglongjmp(jmp, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void load_lib(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh[64];
	int i;

	lib.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (lib.fd < 0)
		die(path);
	if (pread(lib.fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_phnum > 16 || eh.e_shnum > 64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_shentsize != sizeof(Elf64_Shdr))
		fail("%s: not a 64-bit ELF file we can map", path);
	lib.nph = eh.e_phnum;
	if (pread(lib.fd, lib.ph, eh.e_phnum * sizeof(Elf64_Phdr), eh.e_phoff) !=
	    (ssize_t)(eh.e_phnum * sizeof(Elf64_Phdr)))
		die("program headers");
	for (i = 0; i < lib.nph; i++)
		if (lib.ph[i].p_type == PT_LOAD &&
		    lib.ph[i].p_vaddr + lib.ph[i].p_memsz > lib.span)
			lib.span = lib.ph[i].p_vaddr + lib.ph[i].p_memsz;
	lib.span = (lib.span + 4095) & ~4095UL;
	/* jit_entry from .dynsym */
	if (pread(lib.fd, sh, eh.e_shnum * sizeof(Elf64_Shdr), eh.e_shoff) !=
	    (ssize_t)(eh.e_shnum * sizeof(Elf64_Shdr)))
		die("section headers");
	for (i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr *str = &sh[sh[i].sh_link];
		char name[16];
		Elf64_Sym sym;
		size_t k;

		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		for (k = 0; k < sh[i].sh_size / sizeof(sym); k++) {
			if (pread(lib.fd, &sym, sizeof(sym), sh[i].sh_offset + k * sizeof(sym)) !=
			    sizeof(sym))
				die("dynsym");
			if (pread(lib.fd, name, sizeof(name), str->sh_offset + sym.st_name) <= 0)
				die("dynstr");
			name[sizeof(name) - 1] = 0;
			if (!strcmp(name, "jit_entry"))
				lib.entry_off = sym.st_value;
		}
	}
	if (!lib.entry_off)
		fail("%s: no jit_entry in .dynsym", path);
}

static void map_copy(struct copy *c)
{
	int i;

	memset(c, 0, sizeof(*c));
	c->span = lib.span;
	c->base = mmap(NULL, c->span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->base == MAP_FAILED)
		die("mmap");
	for (i = 0; i < lib.nph; i++) {
		Elf64_Phdr *p = &lib.ph[i];
		unsigned long va = p->p_vaddr & ~4095UL, pad = p->p_vaddr - va;
		int prot = (p->p_flags & PF_R ? PROT_READ : 0) |
			   (p->p_flags & PF_W ? PROT_WRITE : 0) |
			   (p->p_flags & PF_X ? PROT_EXEC : 0);

		if (p->p_type == PT_GNU_SFRAME) {
			c->sframe = (unsigned long)c->base + p->p_vaddr;
			c->sframe_end = c->sframe + p->p_memsz;
		}
		if (p->p_type != PT_LOAD || !p->p_filesz)
			continue;
		if (mmap(c->base + va, p->p_filesz + pad, prot, MAP_PRIVATE | MAP_FIXED, lib.fd,
			 p->p_offset - pad) == MAP_FAILED)
			die("mmap segment");
		if (p->p_flags & PF_X) {
			c->text = (unsigned long)c->base + p->p_vaddr;
			c->text_end = c->text + p->p_memsz;
		}
	}
	if (!c->sframe || !c->text)
		fail("library without PT_GNU_SFRAME or text (sframe-gen --inject)");
	c->entry = (jit_fn)(c->base + lib.entry_off);
	if (prctl(PR_ADD_SFRAME, c->sframe, c->sframe_end, c->text, c->text_end))
		fail("PR_ADD_SFRAME of a fresh copy at %#lx: %s", c->text, strerror(errno));
}

static void expect_gone(struct copy *c, const char *how)
{
	if (!prctl(PR_REMOVE_SFRAME, c->sframe, 0, 0, 0) || errno != ENOENT) {
		fprintf(stderr, "%s: %s: section still registered (errno %d)\n", prog, how, errno);
		exit(1);
	}
}

static long callback(long i)
{
	switch (i >> 8 & 7) {
	case 0:
	case 1:
	case 2:
		return syscall(SYS_getppid);
	case 3:
		sched_yield();
		return 0;
	default:
		return i;
	}
}

__attribute__((noinline)) static long run_copy(struct copy *c, long n)
{
	long r = c->entry(n, callback);

	sink += r;
	return r;
}

static void *zapper(void *arg)
{
	unsigned long s = (unsigned long)arg;

	while (!atomic_load(&stop)) {
		struct timespec ts = { 0, (long)(xorshift(&s) % 3000000) };
		struct copy *c;

		nanosleep(&ts, NULL);
		if (xorshift(&s) % 4)
			continue;
		c = atomic_exchange(&running, NULL);
		if (!c)
			continue;
		if (munmap(c->base, c->span))
			die("zapper munmap");
		atomic_store(&zapped, c);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long counts[6] = { 0 };
	static char altstack[65536];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa = { 0 };
	double end;
	pthread_t th;
	long n = 20000;

	if (argc != 3) {
		fprintf(stderr, "usage: soak-jit MS JITLIB\n");
		return 2;
	}
	end = now_ms() + atof(argv[1]);
	rnd ^= getpid();
	load_lib(argv[2]);
	signal(SIGUSR1, on_usr1);
	if (sigaltstack(&ss, NULL))
		die("sigaltstack");
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGSEGV, &sa, NULL);
	if (pthread_create(&th, NULL, zapper, (void *)(rnd * 7 + 1)))
		die("pthread_create");

	while (now_ms() < end) {
		struct copy *c = &copy, *mine;
		int how = xorshift(&rnd) % 4, faulted;
		double t0;

		map_copy(c);
		counts[5]++;
		if (!(counts[5] % 16)) {
			pid_t pid = fork();
			int st;

			if (pid < 0)
				die("fork");
			if (!pid) {
				run_copy(c, n);
				_exit(0);
			}
			if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
				fail("child in the copy: status %#x", st);
		}
		atomic_store(&running, c);
		faulted = sigsetjmp(jmp, 1);
		if (!faulted) {
			in_copy = 1;
			t0 = now_ms();
			do
				run_copy(c, n);
			while (now_ms() - t0 < 1 && atomic_load(&running));
		}
		in_copy = 0;
		mine = atomic_exchange(&running, NULL);
		if (faulted && mine)
			fail("fault in a copy at %p that nobody unmapped", (void *)c->base);
		if (!mine) {
			/* The zapper has it: wait until it is unmapped. */
			while (atomic_load(&zapped) != c)
				sched_yield();
			atomic_store(&zapped, NULL);
			expect_gone(c, "zapped while running");
			counts[4]++;
			continue;
		}
		switch (how) {
		case 0:
			if (prctl(PR_REMOVE_SFRAME, c->sframe, 0, 0, 0))
				fail("PR_REMOVE_SFRAME at %#lx: %s", c->sframe, strerror(errno));
			break;
		case 1:
			if (munmap(c->base, c->span))
				die("munmap");
			expect_gone(c, "munmap");
			break;
		case 2: {
			unsigned long t = c->text & ~4095UL;

			if (mmap((void *)t, c->text_end - t, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
				die("mmap over");
			expect_gone(c, "mmap over the text");
			break;
		}
		case 3: {
			unsigned long t = c->text & ~4095UL, len = (c->text_end - t + 4095) & ~4095UL;
			void *to = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (to == MAP_FAILED)
				die("mmap");
			if (mremap((void *)t, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to) == MAP_FAILED)
				die("mremap");
			expect_gone(c, "mremap of the text");
			munmap(to, len);
			break;
		}
		}
		if (how != 1 && munmap(c->base, c->span))
			die("munmap");
		counts[how]++;
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	printf("soak-jit: %lu copies: %lu removed, %lu unmapped, %lu mapped over, %lu moved, "
	       "%lu unmapped while running\n",
	       counts[5], counts[0], counts[1], counts[2], counts[3], counts[4]);
	return 0;
}
