# SPDX-License-Identifier: GPL-2.0
# Ground truth per sample: perf record --call-graph dwarf,defer gives every
# sample both the user stack the kernel unwound (SFrame, else frame
# pointers) and a stack dump, and perf script --compare-unwind compares
# it with perf's DWARF unwinding of the dump, exactly, frame by frame
# (compare-unwind.py reads the result).
#
# Every object on the stacks has SFrame for the kernel: the program its
# injected section, libc a v3 sidecar registered by sframe-audit.so, the
# dynamic loader an injected copy (set-interp.py makes a copy of the
# program whose PT_INTERP names it: the kernel registers the
# interpreter's PT_GNU_SFRAME at exec).  So the stacks are compared whole,
# through main and libc down to _start, for:
#  chain-sframe3, chain-sframe2: every sample through main agrees, at
#     least 200, and the numbers over all samples are shown (what is left
#     there is outside main: the loader's start-up, the exit path);
#  chain-nofp (no SFrame, same loader and libc): the comparison fails
#     (at least 200 samples through main disagree, at most 10% agree);
#  chain-sframe3 with a 64-byte dump: the DWARF stacks stop in the dump
#     and are counted as truncated, and none disagrees;
#  gt-sframe3 threads, syscalls, signals, recurse (tests/workloads/gt.c:
#     four threads; nearly every sample in a system call; half in a
#     SIGPROF handler, through the signal frame; 64-deep recursion): every
#     sample in the chain agrees, at least 100 each;
#  gt-sframe3 realign: a function that keeps its CFA in %rbx and leaves
#     %rbp pointing at a stack address calls the leaf: every sample
#     through it agrees, at least 100.  Both unwinders stop at it (perf's
#     libdw does not follow %rbx there either); a kernel that guessed with
#     the frame pointer there gave the stack address as a return address.
# The programs run with LD_BIND_NOW=1: the dynamic loader's lazy binding
# trampoline (_dl_runtime_resolve_*, reached from chain_leaf's first call
# to clock_gettime) realigns the stack and has its CFA in %rbx, which the
# kernel's SFrame unwinder only follows in the topmost frame: a sample in
# the symbol lookup under it (one in ten recordings or so) stops at the
# trampoline where DWARF goes on to chain_leaf, a limit of the kernel's
# unwinder that gt realign shows on its own, deterministically.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/compare.sh"

for v in sframe3 sframe2; do
	compare $v "$WORKLOADS/chain-$v" dwarf,defer --mode agree --min 200
done
compare nofp "$WORKLOADS/chain-nofp" dwarf,defer --mode disagree --min 200 --max-agree 10
compare small-dump "$WORKLOADS/chain-sframe3" dwarf,defer,64 --mode agree --min 0 \
	--min-truncated 200

gt=$WORKLOADS/gt-sframe3
ARGS=(threads 1000); compare gt-threads "$gt" dwarf,defer --through gt_thread --min 100
ARGS=(syscalls 1000); compare gt-syscalls "$gt" dwarf,defer --through sc_leaf --min 100
ARGS=(signals 1000); compare gt-signals "$gt" dwarf,defer --through sg_handler --min 100
ARGS=(recurse 1000); compare gt-recurse "$gt" dwarf,defer --through rec_leaf --min 100
ARGS=(realign 1000); compare gt-realign "$gt" dwarf,defer --through rl_realign --min 100
