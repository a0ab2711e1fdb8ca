#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# perf (built with AddressSanitizer and UBSan) on crafted perf.data with
# deferred callchains: every stitching edge case, malformed records, both
# byte orders, pipe and file: the perf shell test script_deferred_crafted.sh,
# which fails a case whose stderr has a sanitizer report, leaks included.
. "$(dirname "$0")/lib.sh"

asan=$BUILD_DIR/perf-asan/perf
test=$TREE/tools/perf/tests/shell/script_deferred_crafted.sh
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
expect "perf (ASan) on crafted deferred callchain data: all cases pass" 0 " 0 failed$" -- \
	env PATH="$(dirname "$asan"):$PATH" bash "$test"
