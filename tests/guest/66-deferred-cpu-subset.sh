# SPDX-License-Identifier: GPL-2.0
# Deferred callchains of a session that samples CPU 0 only, while the
# workload moves between CPUs 0 and 1 inside its kernel entries.
#
# The kernel writes PERF_RECORD_CALLCHAIN_DEFERRED, when the task returns
# to user space, to the defer_output events that cover the task on the
# CPU it returns on.  perf record -C 0 samples CPU 0, but opens its
# tracking event (the one with defer_output) on every CPU ("sideband for
# all CPUs is still needed", record__config_tracking_events()): a sample
# taken on CPU 0 in an entry that returns to user space on CPU 1 gets its
# record from CPU 1, and must get that entry's stack, no other.  A record
# that no session gets (the task returns after the session ended) must
# leave its samples without user part, counted: "N of M samples with a
# deferred user callchain got no PERF_RECORD_CALLCHAIN_DEFERRED".
#
# The workload (defer-mig): mg-read reads /dev/zero while mg-ctl moves it
# from CPU to CPU with sched_setaffinity(), mg-pin moves itself, mg-ctl
# sleeps 200 us between moves; every leaf makes a raw system call, so the
# stack of an entry from it is exactly known (the chain and one frame of
# libc).  A child, mg-late, blocks on CPU 0 in an open() of a FIFO that
# the test opens only after both sessions have ended.
#
# Two sessions record the same run, enabled and disabled around it
# through their control FIFOs: perf record -C 0 and perf record -a, both
# cpu-clock (2 kHz) with --call-graph fp,defer --user-regs=ip, and every
# sched:sched_switch of mg-late (-c 1).  Per session, from the merged perf
# script, the raw one (--no-merge-callchains) and perf report --stats:
#  1) no sample gets another entry's stack: in every sample of the
#     workload with a user part, the first user frame is the sample's
#     user IP (sampled register), and every sample in a leaf's system
#     call has that leaf's chain, exactly;
#  2) perf counts every sample left without user part: its warning and
#     --stats give the number of samples with the deferred marker whose
#     cookie no record of the session has, which is the number of them
#     without user part in the merged output (at least one: mg-late's
#     switch out in the open() that outlives the sessions, and only the
#     samples of that entry of the workload); records without samples and
#     malformed records are counted right too;
#  3) -C 0 gets the records of the workload from CPU 1 too: exactly the
#     records that -a has, and at least one -C 0 sample is merged with a
#     record written on CPU 1.
. "$(dirname "$0")/lib.sh"

prog=$WORKLOADS/defer-mig-fp
ms=${MIG_MS:-1000}
freq=${MIG_FREQ:-2000}
[ -x "$prog" ] || fail "no $prog (make -C tests/workloads)"
taskset -c 0,1 true 2> /dev/null || skip "needs CPUs 0 and 1"
command -v objdump > /dev/null || fail "no objdump"

cleanup() {
	kill -INT "${pids[@]}" 2> /dev/null
	# let mg-late go if it still waits
	[ -p "$TMP/late" ] && timeout 10 sh -c ': > "$1"' _ "$TMP/late" 2> /dev/null
}
pids=()
trap cleanup EXIT
mkfifo "$TMP/late" || fail "mkfifo"

# ctl NAME CMD: send CMD to session NAME, wait for its ack
ctl() {
	timeout 60 sh -c 'echo "$3" > "$1" && read -r ack < "$2" && [ "$ack" = ack ]' _ \
		"$TMP/$1.ctl" "$TMP/$1.ack" "$2" || { cat "$TMP/$1.log"; fail "$1: no ack to $2"; }
}

# Both sessions start disabled, are enabled just before the workload
# starts and disabled when it has exited (mg-late waits on): they cover
# the same events of the workload, and not much else.  -c 1 is for the
# tracepoint: perf record's -F or -c is for every event.
for s in c0 all; do
	mkfifo "$TMP/$s.ctl" "$TMP/$s.ack" || fail "mkfifo"
	[ $s = c0 ] && target=(-C 0) || target=(-a)
	"$PERF" record -q "${target[@]}" -c 1 -e "cpu-clock/freq=$freq/" \
		-e sched:sched_switch --filter 'prev_comm == "mg-late"' \
		--call-graph fp,defer --user-regs=ip -m 1024 -D -1 \
		--control "fifo:$TMP/$s.ctl,$TMP/$s.ack" -o "$TMP/$s.data" > "$TMP/$s.log" 2>&1 &
	pids+=($!)
