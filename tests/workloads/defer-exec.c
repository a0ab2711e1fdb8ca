// SPDX-License-Identifier: GPL-2.0
/*
 * defer-exec - execs back and forth between an unprivileged program and
 * a setuid-root copy of it, each exec with a big environment that the
 * kernel copies in the execve() system call, for user stacks across exec:
 *
 *   defer-exec old N OLD NEW KB FAKE   (as an ordinary user)
 *	main -> ex_a -> ex_b -> ex_spin computes for a while, then
 *	main -> ex_a -> ex_b -> ex_exec execs NEW (the setuid-root copy) as
 *	"new N OLD NEW KB FAKE", with KB KiB of environment.  With FAKE 1
 *	the execve() is made by exec_fakefp instead: see below.
 *   defer-exec new N OLD NEW KB FAKE   (euid 0, real uid not 0)
 *	main -> nw_a -> nw_b -> nw_spin computes, then, while N > 1, gives
 *	up root (all its uids to the real one) and main -> nw_a -> nw_b ->
 *	nw_exec execs OLD as "old N-1 OLD NEW KB !FAKE" (so the old programs
 *	alternate between ex_exec and exec_fakefp).
 *
 * So N execs of NEW, N - 1 of OLD.  main ends the frame-pointer chain: the
 * user stack of an execve() entry is ex_exec (nw_exec), ex_b (nw_b), ex_a
 * (nw_a), main and one frame of libc.so.6 (__libc_start_call_main).
 *
 * exec_fakefp makes the execve() with %rbp pointing at fake_frame, a frame
 * in .data (the program is not PIE: every copy has it at the same
 * address) that ends the chain and whose return address the old program
 * sets to fake_old_ra + 1.  The file has fake_new_ra + 1 there, so a new
 * program has that until it writes it: a walk of the old program's
 * registers in the new program's memory finds fake_new_ra, where the old
 * program's memory has fake_old_ra.  (The kernel's own unwinder stops at
 * fake_frame, which is not above the stack pointer.)  .data is small, so
 * fake_frame is in the page where it ends, which the kernel writes (it
 * zeroes the start of .bss) when it maps the program: that page is present
 * in the new program's memory before the exec is over.
 *
 * Exit 3 when the privileges are not what the mode says (a setuid bit
 * that was ignored, say), 1 when a system call fails.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "defer-common.h"

#define SPIN_LOOPS	3000000UL
#define STR_(x)		#x
#define STR(x)		STR_(x)

volatile unsigned long sink;

__attribute__((noinline)) void fake_old_ra(void) { sink += 1; }
__attribute__((noinline)) void fake_new_ra(void) { sink += 2; }

struct frame {
	unsigned long next_fp;
	unsigned long ra;
};

struct frame fake_frame = { 0, (unsigned long)fake_new_ra + 1 };

long exec_fakefp(const char *path, char *const argv[], char *const envp[]);
asm (".pushsection .text\n"
     ".globl exec_fakefp\n"
     ".type exec_fakefp, @function\n"
     "exec_fakefp:\n"
     "	push %rbp\n"
     "	lea fake_frame(%rip), %rbp\n"
     "	mov $" STR(SYS_execve) ", %eax\n"
     "	syscall\n"
     "	pop %rbp\n"
     "	ret\n"
     ".size exec_fakefp, .-exec_fakefp\n"
     ".popsection\n");

static char **argv_next, **envp_next;
static int fake;

static void die(const char *what, long ret)
{
	fprintf(stderr, "defer-exec: %s: error %ld\n", what, -ret);
	exit(1);
}

__attribute__((noinline)) void ex_spin(void)
{
	unsigned long i, x = sink;

	FRAME();
	for (i = 0; i < SPIN_LOOPS; i++)
		x = x * 2862933555777941757UL + 3037000493UL;
	sink = x;
}

__attribute__((noinline)) long ex_exec(void)
{
	return raw_syscall3(SYS_execve, (long)argv_next[0], (long)argv_next, (long)envp_next);
}

/*
 * ex_b and ex_a return (the error of execve()): a function that never
 * returns can end with its call, and its return address would then be
 * past its end, in no function.
 */
__attribute__((noinline)) long ex_b(void)
{
	ex_spin();
	if (fake) {
		fake_frame.ra = (unsigned long)fake_old_ra + 1;
		return exec_fakefp(argv_next[0], argv_next, envp_next);
	}
	return ex_exec();
}

__attribute__((noinline)) long ex_a(void)
{
	long ret = ex_b();

	sink++;
	return ret;
}

__attribute__((noinline)) void nw_spin(void)
{
	unsigned long i, x = sink;

	FRAME();
	for (i = 0; i < SPIN_LOOPS; i++)
		x = x * 3202034522624059733UL + 4354685564936845319UL;
	sink = x;
}

__attribute__((noinline)) long nw_exec(void)
{
	return raw_syscall3(SYS_execve, (long)argv_next[0], (long)argv_next, (long)envp_next);
}

__attribute__((noinline)) long nw_b(int again)
{
	uid_t uid = getuid();

	nw_spin();
	if (!again)
		return 0;
	if (setresuid(uid, uid, uid)) {
		perror("defer-exec: setresuid");
		exit(1);
	}
	return nw_exec();
}

__attribute__((noinline)) long nw_a(int again)
{
	long ret = nw_b(again);

	sink++;
	return ret;
}

int main(int argc, char **argv)
{
	static char n_next[16];
	unsigned long kb, i, nr_env;
	int old, n;

	if (argc != 7 || (strcmp(argv[1], "old") && strcmp(argv[1], "new"))) {
		fprintf(stderr, "usage: %s old|new N OLD NEW KB FAKE\n", argv[0]);
		return 2;
	}
	old = !strcmp(argv[1], "old");
	n = atoi(argv[2]);
	kb = strtoul(argv[5], NULL, 0);
	fake = atoi(argv[6]);
	if (n < 1 || kb > 4096) {
		fprintf(stderr, "defer-exec: N >= 1, KB <= 4096\n");
		return 2;
	}
	if (old ? geteuid() != getuid() || !getuid() : geteuid() || !getuid()) {
		fprintf(stderr, "defer-exec: %s: uid %d euid %d\n", argv[1],
			(int)getuid(), (int)geteuid());
		return 3;
	}

	/* What the next exec gets: the kernel copies KB KiB of strings. */
	snprintf(n_next, sizeof(n_next), "%d", old ? n : n - 1);
	argv_next = calloc(8, sizeof(*argv_next));
	nr_env = (kb + 63) / 64;
	envp_next = calloc(nr_env + 1, sizeof(*envp_next));
	if (!argv_next || !envp_next)
		die("calloc", -12);
	argv_next[0] = argv[old ? 4 : 3];
	argv_next[1] = old ? "new" : "old";
	argv_next[2] = n_next;
	for (i = 3; i < 6; i++)
		argv_next[i] = argv[i];
	argv_next[6] = old ? argv[6] : fake ? "0" : "1";
	for (i = 0; i < nr_env; i++) {
		envp_next[i] = malloc(64 << 10);
		if (!envp_next[i])
			die("malloc", -12);
		memset(envp_next[i], 'x', (64 << 10) - 1);
		envp_next[i][(64 << 10) - 1] = 0;
		memcpy(envp_next[i], "DEFER_ENV=", 10);
	}

	{
		long ret;

		FP_ROOT_BEGIN();
		ret = old ? ex_a() : nw_a(n > 1);
		FP_ROOT_END();
		if (ret)
			die("execve", ret);
	}
	return 0;
}
