#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sframe-gen, sframe-dump and sframe-check on the host:
#  - the decoder prints binutils 2.46's own v3 data exactly as objdump does;
#  - the generator, from the same binaries' .eh_frame, gives binutils' rows
#    (every difference is listed and checked against .eh_frame);
#  - generate -> dump -> check, v3, v2 and v2 section-relative, on programs
#    built here without frame pointers and on the system's libraries: zero
#    mismatches, and the coverage;
#  - the checker catches a wrong CFA, FP, function start and a dropped row;
#  - injected output runs, is checked from its own .sframe, replaces a v1
#    section;
#  - nothing to describe (no .eh_frame, an empty one, only a CIE, no FDE
#    SFrame can say): exit status 2, nothing written;
#  - a function of 100000 rows: done in one pass, cut at 65535 rows;
#  - the test workloads built without frame pointers got their SFrame
#    from sframe-gen (tests/workloads/Makefile): each is the version it
#    says, carries PT_GNU_SFRAME, agrees with its .eh_frame and runs.
# The tools are make sframe-tools' ($BUILD_DIR/sframe-tools).

set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=$SFRAME_TOOLS
HERE=$REPO/tests/sframe
VEC=${VECTORS:-$REPO/tests/vectors}
GEN=$OUT/sframe-gen DUMP=$OUT/sframe-dump CHECK=$OUT/sframe-check
T=$HT

# ---- 1. the decoder against objdump 2.46 -------------------------------------
for v in vec_shapes vec_drap libvec.so vec_plt; do
	(cd "$VEC" && "$DUMP" "$v") > "$T/$v.dump" 2>&1
	if cmp -s "$T/$v.dump" "$VEC/$v.sframe.txt"; then
		ok "dump $v = objdump --sframe 2.46"
	else
		not_ok "dump $v = objdump --sframe 2.46" "$(diff "$VEC/$v.sframe.txt" "$T/$v.dump" | head -20)"
	fi
	addr=$(readelf -SW "$VEC/$v" | sed -n 's/.*\] \.sframe  *[^ ]*  *\([0-9a-f]*\) .*/0x\1/p')
	"$DUMP" --vaddr "$addr" "$VEC/$v.sframe.bin" | tail -n +4 > "$T/$v.rawdump"
	if cmp -s "$T/$v.rawdump" <(tail -n +4 "$VEC/$v.sframe.txt"); then
		ok "dump raw $v.sframe.bin at $addr = objdump"
	else
		not_ok "dump raw $v.sframe.bin at $addr = objdump" "$(diff <(tail -n +4 "$VEC/$v.sframe.txt") "$T/$v.rawdump" | head)"
	fi
done

# ---- 2. the generator against binutils 2.46 ----------------------------------
# FDE blocks of a dump, keyed by "pc = ...".  What we produce and binutils
# doesn't: _start (crt1.o, assembled without --gsframe: an outermost FDE
# here).  What differs: .plt.got, where binutils says CFA = rsp+16 while
# .eh_frame (and the code: a jmp reached by a call) says rsp+8; the checker
# must find exactly that disagreement in binutils' own section.
cat > "$T/cmp.py" <<'EOF'
import re, sys
def blocks(path):
    txt = open(path).read().split("Function Index :", 1)[1]
    out = {}
    for b in txt.strip("\n").split("\n\n"):
        lines = b.strip("\n").split("\n")
        m = re.search(r"pc = (0x[0-9a-f]+), size = (\d+)", lines[0])
        attr = lines[0].split("bytes", 1)[1]
        out[int(m.group(1), 16)] = (m.group(2), "\n".join(lines[1:]), attr)
    return out
ref, ours = blocks(sys.argv[1]), blocks(sys.argv[2])
expect_extra = set(int(x, 16) for x in sys.argv[3].split(",") if x)
expect_diff = set(int(x, 16) for x in sys.argv[4].split(",") if x)
bad = []
for pc, b in ref.items():
    if pc in expect_diff:
        if ours.get(pc) == b:
            bad.append("0x%x: expected to differ, same" % pc)
        continue
    if ours.get(pc) != b:
        bad.append("0x%x differs:\n%s\n--- ours:\n%s" % (pc, b[1], ours.get(pc, ("", "(missing)"))[1]))
