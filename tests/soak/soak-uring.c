// SPDX-License-Identifier: GPL-2.0
/*
 * soak-uring - io_uring with its io-wq workers busy, from raw system calls
 * (no liburing), against the patched kernel's uapi header.
 *
 * Usage: soak-uring [-s] MS
 *
 * Batches of reads and writes, every one with IOSQE_ASYNC so that io-wq
 * worker threads (iou-wrk-*, PF_IO_WORKER: the kernel must refuse them
 * deferred unwind requests, and their samples carry no deferred marker)
 * run them: a read of a pipe, which blocks its worker until the write of
 * the same batch comes, the write, /dev/zero reads, /dev/null writes,
 * NOPs.  Between batches the task computes in ur_a -> spin.  -s: an
 * SQPOLL ring (its iou-sqp-* thread submits).  At the end a pipe read is
 * left blocked in a worker: exit cancels it.  Every completion's result
 * is checked; exit 0, or 1 with a message.  SIGUSR1 runs a handler that
 * computes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *prog = "soak-uring";

#include "soak.h"

static struct {
	int fd;
	unsigned *sq_head, *sq_tail, *sq_mask, *sq_array, *sq_flags;
	unsigned *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	int sqpoll;
} ring;

__attribute__((noinline)) static void ur_a(unsigned long n)
{
	spin(n);
	sink++;
}

static void setup(int sqpoll)
{
	struct io_uring_params p;
	size_t sq_sz, cq_sz;
	char *sq, *cq;

	memset(&p, 0, sizeof(p));
	if (sqpoll) {
		p.flags = IORING_SETUP_SQPOLL;
		p.sq_thread_idle = 20;
	}
	ring.sqpoll = sqpoll;
	ring.fd = syscall(__NR_io_uring_setup, 64, &p);
	if (ring.fd < 0)
		die("io_uring_setup");
	sq_sz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	cq_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP)
		sq_sz = cq_sz = sq_sz > cq_sz ? sq_sz : cq_sz;
	sq = mmap(NULL, sq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring.fd,
		  IORING_OFF_SQ_RING);
	if (sq == MAP_FAILED)
		die("mmap SQ ring");
	cq = sq;
	if (!(p.features & IORING_FEAT_SINGLE_MMAP)) {
		cq = mmap(NULL, cq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
			  ring.fd, IORING_OFF_CQ_RING);
		if (cq == MAP_FAILED)
			die("mmap CQ ring");
	}
	ring.sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe),
			 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring.fd,
			 IORING_OFF_SQES);
	if (ring.sqes == MAP_FAILED)
		die("mmap SQEs");
	ring.sq_head = (unsigned *)(sq + p.sq_off.head);
	ring.sq_tail = (unsigned *)(sq + p.sq_off.tail);
	ring.sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	ring.sq_array = (unsigned *)(sq + p.sq_off.array);
	ring.sq_flags = (unsigned *)(sq + p.sq_off.flags);
	ring.cq_head = (unsigned *)(cq + p.cq_off.head);
	ring.cq_tail = (unsigned *)(cq + p.cq_off.tail);
	ring.cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	ring.cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
}

static void queue(int op, int fd, void *buf, unsigned len, unsigned long tag)
{
	unsigned tail = *ring.sq_tail, idx = tail & *ring.sq_mask;
	struct io_uring_sqe *sqe = &ring.sqes[idx];

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = op;
	sqe->fd = fd;
	sqe->addr = (unsigned long)buf;
	sqe->len = len;
	sqe->off = (__u64)-1;	/* the file position: pipes and devices */
	sqe->flags = IOSQE_ASYNC;
	sqe->user_data = tag;
	ring.sq_array[idx] = idx;
	__atomic_store_n(ring.sq_tail, tail + 1, __ATOMIC_RELEASE);
}

static int enter(unsigned submit, unsigned wait)
{
	unsigned flags = wait ? IORING_ENTER_GETEVENTS : 0;

	if (ring.sqpoll) {
		if (__atomic_load_n(ring.sq_flags, __ATOMIC_ACQUIRE) & IORING_SQ_NEED_WAKEUP)
			flags |= IORING_ENTER_SQ_WAKEUP;
		submit = 0;
	}
	for (;;) {
		int r = syscall(__NR_io_uring_enter, ring.fd, submit, wait, flags, NULL, 0);

		if (r >= 0 || errno != EINTR)
			return r;
	}
}

int main(int argc, char **argv)
{
	static char buf[16][4096];
	unsigned long batches = 0, done = 0;
	int sqpoll = 0, pipefd[2], zero, null;
	double end;

	if (argc > 1 && !strcmp(argv[1], "-s")) {
		sqpoll = 1;
		argv++;
		argc--;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: soak-uring [-s] MS\n");
		return 2;
	}
	end = now_ms() + atof(argv[1]);
	signal(SIGUSR1, on_usr1);
	setup(sqpoll);
	if (pipe(pipefd))
		die("pipe");
	zero = open("/dev/zero", O_RDONLY);
	null = open("/dev/null", O_WRONLY);
	if (zero < 0 || null < 0)
		die("/dev/zero, /dev/null");

	while (now_ms() < end) {
		unsigned n = 0, got = 0, want;

		/* the read first: its worker blocks until the write comes */
		queue(IORING_OP_READ, pipefd[0], buf[n], 64, 64), n++;
		queue(IORING_OP_WRITE, pipefd[1], buf[n], 64, 64), n++;
		queue(IORING_OP_READ, zero, buf[n], 4096, 4096), n++;
		queue(IORING_OP_WRITE, null, buf[n], 4096, 4096), n++;
		queue(IORING_OP_NOP, -1, NULL, 0, 0), n++;
		queue(IORING_OP_READ, zero, buf[n], 4096, 4096), n++;
		want = n;
		if (enter(n, 0) < 0)
			die("io_uring_enter");
		ur_a(3000);
		while (got < want) {
			unsigned head = *ring.cq_head;

			if (head == __atomic_load_n(ring.cq_tail, __ATOMIC_ACQUIRE)) {
				if (enter(0, 1) < 0)
					die("io_uring_enter (wait)");
				continue;
			}
			struct io_uring_cqe *cqe = &ring.cqes[head & *ring.cq_mask];

			if (cqe->res != (int)cqe->user_data) {
				fprintf(stderr, "%s: completion %llu: result %d\n", prog,
					(unsigned long long)cqe->user_data, cqe->res);
				return 1;
			}
			__atomic_store_n(ring.cq_head, head + 1, __ATOMIC_RELEASE);
			got++;
		}
		done += got;
		batches++;
	}
	/* left blocked in a worker: cancelled at exit */
	queue(IORING_OP_READ, pipefd[0], buf[0], 64, 64);
	enter(1, 0);
	ur_a(3000);
	printf("%s: %s: %lu batches, %lu completions\n", prog, sqpoll ? "sqpoll" : "plain",
	       batches, done);
	return 0;
}
