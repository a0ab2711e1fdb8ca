# SPDX-License-Identifier: GPL-2.0
# No deferred user callchain for a sample of a guest.
#
# A vCPU task's cpu-clock (hrtimer) sample taken while the vCPU runs its
# guest is a guest sample: on SVM the host interrupt that ends the guest's
# run is taken in vcpu_enter_guest() between kvm_before_interrupt() and
# kvm_after_interrupt(), so perf_guest_state() is set for it, the sample's
# header misc is PERF_RECORD_MISC_GUEST_KERNEL (or GUEST_USER) and its ip
# the guest's IP.  Its registers are the guest's: x86's
# perf_callchain_user() gives no user part for it, and the kernel must not
# defer one either (perf_defer_user_callchain() returns no cookie when
# perf_guest_state() is non-zero): a deferred record would put the VMM's
# user stack under the guest's sample.
#
# A kernel without that check writes guest samples as
#     [PERF_CONTEXT_KERNEL, PERF_CONTEXT_USER_DEFERRED, cookie]
# and, when the vCPU task returns to user space after KVM_RUN, a
# PERF_RECORD_CALLCHAIN_DEFERRED with that cookie and the VMM's stack
# (vcpu_enter <- vcpu_loop <- vmm_run <- main <- libc): check 2 fails on
# every guest sample.  With the check, a guest sample is
#     [PERF_CONTEXT_KERNEL, PERF_CONTEXT_USER]
# (no frame in either part), as with --call-graph fp.
#
# The workload, kvm-spin, is a minimal VMM (bare /dev/kvm ioctls) whose
# guest loops in real mode at 0x1000; a SIGALRM every 2 ms makes KVM_RUN
# return -EINTR, then vmm_spin spins in user space until the next one, and
# the vCPU enters the guest again, until it has had KVM_MS ms of CPU time
# in KVM_RUN:
#   main -> vmm_run -> vcpu_loop -> vcpu_enter (KVM_RUN)  /  -> vmm_spin
# It is recorded twice at once, with cpu-clock at 2000 Hz, --call-graph
# fp,defer and --call-graph fp.  From perf report -D (perf script drops
# guest samples: this perf isn't perf kvm --guest) and perf script
# (merged, and --no-merge-callchains):
#  1) there are guest samples of kvm-spin's vCPU thread (at least
#     GUEST_MIN), their ip in the guest's loop, and none of another task;
#  2) every one's callchain is exactly [PERF_CONTEXT_KERNEL,
#     PERF_CONTEXT_USER]: no PERF_CONTEXT_USER_DEFERRED, no cookie, no
#     frame, so no record can be matched to it;
#  3) host samples of the vCPU thread in vmm_spin (user space, at least
#     HOST_MIN) and in the kernel in KVM_RUN (vcpu_enter) have the known
#     user stack exactly, from their deferred records (fp,defer) or
#     immediate (fp); every record of the thread starting in vcpu_enter
#     has that stack; samples of KVM's worker threads (vhost tasks, user
#     workers) have no deferred marker;
#  4) every cookie of a sample has its record and every record answers a
#     sample (perf report --stats: N samples: N merged, 0 without user
#     part; 0 records without samples, 0 malformed), no warning of perf,
#     nothing lost; with fp, no marker, no record;
#  5) no kernel warning in the log.
# No KVM in the guest (no svm/vmx in /proc/cpuinfo, e.g. a KVM-accelerated
# VM without nested virtualization, or kvm-spin can't create a VM): skip,
# saying why.
. "$(dirname "$0")/lib.sh"

prog=$WORKLOADS/kvm-spin
ms=${KVM_MS:-250}
freq=${KVM_FREQ:-2000}
[ -x "$prog" ] || fail "no $prog (make -C tests/workloads)"
command -v objdump > /dev/null || fail "no objdump"
taskset -c 0 true 2> /dev/null || fail "no taskset"

if [ ! -c /dev/kvm ]; then
	grep -qwE 'svm|vmx' /proc/cpuinfo ||
		skip "no /dev/kvm: the CPU has no svm/vmx (no nested virtualization here)"
	dmesg | grep -iE 'kvm|svm' | tail -5
	fail "no /dev/kvm though the CPU has $(grep -m1 -owE 'svm|vmx' /proc/cpuinfo)"
fi

