# SPDX-License-Identifier: GPL-2.0
# Sourced by every script: where the repository, the build directory
# (default ../build-<clone name>, outside the clone) and the kernel tree are.
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$(dirname "$REPO")/build-$(basename "$REPO")}
TREE=${TREE:-$BUILD_DIR/linux}
export BUILD_DIR TREE