extra = set(ours) - set(ref)
if extra != expect_extra:
    bad.append("extra FDEs %s, expected %s" % (sorted(map(hex, extra)), sorted(map(hex, expect_extra))))
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
start_of() { nm "$1" | awk '$3 == "_start" { print "0x" $1 }' | sed 's/0x0*/0x/'; }
pltgot_of() { readelf -SW "$1" | sed -n 's/.*\] \.plt\.got  *[A-Z]*  *0*\([0-9a-f]*\) .*/0x\1/p'; }
for v in vec_shapes vec_drap libvec.so vec_plt; do
	"$GEN" -o "$T/$v.gen" "$VEC/$v" 2> "$T/err" || { not_ok "gen $v" "$(cat "$T/err")"; continue; }
	"$DUMP" "$T/$v.gen" > "$T/$v.gendump"
	extra=$(start_of "$VEC/$v")
	diffs=$(pltgot_of "$VEC/$v")
	if msg=$(python3 "$T/cmp.py" "$VEC/$v.sframe.txt" "$T/$v.gendump" "$extra" "$diffs"); then
		ok "gen $v: binutils 2.46's rows (+_start ${extra:-none}, .plt.got ${diffs:-none} from .eh_frame)"
	else
		not_ok "gen $v: binutils 2.46's rows" "$msg"
	fi
	# binutils' .plt.got FDE disagrees with .eh_frame: exactly its 8 bytes
	"$CHECK" -n 100 "$VEC/$v" > "$T/chk" 2>&1
	n=$(grep -c MISMATCH "$T/chk")
	nplt=$(grep -c 'MISMATCH at 0x[0-9a-f]* (.plt.got+0x[0-7]): CFA' "$T/chk")
	if [ -n "$diffs" ] && [ "$n" = 8 ] && [ "$nplt" = 8 ]; then
		ok "check $v's own (binutils) .sframe: only its .plt.got disagrees with .eh_frame (8 addresses)"
	else
		not_ok "check $v's own (binutils) .sframe: only .plt.got disagrees" "$n mismatches, $nplt in .plt.got" "$(head -5 "$T/chk")"
	fi
done

# ---- 3. round trip on programs without frame pointers and system libraries ----
cc() { gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls "$@"; }
cc -o "$T/chain" "$REPO/tests/workloads/chain.c"
cc -o "$T/shapes" "$VEC/vec_shapes.c"
cc -mstackrealign -o "$T/drap" "$VEC/vec_drap.c"
cc -fPIC -shared -o "$T/libvec.so" "$VEC/libvec.c"
cat > "$T/sig.c" <<'EOF'
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
volatile int got;
static void handler(int s) { got = s; }
int main(void)
{
	signal(SIGALRM, handler);
	alarm(1);
	while (!got)
		;
	return 0;
}
EOF
cc -o "$T/sig" "$T/sig.c"
cc -m32 -o "$T/chain32" "$REPO/tests/workloads/chain.c" 2> /dev/null

libs=()
for l in libc.so.6 ld-linux-x86-64.so.2 libm.so.6 libpthread.so.0 libgcc_s.so.1 libstdc++.so.6 libz.so.1 liblzma.so.5; do
	p=$(ldconfig -p | awk -v l="$l" '$1 == l && /x86-64/ { print $NF; exit }')
	[ -n "$p" ] && libs+=("$(readlink -f "$p")")
