// SPDX-License-Identifier: GPL-2.0
/*
 * kfuzz-lib.so - the code sframe-kfuzz registers mutated SFrame sections
 * over: kf_entry -> kf_mid -> the program's callback, plus functions of
 * other shapes (pushes, a big frame, alloca), so that the section has
 * several kinds of rows.  Built without frame pointers.
 */
#include <alloca.h>
#include <string.h>

typedef long (*kf_cb)(long);

volatile long kf_sink;
/* Where kf_mid and kf_entry return to, for the fuzzer's checks */
volatile unsigned long kf_mid_ret, kf_entry_ret;

__attribute__((noinline)) long kf_mid(kf_cb cb, long x)
{
	long r = cb(x);

	kf_mid_ret = (unsigned long)__builtin_return_address(0);
	asm volatile("" : "+r"(r) : : "memory");
	return r + 1;
}

__attribute__((noinline)) long kf_entry(kf_cb cb, long x)
{
	long r = kf_mid(cb, x + 1);

	kf_entry_ret = (unsigned long)__builtin_return_address(0);
	asm volatile("" : "+r"(r) : : "memory");
	return r + 1;
}

__attribute__((noinline)) long kf_pushes(long a, long b, long c, long d)
{
	long x = a, y = b, z = c, w = d, i;

	for (i = 0; i < a; i++) {
		x = x * 3 + y;
		y ^= z + i;
		z += w * x;
		w -= y;
		kf_sink = x + y + z + w;
	}
	return x ^ y ^ z ^ w;
}

__attribute__((noinline)) long kf_big_frame(long n)
{
	volatile char buf[4096];

	memset((char *)buf, (int)n, sizeof(buf));
	return buf[n & 4095];
}

__attribute__((noinline)) long kf_alloca(long n)
{
	char *p = alloca(n & 0xfff);

	memset(p, 1, n & 0xfff);
	kf_sink = p[0];
	return kf_pushes(n, n + 1, n + 2, n + 3);
}
