// SPDX-License-Identifier: GPL-2.0
/*
 * prctl-stub.c - a host stand-in for the kernel's PR_ADD_SFRAME and
 * PR_REMOVE_SFRAME, so that sframe-audit.so can be tested on a kernel that
 * does not have them.
 *
 * Usage: prctl-stub [-o LOG] [-e ERRNO] -- PROG [ARGS...]
 *
 * The child sets no_new_privs, installs a seccomp filter that turns
 * prctl(79 or 80, ...) into a user notification (everything else runs
 * as usual), passes the listener fd to the parent over a socketpair and
 * execs PROG.  The parent answers each notification as the kernel would
 * (shared/docs/abi.md), keeping a registry per process:
 *
 *  add (79: sframe_start, sframe_end, text_start, text_end)
 *	EINVAL	an empty or inverted range; text not covered by executable
 *		mappings of the caller; a bad header (magic, version 2/3,
 *		flags, abi amd64, counts and offsets within the range); an
 *		FDE whose function is not inside the text (what the kernel's
 *		validation at registration checks); a section over 64 MiB
 *	EFAULT	the sframe range not covered by readable mappings, or
 *		unreadable with process_vm_readv()
 *	EEXIST	text overlapping a registered one, or the same sframe_start
 *	ENOMEM	more than 65536 registrations
 *  remove (80: sframe_start, 0, 0, 0)
 *	EINVAL	non-zero unused arguments
 *	ENOENT	sframe_start not registered by this process
 *
 * A registration whose text is no longer mapped executable is dropped
 * (as the kernel drops it at munmap) when the process next calls; it is
 * logged as "drop".  Not modelled: inheritance across fork, and exec's
 * own registration of the program and its interpreter.  The stub serves
 * until PROG itself exits; descendants still running then get ENOSYS.
 *
 * Each call is logged as one line to LOG (default: stderr), e.g.
 *	add pid=42 sframe=0x7f..-0x7f.. text=0x7f..-0x7f.. file=/x/lib.so
 *	    funcs=+0x20,+0x30 -> 0		(on one line)
 *	remove pid=42 sframe=0x7f.. -> ENOENT
 * (file: the mapping at text_start; funcs: where the FDEs say the first
 * 32 functions start, from text_start) and at the end a "summary" line and one "leftover" line per
 * registration never removed.  -e ERRNO answers every call with ERRNO
 * (a name such as EINVAL, or a number) without touching the registry.
 *
 * Exit status: PROG's (128 + signal if it was killed); 2 if the seccomp
 * filter cannot be installed here (a test should skip); 1 on usage or
 * internal errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "sframe.h"

#ifndef PR_ADD_SFRAME
#define PR_ADD_SFRAME		79
#define PR_REMOVE_SFRAME	80
#endif

#define SECTION_MAX		(64u << 20)
#define REG_MAX			65536

struct reg {
	pid_t tgid;
	uint64_t sf_start, sf_end, text_start, text_end;
	char *file;
};

struct map {
	uint64_t start, end;
	char perms[5];
	char *path;
};

struct maps {
	struct map *v;
	size_t n;
	char *buf;
};

static struct reg *regs;
static size_t nregs;
static FILE *logf;
static int forced_err;
static unsigned long n_add, n_add_err, n_rm, n_rm_err, n_drop;
static char funcs[512];		/* logged: FDE function starts - text_start */