done
for f in "$T/chain" "$T/shapes" "$T/drap" "$T/libvec.so" "$T/sig" "${libs[@]}" /usr/bin/python3 /usr/bin/xz /usr/bin/sort; do
	b=$(basename "$f")
	for mode in "-V3" "-V2" "-V2 --no-pcrel"; do
		tag="${mode// /}"
		# shellcheck disable=SC2086
		if ! "$GEN" $mode -s -o "$T/$b$tag.sf" "$f" > "$T/stats" 2> "$T/err"; then
			not_ok "gen $mode $b" "$(cat "$T/err")"
			continue
		fi
		if ! "$DUMP" "$T/$b$tag.sf" > /dev/null 2> "$T/err"; then
			not_ok "dump $mode $b" "$(cat "$T/err")"
			continue
		fi
		if "$CHECK" --sframe "$T/$b$tag.sf" "$f" > "$T/chk" 2>&1; then
			ok "gen $mode -> dump -> check $b: $(grep -o '[0-9]* mismatches' "$T/chk"), $(sed -n 's/.*: text \([0-9]*\) bytes: SFrame covers [0-9]* (\([0-9.]*%\)).*/\2 of \1 text bytes/p' "$T/chk"), functions $(sed -n 's/.*functions ([^)]*): \([0-9]*\), covered [0-9]* (\([0-9.]*%\)).*/\2 of \1/p' "$T/chk")"
		else
			not_ok "gen $mode -> dump -> check $b" "$(head -12 "$T/chk")"
		fi
		[ "$tag" = -V3 ] && grep 'left out\|not or partly' "$T/stats" "$T/chk" | sed 's/^[^:]*:/    # /'
	done
done
# our own programs: every function covered in v3
for b in chain shapes drap libvec.so sig; do
	if grep -q 'functions (.symtab): \([0-9]*\), covered \1 ' <("$CHECK" --sframe "$T/$b-V3.sf" "$T/$b"); then
		ok "v3 covers every function of $b"
	else
		not_ok "v3 covers every function of $b" "$("$CHECK" -v --sframe "$T/$b-V3.sf" "$T/$b" | tail -5)"
	fi
done
# v2 can't say DRAP: the generator leaves it out, and says so
if "$GEN" -V2 -s -o "$T/d2" "$T/drap" | grep 'left out: 1 x needs a FLEX FDE (SFrame v3 only)' > /dev/null; then
	ok "v2: the DRAP function is left out and counted"
else
	not_ok "v2: the DRAP function is left out and counted" "$("$GEN" -V2 -s -o "$T/d2" "$T/drap")"
fi
# libc's signal trampoline: a signal FDE in v3, left out in v2
"$DUMP" "$T/libc.so.6-V3.sf" > "$T/libc.dump" 2>&1
if grep -q 'attr = "SF"' "$T/libc.dump"; then
	ok "libc's __restore_rt: a signal-frame FLEX FDE (attr SF)"
else
	not_ok "libc's __restore_rt: a signal-frame FLEX FDE"
fi
if [ -f "$T/chain32" ]; then
	"$GEN" -o "$T/x" "$T/chain32" 2> "$T/err"
	if [ $? = 1 ] && grep -q "chain32: offset 0x4: ELF class 1, only 64-bit" "$T/err" && [ ! -e "$T/x" ]; then
		ok "gen refuses a 32-bit program, naming file and offset, writes nothing"
	else
		not_ok "gen refuses a 32-bit program" "$(cat "$T/err")"
	fi
fi

# ---- 4. the checker catches wrong data -----------------------------------------
# mutate.py IN OUT WHAT: patch a v3 sidecar (vaddr 0) produced above
cat > "$T/mutate.py" <<'EOF'
import struct, sys
raw = open(sys.argv[1], "rb").read()
hdr = raw[:96] if raw[:8] == b"SFRMSIDE" else b""
d = bytearray(raw[len(hdr):])
what = sys.argv[3]
nf, nfre, frelen, fdeoff, freoff = struct.unpack_from("<IIIII", d, 8)
H = 28 + d[7]
order = range(nf) if what != "start" else [nf - 1]
for i in order:
    e = H + fdeoff + 16 * i
    start, size, fo = struct.unpack_from("<qII", d, e)
    a = H + freoff + fo
    n, info, info2, rep = struct.unpack_from("<HBBB", d, a)
    if what == "start":
        struct.pack_into("<q", d, e, start + 1)
        print("0x%x" % (e + start + 1))
        break
    if info2 != 0 or (info >> 4) & 1 or n < 2:
        continue
    ss = [1, 2, 4][info & 0xf]
    p = a + 5
    rows = []
    for j in range(n):
        s = int.from_bytes(d[p:p + ss], "little")
        fi = d[p + ss]
        nw, ws = (fi >> 1) & 0xf, 1 << ((fi >> 5) & 3)
        rows.append((p, s, fi, nw, ws))
        p += ss + 1 + nw * ws
    if what == "cfa":
        p, s, fi, nw, ws = rows[1]
        d[p + ss + 1] = (d[p + ss + 1] + 8) & 0xff
        print("0x%x" % (e + start + s))
        break
    if what == "fp":
        r = [r for r in rows if r[3] == 2]
        if not r:
            continue
        p, s, fi, nw, ws = r[0]
        d[p + ss + 1 + ws] = (d[p + ss + 1 + ws] - 8) & 0xff
        print("0x%x" % (e + start + s))
        break
    if what == "start":
        struct.pack_into("<q", d, e, start + 1)
        print("0x%x" % (e + start + 1))
        break
    if what == "row":
        # drop row 1: its start becomes row 2's (or the function's end)
        p, s, fi, nw, ws = rows[1]
        nxt = rows[2][1] if n > 2 else size - 1
        d[p:p + ss] = nxt.to_bytes(ss, "little") if nxt > s else d[p:p + ss]
        print("0x%x" % (e + start + s))
        break
