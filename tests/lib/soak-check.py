#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the deferred callchains of one soak session (perf.data of
`perf record -a --call-graph fp,defer`), from the file's own bytes.

  soak-check.py [--perf PERF] [--cpus N] [--margin MS] [--json FILE]
                [--name NAME] PERF.DATA
  soak-check.py --summary FILE...

A sample that asked for a deferred user callchain ends its callchain with
PERF_CONTEXT_USER_DEFERRED and a cookie; the kernel writes a
PERF_RECORD_CALLCHAIN_DEFERRED per kernel entry (tid, cookie) when the task
returns to user space (or execs, or exits).  Per session:

  entries   distinct (tid, cookie) of the samples with the marker
  records   distinct (tid, cookie) of the records (the kernel writes one
            again, with the same stack, for a request made after its
            callback ran in the same entry: "dup")

and they must be equal, except for what is counted:

  lost      PERF_RECORD_LOST / LOST_SAMPLES of the session: each may have
            been a record (an entry without record) or a sample (a record
            without entry)
  stopped   entries without record whose task showed no sign of returning
            to user space while every CPU's events were surely on: no event
            of a later entry of that task before the last MARGIN ms of the
            session, or the sample itself in the first MARGIN ms.  The
            session stopped first (SIGINT with work pending), or the task
            was still in the kernel.
  started   records without samples whose request may predate the session:
            no event of an earlier entry of the task after the first MARGIN
            ms, or the record itself in the last MARGIN ms.
  late      entries with a record and a sample after their last record: a
            request the kernel answers with another record of the entry,
            unless the session stopped first; "unexplained" when a later
            entry of the task came before the last MARGIN ms, as for an
            entry without record.

Cookies are made per CPU (sequence and CPU number): unique and never 0,
but they don't grow with time, so "later" and "earlier" are by the
events' order: on one CPU the order of its ring buffer (the file's order
of that CPU's events: a task's events on a CPU are written while it runs
there, in the order it did), across CPUs their times more than MARGIN ms
apart.  An entry without record or a record without samples that is none
of these, and an unexplained late entry, count as "unexplained"; the
session fails if there are more unexplained than lost.  A CPU's events
are surely on between its first and last event in the data (samples of
the idle task count: cpu-clock samples every CPU), so MARGIN only absorbs
clock skew between CPUs.  (Without PERF_SAMPLE_CPU, as in a per-task
recording, the data is taken as one CPU's for the first and last event,
and only times order events.)  Events perf record wrote twice (a CPU's
chunk of the file that begins with the end of its previous chunk, byte for
byte: perf_mmap__push() can copy what came between its two reads of
data_head again) are counted as perf counts them, and "repeated", but are
left out of the order.