static const struct {
	const char *name;
	int err;
} errnames[] = {
	{ "EINVAL", EINVAL }, { "EFAULT", EFAULT }, { "EEXIST", EEXIST },
	{ "ENOENT", ENOENT }, { "ENOMEM", ENOMEM }, { "EPERM", EPERM },
	{ "ENOSYS", ENOSYS }, { "EACCES", EACCES }, { "EBUSY", EBUSY },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: prctl-stub [-o LOG] [-e ERRNO] -- PROG [ARGS...]\n"
		"Run PROG with prctl(PR_ADD_SFRAME=79 / PR_REMOVE_SFRAME=80)\n"
		"answered by this program as the kernel would (seccomp user\n"
		"notification), one line per call logged to LOG (default stderr).\n"
		"  -o LOG    log file\n"
		"  -e ERRNO  answer every call with ERRNO (EINVAL, ... or a number)\n"
		"Exit status: PROG's; 2 if seccomp user notification is unavailable.\n");
}

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "prctl-stub: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static const char *errname(int err)
{
	static char buf[16];
	size_t i;

	if (!err)
		return "0";
	for (i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (errnames[i].err == err)
			return errnames[i].name;
	snprintf(buf, sizeof(buf), "E%d", err);
	return buf;
}

static int parse_errno(const char *s)
{
	char *end;
	size_t i;
	long v;

	for (i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (!strcmp(s, errnames[i].name))
			return errnames[i].err;
	v = strtol(s, &end, 0);
	if (*end || v <= 0 || v > 4095)
		die("-e %s: not an errno name or number", s);
	return v;
}

/* ---- the child: filter, hand over the listener, exec ---- */

static int install_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prctl, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* option is an int: the low half of args[0] (little-endian) */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_ADD_SFRAME, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_REMOVE_SFRAME, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	};
	struct sock_fprog prog = {
		.len = sizeof(f) / sizeof(f[0]),
		.filter = f,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		       SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

/* Send the listener fd, or (fd < 0) the errno of the failure. */
static void send_listener(int sock, int fd, int err)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &err, .iov_len = sizeof(err) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (fd >= 0) {
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	if (sendmsg(sock, &msg, 0) < 0)
		_exit(1);
}

static void child(int sock, char **argv)
{
	int fd = install_filter();

	send_listener(sock, fd, fd < 0 ? errno : 0);
	if (fd < 0)
		_exit(2);
	close(fd);
	close(sock);
	execvp(argv[0], argv);
	fprintf(stderr, "prctl-stub: exec %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* The listener fd from the child, or -1 with *err set. */
static int recv_listener(int sock, int *err)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = err, .iov_len = sizeof(*err) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int fd;

	*err = EPIPE;
	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != sizeof(*err))
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (*err || !c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* ---- the caller's memory and mappings ---- */

static void maps_free(struct maps *m)
{
	free(m->v);
	free(m->buf);
	memset(m, 0, sizeof(*m));
}

static int maps_parse(struct maps *m)
{
	char *line, *next, *path;
	size_t cap = 0;
	struct map *p;
	int off;

	for (line = m->buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (m->n == cap) {
			cap = cap ? 2 * cap : 64;
			p = realloc(m->v, cap * sizeof(*p));
			if (!p)
				return -ENOMEM;
			m->v = p;
		}
		p = &m->v[m->n];
		off = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %*s %*s %*s%n",
			   &p->start, &p->end, p->perms, &off) < 3)
			continue;
		path = line + off;
		while (*path == ' ')
			path++;
		p->path = path;
		m->n++;
	}
	return 0;
}

/* Read /proc/TID/maps: 0, -ESRCH if the caller is gone, or -errno. */
static int maps_read(int lfd, uint64_t id, pid_t tid, struct maps *m)
{
	size_t len = 0, cap = 0;
	char path[64], *p;
	ssize_t n;
	int fd, err = 0;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "/proc/%d/maps", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	/* The fd is for the caller only if the notification is still live. */
	if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id)) {
		close(fd);
		return -ESRCH;
	}
	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? 2 * cap : 65536;
			p = realloc(m->buf, cap + 1);
			if (!p) {
				err = -ENOMEM;
				break;
			}
			m->buf = p;
		}
		n = read(fd, m->buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : 0;
			break;
		}
		len += n;
	}
	close(fd);
	if (!err && m->buf) {
		m->buf[len] = '\0';
		err = maps_parse(m);
	}
	if (err)
		maps_free(m);
	return err;
}

/*
 * Is [start, end) covered, without a hole, by mappings whose permissions
 * include perm ('x' or 'r')?  Maps are sorted by address.
 */
static bool covered(const struct maps *m, uint64_t start, uint64_t end,
		    char perm)
{
	uint64_t at = start;
	size_t i;

	for (i = 0; i < m->n && at < end; i++) {
		const struct map *p = &m->v[i];

		if (p->end <= at)
			continue;
		if (p->start > at || !strchr(p->perms, perm))
			return false;
		at = p->end;
	}
	return at >= end;
}

