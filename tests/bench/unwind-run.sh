#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# unwind-run.sh DIR "N..." [unwind-bench options and depths]
#
# In the guest: runs DIR/fp-N and DIR/sframe-N (from tests/bench/Makefile)
# for each FDE count N, and prints their measurements prefixed with
# "fdes=N variant=fp|sframe", for unwind-report.py.
set -euo pipefail

dir=$1 fdes=$2
shift 2
[ -r /sys/kernel/debug/unwind_user/stats ] ||
	mount -t debugfs debugfs /sys/kernel/debug 2> /dev/null || true
echo "# guest: $(uname -r) $(uname -v), $(nproc) CPU, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
for n in $fdes; do
	for v in fp sframe; do
		"$dir/$v-$n" "$@" > /tmp/unwind-run.out
		sed "s/^/fdes=$n variant=$v /" /tmp/unwind-run.out
	done
done
