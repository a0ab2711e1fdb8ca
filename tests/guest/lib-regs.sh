# SPDX-License-Identifier: GPL-2.0
# Sourced by the tests of deferred user stacks whose registers the kernel
# changes before the task returns to user space (62-64), after lib.sh.
#
#  script DATA OUT   perf script of DATA into OUT, with the fields that
#                    regslib reads; its warnings (lost records, samples
#                    without their deferred user part) into OUT.err, shown
#  regs_py ARGS...   python3 with regslib (below) importable
#
# regslib (one python3 run per test: it starts slowly under TCG):
#  expect(BIN, FRAMES)   the frames a stack of BIN must start with, as
#                        perf script prints them (SYM+0xOFF), from the
#                        disassembly.  Each of FRAMES is one of
#                          FUNC:entry             FUNC's first byte
#                          FUNC:after-call:CALLEE the return address of
#                                                 FUNC's one call to CALLEE
#                          FUNC:after-syscall     the IP after FUNC's one
#                                                 "syscall"
#                          FUNC:at-syscall        that "syscall" itself
#  load(OUT)             (samples, lost, unmatched): the samples of a
#                        script output, as objects with .tid, .comm,
#                        .event, .kernel (symbols) and .user (frames
#                        "SYM+0xOFF", or "[unknown]@DSO+0xADDR" where perf
#                        has no symbol), innermost first, and .dsos (of the
#                        user frames); how many records perf reported lost
#                        and how many samples got no deferred user part
#  check(SAMPLES, LOST, UNMATCHED, RULES), missing_ok(), starts(),
#  in_syscall(), leaving()   see below

command -v objdump > /dev/null || fail "no objdump"

cat > "$TMP/regslib.py" << 'EOF'
import collections
import re
import subprocess
import sys

from stacks import EXEC_FUNCS

HDR = re.compile(r"^(\S.*?)\s+(\d+)\s+(\d+\.\d+):\s+(\S+?):\s")
FRAME = re.compile(r"^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")
KERNEL = 0xffff800000000000


class Sample:
    def __init__(self, comm, tid, time, event):
        self.comm, self.tid, self.time, self.event = comm, tid, time, event
        self.kernel, self.user, self.dsos = [], [], []

    def show(self):
        return " <- ".join(self.user) if self.user else "(no user part)"


def samples(path):
    """The samples of perf script -F comm,tid,time,event,ip,sym,symoff,dso."""
    out, cur = [], None
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            m = HDR.match(line.lstrip(" "))
            if not line.startswith("\t"):
                if not m:
                    sys.exit(f"regslib: cannot parse: {line!r}")
                # cpu-clock/period=N/ is cpu-clock
                event = re.sub(r"/.*/$", "", m.group(4))
                cur = Sample(m.group(1), int(m.group(2)), float(m.group(3)), event)
                out.append(cur)
                continue
            m = FRAME.match(line)
            if not m or cur is None:
                sys.exit(f"regslib: cannot parse: {line!r}")
            addr, sym, dso = int(m.group(1), 16), m.group(2), m.group(3)
            if addr >= KERNEL:
                cur.kernel.append(re.sub(r"\+0x[0-9a-f]+$", "", sym))
                continue
            if sym == "[unknown]":
                sym = f"[unknown]@{dso.rsplit('/', 1)[-1]}+{addr:#x}"
            cur.user.append(sym)
            cur.dsos.append(dso)
    return out


def load(path):
    """Samples, records lost, samples without deferred user part."""
    lost = unmatched = 0
    with open(path + ".err") as f:
        err = f.read()
    for m in re.finditer(r"and lost (\d+) chunks", err):
        lost += int(m.group(1))
    for m in re.finditer(r"samples and lost ([\d.]+)%", err):
        lost += float(m.group(1)) > 0
    for m in re.finditer(r"(\d+) of \d+ samples with a deferred user callchain got no", err):
        unmatched += int(m.group(1))
    return samples(path), lost, unmatched


def disasm(binary):
    """{function: [(address, instruction text), ...]} of BINARY."""
    text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary],
                          check=True, capture_output=True, text=True).stdout
    funcs, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^([0-9a-f]+) <([^>]+)>:$", line)
        if m:
            cur = funcs.setdefault(m.group(2), [])
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(\S.*)$", line)
        if m and cur is not None:
            cur.append((int(m.group(1), 16), m.group(2).strip()))
    return funcs


_disasm = {}


