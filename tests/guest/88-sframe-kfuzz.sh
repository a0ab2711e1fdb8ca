# SPDX-License-Identifier: GPL-2.0
# A bounded slice of the guest fuzzer of the kernel's SFrame input
# (tests/fuzz/sframe-kfuzz.c; `make fuzz` runs a million sections on the
# debug kernel): KFUZZ_SECTIONS (50000) mutated copies of kfuzz-lib.so's
# section, seed KFUZZ_SEED (1), each registered with PR_ADD_SFRAME over
# the library's text and unwound through by a deferred callchain.  Every
# check of the fuzzer holds (PR_ADD_SFRAME gives 0 or EINVAL, records
# hold no kernel address and no more than max_stack entries, the frames
# the good sections describe are right, the unmutated section still
# gives the whole chain), bad sections are both rejected at registration
# and, registered, removed by the kernel at first use (each with its
# message, rate-limited); with CONFIG_UNWIND_USER_SFRAME_VALIDATE (the
# debug kernel) every one is rejected at registration and none is ever
# removed.  The run's kernel log is checked afterwards by the harness,
# with kmemleak on the debug kernel.
. "$(dirname "$0")/lib.sh"

fuzz=$WORKLOADS/sframe-kfuzz
lib=$WORKLOADS/kfuzz-lib.so
[ -x "$fuzz" ] && [ -f "$lib" ] || fail "no $fuzz or $lib (make -C tests/workloads SFRAME_GEN=...)"
n=${KFUZZ_SECTIONS:-50000}
seed=${KFUZZ_SEED:-1}
dmesg -c > /dev/null
"$fuzz" -s "$seed" -n "$n" -g 500 "$lib" > "$TMP/out" 2>&1
rc=$?
cat "$TMP/out"
[ $rc = 0 ] || fail "sframe-kfuzz exited $rc"

num() { sed -n "s/.*$1: \([0-9]*\).*/\1/p" "$TMP/out" | head -n 1; }
sections=$(sed -n 's/^sections: \([0-9]*\) .*/\1/p' "$TMP/out")
rejected=$(num 'rejected by PR_ADD_SFRAME (EINVAL)')
removed=$(num 'removed by the kernel when unwinding')
registered=$(sed -n 's/.*registered: \([0-9]*\),.*/\1/p' "$TMP/out")
[ "$sections" = "$n" ] || fail "$sections sections fuzzed, want $n"
[ "${rejected:-0}" -gt 0 ] || fail "no section rejected at registration"
[ "${registered:-0}" -gt 0 ] || fail "no section registered"
dmesg > "$TMP/dmesg"
msgs=$(grep -c 'bad \.sframe of .*kfuzz-lib\.so' "$TMP/dmesg")
echo "kernel messages naming kfuzz-lib.so: $msgs"
if grep -q '^CONFIG_UNWIND_USER_SFRAME_VALIDATE=y' "${KBUILD:?}/.config"; then
	[ "${removed:-1}" = 0 ] && [ "$msgs" = 0 ] ||
		fail "VALIDATE: $removed sections removed while unwinding, $msgs messages: want none"
else
	[ "${removed:-0}" -gt 0 ] || fail "no registered section removed by the kernel while unwinding"
	[ "$msgs" -gt 0 ] || fail "no 'bad .sframe' message names kfuzz-lib.so"
fi
