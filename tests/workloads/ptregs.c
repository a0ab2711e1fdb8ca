// SPDX-License-Identifier: GPL-2.0
/*
 * ptregs - a tracer that changes its tracee's registers at syscall stops.
 *
 * Usage: ptregs N.  The tracee, a child, makes N getppid system calls at a
 * known depth:
 *
 *   main -> p_a -> p_b -> p_leaf: getppid with an inline "syscall"
 *
 * and its tracer, the parent, stops it at the entry and the exit of every
 * system call (PTRACE_SYSCALL) and moves it around (PTRACE_SETREGS):
 *
 *   getppid entry: save the registers; RIP to p_detour, RSP 1 KiB lower,
 *                  RBP zero.  The system call runs all the same.
 *   getppid exit:  nothing: the tracee returns to p_detour, which makes
 *                  getsid(0).
 *   getsid entry:  the saved registers (but the system call, getsid): it
 *                  runs in p_leaf, as far as the registers go.
 *   getsid exit:   getppid's result in RAX: the tracee returns from
 *                  getppid as if nothing had happened (it checks the
 *                  result).
 *
 * So the registers of every system call are changed between its entry
 * stop and its exit stop (where ptrace_notify() runs the pending task
 * work), and the registers getppid returns to user space with are never
 * those it entered with.  The tracee makes no other system call once
 * traced, but for the one that stops it (kill(SIGSTOP), in p_stop) and
 * the last one (exit_group, in p_exit), all of them inline, each in a
 * function of its own.
 *
 * The tracer prints "tracee PID" first, and "ptregs: N detours" at the
 * end; it exits 0 if all N detours went as planned and the tracee exited
 * with 0.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

volatile unsigned long sink;

#define __STR(x) #x
#define STR(x) __STR(x)

#define syscall1(nr, a)							\
({									\
	long __ret;							\
	asm volatile("syscall"						\
		     : "=a" (__ret)					\
		     : "0" ((long)(nr)), "D" ((long)(a))		\
		     : "rcx", "r11", "memory");				\
	__ret;								\
})

/*
 * Where the tracer sends the tracee: getsid(0), then nothing that could
 * run (ud2): the tracer takes the tracee back at the entry of getsid.  No
 * frame: with RBP zero, its stack is its own IP and nothing else.
 */
void p_detour(void);
asm(".pushsection .text\n"
    ".globl p_detour\n"
    ".type p_detour, @function\n"
    "p_detour:\n"
    "	xor %edi, %edi\n"
    "	mov $" STR(SYS_getsid) ", %eax\n"
    "	syscall\n"
    ".Lp_detour_ret:\n"
    "	ud2\n"
    ".size p_detour, . - p_detour\n"
    ".popsection\n");

static unsigned long p_detour_ret(void)
{
	unsigned long addr;

	asm("lea .Lp_detour_ret(%%rip), %0" : "=r" (addr));
	return addr;
}

/*
 * The volatile locals make GCC set up the frames of these leaves: it
 * leaves them out where the stack isn't used, whatever
 * -mno-omit-leaf-frame-pointer says, and a frame-pointer walk from such
 * a leaf skips its caller.
 */
__attribute__((noinline, noclone)) long p_leaf(void)
{
	volatile long nr = SYS_getppid;

	return syscall1(nr, 0);
}

__attribute__((noinline, noclone)) long p_b(long n, long ppid)
{
	long bad = 0;

	for (long i = 0; i < n; i++)
		bad += p_leaf() != ppid;
	sink++;
	return bad;
}

__attribute__((noinline, noclone)) long p_a(long n, long ppid)
{
	long bad = p_b(n, ppid);

	sink++;
	return bad;
}

__attribute__((noinline, noclone)) void p_stop(long pid)
{
	volatile long nr = SYS_kill;

	asm volatile("syscall"
		     : : "a" (nr), "D" (pid), "S" ((long)SIGSTOP)
		     : "rcx", "r11", "memory");
}

