#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kfuzz.sh - the guest fuzzer of the kernel's SFrame input at length, on the
# debug kernel (KASAN, lockdep, UBSAN, kmemleak): KFUZZ_SECTIONS
# (1000000) mutated sections in KFUZZ_RUNS (4) runs of sframe-kfuzz, seeds
# KFUZZ_SEED (1), +1, ... (each run's seed is printed: "-s SEED -i ITER -n
# 1" replays one section), then a kmemleak scan, then the kernel log
# checked for reports.  The debug kernel decodes every section whole at
# registration (CONFIG_UNWIND_USER_SFRAME_VALIDATE), so bad ones never
# reach an unwind; KFUZZ_KERNEL=debug-lazy runs it on the debug kernel
# without that, where they are taken and removed at first use.
# KFUZZ_KERNEL=guest runs it on the guest kernel instead (faster; no
# checkers).  Part of `make fuzz`; a bounded slice of it is the guest test
# 88-sframe-kfuzz.
set -euo pipefail
. "$(dirname "$0")/paths.sh"

variant=${KFUZZ_KERNEL:-debug}
case $variant in debug|debug-lazy|guest) ;; *) echo "kfuzz: KFUZZ_KERNEL=$variant: debug, debug-lazy or guest" >&2; exit 2 ;; esac
total=${KFUZZ_SECTIONS:-1000000}
runs=${KFUZZ_RUNS:-4}
seed=${KFUZZ_SEED:-1}
[ "$total" -gt 0 ] && [ "$runs" -gt 0 ] || { echo "kfuzz: KFUZZ_SECTIONS and KFUZZ_RUNS must be > 0" >&2; exit 2; }

make -s --no-print-directory -C "$REPO" KVARIANT="$variant" kfuzz-load

out=$BUILD_DIR/kfuzz-results
rm -rf "$out"
mkdir -p "$out"
per=$(( (total + runs - 1) / runs ))
vmargs=(--log "$out/kernel.log" --timeout "${KFUZZ_TIMEOUT:-7200}"
	--kernel "$BUILD_DIR/kbuild/$variant/arch/x86/boot/bzImage")
t0=$SECONDS
rc=0
"$REPO/scripts/vm" "${vmargs[@]}" -- bash -c '
	fuzz=$1 lib=$2 runs=$3 per=$4 seed=$5 rc=0
	for ((r = 0; r < runs; r++)); do
		echo "## run $((r + 1)) of $runs: seed $((seed + r)), $per sections"
		"$fuzz" -v -s $((seed + r)) -n "$per" -g 1000 "$lib" || rc=1
	done
	if [ -w /sys/kernel/debug/kmemleak ]; then
		echo scan > /sys/kernel/debug/kmemleak; sleep 1
		echo scan > /sys/kernel/debug/kmemleak
		echo "kmemleak: $(grep -c "^unreferenced object" /sys/kernel/debug/kmemleak) unreferenced objects"
	fi
	exit $rc' kfuzz "$BUILD_DIR/workloads/sframe-kfuzz" "$BUILD_DIR/workloads/kfuzz-lib.so" \
	"$runs" "$per" "$seed" 2>&1 | tee "$out/kfuzz.txt" | grep -v '^# [0-9]* sections$' || rc=1
echo
sections=$(awk '/^sections: / { n += $2 } END { print n + 0 }' "$out/kfuzz.txt")
failures=$(awk '/^[0-9]+ failures$/ { n += $1 } END { print n + 0 }' "$out/kfuzz.txt")
if "$REPO/scripts/klog-check.sh" "$out/kernel.log" > "$out/klog-check.txt"; then
	reports=0
else
	reports=$(grep -c . "$out/klog-check.txt" || true)
	cat "$out/klog-check.txt"
fi
leaks=$(sed -n 's/^kmemleak: \([0-9]*\) unreferenced objects$/\1/p' "$out/kfuzz.txt")
echo "kfuzz: $sections sections fuzzed on the $variant kernel in $((SECONDS - t0)) s; " \
	"$failures failures; kernel reports: $reports; kmemleak: ${leaks:-not on this kernel}"
[ "$rc" = 0 ] && [ "$sections" -ge "$total" ] && [ "$failures" = 0 ] && [ "$reports" = 0 ] &&
	[ "${leaks:-0}" = 0 ]