open(sys.argv[2], "wb").write(hdr + d)
EOF
for what in cfa fp start row; do
	at=$(python3 "$T/mutate.py" "$T/chain-V3.sf" "$T/bad-$what.sf" $what)
	"$CHECK" --sframe "$T/bad-$what.sf" "$T/chain" > "$T/chk" 2>&1
	rc=$?
	case $what in
	cfa) want="MISMATCH at $at (.*): CFA" ;;
	fp) want="MISMATCH at $at (.*): FP" ;;
	start) want="MISMATCH at $at (.*): SFrame FDE covers code without .eh_frame" ;;
	row) want="MISMATCH at $at (.*): CFA" ;;
	esac
	if [ $rc = 1 ] && [ -n "$at" ] && grep -q "$want" "$T/chk"; then
		ok "check catches a wrong $what (at $at)"
	else
		not_ok "check catches a wrong $what (at ${at:-?})" "exit $rc, want /$want/" "$(head -4 "$T/chk")"
	fi
done

# ---- 5. injection --------------------------------------------------------------
check "inject v3 into chain (PIE, no frame pointers)" "$GEN" --inject -o "$T/chain.inj" "$T/chain"
check "the injected program runs" "$T/chain.inj" 10
check "check the injected program from its own .sframe" "$CHECK" "$T/chain.inj"
if readelf -lW "$T/chain.inj" | grep -E '(GNU_SFRAME|LOOS\+0x474e554) .* R +0x8$' > /dev/null; then
	ok "PT_GNU_SFRAME in the injected program"
else
	not_ok "PT_GNU_SFRAME in the injected program" "$(readelf -lW "$T/chain.inj" | grep -A20 'Program Headers')"
fi
# an obsolete v1 section (binutils 2.40 --gsframe) is replaced
if gcc -O2 -fomit-frame-pointer -Wa,--gsframe -o "$T/v1" "$REPO/tests/workloads/chain.c" 2> /dev/null; then
	"$DUMP" "$T/v1" > "$T/v1.dump" 2>&1
	if grep -q 'SFrame version 1 (only 2 and 3 are supported; v1 is obsolete)' "$T/v1.dump"; then
		ok "dump refuses v1 with a clear reason"
	else
		not_ok "dump refuses v1 with a clear reason" "$(cat "$T/v1.dump")"
	fi
	cp "$T/v1" "$T/v1.orig"
	if "$GEN" --inject "$T/v1" 2> "$T/err" && "$T/v1" 5 &&
	   "$DUMP" "$T/v1" | grep 'SFRAME_VERSION_3' > /dev/null && "$CHECK" "$T/v1" > /dev/null &&
	   [ "$(readelf -lW "$T/v1" | grep -cE 'GNU_SFRAME|LOOS\+0x474e554')" = 1 ]; then
		ok "inject in place replaces binutils 2.40's v1 .sframe with v3, one PT_GNU_SFRAME"
	else
		not_ok "inject in place replaces a v1 .sframe" "$(cat "$T/err")" "$(readelf -lW "$T/v1" | grep -E 'SFRAME|LOOS')"
	fi
	if "$GEN" -V2 --inject "$T/v1" && "$DUMP" "$T/v1" | grep SFRAME_VERSION_2 > /dev/null && "$CHECK" "$T/v1" > /dev/null; then
		ok "re-inject v2 over our own v3"
	else
		not_ok "re-inject v2 over our own v3"
	fi
