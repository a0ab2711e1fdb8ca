# SPDX-License-Identifier: GPL-2.0
# The perf shell tests of the series, by perf test: record --call-graph
# fp,defer on a known chain (script, report, inject, pipe, --no-merge) and
# the crafted edge cases.  Both must run and pass; a skip is a failure.
. "$(dirname "$0")/lib.sh"
cd "$TREE" || fail "no tree at $TREE"
PATH=$(dirname "$PERF"):$PATH PERF_TEST_DEFER_EXPECT=1 "$PERF" test -v "deferred" \
	> "$TMP/out" 2>&1
cat "$TMP/out"
for t in "perf record --call-graph fp,defer (deferred callchains)" \
	 "perf script: deferred callchain edge cases"; do
	grep -Fq "$t" "$TMP/out" || fail "perf test did not run '$t'"
	grep -F "$t" "$TMP/out" | grep -q ": Ok$" || fail "'$t' did not pass"
done
