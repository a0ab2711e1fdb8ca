#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh - build, boot the patched kernel in QEMU and run the benchmarks,
# each measuring alternatives side by side in one run, as ratios of counted
# work (bytes, samples, unwinds), never as pass/fail. Writes a markdown
# report to $BUILD_DIR/bench-results/report.md and prints it.
#
# BENCH_MS (2000) is how long each workload runs, per mode.

set -euo pipefail
. "$(dirname "$0")/paths.sh"

"$REPO/scripts/deps.sh"
"$REPO/scripts/tree.sh" prepare
"$REPO/scripts/build-kernel.sh" guest
"$REPO/scripts/build-perf.sh"
perf=$BUILD_DIR/perf/perf
hdr=$BUILD_DIR/kbuild/guest/usr/include
make -s -C "$REPO/tests/bench" OUT="$BUILD_DIR/bench" KHDR="$hdr"
make -s -C "$REPO/tools/sframe" OUT="$BUILD_DIR/sframe-tools" all

out=$BUILD_DIR/bench-results
mkdir -p "$out"
ms=${BENCH_MS:-2000}
"$REPO/scripts/vm" --log "$out/kernel.log" -- sh -c "
	echo \"guest: \$(uname -r), \$(nproc) vCPUs, clocksource \$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)\"
	$BUILD_DIR/bench/defer-bench $ms 10000" > "$out/defer-bench.txt" 2>&1 || {
	cat "$out/defer-bench.txt"
	echo "bench: defer-bench failed" >&2
	exit 1
}

# perf script with and without merging deferred callchains: the data is
# recorded in the guest (the syscall loop, 2 events at 10 kHz) or crafted
# (1M samples), perf script runs on the host, whose timing is stable.
scale=${BENCH_SCRIPT_SAMPLES:-1000000}
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

# sframe-gen on the host: throughput and size against .eh_frame
gcc -O2 -fomit-frame-pointer -o "$out/chain-nofp" "$REPO/tests/workloads/chain.c"
libc=$(readlink -f "$(ldconfig -p | awk '$1 == "libc.so.6" && /x86-64/ { print $NF; exit }')")
libstdcxx=$(readlink -f "$(ldconfig -p | awk '$1 == "libstdc++.so.6" && /x86-64/ { print $NF; exit }')")
python3 "$REPO/tools/sframe/tests/bench-gen.py" "$BUILD_DIR/sframe-tools/sframe-gen" \
	"$libc" "$libstdcxx" "$(readlink -f /usr/bin/python3)" "$out/chain-nofp" > "$out/sframe-gen.txt"

{
	echo "# Benchmarks ($(date -u +%Y-%m-%d), $(git -C "$REPO" describe --always --dirty))"
	echo
	echo "QEMU TCG guest on $(nproc) host cores; counts of work, so the ratios"
	echo "hold across machines; absolute rates do not."
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
	echo
	echo "## sframe-gen: throughput and size"
	echo
	echo "On the host: the SFrame section generated from each object's"
	echo ".eh_frame, against .eh_frame alone and with .eh_frame_hdr (which"
	echo "an .eh_frame unwinder needs as its index; SFrame carries its own)."
	echo
	cat "$out/sframe-gen.txt"
} > "$out/report.md"
cat "$out/report.md"
echo "bench: report in $out/report.md"
