#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh - build everything, boot the patched kernel in QEMU and profile
# a program built WITHOUT frame pointers, printing its call stacks:
#   1. --call-graph fp     what the kernel unwinds itself today
#   2. --call-graph dwarf  the 8 KiB-per-sample stack copy, unwound by perf
# The kernel defers user unwinds now ([2/7]), but perf does not ask for
# that yet ([3/7]) and there is no SFrame unwinder yet ([5/7]): (1) is
# truncated, that is today's behaviour, and the demo says so.

set -euo pipefail
. "$(dirname "$0")/paths.sh"

"$REPO/scripts/deps.sh"
"$REPO/scripts/tree.sh" prepare
"$REPO/scripts/build-kernel.sh" guest
"$REPO/scripts/build-perf.sh"
make -s -C "$REPO/tests/workloads" OUT="$BUILD_DIR/workloads" KHDR="$BUILD_DIR/kbuild/guest/usr/include"

out=$BUILD_DIR/demo
rm -rf "$out"; mkdir -p "$out"
cat > "$out/demo-guest.sh" <<GUEST
set -e
perf=$BUILD_DIR/perf/perf
prog=$BUILD_DIR/workloads/chain-nofp
cd /tmp
echo "guest: \$(uname -r), \$(nproc) CPUs"
for cg in fp dwarf; do
	mode=full; [ \$cg = fp ] && mode=truncated
	echo
	echo "### perf record -e cpu-clock --call-graph \$cg -- chain-nofp (built without frame pointers)"
	\$perf record -q -e cpu-clock -F 1000 --call-graph \$cg -o perf.\$cg -- \$prog 1500 2>/dev/null
	\$perf report -i perf.\$cg --stdio --no-children --comm chain-nofp -S chain_leaf -G \\
		--percent-limit 5 -q 2>/dev/null | sed '/^\$/d' | head -n 20
	\$perf script -i perf.\$cg -F comm,tid,ip,sym,dso > script.\$cg 2>/dev/null
	python3 $REPO/tests/lib/stacks.py --comm chain-nofp --top chain_leaf \\
		--expect chain_leaf,chain_c,chain_b,chain_a,main --mode \$mode --min 1 script.\$cg |
		sed "s/^OK\$/=> as expected today: the stacks are \$mode/"
	ls -l perf.\$cg | awk '{printf "perf.data size: %d bytes\n", \$5}'
done
GUEST
"$REPO/scripts/vm" --scratch "$out" -- bash "$out/demo-guest.sh"
cat <<'NOTE'

What this shows today: the kernel's own user unwinder (--call-graph fp) needs
frame pointers, so for a program built without them it stops after the
first frame; only --call-graph dwarf, which copies 8 KiB of stack into every
sample, gives the whole chain.  The kernel side of deferred unwinding is in
([2/7]: one unwind per kernel entry, see make bench); with perf asking for
it ([3/7]) and SFrame ([5/7]), --call-graph fp,defer will give the whole
chain at the cost of a frame-pointer unwind.
NOTE
