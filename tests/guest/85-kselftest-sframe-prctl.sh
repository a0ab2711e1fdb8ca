# SPDX-License-Identifier: GPL-2.0
# kselftest sframe/sframe_prctl: PR_ADD_SFRAME and PR_REMOVE_SFRAME on
# a table of bad calls and damaged headers (each its errno, the registry
# unchanged), fork inheritance, removal with the text (munmap, mmap over
# it, mremap).  The feature must be there: a missing one fails.
. "$(dirname "$0")/lib.sh"
kselftest_all_ok "${KSELFTEST:?}/sframe/sframe_prctl" global.expect_unsupported \
	SFRAME_EXPECT_SUPPORTED=1
