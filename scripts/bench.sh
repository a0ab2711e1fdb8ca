#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh - build, boot the patched kernel in QEMU and run the benchmarks,
# each measuring alternatives side by side in one run, as ratios of counted
# work (bytes, samples, unwinds), never as pass/fail. Writes a markdown
# report to $BUILD_DIR/bench-results/report.md and prints it.
#
# BENCH_MS (2000) is how long each workload runs, per mode.
# BENCH_ONLY (all) runs only the named sections, e.g. BENCH_ONLY=unwind or
# BENCH_ONLY="defer script": defer (deferred vs plain callchains), script
# (perf script merging), gen (sframe-gen), unwind (cost per unwound frame,
# SFrame vs frame pointers, by number of FDEs).
# BENCH_BUILD=0 builds none of kernel, tree and perf (uses what is there:
# for a tree with work in progress); the benchmark programs are built.
# unwind: BENCH_UNWIND_FDES (100 1000 10000 100000 1000000),
# BENCH_UNWIND_DEPTHS (32 128), BENCH_UNWIND_ITERS (2000),
# BENCH_UNWIND_REPS (3); BENCH_ICOUNT=off boots without -icount.

set -euo pipefail
. "$(dirname "$0")/paths.sh"

only=${BENCH_ONLY:-defer script gen unwind}
only=" ${only//,/ } "
for s in $only; do
	case $s in defer|script|gen|unwind) ;; *) echo "bench: unknown section '$s' in BENCH_ONLY (defer script gen unwind)" >&2; exit 2 ;; esac
done
run() { [[ $only == *" $1 "* ]]; }

if [ "${BENCH_BUILD:-1}" != 0 ]; then
	"$REPO/scripts/deps.sh"
	"$REPO/scripts/tree.sh" prepare
	"$REPO/scripts/build-kernel.sh" guest
	if run script; then "$REPO/scripts/build-perf.sh"; fi
fi
perf=$BUILD_DIR/perf/perf
hdr=$BUILD_DIR/kbuild/guest/usr/include
make -s -C "$REPO/tools/sframe" OUT="$BUILD_DIR/sframe-tools" all
sframe_gen=$BUILD_DIR/sframe-tools/sframe-gen
unwind_fdes=${BENCH_UNWIND_FDES:-100 1000 10000 100000 1000000}
t0=$SECONDS
make -s -C "$REPO/tests/bench" OUT="$BUILD_DIR/bench" KHDR="$hdr" \
	SFRAME_GEN="$(run unwind && echo "$sframe_gen")" UNWIND_FDES="$unwind_fdes"
build_s=$((SECONDS - t0))

out=$BUILD_DIR/bench-results
mkdir -p "$out"
ms=${BENCH_MS:-2000}
if run defer; then
"$REPO/scripts/vm" --log "$out/kernel.log" -- sh -c "
	echo \"guest: \$(uname -r), \$(nproc) vCPUs, clocksource \$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)\"
	$BUILD_DIR/bench/defer-bench $ms 10000" > "$out/defer-bench.txt" 2>&1 || {
	cat "$out/defer-bench.txt"
	echo "bench: defer-bench failed" >&2
	exit 1
}
fi

# perf script with and without merging deferred callchains: the data is
# recorded in the guest (the syscall loop, 2 events at 10 kHz) or crafted
# (1M samples), perf script runs on the host, whose timing is stable.
scale=${BENCH_SCRIPT_SAMPLES:-1000000}
if run script; then
"$REPO/scripts/vm" -s "$out" -- sh -c "
	cat /proc/kallsyms > $out/kallsyms
	$perf record -q -e cpu-clock,task-clock -F 10000 --call-graph fp,defer \
		-o $out/deferloop.data -- $perf test -w deferloop ${BENCH_RECORD_S:-20}
	$perf record -q -e cpu-clock,task-clock -F 10000 --call-graph fp \
		-o $out/deferloop-fp.data -- $perf test -w deferloop ${BENCH_RECORD_S:-20}" \
	> "$out/record.txt" 2>&1 || {
	cat "$out/record.txt"
	echo "bench: recording in the guest failed" >&2
	exit 1
}
python3 "$TREE/tools/perf/tests/shell/lib/perf_deferred_data.py" scale --count "$scale" \
	--file "$out/crafted.data"
python3 "$REPO/tests/bench/perf-script-bench.py" --kallsyms "$out/kallsyms" \
	--baseline "deferloop, fp" "$perf" "deferloop, fp=$out/deferloop-fp.data" \
	"deferloop, fp,defer=$out/deferloop.data" "scale, crafted=$out/crafted.data" \
	> "$out/perf-script.txt"
fi

# sframe-gen on the host: throughput and size against .eh_frame
if run gen; then
gcc -O2 -fomit-frame-pointer -o "$out/chain-nofp" "$REPO/tests/workloads/chain.c"
libc=$(readlink -f "$(ldconfig -p | awk '$1 == "libc.so.6" && /x86-64/ { print $NF; exit }')")
libstdcxx=$(readlink -f "$(ldconfig -p | awk '$1 == "libstdc++.so.6" && /x86-64/ { print $NF; exit }')")
python3 "$REPO/tools/sframe/tests/bench-gen.py" "$BUILD_DIR/sframe-tools/sframe-gen" \
	"$libc" "$libstdcxx" "$(readlink -f /usr/bin/python3)" "$out/chain-nofp" > "$out/sframe-gen.txt"
fi

