#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sframe-gen --inject's ELF writer (tools/sframe/tests/inject.sh): the
# binutils 2.46 vectors injected into programs and system files, which
# still run, keep PT_GNU_SFRAME over .sframe in a read-only PT_LOAD
# through strip and objcopy, round-trip byte for byte and pass eu-elflint;
# damaged inputs under ASan/UBSan.
. "$(dirname "$0")/lib.sh"

expect "sframe-inject: injected ELF files run, strip and lint clean; bad inputs refused" 0 \
	"^[0-9]+ passed, 0 failed, 0 skipped$" -- \
	bash "$REPO/tools/sframe/tests/inject.sh" "$BUILD_DIR/sframe-tools"
