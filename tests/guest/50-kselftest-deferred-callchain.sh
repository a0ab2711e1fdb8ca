# SPDX-License-Identifier: GPL-2.0
# The kselftests perf_events/deferred_* on the patched kernel: the feature
# must be there (a missing one fails, not skips), and every case passes
# (but abi.expect_unsupported, which wants a kernel without the feature);
# their TAP lines are shown.
. "$(dirname "$0")/lib.sh"
for t in abi task percpu lifecycle; do
	echo "## deferred_$t"
	skipped=-
	[ $t = abi ] && skipped=abi.expect_unsupported
	(kselftest_all_ok "${KSELFTEST:?}/perf_events/deferred_$t" $skipped \
		DEFERRED_EXPECT_SUPPORTED=1) || fail "deferred_$t"
done
