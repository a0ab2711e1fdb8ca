# SPDX-License-Identifier: GPL-2.0
# kselftest perf_events/deferred_callchain on the patched kernel: the
# feature must be there (a missing one fails, not skips), and every case
# passes; its TAP lines are shown.
. "$(dirname "$0")/lib.sh"
kselftest_all_ok "${KSELFTEST:?}/perf_events/deferred_callchain" abi.expect_unsupported \
	DEFERRED_EXPECT_SUPPORTED=1