done
ctl c0 enable
ctl all enable
"$prog" "$ms" "$TMP/late" || fail "defer-mig: exit $?"
ctl all disable
ctl c0 disable
for s in c0 all; do
	timeout 60 sh -c 'echo stop > "$1"' _ "$TMP/$s.ctl"
done
for i in 0 1; do
	wait "${pids[$i]}" || { cat "$TMP/c0.log" "$TMP/all.log"; fail "perf record failed"; }
done
pids=()
timeout 10 sh -c ': > "$1"' _ "$TMP/late" || fail "mg-late did not wait on $TMP/late"
rm "$TMP/late"

for s in c0 all; do
	"$PERF" script -i "$TMP/$s.data" --ns --no-inline -F comm,pid,tid,cpu,time,event,ip,sym,symoff,dso,uregs \
		> "$TMP/$s.merged" 2> "$TMP/$s.merged.err" || { cat "$TMP/$s.merged.err"; fail "perf script $s"; }
	"$PERF" script -i "$TMP/$s.data" --ns --no-inline -F comm,pid,tid,cpu,time,event,ip --no-merge-callchains \
		> "$TMP/$s.raw" 2> "$TMP/$s.raw.err" || { cat "$TMP/$s.raw.err"; fail "perf script --no-merge-callchains $s"; }
	"$PERF" report -i "$TMP/$s.data" --stats > "$TMP/$s.stats" 2>&1 ||
		{ cat "$TMP/$s.stats"; fail "perf report --stats $s"; }
done

cat > "$TMP/check.py" << 'EOF'
import collections
import os
import re
import subprocess
import sys

from stacks import EXEC_FUNCS

HDR = re.compile(r"^\s*(\S.*?)\s+(-?\d+)/(-?\d+)\s+\[(\d+)\]\s+(\d+\.\d+):\s*(.*)$")
UREGS = re.compile(r"^\s*ABI:\d+\s+ip:0x([0-9a-f]+)", re.I)
MARKER = re.compile(r"^\s*\(user callchain deferred, cookie (0x[0-9a-f]+)\)")
RECORD = re.compile(r"PERF_RECORD_CALLCHAIN_DEFERRED cookie (0x[0-9a-f]+) nr (\d+)")
STATS = re.compile(r"DEFERRED CALLCHAINS: (\d+) samples: (\d+) merged, (\d+) without user part; "
                   r"(\d+) records without samples, (\d+) malformed")
WARN = re.compile(r"(\d+) of (\d+) samples with a deferred user callchain got no")
KERNEL = 0xffff800000000000

CHAINS = {
    "rd_leaf": ["rd_leaf", "rd_b", "rd_a", "mg_reader"],
    "pn_leaf": ["pn_leaf", "pn_a", "mg_pinner"],
    "ct_move": ["ct_move", "ct_loop", "main"],
    "ct_nap": ["ct_nap", "ct_loop", "main"],
}
WORKLOAD = ("defer-mig-fp", "mg-read", "mg-pin", "mg-ctl", "mg-late")
errors = []


def error(msg):
    errors.append(msg)
    if len(errors) <= 30:
        print("FAIL: " + msg)


class Ev:
    def __init__(self, m):
        self.comm, self.pid, self.tid = m.group(1), int(m.group(2)), int(m.group(3))
        self.cpu, self.time = int(m.group(4)), m.group(5)
        r = RECORD.search(m.group(6))
        self.record = r is not None
        self.cookie = r.group(1) if r else None
        self.event = None if r else m.group(6).split()[0].rstrip(":")
        self.frames, self.uip = [], None

    @property
    def key(self):
        return (self.tid, self.cpu, self.time, self.event)

    def user(self):
        return [f for f in self.frames if f[0] < KERNEL]

    def kernel(self):
        return [f for f in self.frames if f[0] >= KERNEL]


def parse(path):
    evs, cur = [], None
    for line in open(path):
        if line[0] == "\t":
            if cur is None:
                sys.exit(f"{path}: cannot parse {line!r}")
            f = line.split(None, 1)
            if f[0] == "(user":
                cur.cookie = MARKER.match(line).group(1)
            elif len(f) == 1:
                cur.frames.append((int(f[0], 16), "", None, ""))
            else:
                sym, _, dso = f[1].rstrip().rpartition(" (")
                sym, plus, off = sym.rpartition("+0x")
                cur.frames.append((int(f[0], 16), sym if plus else off,
                                   int(off, 16) if plus else None, dso[:-1]))
        elif line.startswith(" ABI:"):
            m = UREGS.match(line)
            if m:
                cur.uip = int(m.group(1), 16)
        elif line.strip():
            m = HDR.match(line)
            if not m:
                sys.exit(f"{path}: cannot parse {line!r}")
            cur = Ev(m)
            evs.append(cur)
    return evs


