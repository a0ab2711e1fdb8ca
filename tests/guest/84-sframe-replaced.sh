# SPDX-License-Identifier: GPL-2.0
# A walk that finds a section bad removes that registration, and nothing
# that took its place while the walk waited on a page fault.  The workload
# (tests/workloads/sframe-replace, under perf record --call-graph
# fp,defer) holds the first unwind of a spinning thread in a userfaultfd
# fault on the rows of its section S1, then fills them in with a bad row:
#  control: S1 is removed, with one "bad .sframe" message;
#  replace: before that, S1 was removed and S2 registered for the same
#           text, its record allocated where S1's was freed (same CPU,
#           after a grace period): S2 stays, and no message (the kernel
#           told registrations apart by the address of their record, and
#           removed S2).
. "$(dirname "$0")/lib.sh"

prog=$WORKLOADS/sframe-replace
[ -x "$prog" ] || fail "no $prog (make -C tests/workloads)"

# run MODE: the workload under perf, its output in $TMP/MODE.log, the
# kernel's messages meanwhile in $TMP/MODE.dmesg.
run() {
	dmesg -C
	timeout -k 10 120 "$PERF" record -q -e cpu-clock -F 1000 --call-graph fp,defer \
		-o "$TMP/$1.data" -- "$prog" "$1" > "$TMP/$1.log" 2>&1
	rc=$?
	dmesg > "$TMP/$1.dmesg"
	cat "$TMP/$1.log"
	grep 'sframe' "$TMP/$1.dmesg"
	[ $rc = 0 ] || fail "$1: exit $rc"
	grep -q "^an unwind waits on S1's rows at 0x" "$TMP/$1.log" || fail "$1: no unwind waited"
}

run control
grep -q "^S1 removed$" "$TMP/control.log" || fail "control: S1 not removed"
[ "$(grep -c 'bad .sframe of \[anonymous\] .*mangled RA.*; removed' "$TMP/control.dmesg")" = 1 ] ||
	fail "control: want one bad .sframe message"

run replace
grep -q "^S2 kept$" "$TMP/replace.log" || fail "replace: S2 not kept"
! grep -q 'bad .sframe' "$TMP/replace.dmesg" || fail "replace: a section was removed for S1's rows"
echo ok
