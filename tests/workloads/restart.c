// SPDX-License-Identifier: GPL-2.0
/*
 * restart - block in a restartable system call at a known depth:
 *
 *   main -> r_a -> r_b -> r_read: read(FIFO) with an inline "syscall"
 *
 * Usage: restart FIFO.  Opens FIFO read-write (so that the open doesn't
 * wait for a writer, and the read waits for data, not for EOF), prints
 * "ready PID", and reads one byte.  SIGSTOP and SIGCONT, which have no
 * handler, interrupt the read with -ERESTARTSYS and the kernel restarts
 * it (IP moved back by two bytes, onto the "syscall"); the program never
 * sees them.  It exits 0 once a byte came.
 *
 * The system call is made by r_read itself, not by libc's read(): the
 * interrupted IP is then in a function with a frame pointer, right after
 * its "syscall", and the frames of its callers follow.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

volatile unsigned long sink;

/* The volatile local makes GCC set up the frame of this leaf (see uchain.c). */
__attribute__((noinline, noclone)) long r_read(int fd, char *buf)
{
	volatile int frame = fd;
	long ret;

	asm volatile("syscall"
		     : "=a" (ret)
		     : "0" ((long)SYS_read), "D" ((long)frame), "S" (buf), "d" (1L)
		     : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline, noclone)) long r_b(int fd, char *buf)
{
	long ret = r_read(fd, buf);

	sink++;
	return ret;
}

__attribute__((noinline, noclone)) long r_a(int fd, char *buf)
{
	long ret = r_b(fd, buf);

	sink++;
	return ret;
}

int main(int argc, char **argv)
{
	char c;
	long ret;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FIFO\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	printf("ready %d\n", getpid());
	fflush(stdout);
	ret = r_a(fd, &c);
	if (ret != 1) {
		fprintf(stderr, "restart: read returned %ld\n", ret);
		return 1;
	}
	printf("restart: read 1 byte\n");
	return 0;
}
