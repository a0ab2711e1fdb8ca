/* SPDX-License-Identifier: GPL-2.0 */
/*
 * long unwind_bench_top(long (*fn)(long), long arg): calls fn(arg) as the
 * outermost frame of the stacks unwind-bench measures, so that both
 * unwinders stop at the same frame: its CFI says the return address is
 * undefined (an SFrame FDE without data words: outermost), and it calls
 * with a zero frame pointer (the frame-pointer walk's end).
 */
	.section .note.GNU-stack, "", @progbits
	.text
	.globl	unwind_bench_top
	.type	unwind_bench_top, @function
unwind_bench_top:
	.cfi_startproc
	.cfi_undefined rip
	push	%rbp
	.cfi_adjust_cfa_offset 8
	xor	%ebp, %ebp
	mov	%rdi, %rax
	mov	%rsi, %rdi
	call	*%rax
	pop	%rbp
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc
	.size	unwind_bench_top, . - unwind_bench_top
	.globl	unwind_bench_top_end
unwind_bench_top_end:
