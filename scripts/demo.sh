#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh - build everything, boot the patched kernel in QEMU and profile
# programs built WITHOUT frame pointers, printing their call stacks:
#   1. chain-nofp / chain-sframe3 (tests/workloads), three ways:
#      --call-graph fp        the kernel's frame-pointer unwinder: truncated
#      --call-graph dwarf     the 8 KiB-per-sample stack copy, unwound by perf
#      --call-graph fp,defer  the same program with SFrame from sframe-gen:
#                             the kernel unwinds it with SFrame, once per
#                             kernel entry, and perf stitches the stacks
#   2. a real Debian program, python3 (Debian's python3.11) running a small
#      script (recursion, getrandom, zlib, file writes and reads), with
#      SFrame from sframe-gen for it (injected copy), its shared libraries
#      (sidecars, registered by sframe-audit.so) and the dynamic loader
#      (injected copy, the copy's PT_INTERP): --call-graph fp, then fp,defer;
#      perf report with kernel and user frames together, how many stacks
#      are whole, and a flame graph SVG of the fp,defer recording.
# Outputs in $BUILD_DIR/demo/.

set -euo pipefail
. "$(dirname "$0")/paths.sh"

make -s --no-print-directory -C "$REPO" demo-build

out=$BUILD_DIR/demo
rm -rf "$out"; mkdir -p "$out"

# The Python workload (tests/lib/pywork.py).
cp "$REPO/tests/lib/pywork.py" "$out/work.py"