/* Not noreturn: its call must not be the last instruction of main. */
__attribute__((noinline, noclone)) void p_exit(long status)
{
	volatile long nr = SYS_exit_group;

	syscall1(nr, status);
}

static int tracer(pid_t child, long n)
{
	struct user_regs_struct regs, saved;
	long detours = 0, restored = 0;
	unsigned long long result = 0;
	int status, started = 0, entry;

	for (;;) {
		if (waitpid(child, &status, 0) != child) {
			perror("waitpid");
			return 1;
		}
		if (WIFEXITED(status))
			break;
		if (!WIFSTOPPED(status)) {
			fprintf(stderr, "ptregs: tracee killed by signal %d\n",
				WTERMSIG(status));
			return 1;
		}
		if (!started) {
			/* The tracee's kill(SIGSTOP): trace its system calls. */
			if (WSTOPSIG(status) != SIGSTOP ||
			    ptrace(PTRACE_SETOPTIONS, child, 0,
				   PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL)) {
				fprintf(stderr, "ptregs: first stop %#x\n", status);
				return 1;
			}
			started = 1;
			goto resume;	/* without the SIGSTOP */
		}
		if (WSTOPSIG(status) != (SIGTRAP | 0x80)) {
			fprintf(stderr, "ptregs: unexpected stop %#x\n", status);
			return 1;
		}
		if (ptrace(PTRACE_GETREGS, child, 0, &regs)) {
			perror("PTRACE_GETREGS");
			return 1;
		}
		/* x86-64 shows -ENOSYS in RAX at syscall-entry stops. */
		entry = (long long)regs.rax == -ENOSYS;
		if (regs.orig_rax == SYS_getppid && entry) {
			saved = regs;
			regs.rip = (unsigned long)p_detour;
			regs.rsp = (saved.rsp - 1024) & ~15ULL;
			regs.rbp = 0;
			detours++;
		} else if (regs.orig_rax == SYS_getppid) {
			if (regs.rip != (unsigned long)p_detour) {
				fprintf(stderr, "ptregs: getppid exit at %#llx\n", regs.rip);
				return 1;
			}
			result = regs.rax;
			goto resume;
		} else if (regs.orig_rax == SYS_getsid && entry) {
			if (regs.rip != p_detour_ret() || detours != restored + 1) {
				fprintf(stderr, "ptregs: getsid entry at %#llx\n", regs.rip);
				return 1;
			}
			regs = saved;
			regs.orig_rax = SYS_getsid;
		} else if (regs.orig_rax == SYS_getsid) {
			if (regs.rip != saved.rip) {
				fprintf(stderr, "ptregs: getsid exit at %#llx\n", regs.rip);
				return 1;
			}
			regs.rax = result;
			restored++;
		} else {
			goto resume;
		}
		if (ptrace(PTRACE_SETREGS, child, 0, &regs)) {
			perror("PTRACE_SETREGS");
			return 1;
		}
resume:
		if (ptrace(PTRACE_SYSCALL, child, 0, 0)) {
			perror("PTRACE_SYSCALL");
			return 1;
		}
	}
	printf("ptregs: %ld detours\n", detours);
	if (WEXITSTATUS(status) || detours != n || restored != n) {
		fprintf(stderr, "ptregs: tracee exit %d, %ld of %ld detours, %ld back\n",
			WEXITSTATUS(status), detours, n, restored);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long n, ppid;
	pid_t child;

	if (argc != 2 || (n = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: %s N\n", argv[0]);
		return 2;
	}
	ppid = getpid();
	fflush(stdout);
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0)) {
			perror("PTRACE_TRACEME");
			_exit(1);
		}
		p_stop(getpid());
		p_exit(p_a(n, ppid) ? 1 : 0);
		_exit(1);
	}
	printf("tracee %d\n", child);
	fflush(stdout);
	return tracer(child, n);
}
