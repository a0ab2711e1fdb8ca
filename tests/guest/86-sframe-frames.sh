# SPDX-License-Identifier: GPL-2.0
# The frames workload (no frame pointers, SFrame injected) where user
# unwinders break, with --call-graph fp,defer: every sample whose
# innermost user frame is in the known chain has exactly the rest of the
# chain below it, and, in recordings with --call-graph dwarf,defer, each
# sample's stack equals perf's DWARF unwinding of its stack dump (perf
# script --compare-unwind, compare-unwind.py), from the sampled IP down
# to main.
#  prologue: samples on the pushes, sub, add, pops and ret of pe_leaf
#            (counted by prologue.py, from objdump: at least 20, on at
#            least 6 instructions), v3 and v2.
#  signal:   sig_leaf <- sig_handler <- libc's __restore_rt <- sig_spin
#            (interrupted, not called) <- chain_b ...: through the signal
#            frame (the series' "Unwind through signal frames"), with libc
#            without SFrame (the kernel knows the trampoline's bytes) and
#            with a v3 sidecar for libc whose __restore_rt FDE is a signal
#            frame (checked in its dump), program v3 and v2.
#  vdso:     [vdso] <- libc's clock_gettime <- vd_leaf ...: the vDSO by
#            frame pointers, libc by its sidecar; without the sidecar
#            libc has neither, and the stacks stop there (asserted).
# The libc frames are matched by file, not name: without debug symbols
# perf has only .dynsym names for them.
. "$(dirname "$0")/lib.sh"

tools=${SFRAME_TOOLS:?}
for t in sframe-gen sframe-dump sframe-audit.so; do
	[ -f "$tools/$t" ] || fail "no $tools/$t"
done
command -v objdump > /dev/null || skip "no objdump"
prog=$WORKLOADS/frames-sframe3
[ -x "$prog" ] || fail "no $prog (make -C tests/workloads)"
ms=${CHAIN_MS:-1500}
chain=chain_b,chain_a,main

# The program's libc (the host's, over 9p: no SFrame of its own), and a
# v3 sidecar for sframe-audit.so, named after it in $TMP/sidecar.
libc=$(ldd "$prog" | awk '$1 ~ /^libc\.so/ { print $3 }')
[ -f "$libc" ] || fail "no libc in ldd $prog"
mkdir "$TMP/sidecar"
sidecar=$TMP/sidecar/$(basename "$libc").sframe
"$tools/sframe-gen" -o "$sidecar" "$libc" || fail "sframe-gen $libc"
"$tools/sframe-dump" "$sidecar" > "$TMP/libc.dump" || fail "sframe-dump $sidecar"
python3 "$LIB/restore_rt.py" "$libc" "$TMP/libc.dump" || fail "no signal-frame FDE for __restore_rt"
libc=$(basename "$libc")
audit="LD_AUDIT=$tools/sframe-audit.so SFRAME_SIDECAR_DIR=$TMP/sidecar"

# record NAME BINARY MODE CALLGRAPH [ENV=VALUE...]: $TMP/NAME.txt
record() {
	local name=$1 bin=$2 mode=$3 cg=$4
	shift 4
	# DWARF samples carry 8 KiB of stack each: a bigger buffer loses fewer.
	"$PERF" record -q -e cpu-clock -F 1000 --call-graph "$cg" -m 1024 -o "$TMP/$name.data" \
		-- env "$@" "$bin" "$mode" "$ms" > "$TMP/$name.log" 2>&1 ||
		{ cat "$TMP/$name.log"; fail "perf record --call-graph $cg $bin $mode"; }
	grep -i 'sframe-audit' "$TMP/$name.log" && fail "$name: sframe-audit.so complained"
	# --no-inline: perf expands inlined functions for DWARF callchains
	# only; the stacks compared are the real frames.
	"$PERF" script --no-inline -i "$TMP/$name.data" -F comm,tid,time,ip,sym,symoff,dso --ns \
		> "$TMP/$name.txt" 2> "$TMP/$name.err" ||
		{ cat "$TMP/$name.err"; fail "perf script $name"; }
	# which samples have a deferred user callchain (stacks.py --raw)
	"$PERF" script --no-inline -i "$TMP/$name.data" --no-merge-callchains \
		-F comm,tid,time,ip,sym,symoff,dso --ns > "$TMP/$name.raw" 2> "$TMP/$name.err" ||
		{ cat "$TMP/$name.err"; fail "perf script --no-merge-callchains $name"; }
	LOST=$(lost_records "$TMP/$name.data")
	rm -f "$TMP/$name.data"
}
# Every sample must have a deferred user callchain (--raw), but in the
# signal runs: the kernel refuses to defer a request whose registers are
# the new ones while it still calls back an entry of the old ones, in
# signal delivery or sigreturn (01-unwind-deferred 0011), and perf then
# unwinds at once, by frame pointers: at most 3 a run, not checked.
stacks() { python3 "$LIB/stacks.py" --lost "$LOST" --raw "$TMP/$name.raw" "$@" ||
	fail "$name: stacks"; }

