#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# profile-run.sh PERF DIR OUT "FREQ..." REPS MS
#
# In the guest: the profile section's runs.  DIR has profile-work-fp,
# -nofp and -sframe (tests/bench/Makefile).  Calibrates the work for MS ms
# of the no-frame-pointer build, then, REPS times over, runs each build
# without perf and, for each frequency, perf record -e cpu-clock -F FREQ
# with --call-graph fp (fp build), dwarf (nofp build) and fp,defer
# (nofp build with SFrame), each recording to the guest's tmpfs and then
# copied to OUT/data/ for profile-report.py.  One line per run on stdout,
# key=value words: the workload's own line (work_ns, cpu_ns, checksum),
# total_cpu_ns (CPU time of the whole command, perf record's own included:
# its start, its reading of the ring buffer and its pass over the file at
# the end), bytes (perf.data) and perf record's sample count.  (Not the
# command's wall time: under -icount with sleep=off the guest clock jumps
# ahead while it waits for 9p reads, by however long the next timer is.)
set -euo pipefail

perf=$1 dir=$2 out=$3 freqs=$4 reps=$5 ms=$6
mkdir -p "$out/data"
# The kernel would lower perf_event_max_sample_rate when sampling takes
# long (as it does under TCG), and perf record -F 10000 would then fail or
# differ from run to run: keep the rate asked for (set first: with the
# throttling off, the kernel refuses writes to it).
echo 100000 > /proc/sys/kernel/perf_event_max_sample_rate
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent
echo "# guest: $(uname -r) $(uname -v), $(nproc) CPU, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"

die() { echo "profile-run: $*" >&2; exit 1; }
# timed FILE CMD...: CMD's stdout to FILE; sets $cpu_ns, the CPU time of
# CMD and everything it waited for (user + system, from bash's time).
TIMEFORMAT='%3U %3S'
timed() {
	local f=$1 t
	shift
	t=$( { time "$@" > "$f" 2> /tmp/cmd.err; } 2>&1 ) ||
		die "$* failed: $(tail -5 /tmp/cmd.err)"
	cpu_ns=$(echo "$t" | awk '{ printf "%.0f", ($1 + $2) * 1e9 }')
}

# Warm up: perf and the programs read once over 9p, so that total_ns
# does not include the first read.
"$perf" record -q -o /tmp/warm.data -- "$dir/profile-work-nofp" 1 > /dev/null 2>&1 ||
	die "perf record does not run: $("$perf" record -o /tmp/warm.data -- true 2>&1 | tail -3)"
for b in fp nofp sframe; do "$dir/profile-work-$b" 1 > /dev/null; done
iters=$("$dir/profile-work-nofp" -c "$ms")
echo "calib ms=$ms iters=$iters"

# one MODE BUILD FREQ REP: one run; MODE none runs without perf.
one() {
	local mode=$1 build=$2 freq=$3 rep=$4 work rec data samples cpu_ns
	local bin=$dir/profile-work-$build
	if [ "$mode" = none ]; then
		timed /tmp/work.out "$bin" "$iters"
	else
		timed /tmp/work.out "$perf" record -e cpu-clock -F "$freq" --call-graph "$mode" \
			-o /tmp/p.data -- "$bin" "$iters"
	fi
	work=$(cat /tmp/work.out)
	case $work in work_ns=*) ;; *) die "$bin printed '$work'" ;; esac
	if [ "$mode" = none ]; then
		echo "run mode=none build=$build freq=0 rep=$rep $work total_cpu_ns=$cpu_ns"
		return
	fi
	# "[ perf record: Captured and wrote 0.123 MB /tmp/p.data (1234 samples) ]"
	rec=$(grep 'Captured and wrote' /tmp/cmd.err || true)
	samples=$(echo "$rec" | sed -n 's/.*(\([0-9]*\) samples).*/\1/p')
	[ -n "$samples" ] && [ "$samples" -gt 0 ] ||
		die "perf record --call-graph $mode -F $freq: no samples ($(tail -3 /tmp/cmd.err))"
	data=$out/data/$mode-$freq-$rep.data
	cp /tmp/p.data "$data"
	echo "run mode=$mode build=$build freq=$freq rep=$rep $work total_cpu_ns=$cpu_ns bytes=$(stat -c %s /tmp/p.data) rec_samples=$samples data=$data"
	grep -i 'warn\|lost' /tmp/cmd.err | sed "s/^/# $mode $freq $rep: /" || true
	rm -f /tmp/p.data
}

for rep in $(seq "$reps"); do
	one none nofp 0 "$rep"
	one none fp 0 "$rep"
	one none sframe 0 "$rep"
	for f in $freqs; do
		one fp fp "$f" "$rep"
		one dwarf nofp "$f" "$rep"
		one fp,defer sframe "$f" "$rep"
	done
done
