# SPDX-License-Identifier: GPL-2.0
# User stacks across the exec of a setuid-root program by an unprivileged
# one, sampled by perf record (root) with --call-graph fp,defer.
#
# The workload (defer-exec, not PIE): an unprivileged program (dx-old, as
# nobody) execs a setuid-root copy of itself (dx-suid) with 768 KiB of
# environment, which execs dx-old again after giving up root: 4 execs of
# dx-suid, 3 of dx-old.  Every execve() is made from a known chain:
# ex_exec <- ex_b <- ex_a <- main <- libc in dx-old, nw_exec <- nw_b <-
# nw_a <- main <- libc in dx-suid; every other dx-old makes it from
# exec_fakefp instead, with %rbp at fake_frame, a frame in .data whose
# return address dx-old sets to fake_old_ra, where the file (and so the
# new program, until it writes there) has fake_new_ra.  The programs are
# told apart by these functions: both files are the same, and perf names
# the new one ":PID" (the kernel reports an EXIT for the task at a setuid
# exec, perf_event_exit_task(), and perf forgets its comm).
#
# The kernel copies the environment in the execve() entry before the exec
# starts: samples there (kmem:mm_page_alloc of the argument pages, cpu-
# clock) are deferred, and their records written at the exec, before the
# old program's memory goes.  During the exec itself (bprm_execve()), the
# mm is replaced long before the registers: samples there get no user
# part at all, neither deferred nor unwound at once (which would walk the
# old program's registers in the new setuid program's memory: where the
# old program had fake_old_ra, the new one has fake_new_ra).  So, in perf
# record -a (cpu-clock 500 Hz, and every hit of kmem:mm_page_alloc of
# dx-old and dx-suid, sched:sched_prepare_exec, task:task_rename,
# sched:sched_process_exec, mmap_lock:mmap_lock_start_locking of dx-old
# and dx-suid):
#  1) sched_prepare_exec, task_rename, sched_process_exec: one sample per
#     exec each (of perf's child into setpriv and of setpriv into dx-old
#     too), no deferred marker, no user part;
#  2) no sample in the exec (bprm_execve() and what it calls, from where
#     it sets in_execve: the loading of the new program) has a user part;
#     none has fake_new_ra;
#  5) every deferred sample of the argument copy has the old program's
#     stack exactly (exec_fakefp alone for the fake ones: the kernel's
#     unwinder does not follow a frame below the stack pointer; a sample
#     in user mode at its first instruction, before it sets %rbp, has
#     the whole chain, one at its second the chain without ex_b), at least
#     100 per kind of exec; every other sample from an exec site a prefix
#     of the old chain; no sample of the workload without user part, no
#     stack with frames of both programs or fake_new_ra;
#  6) perf report --stats and perf script's warning count what is left
#     without user part (none of the workload's), and no record is
#     malformed.
# Then the same exec chain (2 execs of dx-suid) in perf record's own task
# events: those go away at the first setuid exec (perf_event_exit_task();
# perf record then ends and kills the workload), after the kernel has
# written the old program's records: every deferred sample merged (at
# least 100 of the argument copy), one sched_prepare_exec and one
# task_rename of that exec (and those of the execs before), nothing of
# dx-suid.  The kernel log gets no warning.
. "$(dirname "$0")/lib.sh"

prog=$WORKLOADS/defer-exec-fp
[ -x "$prog" ] || fail "no $prog (make -C tests/workloads)"
command -v setpriv > /dev/null || fail "no setpriv"
tracing=/sys/kernel/tracing
[ -d $tracing/events ] || mount -t tracefs tracefs $tracing 2> /dev/null
for ev in sched/sched_prepare_exec task/task_rename sched/sched_process_exec \
	kmem/mm_page_alloc mmap_lock/mmap_lock_start_locking; do
	[ -d $tracing/events/$ev ] || fail "no tracepoint $ev"
done

# A directory the unprivileged user can reach, on tmpfs without nosuid
dir=$(mktemp -d /tmp/defer-suid.XXXXXX) || fail "mktemp"
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
findmnt -n -o OPTIONS -T "$dir" | grep -qw nosuid && fail "$dir is nosuid"
install -m 755 "$prog" "$dir/dx-old" && install -m 4755 "$prog" "$dir/dx-suid" ||
	fail "install"
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
"${nobody[@]}" "$dir/dx-old" old 1 "$dir/dx-old" "$dir/dx-suid" 64 0 ||
	fail "dx-old -> dx-suid without perf: exit $? (setuid not honoured?)"

