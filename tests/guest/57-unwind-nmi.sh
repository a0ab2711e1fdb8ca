# SPDX-License-Identifier: GPL-2.0
# Deferred unwind requests from NMI, which nothing raises under QEMU TCG
# but PMU sampling does on real hardware: CONFIG_UNWIND_DEFERRED_NMI_TEST
# (kernel/unwind/deferred_nmi_test.c) sends NMI IPIs from an hrtimer on
# every CPU, every NMI_PERIOD_US (200) microseconds, and its handler asks
# for the user stack of the interrupted task with a permanent unwind_work
# and one that a kernel thread registers and cancels in a loop; the kernel
# checks every request and callback per task (see the file's comment).
# Meanwhile, for NMI_SECONDS (12): a CPU-bound user spinner (deep stack),
# a syscall loop, a program taking SIGPROF in a handler, threads, and
# fork + exec + exit in a loop, under `perf record -a -e cpu-clock
# --call-graph fp,defer` (NMI_TEST_NO_PERF=1: without perf).  After the
# load has exited, "stop"; then: no error, every NMI sent was handled,
# enough requests succeeded (see below), every batch of the permanent work
# was called back or belongs to a task still alive, every batch of the
# churned one was called back or dropped by its cancel, every new batch
# had a cookie no other task had, no task went untracked, and the kernel
# log has no report of the test, of an unknown NMI, or a WARNING.
. "$(dirname "$0")/lib.sh"

dir=/sys/kernel/debug/unwind_nmi_test
[ -d "$dir" ] || skip "kernel without CONFIG_UNWIND_DEFERRED_NMI_TEST"
period=${NMI_PERIOD_US:-200}
secs=${NMI_SECONDS:-12}
gt=$WORKLOADS/gt-fp
[ -x "$gt" ] || fail "no $gt"
if [ "${NMI_TEST_NO_PERF:-0}" != 1 ]; then
	[ -x "$PERF" ] || fail "no perf at $PERF"
fi

stat() { awk -v k="$1:" '$1 == k { print $2 }' "$dir/stats"; }
# Entries served without a stack because user code ran before their task
# work could (a self-IPI that came late: TCG takes it a few instructions
# into user space at times): the only empty stacks A may get.
late() { awk '$1 == "late:" { print $2 }' /sys/kernel/debug/unwind_user/stats; }

klog0=$(dmesg | wc -l)
late0=$(late)
[ -n "$late0" ] || fail "no late: count in /sys/kernel/debug/unwind_user/stats"
echo "start $period" > "$dir/control" || fail "start $period"
t0=$(date +%s%N)

pids=()
if [ "${NMI_TEST_NO_PERF:-0}" != 1 ]; then
	# Stopped by SIGINT when the load is done: it takes seconds to start
	# and stop under TCG.
	"$PERF" record -q -a -e cpu-clock -F 250 --call-graph fp,defer \
		-o "$TMP/perf.data" > "$TMP/perf.log" 2>&1 &
	perf_pid=$!
fi
ms=$((secs * 1000))
# The computing ones niced: fork + exec gets a fair share of the 2 CPUs.
gt="nice -n 5 $gt"
$gt recurse "$ms" > "$TMP/recurse.log" 2>&1 & pids+=($!)
$gt syscalls "$ms" > "$TMP/syscalls.log" 2>&1 & pids+=($!)
$gt signals "$ms" > "$TMP/signals.log" 2>&1 & pids+=($!)
GT_THREADS=3 $gt threads "$ms" > "$TMP/threads.log" 2>&1 & pids+=($!)
# fork + exec + exit: a subshell that execs /bin/true, as fast as it goes
(
	end=$((SECONDS + secs))
	n=0
	while [ $SECONDS -lt $end ]; do
		/bin/true || exit 1
		n=$((n + 1))
	done
	echo "$n execs"
) > "$TMP/exec.log" 2>&1 & pids+=($!)

rc=0
for p in "${pids[@]}"; do
	wait "$p" || rc=1
done
if [ -n "${perf_pid:-}" ]; then
	kill -INT "$perf_pid"
	# perf record ends with 130 when SIGINT stopped it
	wait "$perf_pid"
	prc=$?
	if [ $prc != 130 ] && [ $prc != 0 ]; then
		cat "$TMP/perf.log"
		echo "stop" > "$dir/control"
		fail "perf record exit $prc"
	fi
