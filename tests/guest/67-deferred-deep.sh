# SPDX-License-Identifier: GPL-2.0
# The size limits of deferred user callchains, on user stacks deeper than
# a record can hold.  The workload (defer-deep) runs two threads, dp-600
# and dp-300, whose leaf (a read() of /dev/zero, then a computation) is
# under 601 and 301 frames of recursion: a user stack of DEPTH + 5 frames
# (dp_leaf, DEPTH + 1 dp_rec, dp_top, dp_thread, one frame of libc).
# Each thread runs for DEEP_MS (400) ms of CPU time, so that at DEEP_FREQ
# (200) Hz each has some 80 samples however busy the machine is.
#
# The documented limits (docs: the ABI; kernel: perf_callchain(),
# perf_callchain_deferred_output()):
#  - a PERF_RECORD_CALLCHAIN_DEFERRED has at most min(510, sample_max_stack
#    of its defer_output event) user ips; perf record gives its tracking
#    event the max-stack of the sampling events (--call-graph fp,defer,M;
#    default: sysctl kernel.perf_event_max_stack, 127);
#  - a sample's kernel part is cut at max-stack, as without deferral;
#  - the marker and cookie take 2 of the kernel.perf_event_max_contexts_per_stack
#    context slots, 3 with a kernel part: where they don't fit, the sample
#    has an immediate user callchain instead (all its ips, kernel and user,
#    cut at max-stack together), or none where even its context doesn't
#    fit; no marker, no record for it.
#
# For each setting, cpu-clock with --call-graph fp,defer[,M], every sample of
# dp-600 and dp-300 in dp_leaf must have the deferred marker (perf script
# --no-merge-callchains) exactly where documented, and exactly as many user
# frames, of the chain, as documented; every record of theirs exactly
# min(DEPTH + 5, 510, max-stack) ips; perf report --stats: every deferred
# sample merged, no record without samples, none malformed; perf script
# says nothing else.  Settings (max-stack M, contexts C):
#   M 64, 4, default 127; sysctl perf_event_max_stack 1024 (M
#   1024: 510 for dp-600, the whole 305 frames for dp-300); sysctl
#   max_contexts_per_stack 2 (samples in the kernel immediate: 127 ips in
#   all) and 1 (samples in the kernel without user part, samples in user
#   space immediate).  With 1, a third thread, dp-cycle, makes its system
#   calls with %rbp at a frame that points to itself: the user context
#   does not fit there, and perf_callchain_user() must not walk round
#   that frame for ever in the interrupt (it did: only the stores into
#   the callchain, which stop at max-stack, ended the walk).
. "$(dirname "$0")/lib.sh"

prog=$WORKLOADS/defer-deep-fp
ms=${DEEP_MS:-400}
freq=${DEEP_FREQ:-200}
[ -x "$prog" ] || fail "no $prog (make -C tests/workloads)"
sys=/proc/sys/kernel
stack0=$(cat $sys/perf_event_max_stack) && ctx0=$(cat $sys/perf_event_max_contexts_per_stack) ||
	fail "no perf_event_max_stack sysctls"
[ "$ctx0" -ge 3 ] || fail "kernel.perf_event_max_contexts_per_stack is $ctx0, want at least 3"
restore() {
	echo "$stack0" > $sys/perf_event_max_stack
	echo "$ctx0" > $sys/perf_event_max_contexts_per_stack
}
trap restore EXIT

cat > "$TMP/check.py" << 'EOF'
import os
import re
import sys

from stacks import EXEC_FUNCS

HDR = re.compile(r"^\s*(\S.*?)\s+(-?\d+)\s+\[(\d+)\]\s+(\d+\.\d+):\s*(.*)$")
MARKER = re.compile(r"^\s*\(user callchain deferred, cookie (0x[0-9a-f]+)\)")
RECORD = re.compile(r"PERF_RECORD_CALLCHAIN_DEFERRED cookie (0x[0-9a-f]+) nr (\d+)")
STATS = re.compile(r"DEFERRED CALLCHAINS: (\d+) samples: (\d+) merged, (\d+) without user part; "
                   r"(\d+) records without samples, (\d+) malformed")
KERNEL_DSO = "[kernel.kallsyms]"
# A thread that has left its mm, or is in an exec, has no user part.
EXIT_EXEC = {"do_exit"} | EXEC_FUNCS
RECORD_MAX = 510
errors = []


def error(msg):
    errors.append(msg)
    if len(errors) <= 20:
        print("FAIL: " + msg)


