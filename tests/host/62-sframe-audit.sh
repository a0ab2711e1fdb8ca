#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sframe-audit.so, the LD_AUDIT helper (tools/sframe/tests/audit.sh), on
# the host against prctl-stub, a seccomp user-notification stand-in for
# PR_ADD_SFRAME / PR_REMOVE_SFRAME: the stub's own ABI table, dlopen and
# dlclose loops, PT_GNU_SFRAME and sidecars, bad sections, a kernel that
# says EINVAL or ENOMEM, 2000 dlopens without growth.
. "$(dirname "$0")/lib.sh"

expect "sframe-audit.so registers and removes every shared object's SFrame (prctl stub)" 0 \
	"^[0-9]+ passed, 0 failed, 0 skipped$" -- \
	bash "$REPO/tools/sframe/tests/audit.sh" "$BUILD_DIR/sframe-tools"
