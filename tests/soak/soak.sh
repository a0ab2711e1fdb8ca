#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# soak.sh - stress deferred user callchains, in the guest: back-to-back
# sessions of `perf record -a --call-graph fp,defer` while tasks come and
# go, then check every session's data and the kernel's counters.
#
# Environment: PERF, WORKLOADS (the test programs), SFRAME_TOOLS
# (sframe-audit.so, dlopen-loop), SOAK_BIN (tests/soak built: default
# $WORKLOADS/../soak), LIB (tests/lib: default next to this script),
# SOAK_SECONDS (60: how long sessions are started), SOAK_SESSION (2: a
# session records for 1 to that many seconds, then gets SIGINT with work
# pending), SOAK_PERIOD (250000: cpu-clock period in ns, 4 kHz), SOAK_OUT
# (work directory, default a new one under /tmp), SOAK_KEEP (a directory
# to copy the perf.data of failed sessions to, e.g. the vm scratch),
# SOAK_LOADS (the loads to run, default all: "exec threads texec fork
# dlopen jit uring signals nmi"), SOAK_NMI_PERIOD_US (200: see nmi below),
# SOAK_NMI_MIN (0: the fewest requests from NMI to make: the load goes on
# after the sessions until then, for at most SOAK_NMI_WAIT (3600) s).
#
# Load, each a loop running its programs until the sessions end:
#   exec      short runs of the workloads (gt-* threads, syscalls, signals,
#             recurse; chain-*; frames-* signal and vdso; SFrame v3, v2,
#             v2 section-relative, frame pointers, neither): fork, exec, exit
#   threads   soak-procs threads: threads created, joined, detached, ended
#   texec     soak-procs texec: a second thread execs
#   fork      soak-procs fork: children exit, are killed, stopped and
#             continued
#   dlopen    soak-dlopen (two threads dlopen/dlclose libsoak-a/b.so) and
#             dlopen-loop, under LD_AUDIT=sframe-audit.so: sections added
#             and removed, text unmapped while sampled
#   jit       soak-jit: text with a section registered by prctl mapped,
#             run, taken down (PR_REMOVE_SFRAME, munmap, mmap over,
#             mremap), and unmapped while running
#   uring     soak-uring, plain and SQPOLL: io-wq workers
#   signals   SIGUSR1 (a handler that computes) to the soak-* programs,
#             SIGSTOP + SIGCONT to them and the workloads
#   nmi       not a program: CONFIG_UNWIND_DEFERRED_NMI_TEST, started
#             before the load and stopped after it: every CPU sends NMIs
#             to the others every SOAK_NMI_PERIOD_US, whose handler asks
#             for the stack of the task it interrupted (whatever it is
#             doing, perf's own requests pending or not), and the kernel
#             checks every request and callback (kernel/unwind/
#             deferred_nmi_test.c)
# Every program must exit 0 (soak-* check their own system calls).
#
# Checked: every session by tests/lib/soak-check.py (in order, as the
# sessions end, at a lower priority than the load: on a slow guest mostly
# after it): entries = records but for counted losses,
# no kernel address in a user callchain, io_uring workers without
# deferred requests, perf's own counts; after the load: the kernel's
# counters in /sys/kernel/debug/unwind_user/stats, queued == ran (no task
# work lost) and sections back to the value before the soak (none
# leaked); no "bad .sframe" in the kernel log (no good section removed);
# with nmi, the NMI test's: no error, every NMI sent handled, at least
# SOAK_NMI_MIN requests made from NMI.  The last line is the summary:
#   soak: PASS|FAIL: ... sessions, samples, records, losses, counters
# Exit 0 if everything held, 1 if not.

set -u
here=$(cd "$(dirname "$0")" && pwd)
LIB=${LIB:-$here/../lib}
: "${PERF:?PERF must name the perf binary}" "${WORKLOADS:?WORKLOADS must name the workloads}"
: "${SFRAME_TOOLS:?SFRAME_TOOLS must name the SFrame tools}"
SOAK_BIN=${SOAK_BIN:-$(dirname "$WORKLOADS")/soak}
secs=${SOAK_SECONDS:-60}
sess_max=${SOAK_SESSION:-2}
period=${SOAK_PERIOD:-250000}
out=${SOAK_OUT:-$(mktemp -d /tmp/soak.XXXXXX)}
keep=${SOAK_KEEP:-}
stats=/sys/kernel/debug/unwind_user/stats
nmi=/sys/kernel/debug/unwind_nmi_test
nmi_period=${SOAK_NMI_PERIOD_US:-200}
nmi_min=${SOAK_NMI_MIN:-0}
loads_on=${SOAK_LOADS:-exec threads texec fork dlopen jit uring signals nmi}
audit=$SFRAME_TOOLS/sframe-audit.so
ncpu=$(nproc)
t0=$SECONDS

