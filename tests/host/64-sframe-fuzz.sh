#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# libFuzzer on the SFrame tools' two input paths, ELF + .eh_frame and
# .sframe: first every input that once crashed them (tests/sframe/
# fuzz-regress/), then a bounded run of each fuzzer (FUZZ_SECONDS, 60
# here; 'make fuzz' runs 30 minutes each).  A crash, leak, timeout or
# sanitizer report fails.
. "$(dirname "$0")/lib.sh"

sf() { make -s -C "$REPO/tools/sframe" OUT="$BUILD_DIR/sframe-tools" "$@"; }
expect "sframe fuzz regression inputs pass" 0 "" -- sf fuzz-regress
expect "sframe fuzzers, ${FUZZ_SECONDS:=60} s each: no crash" 0 "^sframe: [0-9]+ runs, 0 crashes$" -- \
	sf fuzz-short FUZZ_SECONDS="$FUZZ_SECONDS"
cp "$HT/.out" "$HT/fuzz.out"
expect "elf fuzzer (ELF + .eh_frame): no crash" 0 "^elf: [0-9]+ runs, 0 crashes$" -- \
	cat "$HT/fuzz.out"
grep -E '^(elf|sframe): [0-9]+ (runs|slow)' "$HT/fuzz.out" | sed 's/^/    # /'
