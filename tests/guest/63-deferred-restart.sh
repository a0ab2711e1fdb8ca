# SPDX-License-Identifier: GPL-2.0
# Deferred user stacks of samples taken between the signal delivery that
# interrupts a system call and the restart of that system call.
#
# The workload (tests/workloads/restart.c) blocks in read(), made with an
# inline "syscall" in r_read at main -> r_a -> r_b -> r_read; the test
# stops and continues it (SIGSTOP, SIGCONT) CYCLES times.  Each stop
# interrupts the read: on its way out the task runs the task work that
# is pending (get_signal()), dequeues SIGSTOP (tracepoint
# signal:signal_deliver, sampled) and stops (sched:sched_switch with
# prev_state T, sampled): these are the first requests of the entry,
# made with the IP right after the "syscall".  At SIGCONT the kernel
# restarts the read, IP moved back two bytes onto the "syscall", before
# the task work that unwinds the stack runs.  The deferred stack must be
# that of the registers at the samples: r_read right after its
# "syscall", r_b, r_a and main right after their calls.  A regression
# shows as samples without user part (the kernel noticed the registers
# changed and gave up), or a stack that starts on the "syscall" (it
# unwound the registers of the restart).
#
# cpu-clock samples every millisecond of the task's time too (little:
# an earlier request in an entry would be unwound in get_signal(), before
# the restart, and not show a regression): one taken in a system call
# (the read) has the same stack; one taken in user mode, or in an
# interrupt from there, can only be on the restarted "syscall"
# instruction, and has that IP.  Every sample of the workload is
# checked, and their number: one of each tracepoint per stop.
#
# The workload runs under sh: a stopped child of perf record would end
# the recording (perf takes its SIGCHLD for the end of the workload).
# Events are enabled (--control) once it blocks in the read; cpu-clock is
# disabled before the workload is given the byte that ends it, the rest
# stays on: the user part of the last samples comes when the read
# returns, through the tracking event.
#
# --sample-cpu works around a perf bug: with -D (or --control), perf adds
# a dummy tracking event, which gets defer_output but not the CPU sample
# bit that the tracepoints have; perf then checks the deferred records'
# size with the id header of the tracepoints, 8 bytes too big, and skips
# them all as malformed ("Skipped N malformed PERF_RECORD_CALLCHAIN_DEFERRED
# records"): no sample has a user part.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-regs.sh"

cycles=${RESTART_CYCLES:-12}
bin=$WORKLOADS/restart-fp
[ -x "$bin" ] || fail "no $bin (make -C tests/workloads)"
tracing=/sys/kernel/tracing
[ -d $tracing/events ] || mount -t tracefs tracefs $tracing 2> /dev/null
for e in sched/sched_switch signal/signal_deliver; do
	[ -d $tracing/events/$e ] || fail "no tracepoint $e in $tracing"
done

# Waiting without a process per poll (each costs under TCG).
mkfifo "$TMP/nap" || fail "mkfifo"
exec 7<> "$TMP/nap"
nap() { read -r -t 0.01 -u 7 _; }
state() { # the state letter of $pid
	local line
	read -r line < "/proc/$pid/stat" || return 1
	line=${line##*) }
	echo "${line%% *}"
}
nvcsw() { # its voluntary context switches
	local k v
	while read -r k v; do
		[ "$k" = voluntary_ctxt_switches: ] && echo "$v" && return
	done < "/proc/$pid/status"
}
# until_ WHAT CONDITION...: wait up to 30 s for CONDITION
until_() {
	local what=$1 i
	shift
	for ((i = 0; i < 3000; i++)); do
		"$@" && return 0
		nap
	done
	fail "timeout waiting for $what"
}
ready() { [ -s "$TMP/out" ] && read -r _ pid < "$TMP/out" && [ -n "$pid" ]; }
stopped() { [ "$(state)" = T ] && [ "$(nvcsw)" -gt "$nv" ]; }
# Sleeping in read() (syscall 0), after a switch since $nv.
in_read() {
	local sc
	read -r sc _ < "/proc/$pid/syscall" 2> /dev/null
	[ "$(state)" = S ] && [ "$sc" = 0 ] && [ "$(nvcsw)" -gt "$nv" ]
}

# run NAME EVENTS...: record CYCLES stops in $TMP/NAME.txt; $TMP/NAME.pid
run() {
	local name=$1 perf_pid line i
	shift
	mkfifo "$TMP/fifo" "$TMP/ctl" "$TMP/ack" || fail "mkfifo"
	exec 8<> "$TMP/ctl" 9<> "$TMP/ack"
	timeout 300 "$PERF" record -q -B -D -1 --control "fifo:$TMP/ctl,$TMP/ack" --sample-cpu "$@" \
		--call-graph fp,defer -o "$TMP/$name.data" -- \
		sh -c '"$0" "$1" > "$2" & wait' "$bin" "$TMP/fifo" "$TMP/out" \
		> "$TMP/$name.log" 2>&1 &
	perf_pid=$!
	pid= nv=0
	until_ "the workload to start" ready
	until_ "the workload to block in read" in_read
	echo "$pid" > "$TMP/$name.pid"
	echo "workload $pid in read (${SECONDS}s)"
	echo enable >&8
	read -r -t 60 -u 9 line && [ "$line" = ack ] || fail "no ack of enable"
	for ((i = 0; i < cycles; i++)); do
		nv=$(nvcsw)
		kill -STOP "$pid"
		until_ "stop $i" stopped
		nv=$(nvcsw)
		kill -CONT "$pid"
		until_ "continue $i" in_read
	done
	echo "$cycles stops done (${SECONDS}s)"
	echo "disable clock" >&8
	read -r -t 60 -u 9 line && [ "$line" = ack ] || fail "no ack of disable"
	echo x > "$TMP/fifo"
	wait $perf_pid || { cat "$TMP/$name.log"; fail "perf record $name"; }
	exec 8>&- 9>&-
	cat "$TMP/$name.log" "$TMP/out"
	grep -q '^restart: read 1 byte' "$TMP/out" || fail "the workload failed"
	echo "perf record done (${SECONDS}s)"
	script "$TMP/$name.data" "$TMP/$name.txt"
}

tp=(-e sched:sched_switch --filter 'prev_state == 4' -e signal:signal_deliver --filter 'sig == 19')
echo "== $cycles stops (${SECONDS}s)"
run stops "${tp[@]}" -e cpu-clock/period=1000000,name=clock/
echo "== check (${SECONDS}s)"

regs_py - "$TMP" "$bin" "$cycles" << 'EOF' || fail "wrong deferred stacks"
import sys, regslib
tmp, bin, cycles = sys.argv[1:]
cycles = int(cycles)
after, at, *rest = regslib.expect(bin, ["r_read:after-syscall", "r_read:at-syscall",
                                        "r_b:after-call:r_read", "r_a:after-call:r_b",
                                        "main:after-call:r_a"])
fails = 0
for name, events in (("stops", ["sched:sched_switch", "signal:signal_deliver", "clock"]),):
    print(f"== {name}")
    smp, lost, unmatched = regslib.load(f"{tmp}/{name}.txt")
    with open(f"{tmp}/{name}.pid") as f:
        pid = int(f.read())
    rules = []
    for e in events:
        r = {"event": e, "chains": [[after] + rest]}
        if e == "clock":
            r["other_chains"] = [[at] + rest]
        else:
            r["count"] = r["min"] = cycles
        rules.append(r)
    fails += regslib.check([s for s in smp if s.tid == pid], lost, unmatched, rules)
sys.exit(fails != 0)
EOF
