/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the defer-* workloads (x86-64, frame pointers): user stacks
 * whose every frame is known, so that a test can expect them exactly.
 */
#ifndef DEFER_COMMON_H
#define DEFER_COMMON_H

#include <stddef.h>

/*
 * End the frame-pointer chain at the calling function while it runs: its
 * saved frame pointer becomes 0, which every unwinder takes for the
 * outermost frame, so that a user stack ends with the return address into
 * the caller of this function (one frame of libc.so.6: start_thread or
 * __libc_start_call_main) and not with whatever libc, built without frame
 * pointers, left in %rbp.  The caller's value is put back by FP_ROOT_END().
 */
#define FP_ROOT_BEGIN()							\
	void *volatile *fp_slot = __builtin_frame_address(0);		\
	void *fp_saved = *fp_slot;					\
	*fp_slot = NULL
#define FP_ROOT_END()	(*fp_slot = fp_saved)

/*
 * Make the calling function set up its frame: GCC sets up none in a leaf
 * that needs no stack, whatever -fno-omit-frame-pointer says, and a
 * frame-pointer walk from it would skip its caller.
 */
#define FRAME()	asm volatile ("" : : "r" (__builtin_frame_address(0)))

/*
 * A raw system call, made by the function it is inlined in (which gets a
 * frame): the user IP of the entry is in that function, and a frame-pointer
 * walk from the entry's registers has the function and all its callers.
 * A leaf that calls nothing else gets its frame on entry; one with a
 * conditional call could get it on that path only (shrink-wrapping).
 */
static inline __attribute__((always_inline))
long raw_syscall3(long nr, long a, long b, long c)
{
	long ret;

	asm volatile ("syscall"
		      : "=a" (ret)
		      : "a" (nr), "D" (a), "S" (b), "d" (c),
			"r" (__builtin_frame_address(0))
		      : "rcx", "r11", "memory");
	return ret;
}

#endif /* DEFER_COMMON_H */
