#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-selftests.sh [guest|debug] - build the kselftests the guest tests
# run, from TREE against the uapi headers of that kernel build, into
# $BUILD_DIR/kselftest/TARGET (perf_events, sframe).

set -euo pipefail

. "$(dirname "$0")/build-common.sh"
hdr=$BUILD_DIR/kbuild/${1:-guest}/usr/include
[ -d "$hdr/linux" ] || { echo "build-selftests: no headers in $hdr (make kernel)" >&2; exit 1; }

for target in perf_events sframe; do
	out=$BUILD_DIR/kselftest/$target
	# only what this tree builds: no program of an older series left
	rm -rf "$out"
	mkdir -p "$out"
	make -s -C "$TREE/tools/testing/selftests/$target" OUTPUT="$out" \
		CC="$cc" KHDR_INCLUDES="-isystem $hdr" -j"$JOBS"
	echo "build-selftests: $out"
done