fi
t1=$(date +%s%N)
echo "stop" > "$dir/control"
src=$?
cat "$TMP"/exec.log
[ $rc = 0 ] || { cat "$TMP"/*.log; fail "a workload failed"; }
[ $src = 0 ] || { cat "$dir/stats"; fail "stop: NMIs lost (write failed)"; }

# Tasks alive at "stop" (this shell, its parents) may still be called
# back for what they were asked for: wait until the counts settle.
for i in $(seq 20); do
	[ "$(stat batches_a)" = "$(( $(stat callbacks_a) + $(stat pending_a) ))" ] && break
	sleep 0.2
done
cat "$dir/stats"
late=$(( $(late) - late0 ))
echo "late: $late entries served without a stack (user code ran first)"

ms_run=$(( (t1 - t0) / 1000000 ))
sent=$(stat nmis_sent) handled=$(stat nmis_handled) user=$(stat nmis_user)
ok=$(( $(stat a_new) + $(stat a_already) ))
echo "$ms_run ms: $sent NMIs sent ($((sent * 1000 / ms_run))/s), $handled handled," \
	"$user in user tasks; $ok requests of A succeeded ($((ok * 1000 / ms_run))/s)," \
	"$(( $(stat b_new) + $(stat b_already) )) of B"

dmesg | tail -n +$((klog0 + 1)) > "$TMP/dmesg"
if grep -E 'unwind_nmi_test: [a-z_]+:|NMI received for unknown reason|Dazed and confused|WARNING:|BUG:' \
	"$TMP/dmesg"; then
	fail "kernel log"
fi
[ "$(stat errors)" = 0 ] || fail "$(stat errors) errors (err_* above)"
[ "$sent" = "$handled" ] || fail "$sent NMIs sent, $handled handled"
[ "$(stat empty_stacks_a)" -le "$late" ] ||
	fail "$(stat empty_stacks_a) empty stacks for A, only $late entries were late"
# Each CPU sends an NMI to the other every 200 us, but not before the
# last one was handled, and under TCG an NMI to another vCPU takes 1 to
# 5 ms to come in: 140 to 800 NMIs/s were sent in all in runs of this
# test (the fewer with the host busy compiling), 100 to 330 requests of
# A/s succeeded; nearly all requests from a user task succeed (-EINVAL
# only for exiting tasks, -EAGAIN in the return-to-user window). Floors
# well below that, which NMIs not delivered or requests refused don't
# reach: 50 NMIs/s, 20 successful requests/s, half the NMIs that hit a
# user task.
want=$((ms_run * 50 / 1000))
[ "$sent" -ge "$want" ] || fail "$sent NMIs sent, want at least $want"
want=$((ms_run * 20 / 1000))
[ "$ok" -ge "$want" ] || fail "$ok requests of A succeeded, want at least $want"
[ "$ok" -ge $((user / 2)) ] || fail "$ok requests of A succeeded, want at least $((user / 2))"
[ "$(stat nmis_untracked)" = 0 ] || fail "tasks went untracked"
[ "$(stat log_overflow)" = 0 ] || fail "cookie log overflowed"
[ "$(stat batches_a)" = "$(( $(stat callbacks_a) + $(stat pending_a) ))" ] ||
	fail "A: $(stat batches_a) batches, $(stat callbacks_a) callbacks, $(stat pending_a) pending"
[ "$(stat pending_a)" -le $((4 * $(stat tasks_alive_pending))) ] ||
	fail "batches pending for tasks not alive"
[ "$(stat batches_b)" = "$(( $(stat callbacks_b) + $(stat dropped_b) ))" ] ||
	fail "B: $(stat batches_b) batches, $(stat callbacks_b) callbacks, $(stat dropped_b) dropped"
[ "$(stat b_registrations)" -ge 10 ] && [ "$(stat b_registrations)" = "$(stat b_cancels)" ] ||
	fail "B: $(stat b_registrations) registrations, $(stat b_cancels) cancels"
[ "$(stat b_new)" -gt 0 ] && [ "$(stat callbacks_b)" -gt 0 ] && [ "$(stat dropped_b)" -gt 0 ] ||
	fail "B: requests, callbacks and drops must all happen"
# Every new batch was logged, and its cookie checked against the others.
[ "$(stat log_entries)" = "$(( $(stat batches_a) + $(stat batches_b) + $(stat batches_untracked) ))" ] &&
	[ "$(stat unique_cookies)" -gt 0 ] || fail "cookie log"
exit 0
