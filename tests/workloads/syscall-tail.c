// SPDX-License-Identifier: GPL-2.0
/*
 * syscall-tail - a system call that is the last instruction its unwind
 * table describes:
 *
 *   main -> st_a -> st_b -> st_read, which reads a pipe, a byte at a time,
 *   until a writer thread has written for MS ms (a byte every 2 ms).
 *
 * st_read is hand-written: "sub $24,%rsp; xor %eax,%eax; syscall" under
 * its CFI, then the tail that returns ("add $24,%rsp; ret") without any,
 * as in asm stubs.  A task blocked in the read() entered the kernel with
 * its IP on that tail, where no FDE is: only the frame of the syscall
 * instruction itself, at IP - 1, says where the return address is.  Built
 * without frame pointers, with an injected section (syscall-tail-sframe3):
 * nothing else can find st_b.  Usage: syscall-tail [MS] (default 500).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

long st_read(int fd, void *buf, unsigned long len);

asm(
"	.text\n"
"	.globl st_read\n"
"	.type st_read, @function\n"
"st_read:\n"
"	.cfi_startproc\n"
"	sub $24, %rsp\n"
"	.cfi_def_cfa_offset 32\n"
"	xor %eax, %eax\n"		/* read(fd, buf, len) */
"	syscall\n"
"	.cfi_endproc\n"
"	add $24, %rsp\n"
"	ret\n"
"	.size st_read, .-st_read\n"
);

volatile unsigned long sink;
static int fds[2];
static atomic_int done;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *writer(void *arg)
{
	double end = now_ms() + *(double *)arg;
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	char c = 'x';

	while (now_ms() < end) {
		nanosleep(&ts, NULL);
		if (write(fds[1], &c, 1) != 1)
			break;
	}
	done = 1;
	c = 0;
	if (write(fds[1], &c, 1) != 1)
		perror("syscall-tail: write");
	return NULL;
}

__attribute__((noinline)) long st_b(void)
{
	char c = 0;
	long n = st_read(fds[0], &c, 1);

	sink++;
	return n == 1 ? c : -1;
}

__attribute__((noinline)) long st_a(void)
{
	long c = st_b();

	sink++;
	return c;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 500;
	unsigned long reads = 0;
	pthread_t t;
	long c;

	if (pipe(fds) || pthread_create(&t, NULL, writer, &ms)) {
		perror("syscall-tail");
		return 1;
	}
	while ((c = st_a()) > 0)
		reads++;
	pthread_join(t, NULL);
	if (c < 0 || !done) {
		fprintf(stderr, "syscall-tail: read failed\n");
		return 1;
	}
	printf("syscall-tail: %lu reads\n", reads);
	return 0;
}