{
	printf 'perf=%q\nworkloads=%q\ntools=%q\nlib=%q\nout=%q\n' "$BUILD_DIR/perf/perf" \
		"$BUILD_DIR/workloads" "$BUILD_DIR/sframe-tools" "$REPO/tests/lib" "$out"
	cat <<'GUEST'
set -e
cd /tmp
echo "guest: $(uname -r), $(nproc) CPUs"
for run in "fp chain-nofp truncated" "dwarf chain-nofp full" "fp,defer chain-sframe3 full"; do
	set -- $run
	cg=$1 prog=$2 mode=$3
	echo
	echo "### perf record -e cpu-clock --call-graph $cg -- $prog"
	$perf record -q -e cpu-clock -F 1000 --call-graph $cg -o perf.data -- \
		$workloads/$prog 1500 2>/dev/null
	$perf report -i perf.data --stdio --no-children --comm $prog -S chain_leaf -G \
		--percent-limit 5 -q 2>/dev/null | sed '/^$/d' | head -n 20
	$perf script -i perf.data -F comm,tid,ip,sym,dso > script.txt 2>/dev/null
	python3 $lib/stacks.py --comm $prog --top chain_leaf \
		--expect chain_leaf,chain_c,chain_b,chain_a,main --mode $mode --min 1 script.txt |
		sed "s/^OK\$/=> as expected: the stacks are $mode/"
	ls -l perf.data | awk '{printf "perf.data size: %d bytes\n", $5}'
done

# python3 and its loader get SFrame in copies: the program's injected
# section and the loader's (the copy's PT_INTERP, which must not be longer
# than the original's, hence a short path) are registered by the kernel at
# exec; the shared libraries' sidecars by sframe-audit.so.
echo
echo "### python3 ($(readlink -f /usr/bin/python3), no frame pointers): SFrame from sframe-gen"
py=$(readlink -f /usr/bin/python3)
interp=$(readelf -l "$py" | sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
sf=/tmp/sf
mkdir -p $sf/sidecar
$tools/sframe-gen --inject -o $sf/py.tmp "$py"
$tools/sframe-gen --inject -o $sf/ld.so "$(readlink -f "$interp")"
python3 $lib/set-interp.py $sf/py.tmp $sf/ld.so $sf/python3
libs=$(ldd "$py" | awk '$3 ~ /^\// { print $3 }')
# and sframe-audit.so itself: it adds its own namespace (itself, its libc)
for l in $libs $tools/sframe-audit.so; do
	$tools/sframe-gen -o "$sf/sidecar/$(basename "$l").sframe" "$l"
done
echo "program $py: injected copy $sf/python3 (interpreter $sf/ld.so, injected copy of $interp)"
echo "sidecars for sframe-audit.so:" $(cd $sf/sidecar && ls)
audit="LD_AUDIT=$tools/sframe-audit.so SFRAME_SIDECAR_DIR=$sf/sidecar"
for cg in fp fp,defer; do
	name=python3-${cg/,/-}
	echo
	echo "### perf record -e cpu-clock -F 999 --call-graph $cg -g -- python3 work.py"
	# perf runs with the audit module too and passes it on (see
	# tests/guest/87-deferred-vs-dwarf.sh)
	env $audit $perf record -q -e cpu-clock -F 999 --call-graph $cg -g -o $name.data -- \
		$sf/python3 -S $out/work.py /tmp/work.bin 3 > $name.log 2>&1 ||
		{ cat $name.log; exit 1; }
	grep -i 'sframe-audit' $name.log && { echo "sframe-audit.so complained"; exit 1; }
	# The functions most samples have on their stack (--children), then
	# the stacks of getrandom(2)'s hottest kernel function: kernel frames,
	# then user frames, innermost first.
	{
		$perf report -i $name.data --stdio -q --comm python3 --children -g none \
			--percent-limit 50 2>/dev/null | sed '/^$/d;/^#/d' | head -n 8 > children.txt
		[ -s children.txt ] && cat children.txt && echo "..." ||
			echo "(no function is on half of the stacks)"
		$perf report -i $name.data --stdio -q --comm python3 --no-children \
			-S crng_make_state -g graph,0.5,callee 2>/dev/null | sed '/^$/d;/^#/d'
	} > $out/$name.report
	cat $out/$name.report
	$perf script -i $name.data -F comm,tid,ip,sym,dso > $out/$name.txt 2>/dev/null
	ls -l $name.data | awk '{printf "perf.data size: %d bytes\n", $5}'
	if [ $cg = fp ]; then
		python3 $lib/whole-stacks.py --comm python3 --max 10 $out/$name.txt
		echo "=> as expected: the frame-pointer unwinder loses the callers"
	else
		python3 $lib/whole-stacks.py --comm python3 --min 90 $out/$name.txt
		echo "=> as expected: the stacks are whole, kernel and user frames together"
	fi
done
GUEST
} > "$out/demo-guest.sh"
"$REPO/scripts/vm" --scratch "$out" -- bash "$out/demo-guest.sh"

echo
echo "### flame graph of python3, --call-graph fp,defer"
svg=$out/python3-fp-defer.svg
python3 "$REPO/tests/lib/flamegraph.py" --comm python3 -o "$svg" \
	--title "python3 work.py, perf record --call-graph fp,defer (SFrame)" "$out/python3-fp-defer.txt"
python3 - "$svg" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
titles = [t.text for t in root.iter(ns + "title")]
want = ["_start (python3)", "Py_BytesMain (python3)", "_PyEval_EvalFrameDefault (python3)",
        "deflate (libz.so", "__x64_sys_getrandom ([kernel.kallsyms])",
        "vfs_write ([kernel.kallsyms])"]
missing = [w for w in want if not any(t.startswith(w) for t in titles)]
if missing:
    sys.exit(f"flame graph: {sys.argv[1]}: no box for {', '.join(missing)}")
print(f"{sys.argv[1]}: well-formed SVG, {len(titles)} boxes, among them "
      + ", ".join(w.split(" (")[0] for w in want))
PY
python3 "$REPO/tests/lib/flamegraph.py" --comm python3 -o "$out/python3-fp.svg" \
	--title "python3 work.py, perf record --call-graph fp" "$out/python3-fp.txt"
echo "flame graph: $svg (for contrast, --call-graph fp: $out/python3-fp.svg)"

cat <<'NOTE'

chain-nofp and chain-sframe3 are the same program built without frame
pointers; chain-sframe3 carries an SFrame v3 section that sframe-gen made
from its .eh_frame (PT_GNU_SFRAME, found by the kernel at exec).  The
kernel's frame-pointer unwinder (fp) stops after the first frame;
--call-graph dwarf gets the whole chain by copying 8 KiB of stack into every
sample for perf to unwind; --call-graph fp,defer gets it from the kernel's
SFrame unwinder, once per kernel entry, for a record of a few words.

python3 is Debian's, as shipped (no frame pointers, no SFrame); only its
.eh_frame, and its libraries' and loader's, went through sframe-gen.
Debian strips it to its exported symbols: its static functions show as
addresses.  Stacks that are not whole (1-3% here): the lazy-binding
trampoline _dl_runtime_resolve (its CFA is in rbx, which SFrame cannot
recover below the topmost frame) and, without
libc6-dbg, the loader's start-up before main (ld.so's _dl_start_user has
no name then).
NOTE
