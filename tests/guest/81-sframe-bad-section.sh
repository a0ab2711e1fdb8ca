# SPDX-License-Identifier: GPL-2.0
# A section that passes the checks at exec (header, index) but has bad
# rows in chain_leaf: the first unwind from chain_leaf finds them, the
# section is removed with one message naming the file, and the process
# is unwound with frame pointers from then on (truncated stacks), without
# a WARN or an oops (checked on the kernel log after the run).  With
# CONFIG_UNWIND_USER_SFRAME_VALIDATE, the section is refused at exec
# instead.  The dynamic debug switch of unwind_user_debug() says why
# each walk stopped.
. "$(dirname "$0")/lib.sh"

ctl=/proc/dynamic_debug/control
[ -w $ctl ] || fail "no $ctl (CONFIG_DYNAMIC_DEBUG)"
validate=0
grep -q '^CONFIG_UNWIND_USER_SFRAME_VALIDATE=y' "${KBUILD:?}/.config" && validate=1

bad=$TMP/chain-badrow
cp "$WORKLOADS/chain-sframe3" "$bad" || fail "copy"
python3 "$LIB/sframe_corrupt.py" "$bad" chain_leaf || fail "sframe_corrupt.py"

echo 'func sframe_add_exec_section +p' > $ctl || fail "dynamic debug"
dmesg -C
record_chain "$bad" fp,defer
dmesg > "$TMP/dmesg"
echo 'func sframe_add_exec_section -p' > $ctl

python3 "$LIB/stacks.py" --lost "${LOST:-0}" --comm chain-badrow --top chain_leaf --expect "$CHAIN" \
	--mode truncated "$TMP/script.txt" || fail "bad rows, yet whole stacks"

removed=$(grep -cE "bad .sframe of /?${bad#/} \\(text 0x[0-9a-f]*-0x[0-9a-f]*\\) at ip 0x[0-9a-f]*: bad FRE data word size; removed" "$TMP/dmesg")
refused=$(grep -c "chain-badrow\[[0-9]*\]: PT_GNU_SFRAME 0x[0-9a-f]*-0x[0-9a-f]* not used: -22" "$TMP/dmesg")
grep -E 'bad .sframe|PT_GNU_SFRAME' "$TMP/dmesg"
if [ $validate = 1 ]; then
	[ "$refused" = 1 ] && [ "$removed" = 0 ] ||
		fail "VALIDATE: want the section refused at exec once, never removed"
else
	[ "$removed" = 1 ] && [ "$refused" = 0 ] ||
		fail "want the section removed once, with one message naming $bad"
fi

# Why the walks stopped: in chain_leaf, no SFrame any more (the process
# has no section left, only frame pointers are tried).  A line per walk:
# a short run, or the kernel log overflows.
echo 'func unwind_user_debug +p' > $ctl || fail "dynamic debug"
dmesg -C
CHAIN_MS=300 record_chain "$bad" fp,defer
dmesg > "$TMP/dmesg"
echo 'func unwind_user_debug -p' > $ctl
grep "unwind_user: chain-badrow" "$TMP/dmesg" | tail -n 3
grep -qE "unwind_user: chain-badrow\[[0-9]+\]: stopped after [0-9]+ frames, at ip 0x[0-9a-f]+ sp 0x[0-9a-f]+: fp: " "$TMP/dmesg" ||
	fail "no debug message saying why the walk stopped"

# The good section: whole stacks to main, then libc, which has no SFrame
# here: the message says so, and what frame pointers made of it.
echo 'func unwind_user_debug +p' > $ctl
dmesg -C
CHAIN_MS=300 record_chain "$WORKLOADS/chain-sframe3" fp,defer
dmesg > "$TMP/dmesg"
echo 'func unwind_user_debug -p' > $ctl
python3 "$LIB/stacks.py" --lost "${LOST:-0}" --comm chain-sframe3 --top chain_leaf --expect "$CHAIN" \
	--mode full "$TMP/script.txt" || fail "chain-sframe3"
grep 'unwind_user: chain-sframe3' "$TMP/dmesg" | tail -n 3
grep -qE "unwind_user: chain-sframe3\[[0-9]+\]: stopped after [0-9]+ frames, at ip 0x[0-9a-f]+ sp 0x[0-9a-f]+: sframe: no SFrame for the IP fp: " "$TMP/dmesg" ||
	fail "no debug message for the walk that left the SFrame-described code"
! grep -q 'bad .sframe' "$TMP/dmesg" || fail "good section reported bad"
