# SPDX-License-Identifier: GPL-2.0
# Sourced by build-kernel.sh and build-perf.sh: paths, ccache, and the tie
# between an object directory and the tree generation it was built from.

. "$(dirname "${BASH_SOURCE[0]}")/paths.sh"
JOBS=${JOBS:-$(nproc)}
export CCACHE_DIR=${CCACHE_DIR:-/var/cache/sframe-ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
export CCACHE_COMPILERCHECK=content
# Paths relative to the build directory: hits across clones and build dirs.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$BUILD_DIR}
cc=gcc
command -v ccache > /dev/null && cc="ccache gcc"

# use_objdir DIR WHO: make DIR the object directory for the current tree;
# a tree re-created by tree.sh gets a new, empty one (its sources carry
# tarball mtimes that could look older than stale objects).
use_objdir() {
	local gen
	gen=$("$REPO/scripts/tree.sh" generation)
	[ -n "$gen" ] || { echo "$2: $TREE is not ready (run make tree)" >&2; exit 1; }
	if [ "$(cat "$1/.tree-generation" 2>/dev/null)" != "$gen" ]; then
		rm -rf "$1"
		mkdir -p "$1"
		echo "$gen" > "$1/.tree-generation"
	fi
}
