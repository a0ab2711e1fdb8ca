#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The SFrame tools built with ASan and UBSan on a table of malformed ELF,
# .eh_frame and .sframe inputs (tools/sframe/tests/malformed.sh): each
# one gets exit status 1 and a message naming the file and the offset,
# nothing is left behind and an input to --inject stays unchanged.
. "$(dirname "$0")/lib.sh"

expect "sframe tools (ASan) on malformed ELF, CFI and SFrame input: every row refused cleanly" 0 \
	"^malformed: [0-9]+ passed, 0 failed$" -- \
	make -s -C "$REPO/tools/sframe" OUT="$BUILD_DIR/sframe-tools" test-malformed
