# SPDX-License-Identifier: GPL-2.0
# The kselftests perf_events/deferred_* on the patched kernel: the feature
# must be there (a missing one fails, not skips), and every case passes
# (but abi.expect_unsupported, which wants a kernel without the feature),
# as many cases as the series has (3, 8, 2 and 8: a case gone missing
# fails too); their TAP lines are shown.  Every program runs, whatever
# another's result.
. "$(dirname "$0")/lib.sh"
failed=
for t in abi:3 task:8 percpu:2 lifecycle:8; do
	name=${t%:*} cases=${t#*:}
	echo "## deferred_$name"
	skipped=-
	[ $name = abi ] && skipped=abi.expect_unsupported
	if (kselftest_all_ok "${KSELFTEST:?}/perf_events/deferred_$name" $skipped \
		DEFERRED_EXPECT_SUPPORTED=1) &&
	   grep -qx "1\.\.$cases" "$TMP/out.txt"; then
		:
	else
		grep -q "^1\.\.$cases\$" "$TMP/out.txt" || echo "FAIL: deferred_$name: want 1..$cases"
		failed="$failed deferred_$name"
	fi
done
[ -z "$failed" ] || fail "$failed"
