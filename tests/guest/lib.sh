# SPDX-License-Identifier: GPL-2.0
# Sourced by the guest tests.  run.sh exports PERF (the perf built from the
# patched tree), WORKLOADS (the test programs), LIB (tests/lib) and TMP
# (a fresh directory for this test).

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 2; }

# lost_records DATA: the number of records perf lost in recording DATA
# (PERF_RECORD_LOST and PERF_RECORD_LOST_SAMPLES counts).
lost_records() {
	"$PERF" report -i "$1" --stats 2> /dev/null |
		awk '/^ *LOST(_SAMPLES)? events:/ { n += $3 } END { print n + 0 }'
}

# script_stacks DATA OUT: the samples of DATA as stacks.py reads them
# (perf script -F comm,tid,time,ip,sym,symoff,dso) in OUT.
script_stacks() {
	"$PERF" script -i "$1" -F comm,tid,time,ip,sym,symoff,dso --ns > "$2" 2> "$2.log" ||
		{ cat "$2.log"; fail "perf script -i $1"; }
}

# record_chain BINARY CALLGRAPH: sample BINARY (the chain workload) with
# cpu-clock and the given --call-graph, leave perf script output in
# $TMP/script.txt, for dwarf the samples' stack dump sizes in $TMP/dump.txt,
# and the number of records lost in $LOST (for stacks.py --dump, --lost).
record_chain() {
	local bin=$1 cg=$2
	"$PERF" record -q -e cpu-clock -F 1000 --call-graph "$cg" -o "$TMP/perf.data" \
		-- "$bin" "${CHAIN_MS:-1500}" > "$TMP/record.log" 2>&1 ||
		{ cat "$TMP/record.log"; fail "perf record --call-graph $cg $bin"; }
	script_stacks "$TMP/perf.data" "$TMP/script.txt"
	# The samples and their stack dump sizes (-D also prints each record
	# in hex: 8 KiB stack dumps, kept out of the file).
	if [[ $cg == dwarf* ]]; then
		"$PERF" report -D -i "$TMP/perf.data" 2> "$TMP/dump.log" |
			grep -E 'PERF_RECORD_SAMPLE|\.\.\. ustack:' > "$TMP/dump.txt"
		[ "${PIPESTATUS[0]}" = 0 ] || { cat "$TMP/dump.log"; fail "perf report -D"; }
	fi
	LOST=$(lost_records "$TMP/perf.data")
}

CHAIN="chain_leaf,chain_c,chain_b,chain_a,main"

# kunit_suite SUITE SOURCE CONFIG: the built-in KUnit suite SUITE ran at
# boot (kunit.enable=1) and every KUNIT_CASE of SOURCE passed: each has
# its "ok N CASE" line in the suite, and the suite is ok.  (KUnit prints
# no "# SUITE: pass:..." totals for a suite of one case.)
kunit_suite() {
	local suite=$1 src=$TREE/$2 config=$3 want cases c

	[ -f "$src" ] || fail "no $src"
	cases=$(sed -n 's/^\s*KUNIT_CASE(\([a-z0-9_]*\)),$/\1/p' "$src")
	want=$(echo "$cases" | grep -c .)
	[ "$want" -gt 0 ] || fail "no KUNIT_CASE in $src"
	dmesg > "$TMP/dmesg.raw" || fail "dmesg"
	sed 's/^\[[ 0-9.]*\] //' "$TMP/dmesg.raw" > "$TMP/dmesg"
	# the suite's lines: from its "# Subtest: SUITE" to its "ok N SUITE"
	sed -n "/^    # Subtest: $suite\$/,/^\(not \)\{0,1\}ok [0-9]* $suite\$/p" "$TMP/dmesg" \
		> "$TMP/suite"
	[ -s "$TMP/suite" ] || { grep -i kunit "$TMP/dmesg"; fail "suite $suite did not run ($config?)"; }
	grep -E '^    (not )?ok [0-9]+ |^# .*pass:' "$TMP/suite"
	for c in $cases; do
		grep -qE "^    ok [0-9]+ $c\$" "$TMP/suite" || fail "$suite: $c did not pass"
	done
	[ "$(grep -cE '^    (not )?ok [0-9]+ ' "$TMP/suite")" = "$want" ] ||
		fail "$suite: want $want cases, as in $src"
	grep -qE "^ok [0-9]+ $suite\$" "$TMP/suite" || fail "suite $suite not ok"
}

# kselftest_all_ok BIN SKIPPED [ENV=VALUE...]: run the kselftest BIN (with
# the environment given) in $TMP; every case of its plan must pass, and
# the one case named SKIPPED (which needs a kernel without the feature)
# is the only one skipped ("-": none is).  Its TAP lines are shown.
kselftest_all_ok() {
	local bin=$1 skipped=$2 rc plan oks skips
	shift 2

	[ -x "$bin" ] || fail "no $bin (scripts/build-selftests.sh)"
	cd "$TMP" || fail "cd $TMP"
	env "$@" "$bin" > out.txt 2>&1
	rc=$?
	grep -E '^(not )?ok [0-9]+ |^# (FAILED|PASSED|Totals)' out.txt
	if [ $rc != 0 ]; then
		grep -E '^# .*(failed|got|Expected|FAIL)' out.txt | head -40
		fail "$(basename "$bin") exited $rc"
	fi
	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' out.txt)
	oks=$(grep -cE '^ok [0-9]+ ' out.txt)
	skips=$(grep -cE '^ok [0-9]+ .*# SKIP' out.txt)
	[ -n "$plan" ] && [ "$oks" = "$plan" ] || fail "$oks of ${plan:-?} cases ok"
	if [ "$skipped" = - ]; then
		[ "$skips" = 0 ] || fail "$skips skipped cases, want none"
	else
		[ "$skips" = 1 ] && grep -qE "^ok [0-9]+ $skipped # SKIP" out.txt ||
			fail "$skips skipped cases, want only $skipped"
	fi
}