# session CG CPU: perf record --call-graph CG of kvm-spin, perf and
# kvm-spin on CPU only, and what the checks read of it.  Both sessions run
# at once (the machine is slow), each on a CPU of its own if there are two.
# On one CPU, all kvm-spin's events are in one buffer, in time order:
# perf report --stats processes the events unordered, and a task that
# moves between CPUs can have the record of an entry read before a sample
# of the entry and after a record of its next entry, which perf then
# counts as a sample without record and a record without sample (perf
# script, ordered, merges them all).
session() {
	local cg=$1 cpu=$2 n=${1/,/-} start=$SECONDS rec rc
	local fields=comm,pid,tid,time,ip,sym,symoff,dso

	taskset -c "$cpu" "$PERF" record -q -B -e cpu-clock -F "$freq" --call-graph "$cg" \
		-o "$TMP/$n.data" -- "$prog" "$ms" > "$TMP/$n.log" 2>&1
	rc=$?
	if [ $rc = 4 ] && grep -q '^kvm-spin: no KVM' "$TMP/$n.log"; then
		dmesg | grep -iE 'kvm|svm' | tail -5
		skip "$(grep -m1 '^kvm-spin: no KVM' "$TMP/$n.log")"
	fi
	[ $rc = 0 ] || { cat "$TMP/$n.log"; fail "perf record --call-graph $cg kvm-spin: exit $rc"; }
	rec=$((SECONDS - start))
	"$PERF" report -D -i "$TMP/$n.data" > "$TMP/$n.dump" 2> "$TMP/$n.dump.err" ||
		{ tail "$TMP/$n.dump.err"; fail "$cg: perf report -D"; }
	"$PERF" script -i "$TMP/$n.data" --ns --no-inline -F $fields \
		> "$TMP/$n.merged" 2> "$TMP/$n.merged.err" ||
		{ cat "$TMP/$n.merged.err"; fail "$cg: perf script"; }
	# without defer: the same as merged, and nothing to count
	if [ "$cg" = fp,defer ]; then
		"$PERF" script -i "$TMP/$n.data" --ns --no-inline -F $fields --no-merge-callchains \
			> "$TMP/$n.raw" 2> "$TMP/$n.raw.err" ||
			{ cat "$TMP/$n.raw.err"; fail "$cg: perf script --no-merge-callchains"; }
		"$PERF" report -i "$TMP/$n.data" --stats > "$TMP/$n.stats" 2>&1 ||
			{ cat "$TMP/$n.stats"; fail "$cg: perf report --stats"; }
	fi
	echo "$cg: $(grep '^kvm-spin:' "$TMP/$n.log" | cut -c11-)" \
		"(recorded in ${rec}s, read in $((SECONDS - start - rec))s)"
}

cpu2=1
taskset -c 1 true 2> /dev/null || cpu2=0
dmesg > "$TMP/dmesg.before" || fail "dmesg"
session fp,defer 0 > "$TMP/fp-defer.out" 2>&1 &
p1=$!
session fp $cpu2 > "$TMP/fp.out" 2>&1 &
p2=$!
wait $p1
rc1=$?
wait $p2
rc2=$?
cat "$TMP/fp-defer.out" "$TMP/fp.out"
for rc in $rc1 $rc2; do
	[ $rc = 0 ] || [ $rc = 2 ] || exit $rc
done
[ $rc1 = 0 ] && [ $rc2 = 0 ] || exit 2
dmesg > "$TMP/dmesg.after" || fail "dmesg"

cat > "$TMP/check.py" << 'EOF'
import collections
import os
import re
import subprocess
import sys

from stacks import EXEC_FUNCS

CTX_KERNEL, CTX_USER = 2**64 - 128, 2**64 - 512
MISC = {1: "kernel", 2: "user", 4: "guest kernel", 5: "guest user"}
# A thread that has left its mm, or is in an exec, has no user part.
EXIT_EXEC = {"do_exit", "do_group_exit"} | EXEC_FUNCS
# perf report -D
D_SAMPLE = re.compile(r"PERF_RECORD_SAMPLE\(IP, (0x[0-9a-f]+)\): (-?\d+)/(-?\d+): "
                      r"(0x[0-9a-f]+) period:")
D_RECORD = re.compile(r"PERF_RECORD_CALLCHAIN_DEFERRED (-?\d+)/(-?\d+): "
                      r"cookie (0x[0-9a-f]+) nr (\d+)")
