#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh [TEST...] - run the guest tests (all [0-9]*.sh, or the named ones)
# inside the scripts/vm guest, one line each, as tests/lib/tap.sh says:
#   ok - NAME (Ns) / not ok - NAME (exit N, Ns) / ok - NAME # SKIP reason
# A test exits 0 (pass), 2 (skip) or anything else (fail); its output is
# shown, indented, when it does not pass or when VERBOSE=1.

set -u
here=$(cd "$(dirname "$0")" && pwd)
export LIB=$here/../lib
. "$LIB/tap.sh"
: "${PERF:?PERF must name the perf binary}" "${WORKLOADS:?WORKLOADS must name the workload directory}"
: "${TREE:?TREE must name the kernel tree}"
KSELFTEST=${KSELFTEST:-}
SFRAME_TOOLS=${SFRAME_TOOLS:-}
export PERF WORKLOADS TREE KSELFTEST SFRAME_TOOLS

if [ $# -eq 0 ]; then
	set -- $(cd "$here" && ls [0-9]*.sh)
fi
for t; do
	run_test "$here/${t%.sh}.sh" || :
done

# On a kernel with kmemleak, scan now (twice: objects must be seen
# unreferenced in two scans), so that what the tests leaked is reported in
# the kernel log, which is checked afterwards.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	sleep 1
	echo scan > /sys/kernel/debug/kmemleak
	echo "kmemleak: $(grep -c '^unreferenced object' /sys/kernel/debug/kmemleak) unreferenced objects" >&2
fi
