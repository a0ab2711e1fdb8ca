# SPDX-License-Identifier: GPL-2.0
# The series' perf shell tests of real recordings, by perf test: record
# --call-graph fp,defer on a known chain (script, report, inject, pipe,
# --no-merge-callchains), and perf script --compare-unwind of a --call-graph
# dwarf,defer recording.  Each must run and pass; a skip is a failure.
# (The crafted-data test needs no kernel: host test 50 runs it, with ASan.)
. "$(dirname "$0")/lib.sh"
cd "$TREE" || fail "no tree at $TREE"

# perf_test PATTERN TITLE: perf test -v PATTERN ran the test TITLE, which passed
perf_test() {
	PATH=$(dirname "$PERF"):$PATH PERF_TEST_DEFER_EXPECT=1 "$PERF" test -v "$1" \
		> "$TMP/out" 2>&1
	cat "$TMP/out"
	grep -Fq "$2" "$TMP/out" || fail "perf test did not run '$2'"
	grep -F "$2" "$TMP/out" | grep -q ": Ok$" || fail "'$2' did not pass"
}

perf_test "fp,defer" "perf record --call-graph fp,defer (deferred callchains)"
perf_test "compare-unwind" "perf script --compare-unwind (deferred vs DWARF callchains)"