else
	not_ok "gcc -Wa,--gsframe builds (binutils >= 2.40)"
fi

# ---- 6. options -----------------------------------------------------------------
"$GEN" -V3 --no-pcrel -o "$T/x" "$T/chain" 2> "$T/err"
if [ $? = 1 ] && grep -q -- '--no-pcrel needs --sframe-version 2' "$T/err"; then
	ok "gen: --no-pcrel with v3 is an error"
else
	not_ok "gen: --no-pcrel with v3 is an error" "$(cat "$T/err")"
fi
"$GEN" -V 4 "$T/chain" 2> "$T/err"
if [ $? = 1 ] && grep -q -- '--sframe-version 4: only 2 and 3' "$T/err"; then
	ok "gen: -V 4 is an error"
else
	not_ok "gen: -V 4 is an error" "$(cat "$T/err")"
fi
if "$GEN" --help | grep -- '--inject' > /dev/null && "$DUMP" --help | grep 'STARTPC' > /dev/null && "$CHECK" --help | grep 'coverage' > /dev/null; then
	ok "--help of the three tools"
else
	not_ok "--help of the three tools"
fi

# ---- 7. nothing to describe: exit status 2, nothing written ----------------------
# A program without CFI; the same with an empty .eh_frame, and with one that
# holds a CIE and no FDE; one whose only FDE SFrame can't say.
cat > "$T/noeh.s" <<'EOF'
	.globl _start
_start:
	mov $60, %eax
	xor %edi, %edi
	syscall
EOF
cat > "$T/unsayable.s" <<'EOF'
	.globl _start
_start:
	.cfi_startproc
	.cfi_escape 0x0f, 0x04, 0x77, 0x08, 0x31, 0x22	/* CFA = rsp + 8 + 1 */
	mov $60, %eax
	xor %edi, %edi
	syscall
	.cfi_endproc
EOF
# CIE (length 0x14, "zR", caf 1, daf -8, RA 16, pcrel|sdata4, def_cfa rsp+8,
# offset rip cfa-8, 2 nops), then the terminator
printf '\x14\0\0\0\0\0\0\0\x01zR\0\x01\x78\x10\x01\x1b\x0c\x07\x08\x90\x01\0\0\0\0\0\0' > "$T/cie.bin"
: > "$T/empty.bin"
gcc -nostdlib -static -o "$T/noeh" "$T/noeh.s" &&
objcopy --add-section .eh_frame="$T/empty.bin" "$T/noeh" "$T/eh-empty" &&
objcopy --add-section .eh_frame="$T/cie.bin" "$T/noeh" "$T/eh-cie" &&
gcc -nostdlib -static -o "$T/unsayable" "$T/unsayable.s" ||
	not_ok "build the inputs without FDEs"
if readelf -SW "$T/noeh" | grep -q '\.eh_frame' ||
   ! readelf -SW "$T/eh-empty" | grep -q '\.eh_frame .* 000000 ' ||
   [ "$(readelf -wf "$T/eh-cie" | grep -c 'CIE\|FDE')" != 1 ]; then
	not_ok "inputs: no .eh_frame, an empty one, one CIE" \
		"$(readelf -SW "$T/eh-empty" | grep eh_frame)" "$(readelf -wf "$T/eh-cie")"
fi
# nothing FILE MESSAGE: sidecar, --inject in place and -o: exit 2, MESSAGE,
# nothing written
nothing() {
	local f=$1 want=$2 what rc left
	for what in sidecar inject inject-o; do
		rm -f "$T/none.out"* "$f".sframe* "$f".tmp*
		cp "$f" "$T/none.orig"
		case $what in
		sidecar) "$GEN" "$f" > "$T/out" 2> "$T/err";;
		inject) "$GEN" --inject "$f" > "$T/out" 2> "$T/err";;
		inject-o) "$GEN" --inject -o "$T/none.out" "$f" > "$T/out" 2> "$T/err";;
		esac
		rc=$?
		left=$(ls "$f".sframe* "$f".tmp* "$T/none.out"* 2> /dev/null)
		if [ $rc = 2 ] && [ "$(cat "$T/err")" = "sframe-gen: $f: $want" ] &&
		   [ -z "$left" ] && cmp -s "$f" "$T/none.orig"; then
			ok "gen $what $(basename "$f"): exit 2, '$want'"
		else
			not_ok "gen $what $(basename "$f"): exit 2, '$want'" \
				"exit $rc" "$(cat "$T/err")" "left: $left"
		fi
	done
}
for f in noeh eh-empty eh-cie; do
	nothing "$T/$f" "no .eh_frame FDEs: nothing to describe, nothing written"
