#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The SFrame tools' malformed-input table.
#
# Each row makes one bad input from a good one (tests/sframe/
# malformed-mk.py, dd, printf, gcc), runs a tool on it (the ASan+UBSan
# builds in $BUILD_DIR/sframe-tools/asan/, from make sframe-tools-asan),
# and wants:
#   - exit status 1 (and so no crash: < 128);
#   - no "Sanitizer" / "runtime error" on stderr;
#   - the bad file's name on stderr, and the row's regex (which names the
#     offset where there is one) in the output (stderr, or stdout for the
#     per-FDE details sframe-dump and sframe-check print there);
#   - sframe-gen -o X: no X (nor X.tmp*) left behind; sframe-gen --inject
#     in place: the input byte-identical (sha256), no temporary left.
# A "stats" row is an odd input that is not an error: sframe-gen --stats
# must succeed (exit status 0), say the row's regex, and write a section
# that decodes and has no zero-size FDE.  gen2 and inj2 are gen and inj on
# an input with nothing to describe: exit status 2, nothing written.
# One result per row.
set -u

. "$(dirname "$0")/lib.sh"
here=$REPO/tests/sframe
SAN=$SFRAME_TOOLS/asan
GEN=$SAN/sframe-gen
DUMP=$SAN/sframe-dump
CHECK=$SAN/sframe-check
MK="python3 $here/malformed-mk.py"
for t in "$GEN" "$DUMP" "$CHECK"; do
	[ -x "$t" ] || { not_ok "ASan tools built" "no $t (make sframe-tools-asan)"; exit 1; }
done
# a sanitizer report must not look like the expected exit status 1
export ASAN_OPTIONS=exitcode=86:detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=exitcode=87:print_stacktrace=1:halt_on_error=1

T=$HT

# ---- good inputs ----
cat > "$T/prog.c" <<'EOF'
#include <string.h>
volatile int sink;
__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }
__attribute__((noinline)) int frame(int n) {
	volatile char b[200]; memset((char *)b, n, sizeof(b)); return b[n & 127];
}
__attribute__((noinline)) int dyn(int n) {
	char *p = __builtin_alloca(n + 16); memset(p, 1, n + 16); return p[n];
}
__attribute__((noinline)) void callee(char *p) { sink += p[0]; }
/* DRAP: a FLEX FDE in v3 */
__attribute__((noinline, force_align_arg_pointer)) void drap(int n) {
	char *p = __builtin_alloca(n + 16);
	volatile char big[64] __attribute__((aligned(64)));
	memset(p, 2, n + 16);
	big[0] = p[3];
	callee(p);
	sink += big[0];
}
int main(int argc, char **argv) {
	(void)argv;
	sink = leaf(argc) + frame(argc) + dyn(argc);
	drap(argc + 8);
	return 0;
}
EOF
setup() {
	# the good ELF has a .sframe (injected), so that sframe-dump reads it
	gcc -O2 -fomit-frame-pointer -o "$T/good0" "$T/prog.c" &&
	"$GEN" --inject -o "$T/good" "$T/good0" &&
	"$DUMP" "$T/good" > /dev/null &&
	gcc -O2 -c -o "$T/good.o" "$T/prog.c" &&
	gcc -m32 -O2 -o "$T/good32" "$T/prog.c" &&
	"$GEN" --raw -o "$T/good.v3" "$T/good" &&
	"$GEN" --raw -V 2 -o "$T/good.v2" "$T/good" &&
	"$CHECK" --sframe "$T/good.v3" "$T/good" > /dev/null
}
if ! setup; then
	not_ok "setup: building the good inputs"
	exit 1
fi

