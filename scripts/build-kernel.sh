#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-kernel.sh [guest|bench|debug|debug-lazy|nounwind]
#
# Configure (allnoconfig + config/guest.config [+ config/debug.config];
# bench: guest.config without the lock and atomic-sleep checkers;
# debug-lazy: guest.config + debug.config without its
# CONFIG_UNWIND_USER_SFRAME_VALIDATE + config/debug-lazy.config; nounwind:
# guest.config without CONFIG_UNWIND_*, the checkers, uprobe events and KVM
# + config/nounwind.config),
# check that every asked-for option stuck, and build the kernel from TREE
# into $BUILD_DIR/kbuild/VARIANT.  The image ends up at
# $BUILD_DIR/kbuild/VARIANT/arch/x86/boot/bzImage, its uapi headers in
# $BUILD_DIR/kbuild/VARIANT/usr/include.
#
# The object directory is tied to the tree it was built from: when
# tree.sh re-creates the tree, the old objects are thrown away (source
# mtimes from the tarball could otherwise look older than stale objects);
# ccache makes that rebuild cheap without ever reusing a stale result.

set -euo pipefail

. "$(dirname "$0")/build-common.sh"
VARIANT=${1:-guest}
OUT=$BUILD_DIR/kbuild/$VARIANT

case $VARIANT in
guest) frags=("$REPO/config/guest.config") ;;
bench) frags=("$OUT/guest-checker-less.config") ;;
debug) frags=("$REPO/config/guest.config" "$REPO/config/debug.config") ;;
debug-lazy) frags=("$REPO/config/guest.config" "$OUT/debug-validate-less.config"
		   "$REPO/config/debug-lazy.config") ;;
nounwind) frags=("$OUT/guest-unwind-less.config" "$REPO/config/nounwind.config") ;;
*) echo "build-kernel: unknown variant '$VARIANT' (guest, bench, debug, debug-lazy or nounwind)" >&2; exit 2 ;;
esac

use_objdir "$OUT" build-kernel
# The checkers (lockdep, atomic sleep) make a kernel slower: not in the one
# that measures costs, nor in the one that only shows a kernel without the
# feature (which needs neither the checkers nor uprobes and KVM either).
checkers='CONFIG_(PROVE_LOCKING|DEBUG_ATOMIC_SLEEP)='
if [ $VARIANT = nounwind ]; then
	grep -v -E "CONFIG_UNWIND_|$checkers|CONFIG_(FTRACE|UPROBE_EVENTS|VIRTUALIZATION|KVM|KVM_AMD)=" \
		"$REPO/config/guest.config" > "$OUT/guest-unwind-less.config"
fi
if [ $VARIANT = bench ]; then
	grep -v -E "$checkers" "$REPO/config/guest.config" > "$OUT/guest-checker-less.config"
fi
if [ $VARIANT = debug-lazy ]; then
	grep -v 'CONFIG_UNWIND_USER_SFRAME_VALIDATE' "$REPO/config/debug.config" \
		> "$OUT/debug-validate-less.config"
fi

# Fixed build identity: ccache hits across rebuilds, reproducible images.
kmake=(make -C "$TREE" O="$OUT" ARCH=x86_64 CC="$cc" HOSTCC="$cc" -j"$JOBS"
       KBUILD_BUILD_USER=sframe KBUILD_BUILD_HOST=qemu
       KBUILD_BUILD_TIMESTAMP="$(git -C "$TREE" log -1 --format=%cD)")

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
# The uapi headers of this tree, for the kselftests (KHDR_INCLUDES).
"${kmake[@]}" -s headers
echo "build-kernel: $OUT/arch/x86/boot/bzImage"
