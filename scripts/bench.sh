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
hdr=$BUILD_DIR/kbuild/guest/usr/include
make -s -C "$REPO/tests/bench" OUT="$BUILD_DIR/bench" KHDR="$hdr"

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
} > "$out/report.md"
cat "$out/report.md"
echo "bench: report in $out/report.md"
