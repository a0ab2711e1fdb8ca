// SPDX-License-Identifier: GPL-2.0
/*
 * frames - known call chains whose samples land where user unwinders
 * break: prologues and epilogues, signal handlers, the vDSO.
 *
 *   main -> chain_a -> chain_b -> MODE's functions:
 *
 *   prologue  pe_loop calls pe_leaf, and pe_pre (which falls through
 *             into pe_leaf), in a hot loop; pe_leaf saves rbx and r12-r15
 *             and makes room on the stack, and samples are steered onto
 *             each of its prologue and epilogue instructions (below)
 *   signal    sig_spin spins while a SIGPROF timer (every 2 ms of CPU
 *             time) runs sig_handler -> sig_leaf, which spins 1 ms; the
 *             handler returns through libc's __restore_rt
 *   vdso      vd_leaf calls clock_gettime(CLOCK_MONOTONIC) in a loop:
 *             libc's clock_gettime -> the vDSO's __vdso_clock_gettime
 *
 * Usage: frames MODE [MS]: runs MODE for MS milliseconds (default 1000).
 * Built like chain: with and without frame pointers, and with SFrame.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

volatile unsigned long sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* prologue */

/*
 * Under TCG (the test guest) an interrupt is only taken between QEMU's
 * translation blocks, so a sampled IP is where a block starts: after a
 * jump, call or ret, at a page boundary, or after 512 instructions, a
 * block's limit.  A compiled prologue or epilogue is straight-line code
 * inside a block, so only the entry would be sampled.  Instead both are
 * reached at the end of a run of 512 instructions entered at an offset,
 * which ends the block at each of their instructions in turn:
 *
 * - pe_pre(x, i) jumps to the i-th of 512 instructions that fall
 *   through into pe_leaf(x): the block ends before pe_leaf's i-th
 *   instruction (a push, the sub, ...);
 * - pe_leaf's body jumps to the (x % 16)-th instruction of a like run
 *   that ends where the compiler's code resumes: the block ends that many
 *   instructions later (the add, a pop, the ret, ...).
 *
 * An interrupt is taken at the start of a block with a chance that grows
 * with the time the previous block ran, so the runs are of 3-byte adds,
 * not nops (which QEMU translates to nothing).  pe_pre starts a page, so
 * that both runs and what follows them are in one page; its run ends
 * 16-byte aligned, so pe_leaf (aligned to 16 by the compiler, in the same
 * section, emitted after the top-level asm) starts right there.  On
 * hardware samples spread over the runs, and fewer land in the prologue
 * and epilogue.
 */
asm(".pushsection .text.frames_pe, \"ax\", @progbits\n"
    ".globl pe_pre\n"
    ".type pe_pre, @function\n"
    ".p2align 12\n"
    "pe_pre:\n"
    ".cfi_startproc\n"
    "\tlea .Lpe_pre_run(%rip), %r11\n"
    "\tlea (%rsi, %rsi, 2), %rsi\n"
    "\tadd %rsi, %r11\n"
    "\tjmp *%r11\n"
    ".p2align 4, 0xcc\n"
    ".Lpe_pre_run:\n"
    "\t.rept 512\n\tadd %rax, %rax\n\t.endr\n"
    ".cfi_endproc\n"
    ".size pe_pre, . - pe_pre\n"
    ".popsection\n");
unsigned long pe_pre(unsigned long x, unsigned long i);

/*
 * The asm clobbers rbx and r12-r15, so the prologue pushes them, and the
 * buffer (beyond the red zone) makes it adjust rsp: the epilogue undoes
 * both.  The asm's run is the rest of the body.
 */
__attribute__((noinline, noclone, section(".text.frames_pe")))
unsigned long pe_leaf(unsigned long x)
{
	volatile unsigned long buf[32];

	buf[x & 31] = x;
	asm volatile("lea 1f(%%rip), %%r11\n\t"
		     "add %0, %%r11\n\t"
		     "jmp *%%r11\n"
		     "1:\t.rept 512\n\tadd %%r11, %%r11\n\t.endr"
		     : : "r"(x % 16 * 3)
		     : "r11", "rbx", "r12", "r13", "r14", "r15", "cc");
	return x + buf[(x >> 5) & 31];
}

__attribute__((noinline, noclone)) void pe_loop(double ms)
{
	double end = now_ms() + ms;

	do {
		for (unsigned long i = 0; i < 2000; i++) {
			sink += pe_leaf(i);
			sink += pe_pre(i, i % 16);
		}
	} while (now_ms() < end);
}

/* signal */

static volatile unsigned long ticks, tsc_per_ms;
static volatile int armed;

static inline unsigned long rdtsc(void)
{
	unsigned int lo, hi;

	asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (unsigned long)hi << 32 | lo;
}

/* Spins for n TSC cycles, calling nothing. */
__attribute__((noinline, noclone)) void sig_leaf(unsigned long n)
{
	unsigned long end = rdtsc() + n;

	while (rdtsc() < end)
		sink += sink >> 3;
}

__attribute__((noinline, noclone)) void sig_handler(int sig)
{
	(void)sig;
	ticks++;
	/* Only on top of sig_spin's loop: the interrupted frame is known. */
	if (armed)
		sig_leaf(tsc_per_ms);
}

/* The TSC's rate, so that the handler spins 1 ms of the timer's 2. */
__attribute__((noinline, noclone)) void calibrate(void)
{
	double t = now_ms();
	unsigned long c = rdtsc();

	while (now_ms() < t + 20)
		;
	tsc_per_ms = (rdtsc() - c) / (now_ms() - t);
}

__attribute__((noinline, noclone)) void sig_spin(double ms)
{
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
	unsigned long stop;

	if (setitimer(ITIMER_PROF, &it, NULL)) {
		perror("setitimer");
		exit(1);
	}
	/* Spin, calling nothing, until the timer ran for ms of CPU time. */
	stop = ticks + ms / 2;
	armed = 1;
	while (ticks < stop)
		sink += sink >> 3;
	armed = 0;
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
}

/* vdso */

__attribute__((noinline, noclone)) void vd_leaf(double ms)
{
	struct timespec ts;
	double end = now_ms() + ms;

	do
		clock_gettime(CLOCK_MONOTONIC, &ts);
	while (ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 < end);
}

enum mode { PROLOGUE, SIGNAL, VDSO };

__attribute__((noinline, noclone)) void chain_b(enum mode m, double ms)
{
	switch (m) {
	case PROLOGUE:
		pe_loop(ms);
		break;
	case SIGNAL:
		sig_spin(ms);
		break;
	case VDSO:
		vd_leaf(ms);
		break;
	}
	sink++;
}

__attribute__((noinline, noclone)) void chain_a(enum mode m, double ms)
{
	chain_b(m, ms);
	sink++;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "prologue", "signal", "vdso" };
	double ms = argc > 2 ? atof(argv[2]) : 1000;
	struct sigaction sa = { .sa_handler = sig_handler, .sa_flags = SA_RESTART };
	int m;

	for (m = 0; argc > 1 && m < 3; m++)
		if (!strcmp(argv[1], modes[m]))
			break;
	if (argc < 2 || argc > 3 || m == 3 || ms <= 0) {
		fprintf(stderr, "usage: %s prologue|signal|vdso [MILLISECONDS]\n", argv[0]);
		return 2;
	}
	if (m == SIGNAL) {
		calibrate();
		if (sigaction(SIGPROF, &sa, NULL)) {
			perror("sigaction");
			return 1;
		}
	}
	chain_a(m, ms);
	return 0;
}
