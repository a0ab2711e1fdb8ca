# SPDX-License-Identifier: GPL-2.0
# A section that can't be read for a while is not a bad one.  The
# workload (tests/workloads/unreadable.c, no frame pointers, SFrame
# injected) makes the pages of its own .sframe PROT_NONE for 10 ms and
# readable for 10 ms, over and over, while it spins in ur_toggled; then
# leaves them readable and spins in ur_after.  The walks that fault on the
# section stop there (the dynamic debug message says "SFrame unreadable"),
# but the section stays registered: every sample in ur_after has its whole
# stack, and the kernel logs no "bad .sframe".  A kernel that removed a
# section on a fault (it did) unwinds ur_after with frame pointers only.
. "$(dirname "$0")/lib.sh"

ctl=/proc/dynamic_debug/control
[ -w $ctl ] || fail "no $ctl (CONFIG_DYNAMIC_DEBUG)"
prog=$WORKLOADS/unreadable-sframe3
[ -x "$prog" ] || fail "no $prog (make -C tests/workloads)"

echo 'func unwind_user_debug +p' > $ctl || fail "dynamic debug"
dmesg -C
# A short run: a debug line per walk (the log holds 128 KiB).
CHAIN_MS=300 record_chain "$prog" fp,defer
dmesg > "$TMP/dmesg"
echo 'func unwind_user_debug -p' > $ctl

grep -E "^unreadable: .sframe pages 0x[0-9a-f]+-0x[0-9a-f]+ made unreadable [1-9][0-9]* times$" \
	"$TMP/record.log" || { cat "$TMP/record.log"; fail "the workload did not toggle its .sframe"; }
faults=$(grep -cE "unwind_user: unreadable-sfra\[[0-9]+\]: stopped after [0-9]+ frames, .*sframe: SFrame unreadable" "$TMP/dmesg")
echo "walks stopped by an unreadable section: $faults"
[ "$faults" -gt 0 ] || fail "no walk met the unreadable section (no fault to test)"
! grep 'bad .sframe' "$TMP/dmesg" || fail "a section that could not be read was reported bad"
python3 "$LIB/stacks.py" --lost "${LOST:-0}" --comm unreadable-sfra --top ur_after \
	--expect ur_after,ur_b,ur_a,main --mode full "$TMP/script.txt" ||
	fail "the section was not used again once readable"
