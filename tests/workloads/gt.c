// SPDX-License-Identifier: GPL-2.0
/*
 * gt - workloads for the per-sample ground truth (deferred user stacks
 * against perf's DWARF unwinding of a stack dump), each a known chain:
 *
 *   threads   GT_THREADS (4) threads: gt_thread -> th_a -> th_b -> th_leaf,
 *             computing; main waits in pthread_join
 *   syscalls  main -> sc_a -> sc_b -> sc_leaf, a getppid() + write() to
 *             /dev/null loop: nearly every sample is in the kernel
 *   signals   main -> sg_a -> sg_spin computes while a SIGPROF timer
 *             (every 1 ms of CPU time) runs sg_handler -> sg_leaf, which
 *             computes about as long (in a TCG guest): more than half the
 *             samples are in a signal handler, and some in sigreturn and
 *             in signal delivery; GT_VERBOSE=1 prints the signals handled
 *   recurse   main -> rec_top -> rec(GT_DEPTH (64)) ... rec(0) ->
 *             rec_leaf: a deep stack (a rec frame is 80 bytes at -O2, so
 *             the whole stack fits perf's default 8 KiB dump)
 *   realign   main -> rl_a -> rl_realign -> rl_leaf: rl_realign (x86-64
 *             assembly) aligns the stack to 64 bytes with its CFA in %rbx,
 *             as glibc's _dl_runtime_resolve does, and leaves %rbp
 *             pointing at a copy of a stack address: an unwinder that
 *             can't recover %rbx above the topmost frame must stop at
 *             rl_realign, and one that guesses with the frame pointer
 *             there takes the stack address for a return address
 *
 * Usage: gt MODE [MS]: runs MODE for MS milliseconds (default 1000).
 * Built like chain: with and without frame pointers, and with SFrame.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;
static double end_ms;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int done(void)
{
	return now_ms() >= end_ms;
}

__attribute__((noinline)) static void spin(unsigned long n)
{
	unsigned long i, x = sink;

	for (i = 0; i < n; i++)
		x = x * 2862933555777941757UL + 3037000493UL;
	sink = x;
}

/* threads */

__attribute__((noinline)) static void th_leaf(void)
{
	spin(20000);
}

__attribute__((noinline)) static void th_b(void)
{
	th_leaf();
	sink++;
}

__attribute__((noinline)) static void th_a(void)
{
	th_b();
	sink++;
}

__attribute__((noinline)) static void *gt_thread(void *arg)
{
	(void)arg;
	while (!done())
		th_a();
	return NULL;
}

static int run_threads(void)
{
	const char *s = getenv("GT_THREADS");
	int i, n = s ? atoi(s) : 4;
	pthread_t t[64];

	if (n < 1 || n > 64) {
		fprintf(stderr, "gt: GT_THREADS=%s: 1 to 64\n", s);
		return 2;
	}
	for (i = 0; i < n; i++) {
		if (pthread_create(&t[i], NULL, gt_thread, NULL)) {
			perror("gt: pthread_create");
			return 1;
		}
	}
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/* syscalls */

static int devnull;

__attribute__((noinline)) static void sc_leaf(void)
{
	char c = 0;
	int i;

	for (i = 0; i < 64; i++) {
		sink += getppid();
		if (write(devnull, &c, 1) != 1)
			sink++;
	}
}

__attribute__((noinline)) static void sc_b(void)
{
	sc_leaf();
	sink++;
}

__attribute__((noinline)) static void sc_a(void)
{
	while (!done())
		sc_b();
}

static int run_syscalls(void)
{
	devnull = open("/dev/null", O_WRONLY);
	if (devnull < 0) {
		perror("gt: /dev/null");
		return 1;
	}
	sc_a();
	close(devnull);
	return 0;
}

/* signals */

__attribute__((noinline)) static void sg_leaf(void)
{
	spin(1000000);
}

static volatile unsigned long sg_calls;

__attribute__((noinline)) static void sg_handler(int sig)
{
	(void)sig;
	sg_calls++;
	sg_leaf();
	sink++;
}

__attribute__((noinline)) static void sg_spin(void)
{
	while (!done())
		spin(10000);
}

__attribute__((noinline)) static void sg_a(void)
{
	sg_spin();
	sink++;
}

static int run_signals(void)
{
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sg_handler;
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGPROF, &sa, NULL) || setitimer(ITIMER_PROF, &it, NULL)) {
		perror("gt: SIGPROF timer");
		return 1;
	}
	sg_a();
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
	if (getenv("GT_VERBOSE"))
		fprintf(stderr, "gt: %lu signals handled\n", sg_calls);
	return 0;
}

