#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-kernel.sh [guest|debug]
#
# Configure (allnoconfig + config/guest.config [+ config/debug.config]),
# check that every asked-for option stuck, and build the kernel from TREE
# into $BUILD_DIR/kbuild/VARIANT.  The image ends up at
# $BUILD_DIR/kbuild/VARIANT/arch/x86/boot/bzImage.
#
# The object directory is tied to the tree it was built from: when
# tree.sh re-creates the tree, the old objects are thrown away (source
# mtimes from the tarball could otherwise look older than stale objects);
# ccache makes that rebuild cheap without ever reusing a stale result.

set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$(dirname "$REPO")/build-$(basename "$REPO")}
TREE=${TREE:-$BUILD_DIR/linux}
VARIANT=${1:-guest}
OUT=$BUILD_DIR/kbuild/$VARIANT
JOBS=${JOBS:-$(nproc)}
export CCACHE_DIR=${CCACHE_DIR:-/var/cache/sframe-ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
export CCACHE_COMPILERCHECK=content
# Paths relative to the build directory: hits across clones and build dirs.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$BUILD_DIR}

case $VARIANT in
guest) frags=("$REPO/config/guest.config") ;;
debug) frags=("$REPO/config/guest.config" "$REPO/config/debug.config") ;;
*) echo "build-kernel: unknown variant '$VARIANT' (guest or debug)" >&2; exit 2 ;;
esac

gen=$("$REPO/scripts/tree.sh" generation)
[ -n "$gen" ] || { echo "build-kernel: $TREE is not ready (run make tree)" >&2; exit 1; }
if [ "$(cat "$OUT/.tree-generation" 2>/dev/null)" != "$gen" ]; then
	rm -rf "$OUT"
	mkdir -p "$OUT"
	echo "$gen" > "$OUT/.tree-generation"
fi

cc="gcc"
command -v ccache > /dev/null && cc="ccache gcc"
# Fixed build identity: ccache hits across rebuilds, reproducible images.
kmake=(make -C "$TREE" O="$OUT" ARCH=x86_64 CC="$cc" HOSTCC="$cc" -j"$JOBS"
       KBUILD_BUILD_USER=sframe KBUILD_BUILD_HOST=qemu
       KBUILD_BUILD_TIMESTAMP="$(git -C "$TREE" log -1 --format=%cd)")

cat "${frags[@]}" > "$OUT/fragment.config"
if ! cmp -s "$OUT/fragment.config" "$OUT/.fragment.used" 2>/dev/null || [ ! -f "$OUT/.config" ]; then
	"${kmake[@]}" -s KCONFIG_ALLCONFIG="$OUT/fragment.config" allnoconfig
	cp "$OUT/fragment.config" "$OUT/.fragment.used"
fi
"$REPO/scripts/kconfig-check.sh" "$OUT/.config" "${frags[@]}" || {
	echo "build-kernel: the $VARIANT configuration lacks options it requires (above)" >&2
	rm -f "$OUT/.fragment.used"
	exit 1
}
"${kmake[@]}" -s bzImage
echo "build-kernel: $OUT/arch/x86/boot/bzImage"