Also checked, each a failure:
  - a record's ips are user addresses only (>= 0x800000000000 is a kernel
    address or a context marker), no more than the max_stack of the event
    with defer_output, and the record is MISC_USER, of consistent size.
    Records of Linux 6.19's form hold the user addresses only; those of
    this series' earlier kernels start with PERF_CONTEXT_USER, followed by
    the user addresses: both are read, but one session holds one form.
    The same (tid, cookie) written twice has the same user addresses;
  - the entries of a task don't interleave: no event (sample or record) of
    one entry between two events of another entry of the same task, on one
    CPU (ring order) or across CPUs (times).  An entry's record is written
    before the task returns to user space, so a record written in another
    entry (or a cookie reused) would carry another entry's stack;
  - the user part of samples without the marker (immediate user
    callchains: where deferral can't be used) is perf's own frame-pointer
    walk, which stores whatever it reads: those with a value above user
    space are counted (immediate_high_ip), not an error; records, which
    the kernel's unwinder writes, must hold user addresses only;
  - the marker is the second last entry, the cookie is not 0;
  - a cookie belongs to one task only (its entries without record and
    records without samples are counted as "split", not as unexplained:
    the error names the tasks);
  - io_uring workers (comm iou-wrk-*, iou-sqp-*) never have the marker;
  - at least --cpus CPUs have events (default 1);
  - perf itself, with --perf: `perf report --stats` counts the same
    samples with the marker and no malformed record, `perf script` leaves
    exactly the samples without a record of their (tid, cookie) without
    user part (perf report --stats's own merge numbers are printed, not
    checked: it reads events in file order, not in time order).

Prints one line of numbers; --json appends them as a JSON line to FILE.
--summary adds up such JSON lines and prints the totals, in words and as
a line "totals: KEY=N ...".
Exit 0 if the session passes, 1 if not, 2 on unreadable input.
"""
import argparse
import bisect
import collections
import json
import re
import struct
import subprocess
import sys

U64 = 1 << 64
CTX_USER = U64 - 512
CTX_KERNEL = U64 - 128
CTX_USER_DEFERRED = U64 - 640
CTX_MAX = U64 - 4095
USER_END = 0x800000000000       # first non-canonical / kernel-half address

S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU, S_PERIOD, \
    S_STREAM_ID = (1 << i for i in range(10))
S_IDENTIFIER = 1 << 16

R_LOST, R_COMM, R_SAMPLE, R_LOST_SAMPLES, R_DEFERRED = 2, 3, 9, 13, 22
MISC_USER = 2


unpack_q = struct.Struct("<Q").unpack_from
unpack_i = struct.Struct("<i").unpack_from


class Bad(Exception):
    pass


class Attr:
    def __init__(self, raw):
        self.type, self.size = struct.unpack_from("<II", raw, 0)
        (self.config, self.period, self.sample_type, self.read_format,
         self.flags) = struct.unpack_from("<QQQQQ", raw, 8)
        self.max_stack = struct.unpack_from("<H", raw, 108)[0] if len(raw) >= 110 else 0
        self.sample_id_all = bool(self.flags >> 18 & 1)
        self.defer_callchain = bool(self.flags >> 38 & 1)
        self.defer_output = bool(self.flags >> 39 & 1)
        # offsets in a sample of tid, time, cpu and callchain
        st, off, lay = self.sample_type, 8, {}
        for f in (S_IDENTIFIER, S_IP, S_TID, S_TIME, S_ADDR, S_ID, S_STREAM_ID, S_CPU,
                  S_PERIOD, S_READ, S_CALLCHAIN):
            if st & f:
                lay[f] = off
                off += 8
        need = (S_TID, S_TIME, S_CALLCHAIN)
        self.layout = None if st & S_READ or not all(f in lay for f in need) else \
            (lay[S_TID] + 4, lay[S_TIME], lay.get(S_CPU), lay[S_CALLCHAIN])


def id_trailer_fields(st):
    return [f for f in (S_TID, S_TIME, S_ID, S_STREAM_ID, S_CPU, S_IDENTIFIER) if st & f]


def repeated_events(data, off, size, attrs, id2attr, trailer):
    """Offsets of the events that perf record wrote twice: a chunk of a
    CPU's ring buffer that starts with the end of that CPU's previous
    chunk, event for event, byte for byte.  (perf_mmap__push() reads
    data_head twice, copies up to the second value and resumes from the
    first one: what the kernel wrote in between is copied again.)"""
    tsize = 8 * len(trailer)
    o_cpu = None
    if S_CPU in trailer:
        o_cpu = 8 * trailer.index(S_CPU) - tsize
    chunks, cur, cur_cpu = [], [], None
    p, end = off, off + size
    while p + 8 <= end:
        etype, _misc, esize = struct.unpack_from("<IHH", data, p)
        if esize < 8 or p + esize > end:
            break
        cpu = None
        if o_cpu is None or etype >= 64:
            pass                     # perf's own events: between chunks
        elif etype == R_SAMPLE:
            a = id2attr.get(struct.unpack_from("<Q", data, p + 8)[0]) \
                if attrs[0].sample_type & S_IDENTIFIER else attrs[0]
            if a is not None and a.layout is not None and a.layout[2]:
                cpu = unpack_i(data, p + a.layout[2])[0]
        elif attrs[0].sample_id_all and esize >= 8 + tsize:
            cpu = unpack_i(data, p + esize + o_cpu)[0]
        if cpu != cur_cpu and cur:
            chunks.append((cur_cpu, cur))
            cur = []
        cur_cpu = cpu
        if cpu is not None:
            cur.append((p, esize))
        p += esize
    if cur:
        chunks.append((cur_cpu, cur))
    rep, last = set(), {}
    for cpu, ch in chunks:
        prev = last.get(cpu)
        last[cpu] = ch
        if not prev:
            continue
        first = data[ch[0][0]:ch[0][0] + ch[0][1]]
        for k in range(len(prev)):
            n = len(prev) - k
            if n > len(ch) or data[prev[k][0]:prev[k][0] + prev[k][1]] != first:
                continue
            if all(data[a:a + s] == data[b:b + t]
                   for (a, s), (b, t) in zip(prev[k:], ch[:n])):
                rep.update(b for b, _ in ch[:n])
                break
    return rep


def read_perf_data(path):
    """The file's bytes, its data section (offset, size), its events'
    attributes and a map of sample id to attribute."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 104 or data[:8] != b"PERFILE2":
        raise Bad(f"{path}: not a perf.data file (PERFILE2), {len(data)} bytes")
    _size, attr_size = struct.unpack_from("<QQ", data, 8)
    attrs_off, attrs_size, data_off, data_size = struct.unpack_from("<QQQQ", data, 24)
    if attr_size < 16 + 64 or attrs_off + attrs_size > len(data) or \
            data_off + data_size > len(data):
        raise Bad(f"{path}: bad header (truncated, or perf killed before it wrote it)")
    attrs, id2attr = [], {}
    for i in range(attrs_size // attr_size):
        raw = data[attrs_off + i * attr_size:attrs_off + (i + 1) * attr_size]
        a = Attr(raw[:attr_size - 16])
        ids_off, ids_size = struct.unpack_from("<QQ", raw, attr_size - 16)
        for j in range(ids_size // 8):
            id2attr[struct.unpack_from("<Q", data, ids_off + 8 * j)[0]] = a
        attrs.append(a)
    if not attrs:
        raise Bad(f"{path}: no event attributes")
    return data, data_off, data_size, attrs, id2attr


class Ev:
    """One event of a task's entry: a sample with the marker or a record."""
    __slots__ = ("t", "cpu", "pos", "cookie", "rec")

    def __init__(self, t, cpu, pos, cookie, rec):
        self.t, self.cpu, self.pos, self.cookie, self.rec = t, cpu, pos, cookie, rec


def check(path, args):
    data, off, size, attrs, id2attr = read_perf_data(path)
    errors = []

    def err(msg):
        if msg in errors:
            return
        if len(errors) < 20:
            errors.append(msg)
        elif len(errors) == 20:
            errors.append("... (more errors not shown)")

    st0 = attrs[0].sample_type
    trailer = id_trailer_fields(st0)
    for a in attrs:
        if id_trailer_fields(a.sample_type) != trailer:
            raise Bad(f"{path}: events with different sample_id layouts")
        if a.sample_type & S_READ:
            raise Bad(f"{path}: PERF_SAMPLE_READ is not supported here")
    if len(attrs) > 1 and not st0 & S_IDENTIFIER:
        raise Bad(f"{path}: several events without PERF_SAMPLE_IDENTIFIER")
    if not any(a.defer_callchain for a in attrs):
        raise Bad(f"{path}: no event with defer_callchain (perf fell back to fp?)")
    if not any(a.defer_output for a in attrs):
        raise Bad(f"{path}: no event with defer_output")
    if not attrs[0].sample_id_all or S_TID not in trailer or S_TIME not in trailer:
        raise Bad(f"{path}: records without tid and time (sample_id_all)")
    # With the CPU in every event, a CPU's events are in its ring buffer's
    # order in the file; without, only times order them.
    has_cpu = S_CPU in trailer
    # The kernel cuts a record to the max_stack of the event it goes to
    # (0: the sysctl's, 127 by default).
    out_max = max(a.max_stack or 127 for a in attrs if a.defer_output)
    sample_max = min(a.max_stack or 127 for a in attrs if a.defer_callchain)
    tsize = 8 * len(trailer)

    n = collections.Counter()
    first, last = {}, {}            # cpu -> first / last event time
    samples = {}                     # (tid, cookie) -> [first time, last time, nr]
    records = {}                     # (tid, cookie) -> (first time, user ips tuple)
    cookie_tid = {}
    shared = set()                   # cookies seen with more than one tid
    events = collections.defaultdict(list)      # tid -> [Ev], in file order
    comm = {}
    samples_by_tid = collections.Counter()
    marker_by_tid = collections.Counter()
    max_depth = 0

    def see_cpu(cpu, t):
        if cpu not in first or t < first[cpu]:
            first[cpu] = t
        if cpu not in last or t > last[cpu]:
            last[cpu] = t

    def parse_trailer(end):
        v = dict.fromkeys(("tid", "time", "cpu"))
        p = end - tsize
        for f in trailer:
            if f == S_TID:
                v["pid"], v["tid"] = struct.unpack_from("<ii", data, p)
            elif f == S_TIME:
                v["time"] = struct.unpack_from("<Q", data, p)[0]
            elif f == S_CPU:
                v["cpu"] = struct.unpack_from("<I", data, p)[0]
            p += 8
        return v

    def own_cookie(tid, cookie):
        other = cookie_tid.setdefault(cookie, tid)
        if other != tid:
            shared.add(cookie)

    # Events perf record wrote twice count as perf counts them, but have
    # no place in the order of a task's events.
    repeated = repeated_events(data, off, size, attrs, id2attr, trailer)
    p, end = off, off + size
    while p + 8 <= end:
        etype, misc, esize = struct.unpack_from("<IHH", data, p)
        if esize < 8 or p + esize > end:
            raise Bad(f"{path}: bad event size {esize} at {p:#x}")
        q = p + 8
        again = p in repeated
        n["repeated"] += again
        if etype == R_SAMPLE:
            n["samples"] += 1
            a = attrs[0]
            if st0 & S_IDENTIFIER:
                a = id2attr.get(struct.unpack_from("<Q", data, q)[0])
                if a is None:
                    n["unknown_id"] += 1
                    p += esize
                    continue
            if a.layout is None:
                raise Bad(f"{path}: samples without tid, time or callchain")
            o_tid, o_time, o_cpu, o_cc = a.layout
            tid = unpack_i(data, p + o_tid)[0]
            t = unpack_q(data, p + o_time)[0]
            cpu = unpack_i(data, p + o_cpu)[0] if o_cpu else 0
            see_cpu(cpu, t)
            q = p + o_cc
            nr = unpack_q(data, q)[0]
            if q + 8 + 8 * nr > p + esize:
                raise Bad(f"{path}: sample callchain nr {nr} past its event at {p:#x}")
            ips = struct.unpack_from(f"<{nr}Q", data, q + 8)
            if CTX_USER_DEFERRED in ips:
                n["marker"] += 1
                if nr < 2 or ips[-2] != CTX_USER_DEFERRED or ips.count(CTX_USER_DEFERRED) != 1:
                    err(f"tid {tid}: marker not second last in {nr} entries")
                    p += esize
                    continue
                if CTX_USER in ips:
                    err(f"tid {tid}: marker and a user part in one sample")
                cookie = ips[-1]
                if cookie == 0:
                    err(f"tid {tid}: cookie 0")
                key = (tid, cookie)
                s = samples.get(key)
                if s is None:
                    samples[key] = [t, t, 1]
                    own_cookie(tid, cookie)
                else:
                    s[0], s[1], s[2] = min(s[0], t), max(s[1], t), s[2] + 1
                if not again:
                    events[tid].append(Ev(t, cpu, p, cookie, False))
                marker_by_tid[tid] += 1
            elif CTX_USER in ips:
                n["immediate"] += 1
                user = ips[ips.index(CTX_USER) + 1:]
                # perf's own frame-pointer walk, not the deferred unwinder:
                # it stores what it reads as a return address, and through
                # code without frame pointers (libc's _exit of an exiting
                # task) that can be any value, a string's bytes.  Counted.
                if any(ip >= USER_END and ip < CTX_MAX for ip in user):
                    n["immediate_high_ip"] += 1
            else:
                n["kernel_only"] += 1
            samples_by_tid[tid] += 1
        elif etype == R_DEFERRED:
            n["records_raw"] += 1
            v = parse_trailer(p + esize)
            tid, t, cpu = v["tid"], v["time"], v["cpu"] or 0
            if esize < 24 + tsize:
                err(f"record of {esize} bytes at {p:#x}")
                p += esize
                continue
            cookie, nr = struct.unpack_from("<QQ", data, q)
            if esize != 24 + 8 * nr + tsize:
                err(f"tid {tid}: record size {esize} for nr {nr}")
                p += esize
                continue
            ips = struct.unpack_from(f"<{nr}Q", data, q + 16)
            if misc & 7 != MISC_USER:
                err(f"tid {tid}: record misc {misc:#x}, not MISC_USER")
            # Linux 6.19: user addresses only; this series' earlier
            # kernels: PERF_CONTEXT_USER, then the user addresses.
            if nr and ips[0] == CTX_USER:
                n["records_old_form"] += 1
                ips = ips[1:]
            if not ips:
                n["records_empty"] += 1
            kern = [ip for ip in ips if ip >= USER_END]
            if kern:
                n["records_kernel_ip"] += 1
                what = "context marker" if kern[0] >= CTX_MAX else "kernel address"
                err(f"tid {tid} cookie {cookie:#x}: {what} {kern[0]:#x} in a user callchain")
            max_depth = max(max_depth, len(ips))
            if len(ips) > out_max:
                err(f"tid {tid} cookie {cookie:#x}: record of {len(ips)} ips, "
                    f"max_stack {out_max}")
            if len(ips) > sample_max:
                n["records_deeper"] += 1
            see_cpu(cpu, t)
            key = (tid, cookie)
            if again:
                pass
            elif key in records:
                n["records_dup"] += 1
                if records[key][1] != ips:
                    err(f"tid {tid} cookie {cookie:#x}: written twice with different stacks")
            else:
                records[key] = (t, ips)
                own_cookie(tid, cookie)
            if not again:
                events[tid].append(Ev(t, cpu, p, cookie, True))
        elif etype == R_LOST:
            n["lost"] += struct.unpack_from("<Q", data, q + 8)[0]
            v = parse_trailer(p + esize)
            if v.get("time"):
                see_cpu(v.get("cpu") or 0, v["time"])
        elif etype == R_LOST_SAMPLES:
            n["lost_samples"] += struct.unpack_from("<Q", data, q)[0]
        elif etype == R_COMM:
            _pid, tid = struct.unpack_from("<ii", data, q)
            name = data[q + 8:p + esize - tsize].split(b"\0")[0]
            comm[tid] = name.decode("ascii", "replace")
        p += esize

    if n["records_old_form"] and n["records_old_form"] != n["records_raw"]:
        err(f"{n['records_old_form']} of {n['records_raw']} records start with "
            "PERF_CONTEXT_USER (the old form), the others don't")

    if len(first) < args.cpus:
        err(f"events on {len(first)} CPUs, want {args.cpus}")
    margin = args.margin * 1000000
    lo = max(first.values(), default=0) + margin       # every CPU on since
    hi = min(last.values(), default=0) - margin        # ... and until

    def before(a, b):
        """Event a surely came before event b (of one task)."""
        if has_cpu and a.cpu == b.cpu:
            return a.pos < b.pos
        return a.t + margin < b.t

    # A task's events on each CPU, in ring order, and all of them in time
    # order (the file holds each CPU's in ring order, chunks of CPUs
    # interleaved).
    by_cpu, by_time, times = {}, {}, {}
    for tid, evs in events.items():
        if has_cpu:
            for e in evs:
                by_cpu.setdefault((tid, e.cpu), []).append(e)
        by_time[tid] = sorted(evs, key=lambda e: e.t)
        times[tid] = [e.t for e in by_time[tid]]
    index = {}                       # id(Ev) -> its index in by_cpu
    for lst in by_cpu.values():
        for i, e in enumerate(lst):
            index[id(e)] = i

    def other_after(tid, u):
        """The first event of another entry of u's task surely after u,
        up to hi, or None."""
        if has_cpu:
            lst = by_cpu[(tid, u.cpu)]
            for i in range(index[id(u)] + 1, len(lst)):
                e = lst[i]
                if e.cookie != u.cookie:
                    if e.t <= hi:
                        return e
                    break
        tl, ts = by_time[tid], times[tid]
        for i in range(bisect.bisect_right(ts, u.t + margin), len(ts)):
            if tl[i].t > hi:
                break
            if tl[i].cookie != u.cookie:
                return tl[i]
        return None

    def other_before(tid, r):
        """The last event of another entry of r's task surely before r,
        from lo, or None."""
        if has_cpu:
            lst = by_cpu[(tid, r.cpu)]
            for i in range(index[id(r)] - 1, -1, -1):
                e = lst[i]
                if e.cookie != r.cookie:
                    if e.t >= lo:
                        return e
                    break
        tl, ts = by_time[tid], times[tid]
        for i in range(bisect.bisect_left(ts, r.t - margin) - 1, -1, -1):
            if tl[i].t < lo:
                break
            if tl[i].cookie != r.cookie:
                return tl[i]
        return None

    # The entries of one task follow each other: on one CPU, in ring order,
    # an entry's events don't come back once another entry's came; across
    # CPUs, no event of an entry lies between two of another, by times
    # more than MARGIN apart.
    interleaved = set()

    def interleave(tid, a, b, inner):
        what = f"{'record' if inner.rec else 'sample'} of cookie {inner.cookie:#x} at " \
               f"{inner.t} (CPU {inner.cpu})"
        if (tid, inner.cookie) in interleaved:
            return
        interleaved.add((tid, inner.cookie))
        err(f"tid {tid} ({comm.get(tid, '?')}): {what} between events of cookie "
            f"{a.cookie:#x} at {a.t} (CPU {a.cpu}) and {b.t} (CPU {b.cpu})")

    for (tid, _cpu), lst in by_cpu.items():
        seen, prev = {}, None        # cookie -> its last event so far
        for e in lst:
            if e.cookie in shared:
                continue
            if prev is not None and e.cookie != prev.cookie and e.cookie in seen:
                interleave(tid, seen[e.cookie], e, prev)
            seen[e.cookie] = prev = e
    for tid, tl in by_time.items():
        span = {}                    # cookie -> [first event, last event] by time
        for e in tl:
            if e.cookie in shared:
                continue
            s = span.setdefault(e.cookie, [e, e])
            s[1] = e
        starts = sorted(span.values(), key=lambda s: s[0].t)
        top = []                     # the two spans begun so far ending last
        i = 0
        for e in tl:
            if e.cookie in shared:
                continue
            while i < len(starts) and starts[i][0].t + margin < e.t:
                top = sorted(top + [starts[i]], key=lambda s: -s[1].t)[:2]
                i += 1
            s = next((s for s in top if s[0].cookie != e.cookie), None)
            if s is not None and e.t + margin < s[1].t:
                interleave(tid, s[0], s[1], e)

    # Entries and records, matched; what is left explained or not.  A
    # request is answered by a record of its entry after it: the
    # unanswered ones are the samples of an entry without record, and
    # those surely after the last record of an entry with one.
    ents, recs = set(samples), set(records)
    stopped = unexp_missing = started = unexp_orphan = split = 0
    late = unexp_late = 0
    unexplained = []
    unanswered = {}                  # (tid, cookie) -> the last unanswered sample
    entry_recs = collections.defaultdict(list)
    for tid, evs in events.items():
        for e in evs:
            if e.rec:
                entry_recs[(tid, e.cookie)].append(e)
    for tid, tl in by_time.items():
        for e in tl:
            if e.rec or e.cookie in shared:
                continue
            rl = entry_recs.get((tid, e.cookie), ())
            if all(before(r, e) for r in rl):
                unanswered[(tid, e.cookie)] = e
    for key, u in sorted(unanswered.items()):
        tid, cookie = key
        answered_before = key in recs
        late += answered_before
        t0 = u.t if answered_before else samples[key][0]
        nxt = other_after(tid, u)
        if t0 >= lo and nxt is not None:
            if answered_before:
                unexp_late += 1
                what = "sample after the entry's last record"
            else:
                unexp_missing += 1
                what = "entry without record"
            unexplained.append(f"{what}: tid {tid} ({comm.get(tid, '?')}) cookie "
                               f"{cookie:#x} at {u.t}, {samples[key][2]} samples; a later "
                               f"entry of the task (cookie {nxt.cookie:#x}) at {nxt.t}")
        elif not answered_before:
            stopped += 1
    split = sum(1 for k in ents ^ recs if k[1] in shared)
    for key in sorted(recs - ents):
        tid, cookie = key
        if cookie in shared:
            continue
        prv = None
        for r in entry_recs[key]:
            if r.t <= hi:
                prv = other_before(tid, r)
                if prv is not None:
                    break
        if prv is not None:
            unexp_orphan += 1
            unexplained.append(f"record without samples: tid {tid} ({comm.get(tid, '?')}) "
                               f"cookie {cookie:#x} at {r.t}; an earlier entry of the task "
                               f"(cookie {prv.cookie:#x}) at {prv.t}")
        else:
            started += 1
    # One kernel entry is one task: its samples and its record have one tid.
    for cookie in sorted(shared):
        who = []
        for tid in sorted(t for t, c in ents | recs if c == cookie):
            s = samples.get((tid, cookie))
            who.append(f"tid {tid} ({comm.get(tid, '?')}): {s[2] if s else 0} samples"
                       f"{' and the record' if (tid, cookie) in recs else ''}"
                       f"{f' at {s[0]}-{s[1]}' if s else ''}")
        err(f"cookie {cookie:#x} in several tasks: " + "; ".join(who))
    lost = n["lost"] + n["lost_samples"]
    # (COMM events may come after the samples in the file: checked at the end)
    for tid, name in sorted(comm.items()):
        if name.startswith("iou-"):
            n["iou_samples"] += samples_by_tid[tid]
            if marker_by_tid[tid]:
                err(f"io_uring worker tid {tid} ({name}): {marker_by_tid[tid]} samples "
                    "with a deferred callchain")
    if unexp_missing + unexp_orphan + unexp_late > lost:
        err(f"{unexp_missing} entries without record, {unexp_late} samples after their "
            f"entry's last record and {unexp_orphan} records without samples "
            f"unexplained, {lost} events lost")
        errors.extend(sorted(unexplained)[:10])

    res = {
        "name": args.name or path,
        "samples": n["samples"], "marker": n["marker"], "immediate": n["immediate"],
        "kernel_only": n["kernel_only"], "entries": len(ents),
        "records": len(recs), "records_raw": n["records_raw"], "dup": n["records_dup"],
        "empty": n["records_empty"], "old_form": n["records_old_form"],
        "matched": len(ents & recs),
        "stopped": stopped, "started": started, "split": split,
        "late": late, "unexplained_late": unexp_late,
        "interleaved": len(interleaved), "repeated": n["repeated"],
        "samples_without_record": sum(samples[k][2] for k in ents - recs),
        "unexplained_missing": unexp_missing, "unexplained_orphan": unexp_orphan,
        "lost": n["lost"], "lost_samples": n["lost_samples"], "unknown_id": n["unknown_id"],
        "iou_samples": n["iou_samples"],
        "kernel_ip": n["records_kernel_ip"], "immediate_high_ip": n["immediate_high_ip"],
        "max_depth": max_depth, "cpus": len(first),
        "max_stack": sample_max, "records_deeper": n["records_deeper"],
        "span_ms": round((min(last.values(), default=0) - max(first.values(), default=0)) / 1e6),
    }

    if args.perf:
        perf_stats(args.perf, path, res, err)

    res["ok"] = not errors
    return res, errors


STATS = re.compile(r"DEFERRED CALLCHAINS: (\d+) samples: (\d+) merged, (\d+) without user part; "
                   r"(\d+) records without samples, (\d+) malformed")


def perf_stats(perf, path, res, err):
    """perf report --stats: perf's own count of the same session."""
    p = subprocess.run([perf, "report", "--stats", "-i", path], capture_output=True,
                       text=True, errors="replace")
    m = STATS.search(p.stdout)
    if p.returncode != 0 or not m:
        err(f"perf report --stats: exit {p.returncode}, no DEFERRED CALLCHAINS line: "
            + (p.stderr.strip().splitlines() or [""])[-1])
        return
    ns, merged, unmatched, orphan, malformed = map(int, m.groups())
    res.update(perf_samples=ns, perf_merged=merged, perf_unmatched=unmatched,
               perf_orphan=orphan, perf_malformed=malformed)
    if ns != res["marker"]:
        err(f"perf counts {ns} samples with a deferred callchain, the data has {res['marker']}")
    if malformed:
        err(f"perf found {malformed} malformed records")
    lm = re.search(r"^\s*LOST events:\s*(\d+)", p.stdout, re.M)
    res["perf_lost_events"] = int(lm.group(1)) if lm else 0
    # perf report --stats reads events in file order, not in time order:
    # its merge numbers are not what perf script and report show.  Those
    # warn about the samples that got no record.
    p = subprocess.run([perf, "script", "-F", "tid", "-i", path], capture_output=True,
                       text=True, errors="replace")
    m = re.search(r"(\d+) of (\d+) samples with a deferred user callchain got no", p.stderr)
    unmatched = int(m.group(1)) if m else 0
    res["perf_script_unmatched"] = unmatched
    if p.returncode != 0:
        err(f"perf script: exit {p.returncode}")
    elif m and int(m.group(2)) != res["marker"]:
        err(f"perf script counts {m.group(2)} samples with a deferred callchain, "
            f"the data has {res['marker']}")
    elif unmatched != res["samples_without_record"]:
        err(f"perf script merges all but {unmatched} samples, but "
            f"{res['samples_without_record']} have no record of their (tid, cookie)")


def line(r):
    s = (f"{r['samples']} samples ({r['marker']} deferred, {r['immediate']} immediate user "
         f"({r.get('immediate_high_ip', 0)} through values above user space), "
         f"{r['kernel_only']} kernel only), {r['entries']} entries, {r['records']} records "
         f"({r['dup']} again, {r['empty']} empty, deepest {r['max_depth']}, "
         f"{r.get('records_deeper', 0)} deeper than the samples' max_stack "
         f"{r.get('max_stack', '-')}, "
         f"{r.get('old_form', 0)} of the old form), "
         f"{r['matched']} matched; entries without record: {r['stopped']} stopped, "
         f"{r['unexplained_missing']} unexplained; records without samples: {r['started']} "
         f"started, {r['unexplained_orphan']} unexplained; samples after their entry's "
         f"record: {r.get('late', 0)}, {r.get('unexplained_late', 0)} unexplained; "
         f"{r.get('split', 0)} of either in an entry split over two tids; "
         f"{r.get('interleaved', 0)} interleaved; {r.get('repeated', 0)} events written "
         f"twice by perf record; lost {r['lost']} + "
         f"{r['lost_samples']} samples; io_uring worker samples {r['iou_samples']}; "
         f"{r['cpus']} CPUs, {r['span_ms']} ms")
    if "perf_samples" in r:
        s += (f"; perf: {r['perf_samples']} samples, script: {r.get('perf_script_unmatched')} "
              f"without user part; report --stats: {r['perf_unmatched']} without user part, "
              f"{r['perf_orphan']} records without samples")
    return s


SUM_KEYS = ("samples", "marker", "immediate", "kernel_only", "entries", "records", "records_raw",
            "dup", "empty", "old_form", "records_deeper", "matched", "stopped", "started",
            "split", "late", "unexplained_late", "interleaved", "repeated", "unexplained_missing",
            "unexplained_orphan", "lost", "lost_samples", "iou_samples", "kernel_ip", "span_ms")


def summary(files):
    tot = dict.fromkeys(SUM_KEYS, 0)
    sessions = failed = 0
    depth = 0
    for fn in files:
        with open(fn) as f:
            for ln in f:
                if not ln.strip():
                    continue
                r = json.loads(ln)
                sessions += 1
                failed += not r.get("ok")
                depth = max(depth, r.get("max_depth", 0))
                for k in SUM_KEYS:
                    tot[k] += r.get(k, 0)
    tot["max_depth"] = depth
    print(f"sessions {sessions} (failed {failed}): " + line(dict(tot, cpus="-")))
    tot.update(sessions=sessions, failed=failed)
    print("totals: " + " ".join(f"{k}={v}" for k, v in tot.items()))
    return 1 if failed or not sessions else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--perf", help="perf binary, for perf report --stats")
    ap.add_argument("--cpus", type=int, default=1, help="CPUs that must have events")
    ap.add_argument("--margin", type=float, default=50, help="ms at each end (clock skew)")
    ap.add_argument("--json", help="append the numbers as a JSON line to this file")
    ap.add_argument("--name", help="session name in the output")
    ap.add_argument("--summary", action="store_true", help="add up JSON lines of FILEs")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    if args.summary:
        return summary(args.files)
    if len(args.files) != 1:
        ap.error("one perf.data file")
    try:
        res, errors = check(args.files[0], args)
    except (Bad, OSError, struct.error) as e:
        print(f"soak-check: {e}")
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps({"name": args.name or args.files[0], "ok": False,
                                    "error": str(e)}) + "\n")
        return 2
    print(f"{res['name']}: {'ok' if res['ok'] else 'FAIL'}: {line(res)}")
    for e in errors:
        print(f"  {e}")
    if args.json:
        with open(args.json, "a") as f:
            f.write(json.dumps(res) + "\n")
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
