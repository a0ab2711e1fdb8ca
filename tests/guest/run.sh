#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh [TEST...] - run the guest tests (all *.sh but lib.sh and run.sh, or
# the named ones) inside the scripts/vm guest, one TAP-style line each:
#   ok - NAME / not ok - NAME / ok - NAME # SKIP reason
# A test exits 0 (pass), 2 (skip) or anything else (fail); its output is
# shown, indented, when it does not pass or when VERBOSE=1.

set -u
here=$(cd "$(dirname "$0")" && pwd)
export LIB=$here/../lib
: "${PERF:?PERF must name the perf binary}" "${WORKLOADS:?WORKLOADS must name the workload directory}"
: "${TREE:?TREE must name the kernel tree}"
KSELFTEST=${KSELFTEST:-}
SFRAME_TOOLS=${SFRAME_TOOLS:-}
export PERF WORKLOADS TREE KSELFTEST SFRAME_TOOLS

if [ $# -eq 0 ]; then
	set -- $(cd "$here" && ls [0-9]*.sh)
fi
for t; do
	name=${t%.sh}
	export TMP=$(mktemp -d /tmp/test.XXXXXX)
	start=$SECONDS
	bash "$here/${name}.sh" > "$TMP/.out" 2>&1
	rc=$?
	took=$((SECONDS - start))
	case $rc in
	0) echo "ok - $name (${took}s)" ;;
	2) echo "ok - $name # SKIP $(grep -m1 '^SKIP:' "$TMP/.out" | cut -c7-)" ;;
	*) echo "not ok - $name (exit $rc, ${took}s)" ;;
	esac
	if [ $rc != 0 ] || [ "${VERBOSE:-0}" = 1 ]; then
		sed 's/^/    # /' "$TMP/.out"
	fi
	rm -rf "$TMP"
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
