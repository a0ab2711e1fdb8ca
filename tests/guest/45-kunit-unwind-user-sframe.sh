# SPDX-License-Identifier: GPL-2.0
# KUnit suites of the SFrame unwinder (built in, run at boot), one per
# file of kernel/unwind/: the decoder on crafted sections (decode), the
# header and lookup errors and faults (errors), the binutils 2.46 vectors
# (vectors), the registry and the unwinder on made-up stacks (unwind);
# every case of each source passed.  Every suite is checked, whatever
# another's result.
. "$(dirname "$0")/lib.sh"
failed=
for s in decode errors vectors unwind; do
	echo "## unwind_user_sframe_$s"
	(kunit_suite unwind_user_sframe_$s kernel/unwind/sframe_kunit_$s.c \
		CONFIG_UNWIND_USER_SFRAME_KUNIT_TEST) || failed="$failed $s"
done
[ -z "$failed" ] || fail "suites:$failed"
