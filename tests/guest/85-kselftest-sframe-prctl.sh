# SPDX-License-Identifier: GPL-2.0
# kselftest sframe/sframe_prctl: PR_ADD_SFRAME and PR_REMOVE_SFRAME on
# a table of bad calls and damaged headers (each its errno, the registry
# unchanged), fork inheritance, removal with the text (munmap, mmap over
# it, mremap).  The feature must be there: a missing one fails.
. "$(dirname "$0")/lib.sh"

bin=${KSELFTEST:?}/sframe/sframe_prctl
[ -x "$bin" ] || fail "no $bin (scripts/build-selftests.sh)"
cd "$TMP" || fail "cd $TMP"
SFRAME_EXPECT_SUPPORTED=1 "$bin" > out.txt 2>&1
rc=$?
grep -E '^(not )?ok [0-9]+ |^# (FAILED|PASSED|Totals)' out.txt
if [ $rc != 0 ]; then
	grep -E '^# .*(got|Expected|FAIL)' out.txt | head -40
	fail "sframe_prctl exited $rc"
fi
plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' out.txt)
oks=$(grep -cE '^ok [0-9]+ ' out.txt)
skips=$(grep -cE '^ok [0-9]+ .*# SKIP' out.txt)
[ -n "$plan" ] && [ "$oks" = "$plan" ] || fail "$oks of ${plan:-?} cases ok"
[ "$skips" = 1 ] && grep -qE '^ok [0-9]+ global.expect_unsupported # SKIP' out.txt ||
	fail "$skips skipped cases, want only global.expect_unsupported"