def show(frames):
    return " <- ".join(f"{s}+{o:#x}" if o is not None else f"{s}@{os.path.basename(d)}"
                       for _, s, o, d in frames) or "(none)"


def syscall_sites(binary, leaves):
    """{leaf: offset of the instruction after its one syscall}"""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary],
                         check=True, capture_output=True, text=True).stdout
    sites, func, start, seen = {}, None, 0, False
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <([^>]+)>:$", line)
        if m:
            func, start, seen = m.group(2), int(m.group(1), 16), False
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)", line)
        if not m or func not in leaves or func in sites:
            continue
        if seen:
            sites[func] = int(m.group(1), 16) - start
        seen = m.group(2) == "syscall"
    if set(sites) != set(leaves):
        sys.exit(f"FAIL: no syscall in {sorted(set(leaves) - set(sites))} of {binary}")
    return sites


d = sys.argv[1]
sites = syscall_sites(sys.argv[2], CHAINS)
data = {}
for s in ("c0", "all"):
    merged = [e for e in parse(f"{d}/{s}.merged") if not e.record]
    raw = parse(f"{d}/{s}.raw")
    # Keyed by tid, CPU, time and event; a few samples of the idle task
    # have the same time: take them in order.
    by_key = collections.defaultdict(list)
    for e in merged:
        by_key[e.key].append(e)
    samples = [e for e in raw if not e.record]
    if len(samples) != len(merged):
        error(f"{s}: {len(samples)} samples unmerged, {len(merged)} merged")
    for e in samples:
        e.merged = by_key[e.key].pop(0) if by_key[e.key] else None
        if e.merged is None:
            error(f"{s}: {e.comm} {e.key}: not in the merged output")
    data[s] = dict(samples=samples, records=[e for e in raw if e.record])


def ours(e):
    """An event of the workload, after its exec (and not an exited thread's)"""
    return e.comm in WORKLOAD and e.tid > 0


