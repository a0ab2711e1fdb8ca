# SPDX-License-Identifier: GPL-2.0
# kselftest perf_events/deferred_callchain on the patched kernel: the
# feature must be there (a missing one fails, not skips), and every case
# passes; its TAP lines are shown.
. "$(dirname "$0")/lib.sh"

bin=${KSELFTEST:?}/perf_events/deferred_callchain
[ -x "$bin" ] || fail "no $bin (scripts/build-selftests.sh)"
cd "$TMP" || fail "cd $TMP"
DEFERRED_EXPECT_SUPPORTED=1 "$bin" > out.txt 2>&1
rc=$?
grep -E '^(not )?ok [0-9]+ |^# (FAILED|PASSED|Totals)' out.txt
if [ $rc != 0 ]; then
	grep -E '^# .*(failed|Expected|FAIL)' out.txt | head -40
	fail "deferred_callchain exited $rc"
fi
# Every case ran: the plan line says how many, none failed or skipped but
# the one that needs a kernel without the feature.
plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' out.txt)
oks=$(grep -cE '^ok [0-9]+ ' out.txt)
skips=$(grep -cE '^ok [0-9]+ .*# SKIP' out.txt)
[ -n "$plan" ] && [ "$oks" = "$plan" ] || fail "$oks of ${plan:-?} cases ok"
[ "$skips" = 1 ] && grep -qE '^ok [0-9]+ abi.expect_unsupported # SKIP' out.txt ||
	fail "$skips skipped cases, want only abi.expect_unsupported"
