# SPDX-License-Identifier: GPL-2.0
# The topmost frame of a task that entered the kernel by a system call is
# looked up at IP - 1: the IP is the instruction after the SYSCALL, which
# may be past what its unwind table describes.  The workload
# (tests/workloads/syscall-tail.c, no frame pointers, SFrame injected)
# blocks in read() from st_read, whose CFI ends with its "syscall"; the
# instructions that return are not described.  Every sample taken in the
# read (context-switches) must have st_read <- st_b <- st_a <- main; a
# kernel that looks the IP up as it is finds no FDE there, and frame
# pointers, which this program has not, lose st_b.
. "$(dirname "$0")/lib.sh"

prog=$WORKLOADS/syscall-tail-sframe3
[ -x "$prog" ] || fail "no $prog (make -C tests/workloads)"

"$PERF" record -q -e context-switches -c 1 --call-graph fp,defer \
	-o "$TMP/perf.data" -- "$prog" 400 > "$TMP/record.log" 2>&1 ||
	{ cat "$TMP/record.log"; fail "perf record"; }
grep -E '^syscall-tail: [1-9][0-9]* reads$' "$TMP/record.log" ||
	{ cat "$TMP/record.log"; fail "the workload did not read"; }
script_stacks "$TMP/perf.data" "$TMP/script.txt"
python3 "$LIB/stacks.py" --lost "$(lost_records "$TMP/perf.data")" \
	--comm syscall-tail-sf --top st_read --expect st_read,st_b,st_a,main \
	--mode full --min 20 "$TMP/script.txt" ||
	fail "the frame of the system call was not found at IP - 1"
