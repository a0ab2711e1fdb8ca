# SPDX-License-Identifier: GPL-2.0
# A task samples itself with defer_callchain, in 64-bit and in IA-32
# (compat) builds: every record taken in the leaf's syscall carries the
# leaf's callers, also when the interrupted IP is on a function's first
# "push %rbp", on the "mov %rsp,%rbp" after it, or on its "ret".
# SELF_LOOPS (default 100000: some 2500-3400 records a run here, the
# workload wants 50) sets the loops of each run.
. "$(dirname "$0")/lib.sh"

for bits in 64 32; do
	for where in "" entry prologue ret; do
		"$WORKLOADS/defer-self-$bits" "${SELF_LOOPS:-100000}" $where > "$TMP/out" 2>&1
		rc=$?
		cat "$TMP/out"
		[ $rc = 0 ] || fail "defer-self-$bits ${where:-leaf}: exit $rc"
	done
done