D_ENTRY = re.compile(r"^\.\.\.\.\.\s+\d+: ([0-9a-f]{16})( \((USER_DEFERRED|cookie)\))?$")
D_COMM = re.compile(r"PERF_RECORD_COMM(?: exec)?: (.*):(-?\d+)/(-?\d+)")
# perf script
HDR = re.compile(r"^(\S.*?)\s+(-?\d+)/(-?\d+)\s+(\d+\.\d+):\s*(.*)$")
FRAME = re.compile(r"^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")
MARKER = re.compile(r"^\s*\(user callchain deferred, cookie (0x[0-9a-f]+)\)")
RECORD = re.compile(r"PERF_RECORD_CALLCHAIN_DEFERRED cookie (0x[0-9a-f]+) nr (\d+)")
STATS = re.compile(r"DEFERRED CALLCHAINS: (\d+) samples: (\d+) merged, (\d+) without user part; "
                   r"(\d+) records without samples, (\d+) malformed")
KERNEL_DSO = "[kernel.kallsyms]"
CHAINS = {"vcpu_enter": ["vcpu_enter", "vcpu_loop", "vmm_run", "main", "libc"],
          "vmm_spin": ["vmm_spin", "vcpu_loop", "vmm_run", "main", "libc"]}
errors = []


def error(msg):
    errors.append(msg)
    if len(errors) <= 30:
        print("FAIL: " + msg)


def parse_dump(path):
    """Samples and deferred records of perf report -D, with their raw callchains."""
    evs, cur, comms, lost = [], None, {}, 0
    for line in open(path, errors="replace"):
        if re.search(r"\]: PERF_RECORD_LOST(_SAMPLES)?[ :]", line):
            lost += 1
        m = D_SAMPLE.search(line)
        if m:
            cur = dict(kind="sample", misc=int(m.group(1), 16), pid=int(m.group(2)),
                       tid=int(m.group(3)), ip=int(m.group(4), 16), chain=[], marker=False)
            evs.append(cur)
            continue
        m = D_RECORD.search(line)
        if m:
            cur = dict(kind="record", pid=int(m.group(1)), tid=int(m.group(2)),
                       cookie=m.group(3), nr=int(m.group(4)), chain=[])
            evs.append(cur)
            continue
        m = D_COMM.search(line)
        if m:
            comms[int(m.group(3))] = m.group(1).strip()
        if re.match(r"0x[0-9a-f]+@", line):
            cur = None
            continue
        m = D_ENTRY.match(line)
        if m and cur is not None:
            cur["chain"].append(int(m.group(1), 16))
            if m.group(3) == "USER_DEFERRED":
                cur["marker"] = True
    return evs, comms, lost


def parse_script(path):
    evs, cur = [], None
    for line in open(path):
        line = line.rstrip("\n")
        if not line.strip():
            continue
        m = HDR.match(line)
        if m:
            r = RECORD.search(m.group(5))
            cur = dict(comm=m.group(1), pid=int(m.group(2)), tid=int(m.group(3)), time=m.group(4),
                       record=r is not None, cookie=r.group(1) if r else None, frames=[])
            evs.append(cur)
            continue
        m = MARKER.match(line)
        if m and cur is not None:
            cur["cookie"] = m.group(1)
            continue
        m = FRAME.match(line)
        if not m or cur is None:
            sys.exit(f"{path}: cannot parse {line!r}")
        sym, off = re.match(r"(.*?)(?:\+0x([0-9a-f]+))?$", m.group(2)).groups()
        cur["frames"].append((int(m.group(1), 16), sym, m.group(3), int(off or "0", 16)))
    return evs


def user(frames):
    return [f for f in frames if f[2] != KERNEL_DSO]


def names(frames):
    return ["libc" if os.path.basename(f[2]).startswith("libc.so") else f[1] for f in frames]


def show(frames):
    return " <- ".join(names(frames)) or "(none)"


def hexchain(chain):
    return "[" + ", ".join(f"{c:#x}" for c in chain) + "]"