done
nothing "$T/unsayable" "none of its 1 .eh_frame FDEs can be said in SFrame v3 (--stats says why): nothing written"
"$GEN" -s "$T/unsayable" > "$T/out" 2> /dev/null
if grep -q "left out: 1 x CFA expression SFrame can't express" "$T/out"; then
	ok "gen -s says why nothing of unsayable is written"
else
	not_ok "gen -s says why nothing of unsayable is written" "$(cat "$T/out")"
fi

# ---- 8. 100000 rows: one pass over the CFA program, at most 65535 rows -----------
# libdw's dwarf_cfi_addrframe() runs an FDE's program from its start for each
# row: 25 s for this one.  The timeout only guards against a hang.
cat > "$T/rows.s" <<'EOF'
	.globl _start
	.type _start, @function
_start:
	.cfi_startproc
	.rept 50000
	push %rbx
	.cfi_adjust_cfa_offset 8
	pop %rbx
	.cfi_adjust_cfa_offset -8
	.endr
	mov $60, %eax
	xor %edi, %edi
	syscall
	.cfi_endproc
	.size _start, .-_start
EOF
gcc -nostdlib -static -o "$T/rows" "$T/rows.s"
read -r start size <<< "$(nm -S "$T/rows" | awk '$4 == "_start" { print "0x" $1, "0x" $2 }')"
nrows=$(readelf -wf "$T/rows" | grep -c 'DW_CFA_advance_loc')
if [ "$nrows" != 100000 ] || [ -z "$size" ]; then
	not_ok "rows: 100000 rows in _start's FDE" "$nrows rows, _start at ${start:-?} size ${size:-?}"
fi
if timeout 30 "$GEN" -s -o "$T/rows.sf" "$T/rows" > "$T/stats" 2> "$T/err"; then
	ok "gen: a function of $nrows rows within the timeout"
else
	not_ok "gen: a function of $nrows rows within the timeout" "exit $?" "$(cat "$T/err")"
fi
"$DUMP" "$T/rows.sf" > "$T/rows.dump" 2>&1
got=$(grep -c '^    [0-9a-f]\{16\}  ' "$T/rows.dump")
if grep -q "Num FREs: 65535$" "$T/rows.dump" && [ "$got" = 65535 ] &&
   grep -q "func idx \[0\]: pc = $(printf 0x%x $((start))), size = 65535 bytes" "$T/rows.dump"; then
	ok "rows: the SFrame function has 65535 rows (the most v3's num_fres holds)"
else
	not_ok "rows: the SFrame function has 65535 rows" "$got rows" "$(sed -n 1,20p "$T/rows.dump")"
fi
want="$T/rows: left out: 1 x too many rows or offsets too large for the format ($((size - 65535)) bytes, first at $(printf 0x%x $((start + 65535))))"
if grep -qxF "$want" "$T/stats"; then
	ok "rows: --stats counts the other $((size - 65535)) bytes as left out for too many rows"
else
	not_ok "rows: --stats counts the rest as left out for too many rows" "want: $want" "$(cat "$T/stats")"
fi
if "$CHECK" --sframe "$T/rows.sf" "$T/rows" > "$T/chk" 2>&1 && grep -q ': 0 mismatches' "$T/chk"; then
	ok "rows: check: $(grep -o '[0-9]* addresses.*mismatches' "$T/chk")"
else
	not_ok "rows: check: 0 mismatches" "$(head -5 "$T/chk")"
fi