static const char *map_file(const struct maps *m, uint64_t addr)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (addr >= m->v[i].start && addr < m->v[i].end)
			return *m->v[i].path ? m->v[i].path : "[anon]";
	return "?";
}

static pid_t tgid_of(pid_t tid)
{
	char path[64], line[256];
	pid_t tgid = tid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/* ---- SFrame checks, as the kernel does them at registration ---- */

/* "funcs=+0x20,+0x30,...": the first 32 function starts, from text_start */
static void funcs_note(uint32_t i, uint32_t n, uint64_t off)
{
	size_t len = strlen(funcs);

	if (i < 32)
		snprintf(funcs + len, sizeof(funcs) - len, "%s+%#" PRIx64,
			 i ? "," : " funcs=", off);
	else if (i == 32)
		snprintf(funcs + len, sizeof(funcs) - len, ",...(%u)", n);
}

static int check_section(const uint8_t *b, uint64_t len, uint64_t start,
			 uint64_t ts, uint64_t te, char *why, size_t whylen)
{
	uint64_t func, prev = 0, fdes;
	uint32_t num_fdes, size, i;
	struct sf_hdr h;
	uint8_t ver, flags;
	size_t esz;
	int64_t val;
	int32_t v32;

	/* the header: the rules the kernel and every tool share */
	if (sf_hdr_check(b, len, &h, why, whylen))
		return -1;
	ver = h.version;
	flags = h.flags;
	num_fdes = h.num_fdes;
	esz = h.fde_size;
	fdes = h.fdes;
	for (i = 0; i < num_fdes; i++) {
		uint64_t off = fdes + (uint64_t)i * esz;

		if (ver == 2) {
			memcpy(&v32, b + off, 4);
			val = v32;
		} else {
			memcpy(&val, b + off, 8);
		}
		memcpy(&size, b + off + (ver == 2 ? 4 : 8), 4);
		func = start + (flags & SFRAME_F_FDE_FUNC_START_PCREL ?
				off : 0) + (uint64_t)val;
		if (func < ts || func + size > te || func + size < func) {
			snprintf(why, whylen, "FDE %u: function %#" PRIx64
				 "+%#x outside the text", i, func, size);
			return -1;
		}
		if (i && func < prev) {
			snprintf(why, whylen, "FDE %u: not sorted", i);
			return -1;
		}
		prev = func;
		funcs_note(i, num_fdes, func - ts);
	}
	return 0;
}

/* Read the caller's section: 0, -EFAULT, -ESRCH (caller gone). */
static int read_section(int lfd, uint64_t id, pid_t tid, uint64_t start,
			uint8_t *buf, uint64_t len, char *why, size_t whylen)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)start, .iov_len = len };
	ssize_t n;

	n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
	if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id))
		return -ESRCH;
	if (n != (ssize_t)len) {
		snprintf(why, whylen, "process_vm_readv: %s",
			 n < 0 ? strerror(errno) : "short read");
		return -EFAULT;
	}
	return 0;
}

/* ---- the registry ---- */

static void reg_del(size_t i)
{
	free(regs[i].file);
	regs[i] = regs[--nregs];
}

/* Drop what the kernel would have dropped: text no longer mapped. */
static void reg_prune(pid_t tgid, const struct maps *m)
{
	size_t i = 0;

	while (i < nregs) {
		struct reg *r = &regs[i];

		if (r->tgid != tgid ||
		    covered(m, r->text_start, r->text_end, 'x')) {
			i++;
			continue;
		}
		fprintf(logf, "drop pid=%d sframe=%#" PRIx64 " text=%#" PRIx64
			"-%#" PRIx64 " file=%s (text unmapped)\n", tgid,
			r->sf_start, r->text_start, r->text_end, r->file);
		n_drop++;
		reg_del(i);
	}
}

