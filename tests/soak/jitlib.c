// SPDX-License-Identifier: GPL-2.0
/*
 * jitlib - code that soak-jit maps by itself, at addresses of its
 * choosing, and registers with PR_ADD_SFRAME: built without frame
 * pointers, without the C library (-nostdlib), with SFrame injected.  It
 * needs no relocation: no globals, no calls out but through the callback
 * it is given.
 *
 *   jit_entry -> jit_mid -> jit_leaf (computes; calls cb every 256 rounds)
 */
typedef long (*jit_cb)(long);

__attribute__((noinline)) static long jit_leaf(long n, jit_cb cb)
{
	unsigned long x = n;
	long i;

	for (i = 0; i < n; i++) {
		x = x * 2862933555777941757UL + 3037000493UL;
		if (!(i & 255))
			x += cb(i);
	}
	return x;
}

__attribute__((noinline)) static long jit_mid(long n, jit_cb cb)
{
	return jit_leaf(n, cb) + 1;
}

long jit_entry(long n, jit_cb cb)
{
	return jit_mid(n, cb) ^ 7;
}
