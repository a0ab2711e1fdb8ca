// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-spin - a minimal VMM (bare /dev/kvm ioctls) whose one vCPU spins in
 * its guest, for samples of a task that runs a guest
 * (tests/guest/58-deferred-kvm-guest.sh).  Its user stacks are known:
 *
 *   main -> vmm_run -> vcpu_loop -> vcpu_enter   (KVM_RUN, raw system call)
 *                               \-> vmm_spin     (spins in user space)
 *
 * The guest runs in real mode from GUEST_CODE, "inc %eax; jmp .-2",
 * forever: only a signal gets the vCPU out of KVM_RUN.  A periodic
 * ITIMER_REAL sends SIGALRM every PERIOD_US microseconds: one period the
 * vCPU runs the guest until the signal makes KVM_RUN return -EINTR, the
 * next one vmm_spin spins in user space until the next signal (no system
 * call: the guest's clock may need one), and so on until the task has
 * spent MS milliseconds of CPU time in KVM_RUN (and the guest ran; a
 * machine too busy to give it that gets a minute at most).  So a sampler
 * of this task (cpu-clock counts the task's CPU time) gets about MS
 * milliseconds of samples in KVM_RUN whatever the load, most of them
 * guest samples (taken while the vCPU ran its guest), and host samples,
 * in the kernel under KVM_RUN and, about as many, in user space in
 * vmm_spin.
 *
 * Usage: kvm-spin MS [PERIOD_US]  (default 2000)
 * Prints "kvm-spin: N runs, M interrupted, T ms in KVM_RUN, guest eax
 * 0x..., code 0xSTART-0xEND" at the end (the guest's %eax counts its
 * loops: it ran).
 * Exit 0; 4 when KVM can't be used here (no /dev/kvm, no VM), with the
 * reason; 1 on any other error (an unexpected exit of the guest...).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "defer-common.h"

#define GUEST_MEM	0x10000UL	/* guest physical 0..64 KiB */
#define GUEST_CODE	0x1000UL	/* where the loop is and starts */

/* inc %eax (0x66: 32-bit operand in real mode); jmp back to the inc */
static const unsigned char guest_loop[] = { 0x66, 0x40, 0xeb, 0xfc };

volatile unsigned long sink;
static volatile sig_atomic_t alarms;
static unsigned long runs, interrupted;
static double in_run_us;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static double clock_us(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void __attribute__((noreturn)) die(const char *what)
{
	fprintf(stderr, "kvm-spin: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* KVM unusable here: the caller skips, saying why. */
static void __attribute__((noreturn)) no_kvm(const char *what)
{
	fprintf(stderr, "kvm-spin: no KVM: %s: %s\n", what, strerror(errno));
	exit(4);
}

/*
 * Run the guest: KVM_RUN, made here so that the user IP of the entry is
 * in this function and a frame-pointer walk has all its callers.
 */
__attribute__((noinline)) long vcpu_enter(int vcpu)
{
	return raw_syscall3(SYS_ioctl, vcpu, KVM_RUN, 0);
}

/* Host user time of the VMM: until the next SIGALRM. */
__attribute__((noinline)) void vmm_spin(void)
{
	sig_atomic_t seen = alarms;

	FRAME();
	while (alarms == seen)
		sink += seen ^ (sink >> 3);
}

__attribute__((noinline)) void vcpu_loop(int vcpu, struct kvm_run *run,
					 double run_us, double wall_end)
{
	double start;
	long ret;

	do {
		start = clock_us(CLOCK_THREAD_CPUTIME_ID);
		ret = vcpu_enter(vcpu);
		in_run_us += clock_us(CLOCK_THREAD_CPUTIME_ID) - start;
		runs++;
		if (ret == -EINTR) {
			/* The signal came before or in the guest. */
			interrupted++;
		} else if (ret < 0) {
			errno = -ret;
			die("KVM_RUN");
		} else if (run->exit_reason != KVM_EXIT_INTR) {
			fprintf(stderr, "kvm-spin: guest exit %u (hw reason %#llx)\n",
				run->exit_reason,
				(unsigned long long)run->hw.hardware_exit_reason);
			exit(1);
		}
		vmm_spin();
		/* A short run may end before the guest's first instruction. */
	} while ((in_run_us < run_us || !run->s.regs.regs.rax) &&
		 clock_us(CLOCK_MONOTONIC) < wall_end);
}

/* Set up the VM and its vCPU, run it for MS of CPU time in KVM_RUN. */
__attribute__((noinline)) void vmm_run(double ms, double period_us)
{
	struct kvm_userspace_memory_region region = { 0 };
	struct itimerval it;
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	struct kvm_run *run;
	int kvm, vm, vcpu, size, caps;
	void *mem;

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		no_kvm("open /dev/kvm");
	if (ioctl(kvm, KVM_GET_API_VERSION, 0) != KVM_API_VERSION)
		no_kvm("KVM_GET_API_VERSION");
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		no_kvm("KVM_CREATE_VM");

	mem = mmap(NULL, GUEST_MEM, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap guest memory");
	memcpy((char *)mem + GUEST_CODE, guest_loop, sizeof(guest_loop));
	region.slot = 0;
	region.guest_phys_addr = 0;
	region.memory_size = GUEST_MEM;
	region.userspace_addr = (unsigned long)mem;
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		die("KVM_SET_USER_MEMORY_REGION");

	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		no_kvm("KVM_CREATE_VCPU");
	size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (size < (int)sizeof(*run))
		die("KVM_GET_VCPU_MMAP_SIZE");
	run = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED)
		die("mmap kvm_run");
	/* The guest's registers in kvm_run at every exit: its %eax counts. */
	caps = ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_SYNC_REGS);
	if (caps < 0 || !(caps & KVM_SYNC_X86_REGS)) {
		if (caps >= 0)
			errno = EOPNOTSUPP;
		no_kvm("KVM_CAP_SYNC_REGS");
	}
	run->kvm_valid_regs = KVM_SYNC_X86_REGS;

	/* Real mode, CS base 0: the guest's RIP is its linear address. */
	if (ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
		die("KVM_GET_SREGS");
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0)
		die("KVM_SET_SREGS");
	memset(&regs, 0, sizeof(regs));
	regs.rip = GUEST_CODE;
	regs.rflags = 0x2;
	if (ioctl(vcpu, KVM_SET_REGS, &regs) < 0)
		die("KVM_SET_REGS");

	/* No SA_RESTART: KVM_RUN returns -EINTR, never restarted anyway. */
	if (signal(SIGALRM, on_alarm) == SIG_ERR)
		die("signal");
	memset(&it, 0, sizeof(it));
	it.it_value.tv_usec = period_us;
	it.it_interval.tv_usec = period_us;
	if (setitimer(ITIMER_REAL, &it, NULL) < 0)
		die("setitimer");

	vcpu_loop(vcpu, run, ms * 1e3, clock_us(CLOCK_MONOTONIC) + 60e6);

	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	if (ioctl(vcpu, KVM_GET_REGS, &regs) < 0)
		die("KVM_GET_REGS");
	printf("kvm-spin: %lu runs, %lu interrupted, %.0f ms in KVM_RUN, "
	       "guest eax %#llx, code %#lx-%#lx\n",
	       runs, interrupted, in_run_us / 1e3, (unsigned long long)regs.rax,
	       GUEST_CODE, GUEST_CODE + sizeof(guest_loop));
	if (!regs.rax) {
		fprintf(stderr, "kvm-spin: the guest did not run\n");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 0;
	double period_us = argc > 2 ? atof(argv[2]) : 2000;
	FP_ROOT_BEGIN();

	if (argc < 2 || argc > 3 || ms <= 0 || period_us < 1 || period_us >= 1e6) {
		fprintf(stderr, "usage: %s MS [PERIOD_US]\n", argv[0]);
		return 2;
	}
	vmm_run(ms, period_us);
	FP_ROOT_END();
	return 0;
}
