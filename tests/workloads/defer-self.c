// SPDX-License-Identifier: GPL-2.0
/*
 * defer-self - a task samples itself with deferred user callchains and
 * checks the records against its own call chain, in 64-bit and in IA-32
 * (compat) builds: main -> chain_a -> chain_b -> chain_c -> chain_leaf,
 * frame pointers, the leaf making raw syscalls (syscall or int $0x80).
 *
 * Each function saves its return address, so the expected user ips of a
 * record taken in the leaf's syscall are [ip in chain_leaf], ra(leaf) in
 * chain_c, ra(c) in chain_b, ra(b) in chain_a, ra(a) in main: no address is
 * hard-coded. Exit 0 with a summary line when at least MIN_RECORDS records
 * were seen and all of those taken in the leaf match; 1 otherwise.
 *
 * With a second argument the syscall is made from an assembly stub called
 * by the leaf, at the one place of a frame-pointer function where the
 * frame pointer is not its own, so the interrupted IP is:
 *   entry     on "push %rbp", nothing pushed yet (return address at [sp])
 *   prologue  on "mov %rsp,%rbp", after the push
 *   ret       on "ret", after "pop %rbp"
 * and the record must still name the leaf as the stub's caller.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CONTEXT_USER		((uint64_t)-512)
#define CONTEXT_USER_DEFERRED	((uint64_t)-640)
#define CALLCHAIN_DEFERRED	22
#define RB_PAGES		256
#define MIN_RECORDS		50

static volatile unsigned long sink, loops;
static uintptr_t ra[4], leaf_start, leaf_end;
uintptr_t stub_ra;
void stub_entry(void), stub_prologue(void), stub_ret(void);
/* Right after each stub's syscall instruction: the interrupted user IP. */
extern const char stub_entry_ip[], stub_prologue_ip[], stub_ret_ip[];

#define STR_(x) #x
#define STR(x) STR_(x)
#ifdef __x86_64__
#define SAVE_RA(off)	"mov " STR(off) "(%rsp), %rcx\n mov %rcx, stub_ra(%rip)\n"
#define SYSCALL		"mov $" STR(SYS_getppid) ", %eax\n syscall\n"
#define BP		"%rbp"
#define SP		"%rsp"
#else
#define SAVE_RA(off)	"mov " STR(off) "(%esp), %ecx\n mov %ecx, stub_ra\n"
#define SYSCALL		"mov $" STR(SYS_getppid) ", %eax\n int $0x80\n"
#define BP		"%ebp"
#define SP		"%esp"
#endif

asm(".text\n"
    ".globl stub_entry\n stub_entry:\n"
    SAVE_RA(0) SYSCALL ".globl stub_entry_ip\n stub_entry_ip:\n"
    "push " BP "\n mov " SP ", " BP "\n pop " BP "\n ret\n"
    ".globl stub_prologue\n stub_prologue:\n"
    "push " BP "\n" SAVE_RA(__SIZEOF_POINTER__) SYSCALL
    ".globl stub_prologue_ip\n stub_prologue_ip:\n"
    "mov " SP ", " BP "\n pop " BP "\n ret\n"
    ".globl stub_ret\n stub_ret:\n"
    "push " BP "\n mov " SP ", " BP "\n" SAVE_RA(__SIZEOF_POINTER__)
    "pop " BP "\n" SYSCALL ".globl stub_ret_ip\n stub_ret_ip:\n ret\n");

static void (*stub)(void);
static const char *stub_ip;

static inline long raw_getppid(void)
{
	long r;
#ifdef __x86_64__
	asm volatile("syscall" : "=a"(r) : "0"((long)SYS_getppid)
		     : "rcx", "r11", "memory");
#else
	asm volatile("int $0x80" : "=a"(r) : "0"((long)SYS_getppid) : "memory");
#endif
	return r;
}

__attribute__((noinline)) static void chain_leaf(void)
{
	unsigned long i;

	ra[0] = (uintptr_t)__builtin_return_address(0);
	leaf_start = (uintptr_t)&&start;
	leaf_end = (uintptr_t)&&end;
start:
	for (i = 0; i < loops; i++) {
		if (stub)
			stub();
		else
			sink += raw_getppid();
	}
end:
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) static void chain_c(void)
{
	ra[1] = (uintptr_t)__builtin_return_address(0);
	chain_leaf();
	sink++;
}

__attribute__((noinline)) static void chain_b(void)
{
	ra[2] = (uintptr_t)__builtin_return_address(0);
	chain_c();
	sink++;
}

__attribute__((noinline)) static void chain_a(void)
{
	ra[3] = (uintptr_t)__builtin_return_address(0);
	chain_b();
	sink++;
}

static bool same(const uint64_t *ips, const uintptr_t *want, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (ips[i] != want[i]) {
			printf("defer-self: frame %d is %#llx, want %#lx\n", i,
			       (unsigned long long)ips[i], (unsigned long)want[i]);
			return false;
		}
	}
	return true;
}

