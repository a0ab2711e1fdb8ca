#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh - build everything, boot the patched kernel in QEMU and profile
# a program built WITHOUT frame pointers, printing its call stacks:
#   1. --call-graph fp        the kernel's frame-pointer unwinder: truncated
#   2. --call-graph dwarf     the 8 KiB-per-sample stack copy, unwound by perf
#   3. --call-graph fp,defer  the same program with SFrame from sframe-gen:
#                             the kernel unwinds it with SFrame, once per
#                             kernel entry, and perf stitches the stacks

set -euo pipefail
. "$(dirname "$0")/paths.sh"

"$REPO/scripts/deps.sh"
"$REPO/scripts/tree.sh" prepare
"$REPO/scripts/build-kernel.sh" guest
"$REPO/scripts/build-perf.sh"
make -s -C "$REPO/tools/sframe" OUT="$BUILD_DIR/sframe-tools" all
make -s -C "$REPO/tests/workloads" OUT="$BUILD_DIR/workloads" \
	KHDR="$BUILD_DIR/kbuild/guest/usr/include" SFRAME_GEN="$BUILD_DIR/sframe-tools/sframe-gen"

out=$BUILD_DIR/demo
rm -rf "$out"; mkdir -p "$out"
cat > "$out/demo-guest.sh" <<GUEST
set -e
perf=$BUILD_DIR/perf/perf
cd /tmp
echo "guest: \$(uname -r), \$(nproc) CPUs"
for run in "fp chain-nofp truncated" "dwarf chain-nofp full" "fp,defer chain-sframe3 full"; do
	set -- \$run
	cg=\$1 prog=\$2 mode=\$3
	echo
	echo "### perf record -e cpu-clock --call-graph \$cg -- \$prog"
	\$perf record -q -e cpu-clock -F 1000 --call-graph \$cg -o perf.data -- \\
		$BUILD_DIR/workloads/\$prog 1500 2>/dev/null
	\$perf report -i perf.data --stdio --no-children --comm \$prog -S chain_leaf -G \\
		--percent-limit 5 -q 2>/dev/null | sed '/^\$/d' | head -n 20
	\$perf script -i perf.data -F comm,tid,ip,sym,dso > script.txt 2>/dev/null
	python3 $REPO/tests/lib/stacks.py --comm \$prog --top chain_leaf \\
		--expect chain_leaf,chain_c,chain_b,chain_a,main --mode \$mode --min 1 script.txt |
		sed "s/^OK\$/=> as expected: the stacks are \$mode/"
	ls -l perf.data | awk '{printf "perf.data size: %d bytes\n", \$5}'
done
GUEST
"$REPO/scripts/vm" --scratch "$out" -- bash "$out/demo-guest.sh"
cat <<'NOTE'

chain-nofp and chain-sframe3 are the same program built without frame
pointers; chain-sframe3 carries an SFrame v3 section that sframe-gen made
from its .eh_frame (PT_GNU_SFRAME, found by the kernel at exec).  The
kernel's frame-pointer unwinder (fp) stops after the first frame;
--call-graph dwarf gets the whole chain by copying 8 KiB of stack into every
sample for perf to unwind; --call-graph fp,defer gets it from the kernel's
SFrame unwinder, once per kernel entry, for a record of a few words.
Shared libraries: run the program with LD_AUDIT=sframe-audit.so (tools/sframe).
NOTE