dmesg > "$TMP/dmesg.before"
ours='comm == "dx-old" || comm == "dx-suid"'
# every hit of a tracepoint: -c 1 (perf record's -F or -c is for all
# events, terms for tracepoints can't say it), and cpu-clock at 500 Hz
events=(-c 1 -e cpu-clock/freq=500/ -e kmem:mm_page_alloc --filter "$ours"
	-e sched:sched_prepare_exec -e task:task_rename -e sched:sched_process_exec
	-e mmap_lock:mmap_lock_start_locking --filter "$ours")
fields=comm,pid,tid,cpu,time,event,ip,sym,symoff,dso

# record NAME PERF-RECORD-OPTIONS... -- ARGS: record the exec chain.  In
# task mode perf record ends when its events go away, at the setuid exec,
# and kills the workload: its exit status is not the workload's then.
record() {
	local name=$1
	shift
	"$PERF" record -q "${events[@]}" --call-graph fp,defer --sample-cpu -m 1024 \
		-o "$TMP/$name.data" "$@" > "$TMP/$name.log" 2>&1 ||
		[ "$name" = task ] || { cat "$TMP/$name.log"; fail "$name: perf record"; }
	"$PERF" script -i "$TMP/$name.data" --ns --no-inline -F $fields \
		> "$TMP/$name.merged" 2> "$TMP/$name.merged.err" ||
		{ cat "$TMP/$name.merged.err"; fail "$name: perf script"; }
	"$PERF" script -i "$TMP/$name.data" --ns --no-inline -F $fields --no-merge-callchains \
		> "$TMP/$name.raw" 2> "$TMP/$name.raw.err" ||
		{ cat "$TMP/$name.raw.err"; fail "$name: perf script --no-merge-callchains"; }
	"$PERF" report -i "$TMP/$name.data" --stats > "$TMP/$name.stats" 2>&1 ||
		{ cat "$TMP/$name.stats"; fail "$name: perf report --stats"; }
}

cat > "$TMP/check.py" << 'EOF'
import collections
import os
import re
import sys

from stacks import EXEC_FUNCS

HDR = re.compile(r"^\s*(\S.*?)\s+(-?\d+)/(-?\d+)\s+\[(\d+)\]\s+(\d+\.\d+):\s*(.*)$")
MARKER = re.compile(r"^\s*\(user callchain deferred, cookie (0x[0-9a-f]+)\)")
RECORD = re.compile(r"PERF_RECORD_CALLCHAIN_DEFERRED cookie (0x[0-9a-f]+) nr (\d+)")
STATS = re.compile(r"DEFERRED CALLCHAINS: (\d+) samples: (\d+) merged, (\d+) without user part; "
                   r"(\d+) records without samples, (\d+) malformed")
WARN = re.compile(r"(\d+) of (\d+) samples with a deferred user callchain got no")
KERNEL_DSO = "[kernel.kallsyms]"
OLD = ["ex_exec", "ex_b", "ex_a", "main", "libc"]
FAKE_OLD = ["exec_fakefp", "fake_old_ra"]
NEW = ["nw_exec", "nw_b", "nw_a", "main", "libc"]
OLD_FUNCS = {"ex_exec", "ex_b", "ex_a", "ex_spin", "exec_fakefp", "fake_old_ra"}
NEW_FUNCS = {"nw_exec", "nw_b", "nw_a", "nw_spin"}
errors = []


def error(msg):
    errors.append(msg)
    if len(errors) <= 30:
        print("FAIL: " + msg)


class Ev:
    def __init__(self, m, line):
        self.comm, self.pid, self.tid = m.group(1), int(m.group(2)), int(m.group(3))
        self.cpu, self.time = int(m.group(4)), m.group(5)
        r = RECORD.search(line)
        self.record = r is not None
        # the event name, "sched:sched_prepare_exec:", "cpu-clock:ppp:"
        self.event = None if r else m.group(6).split()[0].rstrip(":")
        self.cookie = r.group(1) if r else None
        self.frames = []
        # offset of the interrupted user IP in its function, if known
        self.top_off = None

    @property
    def key(self):
        return (self.tid, self.cpu, self.time, self.event)

    def user(self):
        return [f for f in self.frames if f[1] != KERNEL_DSO]

    def kernel(self):
        return [f[0] for f in self.frames if f[1] == KERNEL_DSO]

    def names(self):
        return ["libc" if os.path.basename(d).startswith("libc.so") else
                "ld.so" if os.path.basename(d).startswith("ld-linux") else s
                for s, d in self.user()]


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
            name, plus, off = sym.rpartition("+0x")
            if dso[:-1] != KERNEL_DSO and not cur.user() and plus:
                cur.top_off = int(off, 16)
            cur.frames.append((name if plus else sym, dso[:-1]))
        elif line.strip():
            m = HDR.match(line)
            if not m:
                sys.exit(f"{path}: cannot parse {line!r}")
            cur = Ev(m, line)
            evs.append(cur)
    return evs