# ---- 9. sidecar header: the object's identity; --raw without it ---------------
bid=$(readelf -n "$T/chain" | sed -n 's/.*Build ID: //p')
if [ -n "$bid" ] && [ "$(head -c 8 "$T/chain-V3.sf")" = SFRMSIDE ] &&
   [ "$(od -An -tx1 -j24 -N20 "$T/chain-V3.sf" | tr -d ' \n')" = "$bid" ] &&
   "$DUMP" "$T/chain-V3.sf" | grep -q "SFrame sidecar of build ID $bid, section at 0x0"; then
	ok "sidecar header: magic and chain's build ID $bid, named by sframe-dump"
else
	not_ok "sidecar header: magic and chain's build ID" "build ID '$bid'" "$(od -Ax -tx1 -N48 "$T/chain-V3.sf")"
fi
"$GEN" --raw -o "$T/chain.raw" "$T/chain" 2> "$T/err"
if cmp -s "$T/chain.raw" <(tail -c +97 "$T/chain-V3.sf"); then
	ok "--raw: the sidecar's section without its header"
else
	not_ok "--raw: the sidecar's section without its header" "$(cat "$T/err")"
fi
if ! "$GEN" --raw --inject -o "$T/raw.inj" "$T/chain" 2> "$T/err" &&
   grep -q -- "--raw is for sidecars" "$T/err" && [ ! -e "$T/raw.inj" ]; then
	ok "--raw --inject refused"
else
	not_ok "--raw --inject refused" "$(cat "$T/err")"
fi
cc -O2 -shared -fPIC -Wl,--build-id=none -o "$T/nobid.so" "$HERE/libloop-c.c"
"$GEN" -o "$T/nobid.so.sframe" "$T/nobid.so" 2> "$T/err"
if "$DUMP" "$T/nobid.so.sframe" | grep -q "SFrame sidecar of .eh_frame hash [0-9a-f]\{16\}," &&
   "$CHECK" --sframe "$T/nobid.so.sframe" "$T/nobid.so" > /dev/null &&
   ! "$CHECK" --sframe "$T/nobid.so.sframe" "$T/libvec.so" > "$T/chk" 2>&1 &&
   grep -q "sidecar of another object" "$T/chk"; then
	ok "no build ID: identity is the .eh_frame hash; checked against the object, another refused"
else
	not_ok "no build ID: .eh_frame hash identity" "$(cat "$T/err" "$T/chk")"
fi
cc -O2 -shared -fPIC -Wl,--build-id=none,--no-eh-frame-hdr -o "$T/noid.so" "$HERE/libloop-c.c"
if ! "$GEN" -o "$T/noid.so.sframe" "$T/noid.so" 2> "$T/err" &&
   grep -q "no build ID and no PT_GNU_EH_FRAME: a sidecar can't be tied to it (use --inject)" "$T/err" &&
   [ ! -e "$T/noid.so.sframe" ]; then
	ok "neither build ID nor PT_GNU_EH_FRAME: no sidecar, the message says why"
else
	not_ok "neither build ID nor PT_GNU_EH_FRAME: no sidecar" "$(cat "$T/err")"
fi

# ---- 10. the test workloads' SFrame --------------------------------------------
check_workload() {
	local f=$WORKLOADS/$1 version=$2 flags=$3

	readelf -lW "$f" | grep -q GNU_SFRAME || { echo "$f: no PT_GNU_SFRAME"; return 1; }
	"$DUMP" "$f" > "$HT/dump" || return 1
	grep -q "Version: SFRAME_VERSION_$version\$" "$HT/dump" ||
		{ echo "$f: not SFrame v$version"; head "$HT/dump"; return 1; }
	if [ "$flags" = pcrel ]; then
		grep -q SFRAME_F_FDE_FUNC_START_PCREL "$HT/dump"
	else
		! grep -q SFRAME_F_FDE_FUNC_START_PCREL "$HT/dump"
	fi || { echo "$f: start encoding is not $flags"; return 1; }
	"$CHECK" "$f" || return 1
	"$f" 10 > /dev/null
}
for w in "chain-sframe3 3 pcrel" "chain-sframe2 2 pcrel" "chain-sframe2s 2 section-relative"; do
	set -- $w
	expect "workload $1: SFrame v$2 ($3) injected, 0 mismatches against .eh_frame, runs" 0 \
		" 0 mismatches$" -- check_workload "$@"
done
