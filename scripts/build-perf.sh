#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-perf.sh - build tools/perf of the patched tree into $BUILD_DIR/perf
# (binary: $BUILD_DIR/perf/perf), with libdw so that --call-graph dwarf
# works: it is the ground truth the deferred callchains are checked against.

set -euo pipefail

. "$(dirname "$0")/build-common.sh"
# build-perf.sh asan: with AddressSanitizer and UBSan, into $BUILD_DIR/perf-asan,
# for the host tests that feed perf crafted data.
# PERF_OUT: build elsewhere, from any TREE (the caller owns that directory).
variant=${1:-}
extra=()
if [ -n "${PERF_OUT:-}" ]; then
	OUT=$PERF_OUT
	mkdir -p "$OUT"
elif [ "$variant" = asan ]; then
	OUT=$BUILD_DIR/perf-asan
	use_objdir "$OUT" build-perf
	# Not alignment: x86 reads misaligned fields fine, and a crafted record whose
	# size is not a multiple of 8 misaligns every event after it in the reader.
	extra=(EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize=alignment -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
	       LDFLAGS="-fsanitize=address,undefined")
else
	OUT=$BUILD_DIR/perf
	use_objdir "$OUT" build-perf
fi

# No scripting, no BPF skeletons (no clang here), no libunwind: libdw
# does the DWARF unwinding.
make -C "$TREE/tools/perf" O="$OUT" -j"$JOBS" CC="$cc" HOSTCC="$cc" \
	NO_LIBPYTHON=1 NO_LIBPERL=1 BUILD_BPF_SKEL=0 NO_LIBUNWIND=1 NO_SLANG=1 \
	NO_GTK2=1 NO_LIBBABELTRACE=1 NO_JVMTI=1 NO_LIBLLVM=1 NO_CAPSTONE=1 \
	NO_SDT=1 WERROR=0 "${extra[@]}" > "$OUT/build.log" 2>&1 || {
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
