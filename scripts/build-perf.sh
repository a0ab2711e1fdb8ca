#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-perf.sh - build tools/perf of the patched tree into $BUILD_DIR/perf
# (binary: $BUILD_DIR/perf/perf), with libdw so that --call-graph dwarf
# works: it is the ground truth the deferred callchains are checked against.

set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$(dirname "$REPO")/build-$(basename "$REPO")}
TREE=${TREE:-$BUILD_DIR/linux}
OUT=$BUILD_DIR/perf
JOBS=${JOBS:-$(nproc)}
export CCACHE_DIR=${CCACHE_DIR:-/var/cache/sframe-ccache}
export CCACHE_COMPILERCHECK=content
# Paths relative to the build directory: hits across clones and build dirs.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$BUILD_DIR}

gen=$("$REPO/scripts/tree.sh" generation)
[ -n "$gen" ] || { echo "build-perf: $TREE is not ready (run make tree)" >&2; exit 1; }
if [ "$(cat "$OUT/.tree-generation" 2>/dev/null)" != "$gen" ]; then
	rm -rf "$OUT"
	mkdir -p "$OUT"
	echo "$gen" > "$OUT/.tree-generation"
fi

cc=gcc
command -v ccache > /dev/null && cc="ccache gcc"
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