static int do_add(int lfd, const struct seccomp_notif *req, pid_t tgid,
		  const struct maps *m, char *why, size_t whylen)
{
	uint64_t ss = req->data.args[1], se = req->data.args[2];
	uint64_t ts = req->data.args[3], te = req->data.args[4];
	struct reg *r;
	uint8_t *buf;
	size_t i;
	int err;

	if (ss >= se || ts >= te) {
		snprintf(why, whylen, "empty or inverted range");
		return EINVAL;
	}
	if (!covered(m, ts, te, 'x')) {
		snprintf(why, whylen, "text not covered by executable mappings");
		return EINVAL;
	}
	if (!covered(m, ss, se, 'r')) {
		snprintf(why, whylen, "sframe range not mapped readable");
		return EFAULT;
	}
	if (se - ss > SECTION_MAX) {
		snprintf(why, whylen, "section over %u bytes", SECTION_MAX);
		return EINVAL;
	}
	buf = malloc(se - ss);
	if (!buf)
		return ENOMEM;
	err = read_section(lfd, req->id, req->pid, ss, buf, se - ss, why,
			   whylen);
	if (!err && check_section(buf, se - ss, ss, ts, te, why, whylen))
		err = -EINVAL;
	free(buf);
	if (err)
		return -err;
	for (i = 0; i < nregs; i++) {
		if (regs[i].tgid != tgid)
			continue;
		if (regs[i].sf_start == ss ||
		    (ts < regs[i].text_end && regs[i].text_start < te)) {
			snprintf(why, whylen, "overlaps sframe=%#" PRIx64
				 " text=%#" PRIx64 "-%#" PRIx64,
				 regs[i].sf_start, regs[i].text_start,
				 regs[i].text_end);
			return EEXIST;
		}
	}
	if (nregs == REG_MAX)
		return ENOMEM;
	r = realloc(regs, (nregs + 1) * sizeof(*r));
	if (!r)
		return ENOMEM;
	regs = r;
	r = &regs[nregs];
	*r = (struct reg){ tgid, ss, se, ts, te, strdup(map_file(m, ts)) };
	nregs++;
	return 0;
}

static int do_remove(const struct seccomp_notif *req, pid_t tgid,
		     char *why, size_t whylen)
{
	size_t i;

	if (req->data.args[2] || req->data.args[3] || req->data.args[4]) {
		snprintf(why, whylen, "non-zero unused arguments");
		return EINVAL;
	}
	for (i = 0; i < nregs; i++) {
		if (regs[i].tgid == tgid &&
		    regs[i].sf_start == req->data.args[1]) {
			snprintf(why, whylen, "text=%#" PRIx64 "-%#" PRIx64
				 " file=%s", regs[i].text_start,
				 regs[i].text_end, regs[i].file);
			reg_del(i);
			return 0;
		}
	}
	return ENOENT;
}

static void log_call(const struct seccomp_notif *req, pid_t tgid, bool add,
		     const struct maps *m, int err, const char *why)
{
	uint64_t a[5];
	int i;

	for (i = 0; i < 5; i++)
		a[i] = req->data.args[i];
	if (add)
		fprintf(logf, "add pid=%d sframe=%#" PRIx64 "-%#" PRIx64
			" text=%#" PRIx64 "-%#" PRIx64 " file=%s", tgid, a[1],
			a[2], a[3], a[4], map_file(m, a[3]));
	else
		fprintf(logf, "remove pid=%d sframe=%#" PRIx64, tgid, a[1]);
	if (add && !err)
		fputs(funcs, logf);
	fprintf(logf, " -> %s%s%s%s\n", errname(err), *why ? " (" : "", why,
		*why ? ")" : "");
	if (add) {
		n_add++;
		n_add_err += !!err;
	} else {
		n_rm++;
		n_rm_err += !!err;
	}
}

/* Work out the answer to one call and log it; -1: the caller is gone. */
static int answer(int lfd, const struct seccomp_notif *req)
{
	bool add = (uint32_t)req->data.args[0] == PR_ADD_SFRAME;
	struct maps m = { 0 };
	char why[256] = "";
	pid_t tgid;
	int err;

	tgid = tgid_of(req->pid);
	funcs[0] = '\0';
	if (forced_err) {
		err = forced_err;
		snprintf(why, sizeof(why), "forced");
	} else {
		err = maps_read(lfd, req->id, req->pid, &m);
		if (err == -ESRCH)
			return -1;
		if (err)
			die("/proc/%d/maps: %s", req->pid, strerror(-err));
		reg_prune(tgid, &m);
		err = add ? do_add(lfd, req, tgid, &m, why, sizeof(why)) :
			    do_remove(req, tgid, why, sizeof(why));
	}
	if (err != ESRCH)	/* ESRCH: the caller is gone, no answer */
		log_call(req, tgid, add, &m, err, why);
	maps_free(&m);
	return err == ESRCH ? -1 : err;
}