class Ev:
    def __init__(self, m):
        self.comm, self.tid, self.cpu, self.time = m.group(1), int(m.group(2)), m.group(3), m.group(4)
        r = RECORD.search(m.group(5))
        self.record = r is not None
        self.cookie = r.group(1) if r else None
        self.nr = int(r.group(2)) if r else None
        self.frames = []

    def user(self):
        return [f for f in self.frames if f[1] != KERNEL_DSO]

    def kernel(self):
        return [f for f in self.frames if f[1] == KERNEL_DSO]


def parse(path):
    evs, cur = [], None
    for line in open(path):
        if line[0] == "\t":
            if cur is None:
                sys.exit(f"{path}: cannot parse {line!r}")
            f = line.split(None, 1)
            if f[0] == "(user":
                cur.cookie = MARKER.match(line).group(1)
                continue
            sym, _, dso = f[1].rstrip().rpartition(" (")
            cur.frames.append((sym.rpartition("+0x")[0] or sym, dso[:-1]))
        elif line.strip():
            m = HDR.match(line)
            if not m:
                sys.exit(f"{path}: cannot parse {line!r}")
            cur = Ev(m)
            evs.append(cur)
    return evs


def chain(depth, n):
    """The first n frames of dp-DEPTH's stack in dp_leaf."""
    return (["dp_leaf"] + ["dp_rec"] * (depth + 1) + ["dp_top", "dp_thread", "libc"])[:n]


def names(user):
    return ["libc" if os.path.basename(d).startswith("libc.so") else s for s, d in user]


def show(user):
    out, last, n = [], None, 0
    for s in names(user) + [None]:
        if s == last:
            n += 1
            continue
        if last is not None:
            out.append(f"{last} x{n}" if n > 1 else last)
        last, n = s, 1
    return " <- ".join(out) or "(none)"


d, name, M, C = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
merged = [e for e in parse(f"{d}/{name}.merged") if not e.record]
raw = parse(f"{d}/{name}.raw")
samples = [e for e in raw if not e.record]
records = [e for e in raw if e.record]
if len(merged) != len(samples):
    error(f"{len(samples)} samples unmerged, {len(merged)} merged")
merged = {(e.tid, e.cpu, e.time): e for e in merged}
count = {}
cut_kernel = 0
for e in samples:
    m = re.match(r"dp-(\d+)$", e.comm)
    if not m:
        continue
    depth, kmode = int(m.group(1)), bool(e.kernel())
    mm = merged.get((e.tid, e.cpu, e.time))
    if mm is None:
        error(f"{e.comm} {e.time}: not in the merged output")
        continue
    user, nk = mm.user(), len(mm.kernel())
    if nk != len(e.kernel()):
        error(f"{e.comm} {e.time}: {len(e.kernel())} kernel frames, {nk} merged")
    if nk > M:
        error(f"{e.comm} {e.time}: {nk} kernel frames, max-stack {M}")
    cut_kernel += nk == M
    if e.cookie and e.user():
        error(f"{e.comm} {e.time}: user frames and the deferred marker")
    marker = C >= (3 if kmode else 2)
    if not user:
        if kmode and C < 2:
            pass        # no room for the user context: checked below
        elif {f[0].split(".")[0] for f in mm.kernel()} & EXIT_EXEC:
            continue    # a thread that has left its mm, or is in an exec
        else:
            error(f"{e.comm} {e.time}: no user part: {show(mm.kernel())}")
            continue
    elif user[0][0] != "dp_leaf":
        continue        # not in the leaf: thread start or end
    if bool(e.cookie) != marker:
        error(f"{e.comm} {e.time} ({'kernel' if kmode else 'user'}): deferred marker "
              f"{'present' if e.cookie else 'absent'} with max_contexts_per_stack {C}")
    if marker:
        n = min(depth + 5, RECORD_MAX, M)
    elif kmode:
        n = min(depth + 5, M - nk) if C >= 2 else 0
    else:
        n = min(depth + 5, M)
    key = (e.comm, "kernel" if kmode else "user")
    count[key] = count.get(key, 0) + 1
    if names(user) != chain(depth, n):
        error(f"{e.comm} {e.time} ({key[1]}, {nk} kernel frames, marker {bool(e.cookie)}): "
              f"{len(user)} user frames {show(user)}, want {n}: {show([(s, '') for s in chain(depth, n)])}")
for e in records:
    m = re.match(r"dp-(\d+)$", e.comm)
    if not m or not e.frames or e.frames[0][0] != "dp_leaf":
        continue
    depth = int(m.group(1))
    n = min(depth + 5, RECORD_MAX, M)
    count[(e.comm, "records")] = count.get((e.comm, "records"), 0) + 1
    if e.nr != n or names(e.frames) != chain(depth, n):
        error(f"{e.comm} record {e.cookie}: nr {e.nr}, {len(e.frames)} frames {show(e.frames)}, "
              f"want {n}")