# dwarf NAME MODE MIN [ENV=VALUE...] -- [compare-unwind.py OPTION...]:
# frames-sframe3 MODE recorded with --call-graph dwarf,defer; every
# sample through main has the stack perf's DWARF unwinding finds in its
# dump, down to main (below it is libc's start code: without libc's
# sidecar the kernel has no unwind information there), at least MIN
# of them.  Lazy binding off: the kernel stops in the resolver, which
# DWARF unwinds through (docs/testing.md, Ground truth).
dwarf() {
	local name=$1 mode=$2 min=$3 env=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	# --buildid-all: perf script reads the vDSO back from the build-id
	# cache only if record saved it (compare.sh)
	"$PERF" record -q -e cpu-clock -F 1000 --call-graph dwarf,defer -m 1024 --buildid-all \
		-o "$TMP/$name.data" -- env LD_BIND_NOW=1 "${env[@]}" "$prog" "$mode" "$ms" \
		> "$TMP/$name.log" 2>&1 ||
		{ cat "$TMP/$name.log"; fail "perf record --call-graph dwarf,defer $prog $mode"; }
	grep -i 'sframe-audit' "$TMP/$name.log" && fail "$name: sframe-audit.so complained"
	"$PERF" script -v -i "$TMP/$name.data" --comms frames-sframe3 --compare-unwind \
		> "$TMP/$name.cmp" 2> "$TMP/$name.err" ||
		{ cat "$TMP/$name.err"; fail "perf script --compare-unwind $name"; }
	python3 "$LIB/compare-unwind.py" --lost "$(lost_records "$TMP/$name.data")" \
		--through main --cut --min "$min" "$@" "$TMP/$name.cmp" ||
		fail "$name: the kernel's stacks are not DWARF's"
	rm -f "$TMP/$name.data"
}

# The runs compared with DWARF have libc's sidecar: the workload's
# clock_gettime() calls go through libc, which DWARF unwinds and, without
# SFrame, the kernel can't.  Without it, only the samples in the
# program's own code are compared (--top-dso).
echo "## prologue"
for v in sframe3 sframe2; do
	name=prologue-$v
	if [ $v = sframe3 ]; then
		record $name "$WORKLOADS/frames-$v" prologue fp,defer $audit
	else
		record $name "$WORKLOADS/frames-$v" prologue fp,defer
	fi
	stacks --comm frames-$v --mode suffix --top pe_leaf --min 200 \
		--expect pe_leaf,pe_loop,$chain --expect pe_pre,pe_loop,$chain "$TMP/$name.txt"
	python3 "$LIB/prologue.py" --binary "$WORKLOADS/frames-$v" --func pe_leaf \
		--comm frames-$v --min 20 --min-insns 6 "$TMP/$name.txt" ||
		fail "$name: too few samples in pe_leaf's prologue and epilogue"
done
dwarf prologue-dwarf prologue 100 $audit -- --require 'pe_leaf@*'

# Samples with sig_leaf on top are in the handler; sig_handler, sig_spin,
# ... on top must have the rest of the chain as well.  Without the
# sidecar the kernel recognizes __restore_rt by its instructions, with it
# by its signal-frame FDE.
echo "## signal"
sig=(--mode suffix --top sig_leaf --min 100 --max-immediate 3
     --expect "sig_leaf,sig_handler,*@$libc,sig_spin,$chain")
name=signal-sframe3; record $name "$prog" signal fp,defer
stacks --comm frames-sframe3 "${sig[@]}" "$TMP/$name.txt"
name=signal-sframe2; record $name "$WORKLOADS/frames-sframe2" signal fp,defer
stacks --comm frames-sframe2 "${sig[@]}" "$TMP/$name.txt"
name=signal-sidecar; record $name "$prog" signal fp,defer $audit
stacks --comm frames-sframe3 "${sig[@]}" "$TMP/$name.txt"
dwarf signal-dwarf signal 100 $audit -- --require 'sig_leaf@*' --require 'sig_spin@*'
dwarf signal-dwarf-nosidecar signal 100 -- --top-dso frames-sframe3 \
	--require 'sig_leaf@*' --require 'sig_spin@*'

echo "## vdso"
vdso="*@[vdso],*@$libc,vd_leaf,$chain"
name=vdso-sidecar; record $name "$prog" vdso fp,defer $audit
stacks --comm frames-sframe3 --mode full --top "*@[vdso]" --min 100 --expect "$vdso" "$TMP/$name.txt"
# vd_leaf spends its time in the vDSO: samples with the program's own
# code on top are few (0 to 14 seen), and those there are must be whole;
# the check above has its 100 through vd_leaf.
stacks --comm frames-sframe3 --mode suffix --min 0 --expect vd_leaf,$chain "$TMP/$name.txt"
dwarf vdso-dwarf vdso 100 $audit -- --require '*@[[]vdso]'
name=vdso-nosidecar; record $name "$prog" vdso fp,defer
python3 "$LIB/stacks.py" --lost "${LOST:-0}" --comm frames-sframe3 --mode truncated --top "*@[vdso]" --min 100 \
	--expect "$vdso" "$TMP/$name.txt" || fail "$name: libc without SFrame, yet whole stacks"
