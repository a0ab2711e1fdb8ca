# SPDX-License-Identifier: GPL-2.0
# Sourced by the host tests: the paths (REPO, BUILD_DIR, TREE), the
# result helpers of tests/lib/tap.sh (ok, not_ok, skip, check, ...; the
# test ends with "N passed, N failed, N skipped" of its checks), $HT, a
# directory removed at exit (by tap_cleanup), and expect.
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/paths.sh"
. "$REPO/tests/lib/tap.sh"
SFRAME_TOOLS=$BUILD_DIR/sframe-tools
WORKLOADS=$BUILD_DIR/workloads
HT=$(mktemp -d /tmp/hosttest.XXXXXX)
host_cleanup() { rm -rf "$HT"; }
tap_cleanup=host_cleanup

# expect NAME WANT_STATUS WANT_TEXT -- CMD...: run CMD, ok if it exits
# with WANT_STATUS ("nonzero" for any failure) and its output contains
# WANT_TEXT (a grep -E pattern, "" for any); its output is left in
# $HT/.out.
expect() {
	local name=$1 want=$2 text=$3 rc
	shift 4
	"$@" > "$HT/.out" 2>&1
	rc=$?
	if { [ "$want" = nonzero ] && [ $rc != 0 ]; } || [ "$want" = "$rc" ]; then
		if [ -z "$text" ] || grep -Eq -- "$text" "$HT/.out"; then
			ok "$name"
			return 0
		fi
		not_ok "$name (output lacks /$text/)" "$(tail -n 20 "$HT/.out")"
	else
		not_ok "$name (exit $rc, want $want)" "$(tail -n 20 "$HT/.out")"
	fi
	return 1
}
