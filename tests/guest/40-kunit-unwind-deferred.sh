# SPDX-License-Identifier: GPL-2.0
# KUnit suite unwind_deferred (built in, run at boot): every case of the
# source passed.
. "$(dirname "$0")/lib.sh"
kunit_suite unwind_deferred kernel/unwind/deferred_kunit.c CONFIG_UNWIND_DEFERRED_KUNIT_TEST
