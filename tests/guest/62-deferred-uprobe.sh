# SPDX-License-Identifier: GPL-2.0
# Deferred user stacks of samples taken in uprobe handlers, whose
# registers the kernel changes before the task returns to user space.
# The workload (tests/workloads/uchain.c) calls main -> uc_a -> uc_b ->
# uc_c from one call site, CALLS times; its frames are known from the
# disassembly (lib-regs.sh: expect).  Built with frame pointers
# (uchain-fp) and without, with SFrame (uchain-sframe3), both run in
# each recording; every sample of them is checked.
#
#  a+b) uprobe on uc_c, uretprobes on uc_c and uc_b, all recorded with
#     --call-graph fp,defer (one sample each per call: CALLS each):
#     uc_c entry:  uc_c+0 <- uc_b <- uc_a <- main (return addresses)
#     uc_c return: uc_b <- uc_a <- main
#     uc_b return: uc_a <- main
#     At uc_c's entry the sample is taken with the IP on the breakpoint,
#     uc_c+0; after the handlers the kernel moves the IP past the
#     emulated "push %rbp" (and the stack pointer), or to the
#     out-of-line slot where it single-steps the instruction, before the
#     task work unwinds.  The deferred stack must be that of the
#     registers of the sample.  A regression shows as samples without
#     user part (the kernel saw other registers and wrote no stack, or an
#     empty one), or a stack that starts in uc_c+1 or in [uprobes].
#     With frame pointers the walk at uc_c+0 must also see past the
#     breakpoint: the frame isn't set up yet, the return address is at
#     the stack pointer; a walk that reads the int3 there and follows the
#     frame pointer loses a caller (uc_c <- uc_a <- main without
#     uretprobes).  The same uprobe recorded with immediate callchains
#     (call-graph=fp: perf_callchain_user(), which knows of uprobes at
#     function entry) shows that the kernel gets the stack right without
#     deferral.
#     Return addresses on the stack are the uretprobe trampoline's: uc_b's
#     at uc_c's entry and return, and uc_c's own too by the time the task
#     work unwinds the entry's stack (the uretprobe is set up after the
#     handlers).  The deferred stack must have the real ones, each in its
#     place, as immediate callchains do.  A regression shows a [uprobes]
#     frame, or the wrong return address (uc_c <- uc_b <- main: a walk
#     that skipped uc_c's slot and gave uc_b's the innermost one).
#  c) cpu-clock at 1000 Hz with --call-graph fp,defer while a uretprobe
#     on uc_b is active (enabled in tracefs, not recorded): no return
#     address is in [uprobes] (the trampoline), and wherever a frame of
#     the chain is, the rest of the chain follows it exactly (uc_b's
#     caller is uc_a); at least 50 samples through uc_b.  Samples taken
#     in the kernel while it handles a breakpoint (int3, single-step,
#     handlers) or a uretprobe's return (the trampoline's uretprobe
#     system call), or with the IP in [uprobes] (the end of the
#     trampoline, which returns to uc_a from a stack slot no unwinder
#     knows of; a single-stepped instruction), are counted apart and
#     only need a user part without [uprobes] below the IP: there the IP
#     is on or just past the breakpoint with the stack pointer not yet
#     moved, or in the trampoline; immediate callchains get them wrong
#     too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-regs.sh"

calls=${UPROBE_CALLS:-60}
ms=${CHAIN_MS:-600}
fp=$WORKLOADS/uchain-fp
sf=$WORKLOADS/uchain-sframe3
for b in "$fp" "$sf"; do
	[ -x "$b" ] || fail "no $b (make -C tests/workloads)"
