#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-perf.sh - build tools/perf of the patched tree into $BUILD_DIR/perf
# (binary: $BUILD_DIR/perf/perf), with libdw so that --call-graph dwarf
# works: it is the ground truth the deferred callchains are checked against.

set -euo pipefail

. "$(dirname "$0")/build-common.sh"
OUT=$BUILD_DIR/perf

use_objdir "$OUT" build-perf

# No scripting, no BPF skeletons (no clang here), no libunwind: libdw
# does the DWARF unwinding.
make -C "$TREE/tools/perf" O="$OUT" -j"$JOBS" CC="$cc" HOSTCC="$cc" \
	NO_LIBPYTHON=1 NO_LIBPERL=1 BUILD_BPF_SKEL=0 NO_LIBUNWIND=1 NO_SLANG=1 \
	NO_GTK2=1 NO_LIBBABELTRACE=1 NO_JVMTI=1 NO_LIBLLVM=1 NO_CAPSTONE=1 \
	NO_SDT=1 WERROR=0 > "$OUT/build.log" 2>&1 || {
	tail -n 40 "$OUT/build.log" >&2
	echo "build-perf: tools/perf failed to build (log: $OUT/build.log)" >&2
	exit 1
}
opts=$("$OUT/perf" version --build-options)
for feature in dwarf libdw-dwarf-unwind libelf; do
	echo "$opts" | grep -Eq "^ +$feature: +\[ on  \]" || {
		echo "$opts" >&2
		echo "build-perf: $OUT/perf lacks '$feature' (libdw-dev, libelf-dev installed?)" >&2
		exit 1
	}
done
echo "build-perf: $OUT/perf"
