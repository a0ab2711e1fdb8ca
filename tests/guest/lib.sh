# SPDX-License-Identifier: GPL-2.0
# Sourced by the guest tests.  run.sh exports PERF (the perf built from the
# patched tree), WORKLOADS (the test programs), LIB (tests/lib) and TMP
# (a fresh directory for this test).

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 2; }

# record_chain BINARY CALLGRAPH: sample BINARY (the chain workload) with
# cpu-clock and the given --call-graph, leave perf script output in
# $TMP/script.txt.
record_chain() {
	local bin=$1 cg=$2
	"$PERF" record -q -e cpu-clock -F 1000 --call-graph "$cg" -o "$TMP/perf.data" \
		-- "$bin" "${CHAIN_MS:-1500}" > "$TMP/record.log" 2>&1 ||
		{ cat "$TMP/record.log"; fail "perf record --call-graph $cg $bin"; }
	"$PERF" script -i "$TMP/perf.data" -F comm,tid,ip,sym,dso > "$TMP/script.txt" 2> "$TMP/script.log" ||
		{ cat "$TMP/script.log"; fail "perf script"; }
}

CHAIN="chain_leaf,chain_c,chain_b,chain_a,main"
