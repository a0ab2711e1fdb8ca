# SPDX-License-Identifier: GPL-2.0
# Deferred user stacks of a tracee whose tracer changes its registers
# (PTRACE_SETREGS) while a request is pending.
#
# The workload (tests/workloads/ptregs.c): the tracee makes getppid N
# times, with an inline "syscall" in p_leaf at main -> p_a -> p_b ->
# p_leaf; its tracer stops it at the entry and exit of every system call
# (PTRACE_SYSCALL).  At each getppid entry it sets RIP to p_detour, RSP
# lower, RBP 0; the tracee returns there and makes getsid (p_detour has
# no frame: with RBP 0 its stack is its IP alone), at whose entry the
# tracer puts the getppid registers back, and at whose exit getppid's
# result.  The tracee schedules out in ptrace_stop() at every stop
# (sched:sched_switch with prev_state t, sampled): the entry stop's
# sample is the first request of the system call, the registers change
# while it is pending, and the exit stop's sample joins it.  The task
# work runs with the changed registers, in ptrace_notify() before the
# exit stop (that is why the registers are changed at the entry stop:
# a change at the exit stop comes after the unwind).  Every sample's
# stack must be that of the registers the system call entered with, so
# the samples of the tracee are, in this order:
#   p_stop's kill(SIGSTOP): the stop that hands the tracee to the tracer
#       p_stop after its "syscall" <- main after its call
#   N times:
#     getppid entry and exit stops:
#       p_leaf after its "syscall" <- p_b <- p_a <- main, after their calls
#     getsid entry and exit stops, exactly:
#       p_detour after its "syscall"
#   exit_group entry stop (the tracee exits from it: the stack is handed
#   over at exit):
#       p_exit after its "syscall" <- main after its call
# A regression shows as samples without user part (the kernel saw the
# registers change and gave up: what it did before the registers of the
# first request were kept), or a getppid stop with the stack of the
# registers the tracer set (p_detour+0 alone), or a getsid stop with
# getppid's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-regs.sh"

n=${PTRACE_DETOURS:-40}
bin=$WORKLOADS/ptregs-fp
[ -x "$bin" ] || fail "no $bin (make -C tests/workloads)"
tracing=/sys/kernel/tracing
[ -d $tracing/events ] || mount -t tracefs tracefs $tracing 2> /dev/null
[ -d $tracing/events/sched/sched_switch ] || fail "no tracepoint sched:sched_switch"
# prev_state 8 is "t", TASK_TRACED: ptrace stops only, not preemption.
"$PERF" record -q -B -e sched:sched_switch --filter 'prev_state == 8' --call-graph fp,defer \
	-o "$TMP/perf.data" -- "$bin" "$n" > "$TMP/out" 2> "$TMP/record.log" ||
	{ cat "$TMP/record.log" "$TMP/out"; fail "perf record ptregs"; }
cat "$TMP/record.log" "$TMP/out"
tracee=$(awk '/^tracee/ { print $2 }' "$TMP/out")
[ -n "$tracee" ] || fail "no tracee pid"
script "$TMP/perf.data" "$TMP/script.txt"

regs_py - "$TMP/script.txt" "$bin" "$tracee" "$n" << 'EOF' || fail "wrong deferred stacks"
import collections, sys, regslib
path, bin, tracee, n = sys.argv[1:]
n = int(n)
smp, lost, unmatched = regslib.load(path)
names = {
    "start": regslib.expect(bin, ["p_stop:after-syscall", "main:after-call:p_stop"]),
    "getppid": regslib.expect(bin, ["p_leaf:after-syscall", "p_b:after-call:p_leaf",
                                    "p_a:after-call:p_b", "main:after-call:p_a"]),
    "getsid": regslib.expect(bin, ["p_detour:after-syscall"]),
    "exit": regslib.expect(bin, ["p_exit:after-syscall", "main:after-call:p_exit"]),
}
want = ["start"] + ["getppid", "getppid", "getsid", "getsid"] * n + ["exit"]


def good(s, kind):
    # p_detour's stack is its IP alone: nothing may follow it.
    if kind == "getsid":
        return s.user == names[kind]
    return regslib.starts(s, names[kind])


smp = [s for s in smp if s.tid == int(tracee)]
missing = sum(not s.user for s in smp)
fails = not regslib.missing_ok(missing, lost, unmatched)
for kind, c in names.items():
    print(f"  {kind:8s} {' <- '.join(c)}{'' if kind == 'getsid' else ' ...'}")
bad = collections.Counter()
if len(smp) == len(want):
    # In time order, each stop with the stack of its own system call.
    for s, kind in zip(smp, want):
        if s.user and not good(s, kind):
            bad[f"{kind} stop: {s.show()}"] += 1
elif lost:
    # Samples were lost: only which stacks there are can be checked.
    print(f"{len(smp)} samples, want {len(want)}: {lost} lost")
    for s in smp:
        if s.user and not any(good(s, k) for k in names):
            bad[f"stop: {s.show()}"] += 1
else:
    print(f"FAIL: {len(smp)} samples of the tracee, want {len(want)}")
    fails += 1
    for s in smp[:12]:
        print(f"  {s.show()}")
counts = collections.Counter(k for s in smp for k in names if s.user and good(s, k))
print(f"tracee {tracee}: {len(smp)} samples ({', '.join(f'{k} {counts[k]}' for k in names)}), "
      f"{sum(bad.values())} wrong, {missing} without user part")
for stack, k in bad.most_common(10):
    print(f"FAIL: {k:5d} {stack}")
    fails += 1
sys.exit(fails != 0)
EOF
