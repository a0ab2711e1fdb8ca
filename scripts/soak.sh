#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# soak.sh - the soak test at length (make soak): SOAK_SECONDS (600) of
# back-to-back `perf record -a --call-graph fp,defer` sessions under load
# (tests/soak/soak.sh: processes forking, exec'ing and exiting, threads,
# dlopen/dlclose through sframe-audit.so, text unmapped while sampled,
# signals, io_uring workers), on the debug kernel (KASAN, lockdep, UBSAN,
# kmemleak), every session's deferred records checked against its
# samples, the kernel's counters after the load (task work queued ==
# ran, SFrame sections back to where they were), then a kmemleak scan,
# then the kernel log checked for reports (scripts/klog-check.sh).
# SOAK_KERNEL=guest runs it on the guest kernel instead (faster, no
# checkers); SOAK_BUILD=0 uses what is built (make soak-build);
# SOAK_LOADS picks loads (tests/soak/soak.sh); SOAK_NMI_MIN (1000000)
# requests from NMI must be made by the NMI stress test
# (CONFIG_UNWIND_DEFERRED_NMI_TEST) that runs alongside, the load going on
# after the sessions until then for at most SOAK_NMI_WAIT (3600) s;
# SOAK_TIMEOUT bounds the guest (default 3 x SOAK_SECONDS + 900 +
# SOAK_NMI_WAIT).  Results in
# $BUILD_DIR/soak-results (the perf.data of failed sessions too); the last
# line is the summary:
#   soak: PASS|FAIL: N min on the debug kernel; sessions, samples, records,
#   losses; reports N; kmemleak N
# A bounded slice of it is the guest test 89-soak.
set -uo pipefail
. "$(dirname "$0")/paths.sh"

variant=${SOAK_KERNEL:-debug}
case $variant in debug|guest) ;; *) echo "soak: SOAK_KERNEL=$variant: debug or guest" >&2; exit 2 ;; esac
secs=${SOAK_SECONDS:-600}
case $secs in ''|*[!0-9]*) echo "soak: SOAK_SECONDS=$secs is not a number" >&2; exit 2 ;; esac

if [ "${SOAK_BUILD:-1}" = 1 ]; then
	make -s --no-print-directory -C "$REPO" KVARIANT="$variant" soak-build || exit 1
fi

out=$BUILD_DIR/soak-results
rm -rf "$out"
mkdir -p "$out"
# The load takes the guest's time after the sessions too (checking the
# last ones, waiting for the counters): allow for it, and for boot.
nmi_wait=${SOAK_NMI_WAIT:-3600}
vmargs=(--log "$out/kernel.log" --scratch "$out"
	--timeout "${SOAK_TIMEOUT:-$((secs * 3 + 900 + nmi_wait))}")
[ "$variant" = debug ] && vmargs+=(--debug)
t0=$SECONDS
"$REPO/scripts/vm" "${vmargs[@]}" -- env PERF="$BUILD_DIR/perf/perf" \
	WORKLOADS="$BUILD_DIR/workloads" SFRAME_TOOLS="$BUILD_DIR/sframe-tools" \
	SOAK_BIN="$BUILD_DIR/soak" SOAK_SECONDS="$secs" SOAK_KEEP="$out" \
	SOAK_NMI_MIN="${SOAK_NMI_MIN:-1000000}" SOAK_NMI_WAIT="$nmi_wait" \
	${SOAK_LOADS:+SOAK_LOADS="$SOAK_LOADS"} bash -c '
	bash "$1/tests/soak/soak.sh"
	rc=$?
	if [ -w /sys/kernel/debug/kmemleak ]; then
		echo scan > /sys/kernel/debug/kmemleak; sleep 1
		echo scan > /sys/kernel/debug/kmemleak
		echo "kmemleak: $(grep -c "^unreferenced object" /sys/kernel/debug/kmemleak) unreferenced objects"
	fi
	exit $rc' soak "$REPO" 2>&1 | tee "$out/soak.txt"
rc=${PIPESTATUS[0]}
echo
if "$REPO/scripts/klog-check.sh" "$out/kernel.log" > "$out/klog-check.txt"; then
	reports=0
else
	reports=$(grep -c . "$out/klog-check.txt")
	head -n 50 "$out/klog-check.txt"
fi
leaks=$(sed -n 's/^kmemleak: \([0-9]*\) unreferenced objects$/\1/p' "$out/soak.txt")
line=$(grep '^soak: \(PASS\|FAIL\): ' "$out/soak.txt" | tail -n 1)
verdict=PASS
[ "$rc" = 0 ] && [ -n "$line" ] && [ "$reports" = 0 ] && [ "${leaks:-0}" = 0 ] || verdict=FAIL
echo "soak: $verdict: $((secs / 60)) min of sessions on the $variant kernel, $((SECONDS - t0)) s in all" \
	"(vm exit $rc); ${line#soak: * }; kernel reports: $reports;" \
	"kmemleak: ${leaks:-not on this kernel}; results in $out"
[ $verdict = PASS ]
