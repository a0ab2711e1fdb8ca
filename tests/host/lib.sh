# SPDX-License-Identifier: GPL-2.0
# Sourced by host tests: ok/not ok lines like the guest's.
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/paths.sh"
HT=$(mktemp -d /tmp/hosttest.XXXXXX)
HT_FAILED=0
trap 'rm -rf "$HT"; exit $HT_FAILED' EXIT

# expect NAME WANT_STATUS WANT_TEXT -- CMD...: run CMD, pass if it exits
# with WANT_STATUS ("nonzero" for any failure) and its output contains
# WANT_TEXT (a grep -E pattern, "" for any).
expect() {
	local name=$1 want=$2 text=$3 rc
	shift 4
	"$@" > "$HT/.out" 2>&1
	rc=$?
	if { [ "$want" = nonzero ] && [ $rc != 0 ]; } || [ "$want" = "$rc" ]; then
		if [ -z "$text" ] || grep -Eq -- "$text" "$HT/.out"; then
			echo "ok - $name"
			return 0
		fi
		echo "not ok - $name (output lacks /$text/)"
	else
		echo "not ok - $name (exit $rc, want $want)"
	fi
	sed 's/^/    # /' "$HT/.out" | tail -n 20
	HT_FAILED=1
	return 1
}
