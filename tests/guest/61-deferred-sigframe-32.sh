# SPDX-License-Identifier: GPL-2.0
# An IA-32 task in a signal handler is unwound through its signal frame,
# of either kind: installed with SA_SIGINFO, the handler returns to the
# vDSO's __kernel_rt_sigreturn (rt_sigreturn, an rt_sigframe; glibc's
# restorer); without, to __kernel_sigreturn (sigreturn, a sigframe, with
# the registers elsewhere).  The workload
# (tests/workloads/sig32.c, -m32, frame pointers) spins in sg_spin,
# interrupted every 2 ms by SIGALRM, whose handler spins in sg_leaf.
# Every sample in sg_leaf must have sg_leaf <- handler <- the
# trampoline <- sg_spin (the interrupted function) <- sg_a <- main, with
# fp,defer; a kernel that doesn't know the trampoline follows the frame
# pointers across it and loses sg_spin.
. "$(dirname "$0")/lib.sh"

prog=$WORKLOADS/sig32-fp
[ -x "$prog" ] || fail "no $prog (make -C tests/workloads)"

for kind in rt legacy; do
	echo "## $kind"
	# glibc's restorer is the vDSO's trampoline (perf names it when it
	# could save that vDSO's image at record time)
	handler=sg_handler tramp=__kernel_sigreturn
	[ $kind = rt ] && handler=sg_handler_info tramp=__kernel_rt_sigreturn
	tramp="$tramp|*@[vdso32]|*@[vdso]"
	"$PERF" record -q -e cpu-clock -F 1000 --call-graph fp,defer \
		-o "$TMP/$kind.data" -- "$prog" $kind 1500 > "$TMP/$kind.log" 2>&1 ||
		{ cat "$TMP/$kind.log"; fail "perf record ($kind)"; }
	grep -E "^sig32 $kind: [1-9][0-9]* signals handled$" "$TMP/$kind.log" ||
		{ cat "$TMP/$kind.log"; fail "no signal handled ($kind)"; }
	script_stacks "$TMP/$kind.data" "$TMP/$kind.txt"
	python3 "$LIB/stacks.py" --lost "$(lost_records "$TMP/$kind.data")" \
		--comm sig32-fp --top sg_leaf \
		--expect "sg_leaf,$handler,$tramp,sg_spin,sg_a,main" \
		--mode full --min 20 "$TMP/$kind.txt" ||
		fail "not unwound through the $kind signal frame"
done
