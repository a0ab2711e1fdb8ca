# SPDX-License-Identifier: GPL-2.0
#
# tap.sh - the result contract of every test, host and guest (sourced).
#
# A test is one file.  It exits 0 (passed), 2 (skipped: its output says
# why on a "SKIP: reason" line) or anything else (failed).  run_test runs
# one and prints one line for it:
#	ok - NAME (Ns)  /  not ok - NAME (exit N, Ns)  /  ok - NAME # SKIP reason
# with the test's output under it, indented "    # ", when it did not pass
# (or VERBOSE=1).  scripts/test.sh and tests/guest/run.sh count those
# lines: "N passed, N failed, N skipped".
#
# A test made of several checks reports each with these, and ends with
# tap_done (or lets it run at exit: tap_done is the EXIT trap; a test
# that needs its own cleanup at exit puts it in tap_cleanup, not in a trap
# of its own):
#	ok NAME			a check passed
#	not_ok NAME [DETAIL...]	a check failed; a DETAIL is a line of text,
#				or @FILE: the first 40 lines of FILE
#	skip NAME REASON	a check that cannot run here
#	note LINE...		detail lines under the last result
#	check NAME CMD...	ok if CMD exits 0, else not_ok with its
#				output, which is left in $TAP_OUT (a file
#				the test may name; else a temporary one)
#	tap_count NAME CMD...	CMD prints ok / not ok lines itself: count
#				them; CMD failing or printing none is a
#				failed check NAME
#	tap_done		"N passed, N failed, N skipped" of the checks;
#				exit 1 if one failed or the test's own exit
#				status was not 0, else 2 if one was skipped
#				(the test is skipped, not passed), else 0

tap_pass=0
tap_fail=0
tap_skip=0
tap_skip_why=
tap_verdict=
tap_own_out=
tap_cleanup=:
trap 'tap_done $?' EXIT

note() {
	local l
	for l in "$@"; do
		printf '%s\n' "$l" | sed 's/^/    # /'
	done
}

ok() {
	tap_pass=$((tap_pass + 1))
	echo "ok - $1"
}

not_ok() {
	local d

	tap_fail=$((tap_fail + 1))
	echo "not ok - $1"
	shift
	for d in "$@"; do
		case $d in
		"") ;;
		@*) head -n 40 "${d#@}" | sed 's/^/    # /' ;;
		*) note "$d" ;;
		esac
	done
	return 0
}

skip() {
	tap_skip=$((tap_skip + 1))
	[ -n "$tap_skip_why" ] || tap_skip_why="$1: $2"
	echo "ok - $1 # SKIP $2"
}

check() {
	local name=$1

	shift
	if [ -z "${TAP_OUT:-}" ]; then
		TAP_OUT=$(mktemp "${TMPDIR:-/tmp}/tap.XXXXXX")
		tap_own_out=1
	fi
	if "$@" > "$TAP_OUT" 2>&1; then
		ok "$name"
	else
		not_ok "$name" "exit $?: $*" "@$TAP_OUT"
	fi
}

tap_count() {
	local name=$1 line out rc results=0

	shift
	out=$(mktemp "${TMPDIR:-/tmp}/tap.XXXXXX")
	"$@" > "$out" 2>&1
	rc=$?
	while IFS= read -r line; do
		case $line in
		"not ok - "*) tap_fail=$((tap_fail + 1)); results=$((results + 1)) ;;
		"ok - "*" # SKIP "*) tap_skip=$((tap_skip + 1)); results=$((results + 1))
			[ -n "$tap_skip_why" ] || tap_skip_why=${line#ok - } ;;
		"ok - "*) tap_pass=$((tap_pass + 1)); results=$((results + 1)) ;;
		esac
		printf '%s\n' "$line"
	done < "$out"
	rm -f "$out"
	if [ $rc != 0 ] || [ $results = 0 ]; then
		not_ok "$name" "exit $rc, $results results: $*"
	fi
}

# tap_done [STATUS]: STATUS is the test's own exit status (default $?)
tap_done() {
	local rc=${1:-$?}

	# at exit after an explicit tap_done: the verdict given then
	[ -z "$tap_verdict" ] || exit "$tap_verdict"
	$tap_cleanup
	[ -z "$tap_own_out" ] || rm -f "$TAP_OUT"
	if [ $((tap_pass + tap_fail + tap_skip)) = 0 ]; then
		# nothing checked: the test's own exit status, a skip only
		# with its reason
		tap_verdict=$rc
	else
		echo "$tap_pass passed, $tap_fail failed, $tap_skip skipped"
		if [ $rc != 0 ]; then
			echo "the test exited with status $rc"
			tap_verdict=1
		elif [ $tap_fail != 0 ]; then
			tap_verdict=1
		elif [ $tap_skip != 0 ]; then
			echo "SKIP: $tap_skip checks skipped, first: $tap_skip_why"
			tap_verdict=2
		else
			tap_verdict=0
		fi
	fi
	exit "$tap_verdict"
}

# run_test FILE: run the test FILE (bash) in a fresh $TMP, print its line
# (see above); returns its exit status
run_test() {
	local file=$1 name rc start took

	name=$(basename "$file" .sh)
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/test.XXXXXX")
	export TMP
	start=$SECONDS
	(trap - EXIT; bash "$file") > "$TMP/.out" 2>&1
	rc=$?
	took=$((SECONDS - start))
	# a skip says why; exit status 2 without a reason is a failure
	# (bash's own for a syntax error, grep's, ...)
	if [ $rc = 2 ] && ! grep -q '^SKIP: .' "$TMP/.out"; then
		echo "not ok - $name (exit 2 without a SKIP: reason, ${took}s)"
		rc=1
	else
		case $rc in
		0) echo "ok - $name (${took}s)" ;;
		2) echo "ok - $name # SKIP $(grep -m1 '^SKIP: .' "$TMP/.out" | cut -c7-)" ;;
		*) echo "not ok - $name (exit $rc, ${took}s)" ;;
		esac
	fi
	if [ $rc != 0 ] || [ "${VERBOSE:-0}" = 1 ]; then
		sed 's/^/    # /' "$TMP/.out"
	fi
	rm -rf "$TMP"
	return $rc
}