d, name, mode = sys.argv[1], sys.argv[2], sys.argv[3]
raw = parse(f"{d}/{name}.raw")
merged = [e for e in parse(f"{d}/{name}.merged") if not e.record]
samples = [e for e in raw if not e.record]
records = [e for e in raw if e.record]
if len(samples) != len(merged):
    error(f"{len(samples)} samples unmerged, {len(merged)} merged")
# Keyed by tid, CPU, time and event; a few samples of the idle task have
# the same time: take them in order.
by_key = collections.defaultdict(list)
for e in merged:
    by_key[e.key].append(e)
for e in samples:
    e.merged = by_key[e.key].pop(0) if by_key[e.key] else None
    if e.merged is None:
        error(f"{e.comm} {e.key}: not in the merged output")
wpids = {e.pid for e in samples if e.comm == "dx-old"}
if len(wpids) != 1:
    sys.exit(f"FAIL: processes named dx-old: {sorted(wpids)}, want one")
wpid = wpids.pop()

# The stack of the old program's memory at each execve() site; the
# kernel's deferred unwinder stops at fake_frame (below the stack pointer).
SITES = {"ex_exec": OLD, "exec_fakefp": FAKE_OLD, "nw_exec": NEW}
# bprm_execve() before it sets in_execve: the old program, whole
PRE_EXEC = {"prepare_bprm_creds", "prepare_exec_creds", "check_unsafe_exec"}
# spinlock and mutex text and lockdep: a sample where a lock is taken or
# released lands there (bprm_execve() takes cred_guard_mutex in the
# prepare_bprm_creds() inlined into it, before in_execve)
LOCKING = re.compile(r"^(__lock_text_start|_raw_spin|_raw_read|_raw_write|do_raw_|lock_|__lock_|"
                     r"lockdep_|mark_lock|trace_hardirqs_|preempt_count_|mutex_|__mutex_)")
DEFERRED = {"ex_exec": OLD, "exec_fakefp": ["exec_fakefp"], "nw_exec": NEW}
# A sample in user mode in exec_fakefp ("push %rbp; lea fake_frame(%rip),
# %rbp; mov $SYS_execve, %eax; syscall"): at the push the return address
# is at the top of the stack and %rbp is ex_b's frame pointer, the whole
# chain; at the lea the frame-pointer rule takes ex_b's frame for
# exec_fakefp's and loses ex_b; then %rbp is fake_frame.
FAKE_AT = {0: ["exec_fakefp"] + OLD[1:], 1: ["exec_fakefp"] + OLD[2:]}
kinds = collections.Counter()
for e in samples:
    m = e.merged
    if e.pid != wpid or m is None:
        continue
    names = m.names()
    # kernel functions without their .isra.0 and such
    ksyms = {k.split(".")[0] for k in m.kernel()}
    ev = e.event
    what = f"{e.comm} {ev} {e.time}: {' <- '.join(names) or '(no user part)'}"
    if ev.startswith(("sched:", "task:")) and e.cookie:
        error(f"{what}: a deferred marker during the exec")
    if "fake_new_ra" in names:
        error(f"{what}: the old registers walked in the new program's memory")
    if set(names) & OLD_FUNCS and set(names) & NEW_FUNCS:
        error(f"{what}: frames of both programs")
    # in bprm_execve()'s own code (or a lock taken or released there, in
    # a function inlined into it): before or after it sets in_execve
    kleaf = next((k.split(".")[0] for k in m.kernel() if not LOCKING.match(k)), "")
    ambiguous = kleaf == "bprm_execve"
    # in the exec: the mm replaced, the registers still the old program's
    in_exec = bool(ksyms & EXEC_FUNCS) and not ksyms & PRE_EXEC and not ambiguous
    if ev in ("sched:sched_prepare_exec", "task:task_rename", "sched:sched_process_exec"):
        kinds[(ev.split(":")[1],)] += 1
    if in_exec:
        kinds[("in exec",)] += 1
        if names:
            error(f"{what}: a user part during the exec, in {' <- '.join(m.kernel())}")
        continue
    if not names:
        if e.cookie or ("do_exit" not in ksyms and not ambiguous):
            error(f"{what}: no user part")
        continue
    top = names[0]
    if top in SITES and e.cookie:
        kinds[("deferred", top, "copy_strings" if "copy_strings" in ksyms else "elsewhere")] += 1
        want = DEFERRED[top]
        if top == "exec_fakefp" and not m.kernel():
            want = FAKE_AT.get(m.top_off, want)
        if names != want:
            error(f"{what}: want {' <- '.join(want)}")
    elif top in SITES:
        # unwound at once, during the exec: the old memory, or none of it;
        # elf_load() maps the program, then the dynamic loader
        where = "elf_load" if "elf_load" in ksyms else "elsewhere"
        kinds[("immediate", top, where, len(names))] += 1
        if names != SITES[top][:len(names)]:
            error(f"{what}: not a prefix of {' <- '.join(SITES[top])}")