die() { echo "soak: FAIL: $*"; exit 1; }
kstat() { awk -v k="$1:" '$1 == k { print $2 }' "$stats"; }
nstat() { awk -v k="$1:" '$1 == k { print $2 }' "$nmi/stats"; }

for f in soak-procs soak-jit soak-uring soak-dlopen libsoak-a.so libsoak-b.so jitlib.so; do
	[ -f "$SOAK_BIN/$f" ] || die "no $SOAK_BIN/$f (make -C tests/soak OUT=... KHDR=... SFRAME_GEN=...)"
done
for f in "$audit" "$SFRAME_TOOLS/dlopen-loop" "$WORKLOADS/gt-sframe3" "$LIB/soak-check.py"; do
	[ -f "$f" ] || die "no $f"
done
[ -r "$stats" ] || die "no $stats (debugfs, CONFIG_UNWIND_USER)"
for k in queued ran sections; do
	[ -n "$(kstat $k)" ] || die "$stats has no '$k' line: kernel without the soak counters"
done
nmi_on=0
[[ " $loads_on " = *" nmi "* ]] && nmi_on=1
[ $nmi_on = 0 ] || [ -w "$nmi/control" ] || die "no $nmi/control (CONFIG_UNWIND_DEFERRED_NMI_TEST)"
mkdir -p "$out/pids" || die "mkdir $out"
# The checker runs from a copy: the host's files are seen through 9p with
# caching, and one changed during a long run could be read half new.
cp "$LIB/soak-check.py" "$out/" || die "cp soak-check.py"
check=$out/soak-check.py
: > "$out/results.json"
: > "$out/failures"
: > "$out/programs"

echo "soak: $secs s of sessions of 1-$sess_max s, cpu-clock period $period ns, $ncpu CPUs, in $out"
echo "stats before:" $(tr -s ' \n' ' ' < "$stats")
sections0=$(kstat sections)
# Every section the load registers is good: the kernel may remove none
# ("bad .sframe" message), however dlopen/dlclose and unmaps race with
# the walks.
marker="soak: start $$ $(date +%s%N)"
echo "$marker" > /dev/kmsg 2> /dev/null || marker=

# run NAME CMD...: run CMD in the background as the loop NAME's current
# program (its pid for the signal sender), wait; a failure is recorded.
run() {
	local name=$1 pid rc
	shift
	"$@" > "$out/$name.out" 2>&1 &
	pid=$!
	echo "$pid" > "$out/pids/$name"
	wait "$pid"
	rc=$?
	echo "$name" >> "$out/runs"
	grep '^soak-[a-z]*: ' "$out/$name.out" >> "$out/programs"
	if [ $rc != 0 ] || grep -q '^sframe-audit:' "$out/$name.out"; then
		{
			echo "$name: exit $rc: $*"
			sed 's/^/    /' "$out/$name.out" | head -20
		} >> "$out/failures"
	fi
}
running() { [ ! -e "$out/stop" ]; }
# snooze SECONDS: sleep without a fork and exec (each takes up to a second
# under TCG when the guest is loaded): a read from a FIFO nobody writes.
mkfifo "$out/snooze" && exec {snooze_fd}<> "$out/snooze" || die "mkfifo"
snooze() { read -r -t "$1" -u $snooze_fd; }