/* recurse */

__attribute__((noinline)) static void rec_leaf(void)
{
	spin(2000);
}

__attribute__((noinline)) static unsigned long rec(int n)
{
	volatile unsigned long pad[3] = { (unsigned long)n, 0, 0 };

	if (n == 0)
		rec_leaf();
	else
		pad[1] = rec(n - 1);
	return pad[0] + pad[1] + pad[2];
}

__attribute__((noinline)) static void rec_top(int depth)
{
	while (!done())
		sink += rec(depth);
}

static int run_recurse(void)
{
	const char *s = getenv("GT_DEPTH");
	int depth = s ? atoi(s) : 64;

	if (depth < 0 || depth > 10000) {
		fprintf(stderr, "gt: GT_DEPTH=%s: 0 to 10000\n", s);
		return 2;
	}
	rec_top(depth);
	return 0;
}

/* realign */

void rl_leaf(void);
void rl_realign(void);

__attribute__((noinline)) void rl_leaf(void)
{
	spin(30000);	/* not th_leaf's: -O2 would fold the two */
}

#ifdef __x86_64__
asm(".pushsection .text\n"
    ".type rl_realign, @function\n"
    "rl_realign:\n"
    "	.cfi_startproc\n"
    "	push %rbx\n"
    "	.cfi_def_cfa_offset 16\n"
    "	.cfi_offset %rbx, -16\n"
    "	push %rbp\n"
    "	.cfi_def_cfa_offset 24\n"
    "	.cfi_offset %rbp, -24\n"
    "	mov %rsp, %rbx\n"
    "	.cfi_def_cfa_register %rbx\n"
    "	and $-64, %rsp\n"
    "	push %rbx\n"
    "	push %rbx\n"
    "	mov %rsp, %rbp\n"
    "	call rl_leaf\n"
    "	mov %rbx, %rsp\n"
    "	.cfi_def_cfa_register %rsp\n"
    "	pop %rbp\n"
    "	.cfi_def_cfa_offset 16\n"
    "	.cfi_restore %rbp\n"
    "	pop %rbx\n"
    "	.cfi_def_cfa_offset 8\n"
    "	.cfi_restore %rbx\n"
    "	ret\n"
    "	.cfi_endproc\n"
    ".size rl_realign, .-rl_realign\n"
    ".popsection\n");
#else
void rl_realign(void)
{
	rl_leaf();
}
#endif

__attribute__((noinline)) static void rl_a(void)
{
	while (!done())
		rl_realign();
	sink++;
}

static int run_realign(void)
{
	rl_a();
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(void);
	} modes[] = {
		{ "threads", run_threads },
		{ "syscalls", run_syscalls },
		{ "signals", run_signals },
		{ "recurse", run_recurse },
		{ "realign", run_realign },
	};
	unsigned int i;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: gt threads|syscalls|signals|recurse|realign [MS]\n");
		return 2;
	}
	end_ms = now_ms() + (argc > 2 ? atof(argv[2]) : 1000);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(argv[1], modes[i].name))
			return modes[i].run();
	fprintf(stderr, "gt: unknown mode '%s'\n", argv[1]);
	return 2;
}