def expect(binary, specs):
    funcs = _disasm.setdefault(binary, disasm(binary))
    frames = []
    for spec in specs:
        func, what, *arg = spec.split(":")
        insns = funcs.get(func)
        if not insns:
            sys.exit(f"expect: no function {func} in {binary}")
        start = insns[0][0]
        if what == "entry":
            frames.append(f"{func}+0x0")
            continue
        if what == "after-call":
            hits = [i for i, (_, t) in enumerate(insns)
                    if re.match(r"^call[q]?\s+[0-9a-f]+ <" + re.escape(arg[0]) + ">$", t)]
        elif what in ("after-syscall", "at-syscall"):
            hits = [i for i, (_, t) in enumerate(insns) if t == "syscall"]
        else:
            sys.exit(f"expect: bad frame {spec}")
        if len(hits) != 1 or hits[0] + 1 >= len(insns):
            sys.exit(f"expect: {len(hits)} places for {spec} in {binary}, want one")
        i = hits[0] + (0 if what == "at-syscall" else 1)
        frames.append(f"{func}+{insns[i][0] - start:#x}")
    return frames


def in_syscall(s):
    """Taken in a system call (not in user mode, an interrupt, a fault)."""
    return any(k.startswith("entry_SYSCALL_64") for k in s.kernel)


# A task in an exec (the registers of the old program, the memory of the
# new one) or leaving its mm has no user part to give, deferred or not.
EXIT_EXEC = {"do_exit"} | EXEC_FUNCS


def leaving(s):
    """Taken in an exec or an exit: no user part is right."""
    return bool({k.split(".")[0] for k in s.kernel} & EXIT_EXEC)


def starts(s, chain):
    return s.user[:len(chain)] == chain


def missing_ok(missing, lost, unmatched):
    """Samples without user part are only excused by records perf
    reported lost, and perf's count of samples that got none."""
    if not missing:
        return True
    print(f"{missing} samples without user part; perf reported {lost} lost records, "
          f"{unmatched} samples without their deferred user part")
    if not lost or missing > unmatched:
        print("FAIL: samples without user part, and not for lost records")
        return False
    return True


def check(smp, lost, unmatched, rules):
    """Every sample in SMP must be of an event of RULES, and have a user
    part that starts with one of the rule's "chains"; with "other_chains"
    in the rule, the "chains" are those of samples taken in a system call,
    and the others must start with one of the "other_chains".  The
    rule's "count" is the number of samples there must be (at most, if
    records were lost), "min" the least number of good ones (default 1).
    Prints the counts; returns the number of failures."""
    by = {r["event"]: r for r in rules}
    fails = missing = 0
    stat = {e: [0, 0, 0] for e in by}
    bad = collections.Counter()
    for s in smp:
        r = by.get(s.event)
        if r is None:
            print(f"FAIL: unexpected event {s.event}")
            fails += 1
            continue
        st = stat[s.event]
        if not s.user:
            st[1] += 1
            missing += not leaving(s)
        elif any(starts(s, c) for c in
                 (r["chains"] if in_syscall(s) or "other_chains" not in r
                  else r["other_chains"])):
            st[0] += 1
        else:
            st[2] += 1
            bad[(s.event, s.show())] += 1
    for r in rules:
        e = r["event"]
        good, miss, wrong = stat[e]
        n = good + miss + wrong
        print(f"{e}: {n} samples, {good} with the expected stack, {wrong} with another, "
              f"{miss} without user part")
        for c in r["chains"]:
            print(f"  expected {' <- '.join(c)} ...")
        if "other_chains" in r:
            print("  (in a system call; else:)")
        for c in r.get("other_chains", []):
            print(f"  expected {' <- '.join(c)} ...")
        if "count" in r and (n > r["count"] or (n < r["count"] and not lost)):
            print(f"FAIL: {e}: {n} samples, want {r['count']}")
            fails += 1
        if good < r.get("min", 1):
            print(f"FAIL: {e}: {good} good samples, want at least {r.get('min', 1)}")
            fails += 1
    for (e, stack), n in bad.most_common(10):
        print(f"FAIL: {n:5d} {e}: {stack}")
        fails += 1
    return fails + (not missing_ok(missing, lost, unmatched))
EOF

regs_py() {
	PYTHONPATH=$TMP:$LIB python3 "$@"
}

script() {
	"$PERF" script -i "$1" -F comm,tid,time,event,ip,sym,symoff,dso > "$2" 2> "$2.err" ||
		{ cat "$2.err"; fail "perf script -i $1"; }
	grep -v '^ *$' "$2.err"
	return 0
}
