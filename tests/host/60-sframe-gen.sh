#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sframe-gen, sframe-dump, sframe-check (tools/sframe/tests/gen.sh): the
# binutils 2.46 vectors decoded as objdump does and regenerated from their
# .eh_frame; generate -> dump -> check with zero mismatches on programs
# without frame pointers and the system libraries, v3, v2 and v2
# section-relative; the checker catches planted errors; injection.
. "$(dirname "$0")/lib.sh"

tools=$BUILD_DIR/sframe-tools
expect "sframe-gen/dump/check round trip, vectors, system libraries" 0 " 0 failed$" -- \
	bash "$REPO/tools/sframe/tests/gen.sh" "$tools"
sed -n 's/^ok - \(gen -V3 -> dump -> check .*\)/    # \1/p' "$HT/.out"

# The test workloads built without frame pointers get their SFrame from
# sframe-gen (tests/workloads/Makefile): each is the version it says,
# carries PT_GNU_SFRAME, agrees with its .eh_frame at every address and
# runs.
check_workload() {
	local f=$WORKLOADS/$1 version=$2 flags=$3

	readelf -lW "$f" | grep -q GNU_SFRAME || { echo "$f: no PT_GNU_SFRAME"; return 1; }
	"$tools/sframe-dump" "$f" > "$HT/dump" || return 1
	grep -q "Version: SFRAME_VERSION_$version\$" "$HT/dump" ||
		{ echo "$f: not SFrame v$version"; head "$HT/dump"; return 1; }
	if [ "$flags" = pcrel ]; then
		grep -q SFRAME_F_FDE_FUNC_START_PCREL "$HT/dump"
	else
		! grep -q SFRAME_F_FDE_FUNC_START_PCREL "$HT/dump"
	fi || { echo "$f: start encoding is not $flags"; return 1; }
	"$tools/sframe-check" "$f" || return 1
	"$f" 10 > /dev/null
}
WORKLOADS=$BUILD_DIR/workloads
for w in "chain-sframe3 3 pcrel" "chain-sframe2 2 pcrel" "chain-sframe2s 2 section-relative"; do
	set -- $w
	expect "workload $1: SFrame v$2 ($3) injected, 0 mismatches against .eh_frame, runs" 0 \
		" 0 mismatches$" -- check_workload "$@"
done
