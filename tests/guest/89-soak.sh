# SPDX-License-Identifier: GPL-2.0
# A short slice of the soak test (`make soak` runs it for 10 minutes on the
# debug kernel): tests/soak/soak.sh for SOAK_SECONDS (40) of back-to-back
# `perf record -a --call-graph fp,defer` sessions, each stopped by SIGINT
# with work pending, while processes fork, exec and exit, threads come and
# go (one execs from a second thread), shared objects with SFrame are
# dlopen'd and dlclose'd through sframe-audit.so, text with a registered
# section is unmapped (also under the code running in it), signals
# interrupt and stop the workers, and io_uring workers run.  Every session:
# the deferred records equal the kernel entries that had samples, but for
# counted losses (lost events; work pending when the session stopped or
# from before it started: see tests/lib/soak-check.py), no kernel address
# in a user callchain, no deferred request from an io_uring worker, perf's
# own counts agree; after the load, the kernel's counters: task work
# queued == ran, SFrame sections back to their number before.  Every load
# program must exit 0.  The harness checks the kernel log (and kmemleak on
# the debug kernel) after all tests.
. "$(dirname "$0")/lib.sh"

export SOAK_BIN=${SOAK_BIN:-$(dirname "$WORKLOADS")/soak}
[ -x "$SOAK_BIN/soak-jit" ] || fail "no $SOAK_BIN (make -C tests/soak OUT=... KHDR=... SFRAME_GEN=...)"
soak=$(cd "$(dirname "$0")/../soak" && pwd)/soak.sh
SOAK_SECONDS=${SOAK_SECONDS:-40} SOAK_OUT=$TMP/soak bash "$soak" > "$TMP/soak.log" 2>&1
rc=$?
cat "$TMP/soak.log"
[ $rc = 0 ] || fail "$(grep '^soak: ' "$TMP/soak.log" | tail -n 1)"
