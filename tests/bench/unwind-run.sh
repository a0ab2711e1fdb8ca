#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# unwind-run.sh DIR "N..." [unwind-bench options and depths]
#
# In the guest: runs DIR/fp-N and DIR/sframe-N (from tests/bench/Makefile)
# for each FDE count N, the latter twice: with the kernel's cache of SFrame
# rules (sframe: steady state, the same code unwound again and again) and
# without it (sframe-cold: every lookup searches the section, as the
# first unwind through code does), and prints their measurements prefixed
# with "fdes=N variant=fp|sframe|sframe-cold", for unwind-report.py.
set -euo pipefail

dir=$1 fdes=$2
shift 2
[ -r /sys/kernel/debug/unwind_user/stats ] ||
	mount -t debugfs debugfs /sys/kernel/debug 2> /dev/null || true
echo "# guest: $(uname -r) $(uname -v), $(nproc) CPU, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
knob=/sys/kernel/debug/unwind_user/sframe_cache
[ -w "$knob" ] || { echo "unwind-run: no $knob" >&2; exit 1; }
trap 'echo Y > "$knob"' EXIT
for n in $fdes; do
	for v in fp sframe sframe-cold; do
		if [ $v = sframe-cold ]; then echo N; else echo Y; fi > "$knob"
		"$dir/${v%-cold}-$n" "$@" > /tmp/unwind-run.out
		sed "s/^/fdes=$n variant=$v /" /tmp/unwind-run.out
	done
done