for s in ("c0", "all"):
    D, R = data[s]["samples"], data[s]["records"]
    deferred = [e for e in D if e.cookie]
    rkeys = collections.Counter((r.tid, r.cookie) for r in R)
    skeys = {(e.tid, e.cookie) for e in deferred}
    lost = [e for e in deferred if (e.tid, e.cookie) not in rkeys]
    no_user = [e for e in deferred if e.merged and not e.merged.user()]
    orphans = len([k for k in rkeys if k not in skeys])
    if s == "c0" and any(e.cpu != 0 for e in D):
        error("c0: samples of another CPU than 0")

    # 1) stacks
    per_site = collections.Counter()
    for e in D:
        m = e.merged
        if not ours(e) or m is None:
            continue
        user = m.user()
        if not user:
            ksyms = {f[1].split(".")[0] for f in m.kernel()}
            if not e.cookie and "do_exit" not in ksyms and not ksyms & EXEC_FUNCS:
                # Only a thread that has left its mm (exit_mm() in
                # do_exit()) or is in an exec (the registers of the old
                # program, the memory of the new one) has no user part.
                error(f"{s}: {e.comm} {e.key}: no user part, no deferred marker, "
                      f"not exiting: {show(m.kernel())}")
            continue
        if m.uip is None:
            error(f"{s}: {e.comm} {e.key}: no sampled user IP")
        elif user[0][0] != m.uip:
            error(f"{s}: {e.comm} {e.key}: user IP {m.uip:#x}, stack {show(user)}")
        top = user[0]
        if top[1] in sites and top[2] == sites[top[1]]:
            want = CHAINS[top[1]]
            got = [f[1] for f in user]
            if (got[:-1] != want or len(got) != len(want) + 1 or
                    not os.path.basename(user[-1][3]).startswith("libc.so")):
                error(f"{s}: {e.comm} {e.key}: stack {show(user)}, want "
                      f"{' <- '.join(want)} <- libc")
            per_site[top[1]] += 1
    print(f"{s}: {len(D)} samples ({len(deferred)} deferred), {len(R)} records; "
          f"workload samples in each leaf's system call: "
          + ", ".join(f"{k} {per_site[k]}" for k in CHAINS))
    if per_site["rd_leaf"] < 10 or sum(per_site.values()) - per_site["rd_leaf"] < 5:
        error(f"{s}: too few samples in the leaves' system calls")

    # 2) what perf counts
    wlost = [e for e in lost if ours(e)]
    # mg-late's last switch on CPU 0, where it is pinned (the clocks of
    # the CPUs may disagree a little: an earlier switch on CPU 1 can have
    # a later time).  Every sched_switch sample is mg-late's (the
    # kernel's filter on prev_comm), but perf may still name it by its
    # parent's comm if the rename's COMM record sorts after it.
    late = [e for e in D if e.event.startswith("sched:") and e.cpu == 0]
    last = late[-1] if late else None
    print(f"{s}: {len(lost)} samples without record ({len(wlost)} of the workload: "
          + ", ".join(f"{e.comm} {e.event} {e.cpu} {e.time}" for e in wlost) + ")")
    if not last or not last.cookie:
        error(f"{s}: no deferred sched_switch sample of mg-late")
    elif {(e.tid, e.cookie) for e in wlost} != {(last.tid, last.cookie)}:
        error(f"{s}: the workload's samples without record are not exactly those of "
              f"mg-late's last entry, {last.cookie}: "
              + ", ".join(f"{e.comm} {e.key} {e.cookie}" for e in wlost))
    st = None
    for line in open(f"{d}/{s}.stats"):
        m = STATS.search(line)
        if m:
            st = tuple(int(x) for x in m.groups())
        m = re.search(r"^\s*(LOST|LOST_SAMPLES) events:\s+(\d+)", line)
        if m and int(m.group(2)):
            error(f"{s}: {m.group(2)} {m.group(1)} events: the test needs every record")
    want = (len(deferred), len(deferred) - len(no_user), len(no_user), orphans, 0)
    print(f"{s}: perf report --stats: {st}; from the raw records: samples, merged, "
          f"without user part, records without samples, malformed = {want}")
    # perf report --stats reads the events unordered: a record read before
    # its sample counts as one without samples, and its sample as one
    # without user part (a perf tool limit, not the kernel's): only the
    # number of samples and of malformed records are exact there; the
    # merge itself is checked in the ordered perf script above.
    if not st or (st[0], st[4]) != (want[0], want[4]):
        error(f"{s}: perf report --stats says {st}, want {want} (samples and malformed)")
    if len(no_user) != len(lost):
        error(f"{s}: {len(no_user)} samples without user part, {len(lost)} without record")
        for e in no_user:
            if (e.tid, e.cookie) in rkeys:
                error(f"{s}: {e.comm} {e.key} cookie {e.cookie}: not merged, its record "
                      f"is there")
    warn = [WARN.search(l) for l in open(f"{d}/{s}.merged.err")]
    warn = [(int(w.group(1)), int(w.group(2))) for w in warn if w]
    if warn != ([(len(lost), len(deferred))] if lost else []):
        error(f"{s}: perf script warned {warn}, want {len(lost)} of {len(deferred)}")
    for name in ("merged.err", "raw.err"):
        for l in open(f"{d}/{s}.{name}"):
            if re.search(r"malformed|Skipped|orphan|problem", l):
                error(f"{s}: perf script ({name}): {l.strip()}")

# 3) the records of the workload: the same in both sessions
def wrecs(s):
    return collections.Counter((r.tid, r.cookie, r.cpu, tuple(f[0] for f in r.frames))
                               for r in data[s]["records"] if ours(r))


c0r, allr = wrecs("c0"), wrecs("all")
if c0r != allr:
    error(f"records of the workload: {sum(c0r.values())} in -C 0, {sum(allr.values())} in -a; "
          f"{sum((c0r - allr).values())} only in -C 0, {sum((allr - c0r).values())} only in -a")
on1 = {(t, c) for t, c, cpu, _ in c0r if cpu == 1}
n1 = sum(1 for e in data["c0"]["samples"]
         if ours(e) and (e.tid, e.cookie) in on1 and e.merged and e.merged.user())
print(f"c0: {len(on1)} records of the workload written on CPU 1, merged into {n1} samples "
      f"taken on CPU 0")
if not n1:
    error("c0: no sample taken on CPU 0 got its record from CPU 1: the workload did not "
          "migrate inside an entry that -C 0 sampled")
if errors:
    sys.exit(f"{len(errors)} errors")
print("OK")
EOF
PYTHONPATH=$LIB python3 "$TMP/check.py" "$TMP" "$prog" || fail "deferred callchains of -C 0 and -a sessions"