# The kernel's cost per unwound user frame, SFrame vs frame pointers, by
# number of FDEs: in a guest with one CPU whose clock counts instructions
# (scripts/vm --icount: QEMU TCG -icount), so that the costs are
# exact counts that repeat from run to run.
if run unwind; then
	u=$BUILD_DIR/bench/unwind
	counts=()
	for n in $unwind_fdes; do
		c=$("$BUILD_DIR/sframe-tools/sframe-dump" "$u/sframe-$n" | awk '/Num FDEs:/ { print $3; exit }') || true
		[ "$c" = "$n" ] || { echo "bench: sframe-$n: sframe-dump reads ${c:-no} FDEs, not $n" >&2; exit 1; }
		counts+=("$n=$c")
	done
	vmargs=()
	unwind_clock="The guest has one CPU and runs without -icount
(BENCH_ICOUNT=off): its clock follows the host's, about +-15% from run to
run."
	if [ "${BENCH_ICOUNT:-}" != off ]; then
		vmargs=(--icount "${BENCH_ICOUNT:-shift=0,sleep=off}")
		unwind_clock="The guest has one CPU and runs under QEMU -icount
${BENCH_ICOUNT:-shift=0,sleep=off} (shift=0: 1 ns is one guest instruction), so these are
instruction counts, which repeat across runs and boots, but cache and TLB
misses are not modelled (the binary search over 10^6 FDEs walks a 16 MB
index: more on real hardware)."
	else
		vmargs=(-a maxcpus=1)
	fi
	"$REPO/scripts/vm" "${vmargs[@]}" --log "$out/kernel-unwind.log" -- \
		"$REPO/tests/bench/unwind-run.sh" "$u" "$unwind_fdes" \
		-n "${BENCH_UNWIND_ITERS:-2000}" -r "${BENCH_UNWIND_REPS:-3}" \
		${BENCH_UNWIND_DEPTHS:-32 128} > "$out/unwind-raw.txt" 2>&1 || {
		cat "$out/unwind-raw.txt"
		echo "bench: unwind-bench failed" >&2
		exit 1
	}
	python3 "$REPO/tests/bench/unwind-report.py" "$out/unwind-raw.txt" "${counts[@]}" \
		> "$out/unwind.txt"
fi

{
	echo "# Benchmarks ($(date -u +%Y-%m-%d), $(git -C "$REPO" describe --always --dirty))"
	echo
	echo "QEMU TCG guest on $(nproc) host cores; counts of work, so the ratios"
	echo "hold across machines; absolute rates do not."
	if run defer; then
	echo
	echo "## Deferred vs plain user callchains"
	echo
	echo "A syscall loop (getppid, ${ms} ms per mode) in a frame-pointer chain"
	echo "(main, chain_a, +frames of recursion, chain_b, chain_c, chain_leaf),"
	echo "sampled by cpu-clock and task-clock at 10 kHz each. A plain"
	echo "sample walks the user stack itself; deferred samples share one unwind"
	echo "per kernel entry (unwinds from /sys/kernel/debug/unwind_user/stats)."
	echo
	sed -n '1p' "$out/defer-bench.txt"
	echo
	sed -n '2,$p' "$out/defer-bench.txt"
	fi
	if run script; then
	echo
	echo "## perf script: merging deferred callchains or not"
	echo
	echo "\`perf script\` (default: merged) vs \`perf script --no-merge-callchains\`,"
	echo "median of 3 runs each on the host, peak RSS; recorded: \`perf test -w"
	echo "deferloop\` in the guest, cpu-clock and task-clock at 10 kHz, fp,defer;"
	echo "crafted: $scale samples, 4 per record, one record in ten missing."
	echo "Merged output prints the user part of every sample, raw output once"
	echo "per record, so merge vs no merge also measures printing ~10x more"
	echo "frames; the last column compares the time per sample with the same"
	echo "workload recorded with plain fp (the same stacks to print, nothing to"
	echo "merge): that is the cost of merging."
	echo
	cat "$out/perf-script.txt"
	fi
	if run gen; then
	echo
	echo "## sframe-gen: throughput and size"
	echo
	echo "On the host: the SFrame section generated from each object's"
	echo ".eh_frame, against .eh_frame alone and with .eh_frame_hdr (which"
	echo "an .eh_frame unwinder needs as its index; SFrame carries its own)."
	echo
	cat "$out/sframe-gen.txt"
	fi
	if run unwind; then
	echo
	echo "## Kernel unwinder: cost per user frame, SFrame vs frame pointers"
	echo
	echo "A program samples itself with deferred user callchains (page-faults,"
	echo "period 1: one sampled kernel entry per iteration of a madvise + read"
	echo "fault loop, ${BENCH_UNWIND_ITERS:-2000} iterations) at the bottom of a stack of known depth,"
	echo "built with frame pointers and no SFrame (FP), or without frame pointers"
	echo "and with SFrame injected by sframe-gen (every frame unwound by SFrame),"
	echo "with tiny functions linked in so that the section has the given number"
	echo "of FDEs (as sframe-dump reads them back). Cost of an unwind = (loop time"
	echo "- loop time with plain samples) / unwinds counted in"
	echo "/sys/kernel/debug/unwind_user/stats, and ns/frame its slope between the"
	echo "two depths, where the fixed costs cancel: without any defer_output event"
	echo "(the unwinder alone), and \"+ record\" with the"
	echo "PERF_RECORD_CALLCHAIN_DEFERRED written, as perf record pays it; every"
	echo "record is checked (that many ips, the last one in the outermost frame)."
	echo "$unwind_clock"
	echo "What noise remains is interrupts landing in a run, which only add: the"
	echo "shortest of the runs is taken, their spread is on the last lines."
	echo "Building the programs took ${build_s} s in this run (0 when cached in"
	echo "\$BUILD_DIR/bench/unwind)."
	echo
	cat "$out/unwind.txt"
	fi
} > "$out/report.md"
cat "$out/report.md"
echo "bench: report in $out/report.md"