# ---- the row runner ----
# run NAME TOOL BADFILE REGEX: TOOL is gen (sidecar -o), inj (--inject
# in place), gen2 and inj2 (the same, exit status 2), check (sframe-check --sframe good.v3 ELF), rcheck
# (sframe-check --sframe RAW good), echeck (sframe-check ELF, its own
# .sframe), dump (sframe-dump FILE), stats (sframe-gen --stats -o X, which
# must succeed).
run() {
	local name=$1 tool=$2 bad=$3 re=$4
	local f=$bad out="$T/out" err="$T/err" want=1 where=stderr named
	local -a cmd
	local rc sum0="" sum1="" why=() left
	case $tool in
	gen|gen2)
		rm -f "$T/x.sframe" "$T"/x.sframe.tmp*
		[ $tool = gen2 ] && want=2
		cmd=("$GEN" -o "$T/x.sframe" "$f") ;;
	stats)	rm -f "$T/x.sframe" "$T"/x.sframe.tmp*
		want=0 where=stdout
		cmd=("$GEN" --stats -o "$T/x.sframe" "$f") ;;
	inj|inj2)
		f=$T/inj-$(basename "$bad"); cp "$bad" "$f"
		[ $tool = inj2 ] && want=2
		sum0=$(sha256sum < "$f")
		cmd=("$GEN" --inject "$f") ;;
	check)	cmd=("$CHECK" --sframe "$T/good.v3" "$f") ;;
	rcheck)	cmd=("$CHECK" --sframe "$f" "$T/good") ;;
	echeck)	cmd=("$CHECK" "$f") ;;
	dump)	cmd=("$DUMP" "$f") ;;
	esac
	"${cmd[@]}" > "$out" 2> "$err" < /dev/null
	rc=$?
	[ $rc = $want ] || why+=("exit status $rc, want $want")
	[ $rc -lt 128 ] || why+=("crashed (signal $((rc - 128)))")
	if grep -qE 'Sanitizer|runtime error' "$err"; then
		why+=("sanitizer report:")
		while IFS= read -r l; do why+=("  $l"); done < <(grep -E -m6 'ERROR|runtime error|SUMMARY|#[0-3] ' "$err")
	fi
	named=$err
	[ $where = stdout ] && named=$out
	grep -qF -- "$f" "$named" || why+=("$where doesn't name the file")
	cat "$err" "$out" | grep -qE -- "$re" || why+=("no /$re/ in the output")
	case $tool in
	gen|gen2)
		left=$(ls "$T"/x.sframe* 2>/dev/null)
		[ -z "$left" ] || why+=("left behind: $left") ;;
	inj|inj2)
		sum1=$(sha256sum < "$f")
		[ "$sum0" = "$sum1" ] || why+=("the input was modified in place")
		left=$(ls "$f".tmp* 2>/dev/null)
		[ -z "$left" ] || why+=("left behind: $left") ;;
	stats)	"$DUMP" "$T/x.sframe" > "$T/dump" 2>&1 ||
			why+=("the section written doesn't decode")
		! grep -q 'size = 0 bytes' "$T/dump" ||
			why+=("a zero-size FDE was written") ;;
	esac
	if [ ${#why[@]} = 0 ]; then
		ok "$name ($tool)"
	else
		not_ok "$name ($tool)" "${why[@]}" "command: ${cmd[*]}" \
			"$(sed -n '1,4s/^/stderr: /p' "$err")" \
			"$(grep -E -m2 'offset|doesn.t decode|idx \[' "$out" | sed 's/^/stdout: /')"
	fi
}

# row NAME "MAKE" TOOLS REGEX [TOOL=REGEX...]: MAKE is run by bash with
# $G (good ELF), $G3 (good v3 section), $G2 (good v2), $B (the bad file
# to write); for TOOLS (space-separated) the row expects REGEX, or the
# one given as TOOL=REGEX.  %F in a regex is the bad file's name.
row() {
	local name=$1 make=$2 tools=$3 re=$4 t r x
	shift 4
	local B=$T/bad-$name
	G=$T/good G3=$T/good.v3 G2=$T/good.v2 B=$B O=$T/good.o G32=$T/good32 \
		MK=$MK GEN=$GEN bash -c "$make" > "$T/mk.out" 2>&1
	if [ $? != 0 ] || [ ! -e "$B" ]; then
		not_ok "$name (making the input)" "@$T/mk.out"
		return
	fi
	for t in $tools; do
		r=$re
		for x; do [ "${x%%=*}" = "$t" ] && r=${x#*=}; done
		run "$name" "$t" "$B" "${r//%F/bad-$name}"
	done
}

E="gen inj check"		# tools that read an ELF's .eh_frame
H="gen inj check dump"		# and that read its header
R="dump rcheck"			# tools that read a raw section
x='0x[0-9a-f]+'

# ---- ELF inputs ----
row empty ': > $B' "$H" '%F: offset 0: not an ELF file' \
	dump='%F: offset 0: 0 bytes, shorter than the 28-byte SFrame header'
row 10-bytes 'head -c 10 $G > $B' "$H" '%F: offset 0: not an ELF file'
row ehdr-40 'head -c 40 $G > $B' "$H" '%F: offset 0(x0)?: (bad ELF header|.*too short)'
row elf32 'cp $G32 $B' "$H" '%F: offset 0x4: ELF class 1, only 64-bit'
row big-endian '$MK elf bigendian $G $B' "$H" '%F: offset 0x5: not little-endian'
row aarch64 '$MK elf aarch64 $G $B' "$H" '%F: offset 0x12: machine 183, only x86-64'
row et-rel 'cp $O $B' "$H" '%F: offset 0x10: ELF type 1: only executables and shared objects'
# (sframe-check and sframe-dump don't read program headers)
row phoff-past '$MK elf phoff-past $G $B' "gen inj" \
	"%F: (offset 0x20|.*e_phoff).*(program header|past|EOF|end of file)"
row shoff-past '$MK elf shoff-past $G $B' "$H" \
	"%F: (offset 0x28|.*e_shoff).*(section header|past|EOF|end of file)"
row shstrndx '$MK elf shstrndx $G $B' "$H" \
	"%F: (offset 0x3e|.*e_shstrndx).*(out of range|section name)"
row ehframe-past '$MK elf ehframe-past $G $B' "$E" \
	"%F: .eh_frame at file offset $x: can't read $x bytes"
row ehframe-trunc '$MK elf ehframe-trunc $G $B' "$E" \
	"%F: .eh_frame offset $x \\(file offset $x\\): "
row cie-version-99 '$MK elf cie-version $G $B' "$E" \
	"%F: .eh_frame offset $x \\(file offset $x\\): "
row cie-augmentation '$MK elf cie-aug $G $B' "$E" \
	"%F: .eh_frame offset $x \\(file offset $x\\): "
row fde-cie-nowhere '$MK elf fde-cie-nowhere $G $B' "$E" \
	"%F: .eh_frame offset $x \\(file offset $x\\): "
row fde-range-ffffffff '$MK elf fde-huge $G $B' "$E" \
	"%F: .eh_frame offset $x \\(file offset $x\\): .*(range|past|outside)"
row fde-encoding-0f '$MK elf enc-0f $G $B' "$E" \
	"%F: .eh_frame offset $x \\(file offset $x\\): FDE address range unreadable \\(encoding 0x0f\\)"
row fde-encoding-70 '$MK elf enc-70 $G $B' "$E" \
	"%F: .eh_frame offset $x \\(file offset $x\\): FDE address range unreadable \\(encoding 0x70\\)"
# (sframe-check compares these rows like any other: mismatches, exit 1)
row fde-overlap '$MK elf fde-overlap $G $B' "gen inj" \
	"%F: .eh_frame offset $x \\(file offset $x\\): .*overlap"
# A zero-size FDE is not malformed: lld keeps the one gcc emits for a
# function of no bytes ('void f(void) { __builtin_unreachable(); }'), so
# failing would refuse real binaries.  There is nothing to describe: it is
# left out and counted like other code SFrame doesn't cover.
row fde-zero-size '$MK elf fde-zero $G $B' "stats" \
	"%F: left out: 1 x zero-size FDE \\(0 bytes, first at $x\\)"
row no-eh-frame '$MK elf no-eh-frame $G $B' "gen2 inj2 check" \
	'%F: no .eh_frame FDEs: nothing to describe, nothing written' \
	check='%F: no .eh_frame'
row text-not-executable '$MK elf text-noexec $G $B' "gen inj" \
	'%F: .*(executable|PF_X|text)'
row elf-sframe-bad-magic '$MK elf sframe-magic $G $B' "dump echeck" \
	"%F: .sframe \\(file offset $x\\) offset 0: bad magic" \
	echeck="%F: .*offset 0: bad magic"

# ---- raw sections (sframe-dump RAW, sframe-check --sframe RAW ELF) ----
row sf-bad-magic '$MK sec magic $G3 $B' "$R" '%F: offset 0: bad magic 0xbeef'
row sf-version-1 '$MK sec version1 $G3 $B' "$R" '%F: offset 2: SFrame version 1 .*obsolete'
row sf-version-4 '$MK sec version4 $G3 $B' "$R" '%F: offset 2: SFrame version 4'
row sf-flags-80 '$MK sec flags80 $G3 $B' "$R" '%F: offset 3: unknown flags 0x80'
row sf-abi-1 '$MK sec abi1 $G3 $B' "$R" '%F: offset 4: ABI/arch 1, not amd64'
row sf-ra-offset-16 '$MK sec ra16 $G3 $B' "$R" '%F: offset 6: fixed RA offset -16'
row sf-num-fdes-ffffffff '$MK sec num-fdes $G3 $B' "$R" '%F: offset 8: 4294967295 FDEs .* past the section'
row sf-fdes-off-past '$MK sec fdes-off $G3 $B' "$R" '%F: offset 8: [0-9]+ FDEs at offset 0x[0-9a-f]+ end .* past the section'
row sf-fre-len-past '$MK sec fre-len $G3 $B' "$R" '%F: offset 16: [0-9]+ bytes of FREs .* past the section'
row sf-index-over-fres '$MK sec index-overlap $G3 $B' "$R" '%F: offset 20: FDE index .* overlaps the FREs'
row sf-fre-off-past '$MK sec fre-off-past $G3 $B' "$R" "offset $x: FDE 1's attribute at FRE offset $x is past the FREs"
row sf-num-fres-65535 '$MK sec num-fres $G3 $B' "$R" "offset $x: FDE 0: 65535 FREs can't fit"
row sf-fre-type-3 '$MK sec fre-type3 $G3 $B' "$R" "offset $x: FDE 0: FRE type 3 is reserved"
row sf-word-size-3 '$MK sec wsize3 $G3 $B' "$R" "offset $x: FRE word size code 3 is reserved"
row sf-default-3-words '$MK sec default-3words $G3 $B' "$R" "offset $x: 3 data words in a DEFAULT amd64 FRE"
row sf-flex-ctl-bit2 '$MK sec flex-bit2 $G3 $B' "$R" "offset $x: FLEX FRE 0: bad control word 0x[0-9a-f]+ for the CFA"
row sf-flex-cfa-padding '$MK sec flex-cfa-pad $G3 $B' "$R" "offset $x: FLEX FRE 0 has no CFA rule"
row sf-rows-not-ascending '$MK sec rows-order $G3 $B' "$R" "offset $x: .*FRE 1 starts at 0x0, not after FRE 0"
row sf-row-past-size '$MK sec row-past $G3 $B' "$R" "offset $x: .*FRE 1 starts at $x, past the function size"
row sf-mask-rep-size-0 '$MK sec mask-set-rep0 $G3 $B' "$R" "offset $x: FDE 0: PC type MASK with rep_size 0"
row sf-v2-pauth '$MK sec pauth $G2 $B' "$R" "offset $x: FDE 0: pauth key bit set"
row sf-fdes-overlap '$MK sec fde-overlap $G3 $B' "rcheck" "%F: FDE 2 at $x overlaps or precedes FDE 1"
row sf-v2-fdes-overlap '$MK sec fde-overlap $G2 $B' "rcheck" "%F: FDE 2 at $x overlaps or precedes FDE 1"
# the header rules the kernel has too (sframe-hdr.c)
row sf-no-fdes '$MK sec no-fdes $G3 $B' "$R" '%F: offset 8: no FDEs'
row sf-not-sorted '$MK sec unsorted $G3 $B' "$R" '%F: offset 3: FDEs not sorted'
row sf-fp-offset-8 '$MK sec fp8 $G3 $B' "$R" '%F: offset 5: fixed FP offset 8, amd64 has none'
row sf-num-fres-total '$MK sec num-fres-total $G3 $B' "$R" "%F: offset 12: [0-9]+ FREs can't fit in [0-9]+ bytes"

# ---- sidecars (sframe-gen's header + section) ----
row sc-truncated '$GEN -o $B.full $G && head -c 300 $B.full > $B' "$R" \
	'%F: offset 20: a section of [0-9]+ bytes, but 204 follow the header'
row sc-identity-kind '$GEN -o $B $G && printf "\\011" | dd of=$B bs=1 seek=12 conv=notrunc status=none' \
	"$R" '%F: offset 12: unknown identity kind 9'
row sc-reserved '$GEN -o $B $G && printf "\\001" | dd of=$B bs=1 seek=90 conv=notrunc status=none' \
	"$R" '%F: offset 90: reserved byte is not zero'
row sc-other-object '$GEN -o $B /bin/true' "rcheck" \
	'%F: sidecar of another object \(build ID [0-9a-f]+; .*good is build ID [0-9a-f]+\)'