done
tracing=/sys/kernel/tracing
[ -f $tracing/uprobe_events ] || mount -t tracefs tracefs $tracing 2> /dev/null
[ -f $tracing/uprobe_events ] || fail "no $tracing/uprobe_events (CONFIG_UPROBE_EVENTS)"
g=udefer62
probe() {
	echo "$1" >> $tracing/uprobe_events || fail "uprobe_events: $1"
}
cleanup() {
	local e
	for e in $tracing/events/$g/*/; do
		[ -f "$e/enable" ] || continue
		echo 0 > "$e/enable"
		echo "-:$g/$(basename "$e")" >> $tracing/uprobe_events
	done
}
trap cleanup EXIT
cleanup
# offset BIN SYM: the file offset of SYM's code, which uprobes want
offset() {
	local addr type off va pa size rest
	addr=0x$(readelf -sW "$1" | awk -v s="$2" '$8 == s && $4 == "FUNC" { print $2; exit }')
	[ "$addr" != 0x ] || return 1
	while read -r type off va pa size rest; do
		[ "$type" = LOAD ] && ((addr >= va && addr < va + size)) &&
			printf '%#x\n' $((addr - va + off)) && return 0
	done <<< "$(readelf -lW "$1")"
	return 1
}

# The probes perf probe -x BIN -a uc_c -a uc_c%return ... would set (it
# takes long to start under TCG): uc_c twice, one recorded with
# immediate callchains.
for v in fp sf; do
	[ $v = fp ] && b=$fp || b=$sf
	c=$(offset "$b" uc_c) && bb=$(offset "$b" uc_b) || fail "no uc_c, uc_b in $b"
	probe "p:$g/c_$v $b:$c"
	[ $v = fp ] && probe "p:$g/cref_$v $b:$c"
	probe "r:$g/cret_$v $b:$c"
	probe "r:$g/bret_$v $b:$bb"
done
grep "$g/" $tracing/uprobe_events

# record NAME OPTIONS... -- sh -c "$both" FP SF ARGS: $TMP/NAME.txt
both='p=$1; shift; "$0" "$@" && "$p" "$@"'
record() {
	local name=$1
	shift
	"$PERF" record -q -B --call-graph fp,defer -o "$TMP/$name.data" "$@" \
		> "$TMP/$name.log" 2>&1 || { cat "$TMP/$name.log"; fail "perf record $name"; }
	cat "$TMP/$name.log"
	script "$TMP/$name.data" "$TMP/$name.txt"
}

echo "== a+b) uprobe on uc_c, uretprobes on uc_c and uc_b (${SECONDS}s)"
ev=()
for e in $tracing/events/$g/*/; do
	e=$(basename "$e")
	[ $e = cref_fp ] && ev+=(-e "$g:$e/call-graph=fp/") || ev+=(-e "$g:$e")
done
[ ${#ev[@]} = 14 ] || fail "probes: ${ev[*]}"
record ab "${ev[@]}" -- sh -c "$both" "$fp" "$sf" calls "$calls" 1000

echo "== c) cpu-clock, a uretprobe on uc_b active (${SECONDS}s)"
for e in $tracing/events/$g/bret_*/enable; do
	echo 1 > "$e" || fail "enable $e"
done
record c -e cpu-clock -F 1000 -- sh -c "$both" "$fp" "$sf" ms "$ms" 1000000
cleanup
echo "== check (${SECONDS}s)"

regs_py - "$TMP" "$fp" "$sf" "$calls" << 'EOF' || fail "wrong deferred stacks"
import collections, os, sys, regslib
tmp, fp, sf, calls = sys.argv[1:]
calls = int(calls)
fails = 0
chains = {}
for v, b in (("fp", fp), ("sf", sf)):
    chains[v] = regslib.expect(b, ["uc_c:entry", "uc_b:after-call:uc_c",
                                   "uc_a:after-call:uc_b", "main:after-call:uc_a"])

print("== a+b) every uprobe hit")
smp, lost, unmatched = regslib.load(f"{tmp}/ab.txt")
rules = []
for v in ("fp", "sf"):
    c = chains[v]
    rules += [{"event": f"udefer62:c_{v}", "chains": [c]},
              {"event": f"udefer62:cret_{v}", "chains": [c[1:]]},
              {"event": f"udefer62:bret_{v}", "chains": [c[2:]]}]
rules.append({"event": "udefer62:cref_fp", "chains": [chains["fp"]]})
for r in rules:
    r["count"] = calls
    r["min"] = calls // 2
fails += regslib.check(smp, lost, unmatched, rules)

print("== c) cpu-clock with a uretprobe on uc_b")
smp, lost, unmatched = regslib.load(f"{tmp}/c.txt")
# Where the kernel handles a breakpoint of a uprobe (int3) or its
# single-step (debug exception), runs its handlers on the way out, or
# takes a uretprobe's return (its trampoline makes the uretprobe system
# call, or hits an int3).
breaking = {"asm_exc_int3", "exc_int3", "asm_exc_debug", "noist_exc_debug",
            "exc_debug", "uprobe_notify_resume", "__x64_sys_uretprobe",
            "uprobe_handle_trampoline"}
missing = 0
for v, b in (("fp", fp), ("sf", sf)):
    chain = ["uc_c"] + chains[v][1:]
    syms = [f.split("+")[0] for f in chain]
    n = exempt = through_b = good = 0
    bad = collections.Counter()
    for s in smp:
        if s.comm != os.path.basename(b):
            continue
        n += 1
        if not s.user:
            if regslib.leaving(s):
                exempt += 1
            else:
                missing += 1
            continue
        # Never a return address in [uprobes] (the trampoline's).
        if "[uprobes]" in s.dsos[1:]:
            bad[s.show()] += 1
            continue
        if breaking & set(s.kernel) or s.dsos[0] == "[uprobes]":
            exempt += 1
            continue
        ok = True
        user = [f.split("+")[0] for f in s.user]
        for i, sym in enumerate(user):
            if sym in syms:
                j = syms.index(sym)
                ok = ok and s.user[i + 1:i + len(chain) - j] == chain[j + 1:]
                break
        through_b += ok and "uc_b" in user
        good += ok
        if not ok:
            bad[s.show()] += 1
    print(f"{os.path.basename(b)}: {n} cpu-clock samples, {exempt} in breakpoint handling, "
          f"[uprobes], exec or exit, "
          f"{good} others right ({through_b} through uc_b), {sum(bad.values())} wrong")
    print(f"  chain {' <- '.join(chain)}")
    for stack, k in bad.most_common(10):
        print(f"FAIL: {k:5d} {stack}")
        fails += 1
    if through_b < 50:
        print(f"FAIL: {through_b} samples through uc_b, want at least 50")
        fails += 1
fails += not regslib.missing_ok(missing, lost, unmatched)
sys.exit(fails != 0)
EOF
