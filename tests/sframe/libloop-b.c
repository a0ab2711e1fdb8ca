// SPDX-License-Identifier: GPL-2.0
/*
 * libloop-b.c - test library for dlopen-loop (sframe-audit test): a
 * recursive pair of functions and a leaf, built -O2 -fomit-frame-pointer.
 */
volatile unsigned long loop_b_sink;

static void b_odd(int n);

__attribute__((noinline)) static void b_leaf(int n)
{
	char buf[64];
	int i;

	for (i = 0; i < (int)sizeof(buf); i++)
		buf[i] = n + i;
	for (i = 0; i < (int)sizeof(buf); i++)
		loop_b_sink += buf[i];
}

__attribute__((noinline)) static void b_even(int n)
{
	if (n <= 0) {
		b_leaf(n);
		return;
	}
	b_odd(n - 1);
	loop_b_sink++;
}

__attribute__((noinline)) static void b_odd(int n)
{
	b_even(n - 1);
	loop_b_sink++;
}

void loop_entry(int n)
{
	b_even(n % 16);
}