print(f"{name}: max-stack {M}, max_contexts_per_stack {C}: in dp_leaf: "
      + ", ".join(f"{k[0]} {k[1]} {v}" for k, v in sorted(count.items()))
      + f"; {cut_kernel} samples with exactly {M} kernel frames")
for comm in ("dp-600", "dp-300"):
    for what in ("kernel", "user") + (("records",) if C >= 2 else ()):
        if count.get((comm, what), 0) < 10:
            error(f"{count.get((comm, what), 0)} {comm} {what} in dp_leaf, want at least 10")
if M < 16 and not cut_kernel:
    error(f"no sample has its kernel part cut at {M}")

deferred = [e for e in samples if e.cookie]
st = None
for line in open(f"{d}/{name}.stats"):
    m = STATS.search(line)
    if m:
        st = tuple(int(x) for x in m.groups())
    m = re.search(r"^\s*(LOST|LOST_SAMPLES) events:\s+(\d+)", line)
    if m and int(m.group(2)):
        error(f"{m.group(2)} {m.group(1)} events")
want = (len(deferred), len(deferred), 0, 0, 0) if deferred or records else None
print(f"{name}: perf report --stats: {st}, want {want}")
if st != want:
    error(f"perf report --stats: {st}, want {want} (samples, merged, without user part, "
          f"records without samples, malformed)")
for err in ("merged.err", "raw.err"):
    for line in open(f"{d}/{name}.{err}"):
        if line.strip():
            error(f"perf script ({err}): {line.strip()}")
if errors:
    sys.exit(f"{name}: {len(errors)} errors")
EOF

# run NAME MAX_STACK_SYSCTL CONTEXTS_SYSCTL [MAX_STACK [THREAD]]: record
# the workload (and THREAD) with the sysctls set, --call-graph
# fp,defer[,MAX_STACK], and check it; the max-stack of the events is
# MAX_STACK, else the sysctl.
run() {
	local name=$1 stack=$2 ctx=$3 m=${4:-$2} rc
	echo "$stack" > $sys/perf_event_max_stack && echo "$ctx" > $sys/perf_event_max_contexts_per_stack ||
		fail "$name: cannot set the sysctls (perf events open?)"
	dmesg > "$TMP/dmesg.before"
	# 8 MiB buffers: records of up to 4 KiB, which a perf slowed down in
	# a busy guest must not lose (LOST fails the check).
	timeout -k 10 120 "$PERF" record -q -e cpu-clock -F "$freq" --call-graph "fp,defer${4:+,$4}" --sample-cpu -B \
		-m 2048 -o "$TMP/$name.data" -- "$prog" "$ms" 600 300 ${5:-} > "$TMP/$name.log" 2>&1
	rc=$?
	if [ $rc != 0 ]; then
		cat "$TMP/$name.log"
		dmesg | diff "$TMP/dmesg.before" - | grep '^>' | head -60
		fail "$name: perf record: exit $rc"
	fi
	restore
	# perf script prints --max-stack (default 127) frames of a callchain
	"$PERF" script -i "$TMP/$name.data" --ns --no-inline --max-stack 4096 \
		-F comm,tid,cpu,time,ip,sym,symoff,dso > "$TMP/$name.merged" 2> "$TMP/$name.merged.err" ||
		{ cat "$TMP/$name.merged.err"; fail "$name: perf script"; }
	"$PERF" script -i "$TMP/$name.data" --ns --no-inline --max-stack 4096 --no-merge-callchains \
		-F comm,tid,cpu,time,ip,sym,symoff,dso > "$TMP/$name.raw" 2> "$TMP/$name.raw.err" ||
		{ cat "$TMP/$name.raw.err"; fail "$name: perf script --no-merge-callchains"; }
	"$PERF" report -i "$TMP/$name.data" --stats > "$TMP/$name.stats" 2>&1 ||
		{ cat "$TMP/$name.stats"; fail "$name: perf report --stats"; }
	PYTHONPATH=$LIB python3 "$TMP/check.py" "$TMP" "$name" "$m" "$ctx" || failed="$failed $name"
}

failed=

run max-stack-64 "$stack0" "$ctx0" 64
run default "$stack0" "$ctx0"
run max-stack-4 "$stack0" "$ctx0" 4
run sysctl-stack-1024 1024 "$ctx0"
run contexts-2 "$stack0" 2
run contexts-1 "$stack0" 1 "" cycle
[ -z "$failed" ] || fail "$failed"