for k, v in sorted(kinds.items()):
    print(f"{name}: {' '.join(str(x) for x in k)}: {v}")


def expect(what, got, want):
    if got != want:
        error(f"{what}: {got}, want {want}")


def total(*key):
    return sum(v for k, v in kinds.items() if k[:len(key)] == key)


if mode == "all":
    # 2 plain and 2 fake execs of dx-suid, 3 of dx-old
    for site in ("ex_exec", "exec_fakefp", "nw_exec"):
        n = total("deferred", site, "copy_strings")
        if n < 100:
            error(f"{n} deferred samples in copy_strings() from {site}, want at least 100")
    # and, before them, perf's child execs setpriv, which execs dx-old
    expect("sched_prepare_exec", total("sched_prepare_exec"), 9)
    expect("task_rename", total("task_rename"), 9)
    expect("sched_process_exec", total("sched_process_exec"), 9)
    # samples in the exec, without user part: the one of each tracepoint
    # at least, and the loading of the new programs
    n = total("in exec")
    if n < 23:
        error(f"{n} samples in the exec, want at least 23")
else:
    # task events: gone at the setuid exec, after the old program's
    # records.  perf's child execs setpriv, which execs dx-old, which
    # execs dx-suid; the events are enabled in the first exec, after its
    # sched_prepare_exec and before its task_rename, and go in the third
    # before its sched_process_exec.
    expect("sched_prepare_exec", total("sched_prepare_exec"), 2)
    expect("task_rename", total("task_rename"), 3)
    expect("sched_process_exec", total("sched_process_exec"), 2)
    expect("samples of dx-suid", sum(v for k, v in kinds.items() if "nw_exec" in k), 0)
    n = total("deferred", "ex_exec", "copy_strings")
    if n < 100:
        error(f"{n} deferred samples in copy_strings() of dx-old, want at least 100")

deferred = [e for e in samples if e.cookie]
rkeys = {(r.tid, r.cookie) for r in records}
skeys = {(e.tid, e.cookie) for e in deferred}
no_user = [e for e in deferred if e.merged and not e.merged.user()]
nolost = [e for e in deferred if (e.tid, e.cookie) not in rkeys]
want = (len(deferred), len(deferred) - len(no_user), len(no_user), len(rkeys - skeys), 0)
st = None
for line in open(f"{d}/{name}.stats"):
    m = STATS.search(line)
    if m:
        st = tuple(int(x) for x in m.groups())
    m = re.search(r"^\s*(LOST|LOST_SAMPLES) events:\s+(\d+)", line)
    if m and int(m.group(2)):
        error(f"{m.group(2)} {m.group(1)} events")
print(f"{name}: perf report --stats {st}, from the raw output {want}")
expect("perf report --stats (samples, merged, without user part, records without samples, "
       "malformed)", st, want)
expect("samples without user part, samples without record", len(no_user), len(nolost))
warn = [WARN.search(l) for l in open(f"{d}/{name}.merged.err")]
warn = [(int(w.group(1)), int(w.group(2))) for w in warn if w]
expect("perf script's warning", warn, [(len(nolost), len(deferred))] if nolost else [])
for err in ("merged.err", "raw.err"):
    for l in open(f"{d}/{name}.{err}"):
        if re.search(r"malformed|Skipped|orphan|problem", l):
            error(f"perf script ({err}): {l.strip()}")
if errors:
    sys.exit(f"{name}: {len(errors)} errors")
EOF

failed=
record all -a -- "${nobody[@]}" "$dir/dx-old" old 4 "$dir/dx-old" "$dir/dx-suid" 768 0
PYTHONPATH=$LIB python3 "$TMP/check.py" "$TMP" all all || failed="$failed perf-record-a"
record task -- "${nobody[@]}" "$dir/dx-old" old 2 "$dir/dx-old" "$dir/dx-suid" 768 0
PYTHONPATH=$LIB python3 "$TMP/check.py" "$TMP" task task || failed="$failed perf-record-task"

dmesg > "$TMP/dmesg.after"
diff "$TMP/dmesg.before" "$TMP/dmesg.after" | sed -n 's/^> //p' > "$TMP/dmesg.new"
if grep -E "WARNING|BUG|Oops|Call Trace|unwind" "$TMP/dmesg.new"; then
	failed="$failed kernel-log"
fi
[ -z "$failed" ] || fail "$failed"