load_exec() {
	local w=$WORKLOADS i=0 cmds=(
		"gt-sframe3 syscalls 40" "gt-sframe3 signals 40" "gt-sframe3 recurse 40"
		"gt-sframe3 threads 40" "chain-sframe3 30" "frames-sframe3 signal 40"
		"frames-sframe3 vdso 30" "gt-sframe2 syscalls 30" "gt-sframe2s signals 30"
		"chain-sframe2 20" "gt-fp recurse 30" "gt-nofp threads 30" "chain-nofp 20")
	while running; do
		run exec env GT_THREADS=$((1 + i % 5)) $w/${cmds[i % ${#cmds[@]}]}
		[ $((i % 7)) = 0 ] && run exec /bin/true
		i=$((i + 1))
	done
}
load_threads() { while running; do run threads "$SOAK_BIN/soak-procs" threads 2000; done; }
load_texec() { while running; do run texec "$SOAK_BIN/soak-procs" texec 1500; done; }
load_fork() { while running; do run fork "$SOAK_BIN/soak-procs" fork 1500; done; }
load_dlopen() {
	local libs=("$SOAK_BIN/libsoak-a.so" "$SOAK_BIN/libsoak-b.so")
	while running; do
		run dlopen env LD_AUDIT="$audit" "$SOAK_BIN/soak-dlopen" 2000 "${libs[@]}"
		running && run dlopen env LD_AUDIT="$audit" "$SFRAME_TOOLS/dlopen-loop" -q 20 "${libs[@]}"
	done
}
load_jit() { while running; do run jit "$SOAK_BIN/soak-jit" 2000 "$SOAK_BIN/jitlib.so"; done; }
load_uring() {
	while running; do
		run uring "$SOAK_BIN/soak-uring" 2000
		running && run uring "$SOAK_BIN/soak-uring" -s 2000
	done
}
# SIGUSR1 only to the soak-* programs, once they catch it (SigCgt: a
# program just exec'd has not installed its handler yet); SIGSTOP +
# SIGCONT to any, always continued.
catches_usr1() {
	local k v
	while read -r k v; do
		[ "$k" = SigCgt: ] && (( 0x$v & 1 << 9 )) && return 0
	done < "/proc/$1/status"
	return 1
} 2> /dev/null
load_signals() {
	local f pid comm n=0
	renice -n -10 -p $BASHPID > /dev/null
	while running; do
		snooze 0.$((1 + RANDOM % 4))
		for f in "$out"/pids/*; do
			[ $((RANDOM % 3)) = 0 ] || continue
			{ read -r pid < "$f" && read -r comm < "/proc/$pid/comm"; } 2> /dev/null || continue
			if [ $((RANDOM % 2)) = 0 ] && [[ $comm = soak-* ]] && catches_usr1 "$pid"; then
				kill -USR1 "$pid" 2> /dev/null && n=$((n + 1))
				continue
			fi
			kill -STOP "$pid" 2> /dev/null || continue
			snooze 0.0$((RANDOM % 9 + 1))
			kill -CONT "$pid" 2> /dev/null
			n=$((n + 1))
		done
	done
	echo "$n" > "$out/signals"
}

# The checker: each session as soon as it ended, in order.
checker() {
	local c=1 f rc
	while :; do
		f=$out/s$c
		if [ -e "$f.done" ]; then
			python3 "$check" --perf "$PERF" --cpus "$ncpu" \
				--json "$out/results.json" --name "session $c ($(cat "$f.done"))" \
				"$f.data" > "$f.check" 2>&1
			rc=$?
			cat "$f.check"
			if [ $rc != 0 ]; then
				echo "session $c: soak-check exit $rc" >> "$out/failures"
				sed 's/^/    /' "$f.log" >> "$out/failures"
				[ -n "$keep" ] && cp "$f.data" "$f.log" "$keep/" 2> /dev/null
			fi
			rm -f "$f.data"
			touch "$f.checked"
			c=$((c + 1))
		elif [ -e "$out/sessions-done" ]; then
			break
		else
			sleep 0.5
		fi
	done
}

# The NMI test's cookie log: 4M new batches (64 MiB), checked at "stop";
# past that, batches are still checked per task, only not logged.
if [ $nmi_on = 1 ]; then
	echo "start $nmi_period 4194304" > "$nmi/control" || die "start the NMI test"
	echo "nmi: an NMI every $nmi_period us from every CPU"
fi
loads=()
for l in $loads_on; do
	[ "$l" = nmi ] && continue
	load_$l &
	loads+=($!)
done
checker &
checker_pid=$!
renice -n 10 -p "$checker_pid" > /dev/null
sleep 1

# Sessions, back to back, each stopped by SIGINT while the load runs.
deadline=$((SECONDS + secs))
n=0
sections_max=$sections0
while [ $SECONDS -lt $deadline ]; do
	n=$((n + 1))
	f=$out/s$n
	case $((n % 3)) in
	0) ev=(-e "cpu-clock/period=$period/") cg=fp,defer what="cpu-clock" ;;
	1) ev=(-e "cpu-clock/period=$((period * 2))/" -e page-faults/period=100/) cg=fp,defer
	   what="cpu-clock+page-faults" ;;
	2) ev=(-e "cpu-clock/period=$period/") cg=fp,defer,24 what="cpu-clock, max stack 24" ;;
	esac
	# Started with the events off (perf takes seconds to start under
	# TCG), enabled through its control FIFO: the session's length is
	# from the "ack".  perf (and the signal sender) run before the load,
	# the checker after it: each is starved otherwise, under TCG.
	mkfifo "$f.ctl" "$f.ack" || die "mkfifo"
	nice -n -10 "$PERF" record -B -N -D -1 --control "fifo:$f.ctl,$f.ack" -a -m 1024 "${ev[@]}" \
		--call-graph "$cg" -o "$f.data" > "$f.log" 2>&1 &
	pid=$!
	ts=$SECONDS
	exec {ctl}> "$f.ctl" {ack}< "$f.ack"
	echo enable >&$ctl
	read -r -t 60 -u $ack reply || reply=none
	exec {ctl}>&- {ack}<&-
	[ "$reply" = ack ] || echo "session $n: no ack from perf record ($reply)" >> "$out/failures"
	te=$SECONDS
	snooze "$((RANDOM % sess_max + 1)).$((RANDOM % 10))"
	ti=$SECONDS
	v=$(kstat sections)
	[ "$v" -gt "$sections_max" ] && sections_max=$v
	kill -INT "$pid"
	wait "$pid"
	rc=$?
	rm -f "$f.ctl" "$f.ack"
	echo "$what, perf exit $rc; started in $((te - ts)) s, on for $((ti - te)) s," \
		"stopped in $((SECONDS - ti)) s" > "$f.done"
	# perf record ends with 130 when SIGINT stopped it
	if [ $rc != 0 ] && [ $rc != 130 ]; then
		{ echo "session $n: perf record exit $rc"; sed 's/^/    /' "$f.log"; } >> "$out/failures"
	fi
	# The checker may lag: don't let unchecked data fill the guest's memory.
	while [ "$(du -sm "$out" | cut -f1)" -gt 300 ]; do
		sleep 1
	done
done
touch "$out/sessions-done"
sessions_s=$((SECONDS - t0))

# NMIs are slow under TCG (a few hundred a second): the load goes on
# without sessions until the NMI test made SOAK_NMI_MIN requests, for at
# most SOAK_NMI_WAIT (3600) more seconds.
# Requests from NMI that succeeded (each checked for its one callback).
nmi_requests() {
	local k r n=0
	for k in a b; do
		for r in new already; do
			n=$((n + $(nstat ${k}_$r)))
		done
	done
	echo $n
}
if [ $nmi_on = 1 ] && [ "$(nmi_requests)" -lt "$nmi_min" ]; then
	echo "nmi: $(nmi_requests) requests after the sessions, load goes on until $nmi_min"
	nmi_deadline=$((SECONDS + ${SOAK_NMI_WAIT:-3600}))
	while [ "$(nmi_requests)" -lt "$nmi_min" ] && [ $SECONDS -lt $nmi_deadline ]; do
		snooze 10
	done
fi

# Stop the load (each loop ends its current program), then the checker.
touch "$out/stop"
wait "${loads[@]}"
for f in "$out"/pids/*; do
	kill -CONT "$(cat "$f")" 2> /dev/null
done
# The NMIs stop with the load: "stop" checks the cookies of the whole run.
nmi_req=0
if [ $nmi_on = 1 ]; then
	echo stop > "$nmi/control" || echo "nmi: stop failed: NMIs sent were lost" >> "$out/failures"
	cp "$nmi/stats" "$out/nmi-stats"
	nmi_req=$(nmi_requests)
	nmi_sent=$(nstat nmis_sent) nmi_handled=$(nstat nmis_handled) nmi_err=$(nstat errors)
	[ "$nmi_err" = 0 ] || {
		echo "nmi: $nmi_err errors:"
		grep -E '^err_' "$out/nmi-stats" | grep -v ' 0$' | sed 's/^/    /'
	} >> "$out/failures"
	[ "$nmi_sent" = "$nmi_handled" ] ||
		echo "nmi: $nmi_sent NMIs sent, $nmi_handled handled" >> "$out/failures"
	[ "$nmi_req" -ge "$nmi_min" ] ||
		echo "nmi: $nmi_req requests from NMI, want at least $nmi_min" >> "$out/failures"
	if dmesg | grep -E 'unwind_nmi_test: [a-z_]+:|NMI received for unknown reason' > "$out/nmi-dmesg"; then
		{ echo "nmi: kernel log:"; sed 's/^/    /' "$out/nmi-dmesg" | head -20; } >> "$out/failures"
	fi
	echo "nmi stats:" $(tr -s ' \n' ' ' < "$out/nmi-stats")
fi
wait "$checker_pid"

# No task has a request pending now: queued == ran; the processes that
# registered sections are gone: sections back where they were.
for ((i = 0; i < 60; i++)); do
	[ "$(kstat queued)" = "$(kstat ran)" ] && [ "$(kstat sections)" = "$sections0" ] && break
	sleep 1
done
echo "stats after:" $(tr -s ' \n' ' ' < "$stats")
queued=$(kstat queued) ran=$(kstat ran) sections1=$(kstat sections)
[ "$queued" = "$ran" ] ||
	echo "stats: queued $queued != ran $ran: $((queued - ran)) task works never ran" >> "$out/failures"
[ "$sections1" = "$sections0" ] ||
	echo "stats: sections $sections0 before, $sections1 after: $((sections1 - sections0)) leaked" >> "$out/failures"
if [ -z "$marker" ]; then
	echo "kernel log: no marker written to /dev/kmsg" >> "$out/failures"
elif ! dmesg | grep -qF "$marker"; then
	echo "kernel log: the start marker is gone (log wrapped?): not checked"
elif dmesg | sed -n "\|$marker|,\$p" | grep 'bad .sframe' > "$out/bad-sframe"; then
	{ echo "kernel log: good sections removed:"; sed 's/^/    /' "$out/bad-sframe" | head -5; } >> "$out/failures"
fi

echo "load: $(sort "$out/runs" | uniq -c | awk '{ printf "%s%s %s", s, $2, $1; s = ", " }') runs;" \
	"$(cat "$out/signals" 2> /dev/null || echo 0) signals sent"
# What the soak-* programs did, added up over their runs.
awk '{
	k = $0; gsub(/[0-9]+/, "#", k); m = split($0, v, /[^0-9]+/); c = 0
	for (i = 1; i <= m; i++)
		if (v[i] != "")
			sum[k, ++c] += v[i]
	nf[k] = c; runs[k]++
} END {
	for (k in nf) {
		s = k
		for (i = 1; i <= nf[k]; i++)
			sub(/#/, sum[k, i], s)
		print s " (" runs[k] " runs)"
	}
}' "$out/programs" 2> /dev/null | sort
python3 "$check" --summary "$out/results.json" > "$out/summary" 2>&1
sed '/^totals: /d' "$out/summary"
eval "$(sed -n 's/^totals: //p' "$out/summary" | tr ' ' '\n' | grep -E '^[a-z_]+=[0-9]+$' | sed 's/^/t_/')"
tot() { local v=t_$1; echo "${!v:-0}"; }
sessions=$(tot sessions)
[ "$n" = "$sessions" ] || echo "checker: $sessions results for $n sessions" >> "$out/failures"

verdict=PASS
if [ -s "$out/failures" ]; then
	verdict=FAIL
	echo "failures:"
	sed 's/^/  /' "$out/failures" | head -100
fi
echo "soak: $verdict: $((sessions_s / 60)) min $((sessions_s % 60)) s of sessions" \
	"($((SECONDS - t0)) s in all); $sessions sessions ($(tot failed) failed);" \
	"$(tot samples) samples, $(tot marker) deferred; $(tot entries) entries," \
	"$(tot records) records ($(tot matched) matched); losses: lost $(tot lost) +" \
	"$(tot lost_samples) samples, $(tot stopped) stopped, $(tot started) started," \
	"unexplained $(( $(tot unexplained_missing) + $(tot unexplained_orphan) ));" \
	"split over two tids $(tot split);" \
	"kernel ips in user callchains $(tot kernel_ip); io_uring worker samples $(tot iou_samples);" \
	"queued $queued ran $ran; sections $sections0 -> $sections1 (at most $sections_max seen at a session's end);" \
	"$([ $nmi_on = 1 ] && echo "NMI requests $nmi_req, errors $nmi_err" || echo "no NMI test")"
[ $verdict = PASS ]