def body(prog, func):
    """Offsets in FUNC where %rbp is its frame: from after "mov %rsp,%rbp"
    to "pop %rbp" or "leave", both included (the user IP of a system call
    is the instruction after it, which may be the pop).  A sample
    elsewhere has the caller's frame pointer still or again: the walk
    skips the caller."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", prog], capture_output=True,
                         text=True, check=True).stdout
    m = re.search(rf"^([0-9a-f]+) <{func}>:\n(.*?)\n\n", out, re.M | re.S)
    if not m:
        sys.exit(f"FAIL: no {func} in {prog}")
    start, lo, hi = int(m.group(1), 16), None, None
    for line in m.group(2).splitlines():
        a = re.match(r"\s*([0-9a-f]+):\s+(.*)$", line)
        if not a:
            continue
        addr, insn = int(a.group(1), 16) - start, a.group(2).split()
        if lo == 0:
            lo = addr
        if insn == ["mov", "%rsp,%rbp"]:
            lo = 0
        if insn in (["pop", "%rbp"], ["leave"]):
            hi = addr
    if not lo or hi is None:
        sys.exit(f"FAIL: no frame set up in {func}:\n{m.group(2)}")
    return lo, hi


d, prog = sys.argv[1], sys.argv[2]
guest_min, host_min = int(sys.argv[3]), int(sys.argv[4])
bodies = {f: body(prog, f) for f in CHAINS}
code = re.search(r"code (0x[0-9a-f]+)-(0x[0-9a-f]+)", open(f"{d}/fp-defer.log").read())
if not code:
    sys.exit("FAIL: no code range in kvm-spin's output")
code_lo, code_hi = int(code.group(1), 16), int(code.group(2), 16)

for n, defer in (("fp-defer", True), ("fp", False)):
    evs, comms, lost = parse_dump(f"{d}/{n}.dump")
    wpids = {t for t, c in comms.items() if c == "kvm-spin"}
    if not wpids:
        error(f"{n}: no COMM kvm-spin in the dump")
    samples = [e for e in evs if e["kind"] == "sample"]
    records = [e for e in evs if e["kind"] == "record"]
    # its main thread, the vCPU; KVM's other threads are user workers
    ws = [e for e in samples if e["tid"] in wpids and e["pid"] == e["tid"]]
    workers = [e for e in samples if e["pid"] in wpids and e["pid"] != e["tid"]]
    modes = collections.Counter(MISC.get(e["misc"] & 7, hex(e["misc"] & 7)) for e in ws)
    guest = [e for e in ws if e["misc"] & 7 in (4, 5)]
    print(f"{n}: {len(samples)} samples, {len(ws)} of kvm-spin's vCPU thread: "
          + ", ".join(f"{k} {v}" for k, v in sorted(modes.items()))
          + f"; {len(workers)} of its workers; {len(records)} deferred records")
    if any(e["misc"] & 7 in (4, 5) for e in samples if e not in guest):
        error(f"{n}: guest samples of another task than kvm-spin's vCPU thread")
    # user workers (KVM's vhost tasks) can't defer: no marker
    if any(e["marker"] for e in workers):
        error(f"{n}: {sum(1 for e in workers if e['marker'])} samples of kvm-spin's workers "
              f"with a deferred marker")

    # 1) guest samples, at the guest's IP
    if len(guest) < guest_min:
        error(f"{n}: {len(guest)} guest samples of kvm-spin, want at least {guest_min}")
    off = [e for e in guest if not code_lo <= e["ip"] < code_hi]
    if off:
        error(f"{n}: {len(off)} guest samples with an ip out of the guest's loop "
              f"[{code_lo:#x}, {code_hi:#x}): {sorted(set(hex(e['ip']) for e in off))[:5]}")
    # 2) no deferred marker, no cookie, no frame: nothing to match a record to
    bad = collections.Counter(hexchain(e["chain"]) + (" USER_DEFERRED" if e["marker"] else "")
                              for e in guest if e["chain"] != [CTX_KERNEL, CTX_USER] or e["marker"])
    for c, k in bad.most_common(5):
        error(f"{n}: {k} guest samples with callchain {c}, want "
              f"{hexchain([CTX_KERNEL, CTX_USER])}")
    if not bad:
        print(f"{n}: all {len(guest)} guest samples: ip in [{code_lo:#x}, {code_hi:#x}), "
              f"callchain {hexchain([CTX_KERNEL, CTX_USER])}")
    marked = [e for e in samples if e["marker"]]
    cookies = {e["chain"][-1] for e in marked}
    rcookies = {int(r["cookie"], 16) for r in records}
    if defer:
        if not marked:
            error(f"{n}: no sample with a deferred user callchain")
        if rcookies != cookies:
            error(f"{n}: {len(rcookies - cookies)} records no sample asked for, "
                  f"{len(cookies - rcookies)} cookies of samples without record")
    elif marked or records:
        error(f"{n}: {len(marked)} samples with USER_DEFERRED, {len(records)} records "
              f"in a session without defer")

    # 3) the host samples' user stacks, merged
    merged = parse_script(f"{d}/{n}.merged")
    host = [e for e in merged if not e["record"]]
    if len(host) != len(samples) - sum(1 for e in samples if e["misc"] & 7 in (4, 5)):
        error(f"{n}: {len(host)} samples in perf script, {len(samples)} in the dump "
              f"of which {len(guest)} guest")
    per = collections.Counter()
    for e in host:
        if e["pid"] not in wpids or e["pid"] != e["tid"]:
            continue
        u = user(e["frames"])
        if not u:
            # an exiting task's user memory may be gone; an exec has none
            if not any(f[1].split(".")[0] in EXIT_EXEC for f in e["frames"]):
                error(f"{n}: kvm-spin {e['tid']} {e['time']}: no user part: {show(e['frames'])}")
            continue
        top = u[0][1]
        if top not in CHAINS:
            per["elsewhere"] += 1
            continue
        lo, hi = bodies[top]
        if not lo <= u[0][3] <= hi:
            per["prologue"] += 1
            continue
        per[top] += 1
        if names(u) != CHAINS[top]:
            error(f"{n}: kvm-spin {e['time']}: {show(u)}, want {' <- '.join(CHAINS[top])}")
        # (the others: signal delivery on the way out, rt_sigreturn
        # after its registers were restored)
        if top == "vcpu_enter" and any(f[1] == "kvm_vcpu_ioctl" for f in e["frames"]):
            per["KVM_RUN"] += 1
    print(f"{n}: host samples of kvm-spin's vCPU thread: in vmm_spin {per['vmm_spin']}, "
          f"at vcpu_enter {per['vcpu_enter']} (in KVM_RUN {per['KVM_RUN']}), in the prologue "
          f"or epilogue of either {per['prologue']}, elsewhere {per['elsewhere']}")
    if per["vmm_spin"] < host_min:
        error(f"{n}: {per['vmm_spin']} samples in vmm_spin, want at least {host_min}")
    if per["KVM_RUN"] < 1:
        error(f"{n}: no host sample in KVM_RUN")

    for name in ("dump.err", "merged.err") + (("raw.err",) if defer else ()):
        for line in open(f"{d}/{n}.{name}"):
            if re.search(r"deferred|malformed|Skipped|orphan|problem|got no|lost", line, re.I):
                error(f"{n}: perf ({name}): {line.strip()}")
    if lost:
        error(f"{n}: {lost} PERF_RECORD_LOST or LOST_SAMPLES")
    if not defer:
        continue
    raw = parse_script(f"{d}/{n}.raw")
    rrec = [e for e in raw if e["record"] and e["pid"] in wpids and e["pid"] == e["tid"]]
    nrun = 0
    for r in rrec:
        if r["frames"] and r["frames"][0][1] == "vcpu_enter":
            nrun += 1
            if names(r["frames"]) != CHAINS["vcpu_enter"]:
                error(f"{n}: record {r['cookie']}: {show(r['frames'])}")
    print(f"{n}: {len(rrec)} records of kvm-spin, {nrun} of KVM_RUN entries")
    if nrun < 1:
        error(f"{n}: no record of a KVM_RUN entry")

    # 4) perf's accounting: everything merged, nothing lost
    st = None
    for line in open(f"{d}/{n}.stats"):
        m = STATS.search(line)
        if m:
            st = tuple(int(x) for x in m.groups())
        m = re.search(r"^\s*(LOST|LOST_SAMPLES) events:\s+(\d+)", line)
        if m and int(m.group(2)):
            error(f"{n}: {m.group(2)} {m.group(1)} events")
    want = (len(marked), len(marked), 0, 0, 0)
    print(f"{n}: perf report --stats: {st}")
    if st != want:
        error(f"{n}: perf report --stats says {st}, want {want}")

sys.exit(1 if errors else 0)
EOF
PYTHONPATH=$LIB python3 "$TMP/check.py" "$TMP" "$prog" "${GUEST_MIN:-10}" "${HOST_MIN:-10}" || fail "see above"

# 5) no kernel warning while KVM ran under perf
n=$(wc -l < "$TMP/dmesg.before")
tail -n +"$((n + 1))" "$TMP/dmesg.after" > "$TMP/dmesg.new"
"$(dirname "$0")/../../scripts/klog-check.sh" "$TMP/dmesg.new" && exit 0
fail "kernel warnings during the test"
