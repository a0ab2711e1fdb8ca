#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test.sh [--debug] - build what is stale, run the host tests, then the
# guest tests in one boot, check the guest kernel's log, and print one line
# per test and a final "N passed, N failed, N skipped".  Exit 1 if
# anything failed.  --debug runs the guest tests on the debug kernel.
#
# With CI=true the kernel tree is always re-created from the tarball and
# the series (ccache keeps that quick): a cache never stands in for a build.

set -uo pipefail

. "$(dirname "$0")/paths.sh"
. "$REPO/tests/lib/tap.sh"
variant=guest
[ "${1:-}" = --debug ] && variant=debug
out=$BUILD_DIR/test-results/$variant
rm -rf "$out"
mkdir -p "$out"
results=$out/results.txt
: > "$results"
t0=$SECONDS

phase_start=$SECONDS
phase() {
	local now=$SECONDS
	echo "=== $1 ($((now - phase_start))s, total $((now - t0))s)"
	phase_start=$now
}
abort() {
	echo "test: $*" >&2
	echo "not ok - $*" >> "$results"
	summary
	exit 1
}
summary() {
	local pass fail skip
	pass=$(grep -c '^ok - ' "$results" | head -1)
	skip=$(grep -c '^ok - .* # SKIP' "$results" | head -1)
	fail=$(grep -c '^not ok - ' "$results" | head -1)
	pass=$((pass - skip))
	# What failed, again at the end, where a cut log still shows it: each
	# failed test with its first FAIL lines.
	if [ "$fail" != 0 ]; then
		echo
		echo "failed:"
		awk '/^not ok - / { t = $0; n = 0; print "  " t; next }
		     /^(ok|not ok) - / { t = "" }
		     t != "" && /FAIL|^    # not ok - / && n < 6 { n++; print "  " $0 }' "$results" |
			cut -c1-300
	fi
	echo
	echo "time: $((SECONDS - t0))s; results in $out"
	echo "$pass passed, $fail failed, $skip skipped"
	# CI has every dependency: a test that skips there lost one
	if [ "${CI:-}" = true ] && [ "$skip" != 0 ]; then
		echo "test: $skip skipped under CI=true, where everything must run"
		return 1
	fi
	[ "$fail" = 0 ]
}

# The build is the Makefile's: "make test-build" (the kernel, without
# UNWIND_USER too, perf, with ASan too, the SFrame tools, the test
# programs and kselftests).
mk() { make -s --no-print-directory -C "$REPO" KVARIANT=$variant "$@"; }
echo "=== deps"
mk deps || abort "installing dependencies failed"
phase "deps done"
if [ "${CI:-}" = true ]; then
	mk tree-reset || abort "kernel tree: cannot apply the series"
	phase "tree re-created"
fi
mk test-build || abort "build failed (make test-build KVARIANT=$variant, above)"
phase "built"

# Host tests: tests/host/*.sh, one result each (tests/lib/tap.sh).
if [ $variant = guest ]; then
	for t in "$REPO"/tests/host/[0-9]*.sh; do
		# the whole output in host.log, the details of a failure also
		# in the results
		VERBOSE=1 run_test "$t" > "$out/host.$$" 2>&1
		rc=$?
		cat "$out/host.$$" >> "$out/host.log"
		if [ $rc = 0 ] || [ $rc = 2 ]; then
			head -n 1 "$out/host.$$"
		else
			cat "$out/host.$$"
		fi | tee -a "$results"
		rm -f "$out/host.$$"
	done
	unset TMP
	phase "host tests done"
fi

# Guest tests, one boot.
# kunit.enable=1: the built-in KUnit suites run at boot, results in dmesg.
# The guest suite takes ~20 min under TCG (40 on the debug kernel): give it
# an hour (VM_TIMEOUT), not the runner's default 15 min.
vmargs=(--log "$out/kernel.log" --scratch "$out/scratch" --append "kunit.enable=1"
	--timeout "${VM_TIMEOUT:-3600}")
[ $variant = debug ] && vmargs+=(--debug)
"$REPO/scripts/vm" "${vmargs[@]}" -- env PERF="$BUILD_DIR/perf/perf" \
	WORKLOADS="$BUILD_DIR/workloads" KSELFTEST="$BUILD_DIR/kselftest" VERBOSE="${VERBOSE:-0}" \
	SFRAME_TOOLS="$BUILD_DIR/sframe-tools" \
	TREE="$TREE" KBUILD="$BUILD_DIR/kbuild/$variant" \
	"$REPO/tests/guest/run.sh" > "$out/guest.log" 2>&1
rc=$?
grep -E '^(not )?ok - |^    #' "$out/guest.log" | tee -a "$results"
want=$(cd "$REPO/tests/guest" && ls [0-9]*.sh | wc -l)
got=$(grep -cE '^(not )?ok - ' "$out/guest.log")
if [ "$got" != "$want" ]; then
	echo "not ok - guest tests: $got results for $want tests" | tee -a "$results"
fi
if [ $rc != 0 ]; then
	sed 's/^/    # /' "$out/guest.log" | grep -v -E '^    # (not )?ok - ' | tail -n 30
	echo "not ok - guest test run (vm exit $rc)" | tee -a "$results"
fi
# Which of the kernel's checkers ran: a clean log means only as much.
checkers() {
	local config=$BUILD_DIR/kbuild/$variant/.config on= off= opt name
	for opt in PROVE_LOCKING:lockdep PROVE_RCU:PROVE_RCU DEBUG_ATOMIC_SLEEP:atomic-sleep \
		   KASAN:KASAN UBSAN:UBSAN DEBUG_KMEMLEAK:kmemleak; do
		name=${opt#*:}
		if grep -qx "CONFIG_${opt%%:*}=y" "$config"; then
			on+=${on:+, }$name
		else
			off+=${off:+, }$name
		fi
	done
	echo "checkers on: ${on:-none}; off: ${off:-none}"
}
if "$REPO/scripts/klog-check.sh" "$out/kernel.log" > "$out/klog-check.txt"; then
	echo "ok - guest kernel log has no WARNING/BUG/Oops or checker report ($(checkers))" |
		tee -a "$results"
else
	sed 's/^/    # /' "$out/klog-check.txt"
	echo "not ok - guest kernel log has reports (see $out/kernel.log)" | tee -a "$results"
fi
phase "guest tests done"

summary
