# SPDX-License-Identifier: GPL-2.0
# The series' perf shell test of a real recording, by perf test: record
# --call-graph fp,defer on a known chain (script, report, inject, pipe,
# --no-merge-callchains).  It must run and pass; a skip is a failure.  (The
# crafted-data test needs no kernel: host test 50 runs it, with ASan.)
. "$(dirname "$0")/lib.sh"
cd "$TREE" || fail "no tree at $TREE"
PATH=$(dirname "$PERF"):$PATH PERF_TEST_DEFER_EXPECT=1 "$PERF" test -v "fp,defer" \
	> "$TMP/out" 2>&1
cat "$TMP/out"
t="perf record --call-graph fp,defer (deferred callchains)"
grep -Fq "$t" "$TMP/out" || fail "perf test did not run '$t'"
grep -F "$t" "$TMP/out" | grep -q ": Ok$" || fail "'$t' did not pass"
