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
# tap_done (or lets it run at exit: tap_done is the EXIT trap):
#	ok NAME			a check passed
#	not_ok NAME [DETAIL...]	a check failed; a DETAIL is a line of text,
#				or a file whose first 40 lines are shown
#	skip NAME REASON	a check that cannot run here
#	note LINE...		detail lines under the last result
#	check NAME CMD...	ok if CMD exits 0, else not_ok with its
#				output, which is left in $TAP_OUT (a file
#				the test may name; else a temporary one)
#	tap_count CMD...	CMD prints ok / not ok lines itself: count them
#	tap_done		"N passed, N failed, N skipped" of the checks;
#				exit 1 if one failed, else 2 if one was
#				skipped (the test is skipped, not passed),
#				else 0

tap_pass=0
tap_fail=0
tap_skip=0
tap_skip_why=
tap_done_once=
tap_own_out=
trap 'tap_done' EXIT

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
		if [ -n "$d" ] && [ "${d#/}" != "$d" ] && [ -f "$d" ]; then
			head -n 40 "$d" | sed 's/^/    # /'
		elif [ -n "$d" ]; then
			note "$d"
		fi
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
		not_ok "$name" "exit $?: $*" "$TAP_OUT"
	fi
}

tap_count() {
	local line out

	out=$(mktemp "${TMPDIR:-/tmp}/tap.XXXXXX")
	"$@" > "$out" 2>&1
	while IFS= read -r line; do
		case $line in
		"not ok - "*) tap_fail=$((tap_fail + 1)) ;;
		"ok - "*" # SKIP "*) tap_skip=$((tap_skip + 1))
			[ -n "$tap_skip_why" ] || tap_skip_why=${line#ok - } ;;
		"ok - "*) tap_pass=$((tap_pass + 1)) ;;
		esac
		printf '%s\n' "$line"
	done < "$out"
	rm -f "$out"
}

tap_done() {
	local rc=$?

	[ -z "$tap_done_once" ] || exit $rc
	tap_done_once=1
	[ -z "$tap_own_out" ] || rm -f "$TAP_OUT"
	# nothing checked: the file's own exit status (a test that does not
	# report checks, or one that gave up early)
	if [ $((tap_pass + tap_fail + tap_skip)) = 0 ]; then
		exit $rc
	fi
	echo "$tap_pass passed, $tap_fail failed, $tap_skip skipped"
	if [ $tap_fail != 0 ] || [ $rc != 0 ]; then
		exit 1
	elif [ $tap_skip != 0 ]; then
		echo "SKIP: $tap_skip checks skipped, first: $tap_skip_why"
		exit 2
	fi
	exit 0
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
	case $rc in
	0) echo "ok - $name (${took}s)" ;;
	2) echo "ok - $name # SKIP $(grep -m1 '^SKIP:' "$TMP/.out" | cut -c7-)" ;;
	*) echo "not ok - $name (exit $rc, ${took}s)" ;;
	esac
	if [ $rc != 0 ] || [ "${VERBOSE:-0}" = 1 ]; then
		sed 's/^/    # /' "$TMP/.out"
	fi
	rm -rf "$TMP"
	return $rc
}