static void serve_one(int lfd, struct seccomp_notif *req, size_t req_size,
		      struct seccomp_notif_resp *resp, size_t resp_size)
{
	int err;

	memset(req, 0, req_size);
	if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, req)) {
		if (errno == EINTR || errno == ENOENT)
			return;		/* interrupted, or the caller died */
		die("SECCOMP_IOCTL_NOTIF_RECV: %s", strerror(errno));
	}
	err = answer(lfd, req);
	if (err < 0)
		return;
	memset(resp, 0, resp_size);
	resp->id = req->id;
	resp->error = -err;
	if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, resp) && errno != ENOENT)
		die("SECCOMP_IOCTL_NOTIF_SEND: %s", strerror(errno));
}

/* Answer calls until the child has exited; its wait status. */
static int serve(int lfd, pid_t pid)
{
	struct seccomp_notif_sizes sz = { 0 };
	struct seccomp_notif_resp *resp;
	struct seccomp_notif *req;
	struct pollfd pfd[2];
	int pidfd, status, n;

	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz))
		die("SECCOMP_GET_NOTIF_SIZES: %s", strerror(errno));
	if (sz.seccomp_notif < sizeof(*req))
		sz.seccomp_notif = sizeof(*req);
	if (sz.seccomp_notif_resp < sizeof(*resp))
		sz.seccomp_notif_resp = sizeof(*resp);
	req = malloc(sz.seccomp_notif);
	resp = malloc(sz.seccomp_notif_resp);
	if (!req || !resp)
		die("out of memory");
	/* The listener hangs up only once the child is reaped: watch a pidfd. */
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	for (;;) {
		pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
		n = poll(pfd, pidfd >= 0 ? 2 : 1, pidfd >= 0 ? -1 : 100);
		if (n < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (n > 0 && (pfd[0].revents & POLLIN)) {
			serve_one(lfd, req, sz.seccomp_notif, resp,
				  sz.seccomp_notif_resp);
			continue;
		}
		if (pfd[0].revents & (POLLHUP | POLLERR))
			break;
		if (pidfd >= 0 ? (n > 0 && (pfd[1].revents & POLLIN)) :
				 waitpid(pid, &status, WNOHANG) == pid)
			break;
	}
	if (pidfd >= 0 || waitpid(pid, &status, WNOHANG) != pid)
		if (waitpid(pid, &status, 0) != pid)
			die("waitpid: %s", strerror(errno));
	free(req);
	free(resp);
	return status;
}

static void summary(void)
{
	size_t i;

	fprintf(logf, "summary adds=%lu add_errors=%lu removes=%lu remove_errors=%lu drops=%lu leftovers=%zu\n",
		n_add, n_add_err, n_rm, n_rm_err, n_drop, nregs);
	for (i = 0; i < nregs; i++)
		fprintf(logf, "leftover pid=%d sframe=%#" PRIx64 "-%#" PRIx64
			" text=%#" PRIx64 "-%#" PRIx64 " file=%s\n",
			regs[i].tgid, regs[i].sf_start, regs[i].sf_end,
			regs[i].text_start, regs[i].text_end, regs[i].file);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *log = NULL;
	int sv[2], lfd, err, status, c;
	pid_t pid;

	while ((c = getopt_long(argc, argv, "+o:e:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			log = optarg;
			break;
		case 'e':
			forced_err = parse_errno(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 1;
	}
	logf = log ? fopen(log, "we") : stderr;
	if (!logf)
		die("%s: %s", log, strerror(errno));
	setvbuf(logf, NULL, _IOLBF, 0);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		die("socketpair: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		close(sv[0]);
		child(sv[1], argv + optind);
	}
	close(sv[1]);
	lfd = recv_listener(sv[0], &err);
	close(sv[0]);
	if (lfd < 0) {
		fprintf(stderr, "prctl-stub: cannot install a seccomp user-notification filter: %s (skipping)\n",
			strerror(err));
		waitpid(pid, NULL, 0);
		return 2;
	}
	status = serve(lfd, pid);
	close(lfd);
	summary();
	if (log)
		fclose(logf);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