/*
 * The instruction before ip is the leaf's system call: the record was taken
 * in the leaf's loop, not in chain_c after the leaf returned (an interrupt
 * there, up to 16 bytes after the loop's end label, also lands in the
 * leaf's range once the compiler laid chain_c right after it).
 */
static bool after_syscall(uint64_t ip)
{
	const unsigned char *p = (const unsigned char *)(uintptr_t)ip - 2;

#ifdef __x86_64__
	return p[0] == 0x0f && p[1] == 0x05;	/* syscall */
#else
	return p[0] == 0xcd && p[1] == 0x80;	/* int $0x80 */
#endif
}

/* Taken in the leaf's syscall: the leaf's callers follow. */
static bool check_leaf(const uint64_t *ips, uint64_t nr, unsigned long *in_leaf)
{
	if (nr < 5 || ips[0] < leaf_start || ips[0] > leaf_end + 16 ||
	    !after_syscall(ips[0]))
		return false;
	++*in_leaf;
	return same(ips + 1, ra, 4);
}

/*
 * Taken in the stub's syscall: the leaf is its caller, then the leaf's
 * callers. (Samples elsewhere in the stub, before the syscall, are where
 * frame pointers cannot tell the caller: not counted.)
 */
static bool check_stub(const uint64_t *ips, uint64_t nr, unsigned long *in_leaf)
{
	uintptr_t want[5] = { stub_ra, ra[0], ra[1], ra[2], ra[3] };

	if (nr < 1 || ips[0] != (uintptr_t)stub_ip)
		return false;
	if (nr < 6) {
		++*in_leaf;
		printf("defer-self: %llu frames only\n", (unsigned long long)nr);
		return false;
	}
	++*in_leaf;
	return same(ips + 1, want, 5);
}

int main(int argc, char **argv)
{
	unsigned long records = 0, in_leaf = 0, good = 0, markers = 0, old_form = 0;
	size_t page = sysconf(_SC_PAGESIZE), len = (1 + RB_PAGES) * page;
	struct perf_event_attr attr;
	struct perf_event_mmap_page *pc;
	uint64_t head, tail;
	unsigned char *data;
	int fd;

	loops = argc > 1 ? strtoul(argv[1], NULL, 0) : 200000;
	if (argc > 2) {
		if (!strcmp(argv[2], "entry")) {
			stub = stub_entry;
			stub_ip = stub_entry_ip;
		} else if (!strcmp(argv[2], "prologue")) {
			stub = stub_prologue;
			stub_ip = stub_prologue_ip;
		} else if (!strcmp(argv[2], "ret")) {
			stub = stub_ret;
			stub_ip = stub_ret_ip;
		} else {
			fprintf(stderr, "usage: defer-self [LOOPS [entry|prologue|ret]]\n");
			return 2;
		}
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = 100000;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	attr.disabled = 1;
	attr.exclude_hv = 1;
	attr.defer_callchain = 1;
	attr.defer_output = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0) {
		printf("defer-self: perf_event_open: %s\n", strerror(errno));
		return 1;
	}
	pc = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pc == MAP_FAILED) {
		printf("defer-self: mmap: %s\n", strerror(errno));
		return 1;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	chain_a();
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);

	data = (unsigned char *)pc + page;
	head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	if (head > pc->data_size) {
		printf("defer-self: ring buffer wrapped (%llu bytes), use fewer loops\n",
		       (unsigned long long)head);
		return 1;
	}
	for (tail = 0; tail < head; ) {
		struct perf_event_header *h = (void *)(data + tail);
		uint64_t *p = (uint64_t *)(h + 1);

		if (h->type == PERF_RECORD_SAMPLE) {
			uint64_t nr = p[2];

			markers += nr >= 2 && p[3 + nr - 2] == CONTEXT_USER_DEFERRED;
		} else if (h->type == CALLCHAIN_DEFERRED) {
			uint64_t nr = p[1], *ips = p + 2;

			records++;
			/*
			 * User addresses only, ips[0] the interrupted IP (Linux
			 * 6.19); this series' earlier kernels put
			 * PERF_CONTEXT_USER first.
			 */
			if (nr && ips[0] == CONTEXT_USER) {
				old_form++;
				ips++;
				nr--;
			}
			if (stub ? check_stub(ips, nr, &in_leaf) : check_leaf(ips, nr, &in_leaf))
				good++;
		}
		tail += h->size;
	}
	printf("defer-self (%zu-bit, %s): %lu marker samples, %lu records (%lu of the old form), %lu in the leaf, %lu with the whole chain\n",
	       sizeof(void *) * 8, argc > 2 ? argv[2] : "leaf", markers, records, old_form,
	       in_leaf, good);
	/* One kernel writes one form. */
	if (old_form && old_form != records)
		printf("defer-self: records of both forms\n");
	return records >= MIN_RECORDS && in_leaf >= MIN_RECORDS / 2 && good == in_leaf &&
	       (!old_form || old_form == records) ? 0 : 1;
}
