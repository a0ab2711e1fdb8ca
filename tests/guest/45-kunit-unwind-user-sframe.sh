# SPDX-License-Identifier: GPL-2.0
# KUnit suite unwind_user_sframe (built in, run at boot): the SFrame
# decoder on crafted sections and on the binutils 2.46 vectors, the
# registry, the unwinder on made-up stacks; every case of the source
# passed.
. "$(dirname "$0")/lib.sh"
kunit_suite unwind_user_sframe kernel/unwind/sframe_kunit.c CONFIG_UNWIND_USER_SFRAME_KUNIT_TEST
