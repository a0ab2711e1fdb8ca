#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The kernel built without CONFIG_UNWIND_USER boots, and rejects the perf
# attr bits that need it with EINVAL (kselftest deferred_abi)
# and the SFrame prctls too (kselftest sframe_prctl);
# perf record --call-graph fp,defer then records plain fp, with one warning.
. "$(dirname "$0")/lib.sh"

vm=$REPO/scripts/vm
kernel=$BUILD_DIR/kbuild/nounwind/arch/x86/boot/bzImage
bin=$BUILD_DIR/kselftest/perf_events/deferred_abi
expect "nounwind: kernel is built without CONFIG_UNWIND_USER" 0 "" -- \
	grep -qx "# CONFIG_UNWIND_USER is not set" "$BUILD_DIR/kbuild/nounwind/.config"
expect "nounwind: defer_callchain/defer_output give EINVAL" 0 "^ok [0-9]+ abi.expect_unsupported$" -- \
	"$vm" --kernel "$kernel" -- env DEFERRED_EXPECT_UNSUPPORTED=1 "$bin" -f abi
expect "nounwind: other reserved bits still give EINVAL" 0 "^ok [0-9]+ abi.rejects_unknown_bits$" -- \
	"$vm" --kernel "$kernel" -- "$bin" -r abi.rejects_unknown_bits
expect "nounwind: PR_ADD_SFRAME and PR_REMOVE_SFRAME give EINVAL" 0 \
	"^ok [0-9]+ global.expect_unsupported$" -- \
	"$vm" --kernel "$kernel" -- env SFRAME_EXPECT_UNSUPPORTED=1 \
		"$BUILD_DIR/kselftest/sframe/sframe_prctl" -r global.expect_unsupported
expect "nounwind: perf record --call-graph fp,defer falls back to fp with one warning" 0 \
	"perf record --call-graph fp,defer .*: Ok" -- \
	"$REPO/scripts/vm" --kernel "$kernel" -- bash -c "cd '$TREE' && PATH='$BUILD_DIR/perf':\$PATH \
		PERF_TEST_DEFER_EXPECT=0 '$BUILD_DIR/perf/perf' test -v 'fp,defer'"
