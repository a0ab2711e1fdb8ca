#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# mkcorpus.sh OUTDIR - seed corpora for the fuzzers (kept small, < 2 MB):
#   OUTDIR/elf/      ELF files for fuzz-elf: the shared vectors, /bin/true,
#                    small programs built here (frame pointer or not, a
#                    shared library, -mstackrealign, hand-written CFI with
#                    a signal frame and expressions, a static no-libc one,
#                    one with a v1 .sframe from as, one with an injected
#                    v3 .sframe, a 32-bit one)
#   OUTDIR/sframe/   raw sections for fuzz-sframe, each behind its 8-byte
#                    little-endian vaddr: the vectors' *.sframe.bin at
#                    their section address, sframe-gen's sidecars (v3, v2,
#                    v2 --no-pcrel) of the ELFs above at 0
# Env: SFRAME_GEN (default: sframe-gen in PATH), VECTORS (default: the
# repository's tests/vectors), CC (default gcc).
set -eu

out=${1:?usage: mkcorpus.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
gen=${SFRAME_GEN:-sframe-gen}
vec=${VECTORS:-$here/../../../tests/vectors}
cc=${CC:-gcc}
case $cc in cc|gcc|*/gcc|gcc-*) ;; *) cc=gcc ;; esac

mkdir -p "$out/elf" "$out/sframe"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# ---- ELF seeds ----
if [ -d "$vec" ]; then
	for f in vec_shapes vec_drap vec_plt libvec.so; do
		[ -f "$vec/$f" ] && cp "$vec/$f" "$out/elf/vector-$f"
	done
else
	echo "mkcorpus: no vectors at $vec, skipped" >&2
fi
[ -f /bin/true ] && cp /bin/true "$out/elf/bin-true"

cat > "$tmp/prog.c" <<'EOF'
#include <alloca.h>
#include <setjmp.h>
#include <stdarg.h>
#include <string.h>
volatile int sink;
static jmp_buf jb;
__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }
__attribute__((noinline)) int frame(int n) {
	volatile char b[200]; memset((char *)b, n, sizeof(b)); return b[n & 127];
}
__attribute__((noinline)) int dyn(int n) {
	char *p = alloca(n + 16); memset(p, 1, n + 16); return p[n];
}
__attribute__((noinline)) int rec(int n) { return n < 2 ? n : rec(n - 1) + rec(n - 2); }
__attribute__((noinline)) int va(int n, ...) {
	va_list ap; int s = 0; va_start(ap, n);
	while (n--) s += va_arg(ap, int);
	va_end(ap); return s;
}
__attribute__((noinline)) void jump(int v) { longjmp(jb, v); }
int main(int argc, char **argv) {
	(void)argv;
	if (setjmp(jb)) return sink;
	sink = leaf(argc) + frame(argc) + dyn(argc) + rec(argc + 5) + va(3, 1, 2, 3);
	if (argc > 5) jump(1);
	return 0;
}
EOF
cat > "$tmp/drap.c" <<'EOF'
#include <string.h>
volatile int sink;
__attribute__((noinline)) int aligned(int n) {
	char v[64] __attribute__((aligned(64)));
	char *p = __builtin_alloca(n);
	memset(v, n, sizeof(v)); memset(p, 0, n);
	return v[n & 63] + p[0];
}
int main(int argc, char **argv) { (void)argv; sink = aligned(argc + 8); return 0; }
EOF
cat > "$tmp/lib.c" <<'EOF'
extern int ext(int);
__attribute__((noinline)) int lib_leaf(int x) { return x + 1; }
int lib_entry(int x) { return ext(lib_leaf(x)) * 2; }
int lib_tail(int x) { return ext(x); }
EOF
# No libc, hand-written CFI: a frame on rbp, a signal frame, a CFA
# expression, a DRAP-like CFA = load(rbp - 8), register rules, an
# outermost (undefined RA) frame, an FDE with nothing after its start.
cat > "$tmp/cfi.S" <<'EOF'
	.text
	.globl _start
	.type _start, @function
_start:
	.cfi_startproc
	.cfi_undefined rip
	xor %ebp, %ebp
	call f_rbp
	call f_sig
	call f_expr
	call f_drap
	call f_reg
	mov $60, %eax
	xor %edi, %edi
	syscall
	.cfi_endproc
	.size _start, .-_start

f_rbp:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register rbp
	sub $32, %rsp
	leave
	.cfi_def_cfa rsp, 8
	ret
	.cfi_endproc

f_sig:
	.cfi_startproc
	.cfi_signal_frame
	.cfi_def_cfa rsp, 8
	.cfi_escape 0x0f, 0x03, 0x77, 0x08, 0x06	/* CFA = *(rsp + 8) */
	.cfi_escape 0x10, 0x10, 0x02, 0x77, 0x10	/* rip = *(rsp + 16) */
	.cfi_escape 0x10, 0x07, 0x02, 0x77, 0x18	/* rsp = *(rsp + 24) */
	nop
	nop
	ret
	.cfi_endproc

f_expr:
	.cfi_startproc
	.cfi_escape 0x0f, 0x02, 0x77, 0x10		/* CFA = rsp + 16, as an expression */
	nop
	.cfi_escape 0x16, 0x06, 0x02, 0x76, 0x00	/* val_expression rbp = rbp */
	nop
	.cfi_def_cfa rsp, 8
	.cfi_same_value rbp
	ret
	.cfi_endproc

f_drap:
	.cfi_startproc
	lea 8(%rsp), %r10
	.cfi_def_cfa r10, 0
	and $-32, %rsp
	push -8(%r10)
	push %rbp
	.cfi_escape 0x10, 0x06, 0x02, 0x76, 0x00	/* rbp = *(rbp) */
	mov %rsp, %rbp
	.cfi_escape 0x0f, 0x03, 0x76, 0x78, 0x06	/* CFA = *(rbp - 8) */
	nop
	leave
	lea -8(%r10), %rsp
	.cfi_def_cfa rsp, 8
	ret
	.cfi_endproc

f_reg:
	.cfi_startproc
	push %rbx
	.cfi_adjust_cfa_offset 8
	.cfi_register rbp, rbx
	.cfi_rel_offset rbx, 0
	.cfi_val_offset rbp, -8
	.cfi_restore rbp
	pop %rbx
	.cfi_adjust_cfa_offset -8
	.cfi_remember_state
	.cfi_offset rbp, -24
	.cfi_restore_state
	ret
	.cfi_endproc

f_empty:
	.cfi_startproc
	.cfi_endproc
	.section .note.GNU-stack,"",@progbits
EOF

small="-Wl,-z,noseparate-code -Wl,--build-id=none -s"
build() {	# name, flags...
	n=$1; shift
	if "$cc" "$@" -o "$out/elf/$n" 2>"$tmp/cc.err"; then :; else
		echo "mkcorpus: $n: $(head -c 300 "$tmp/cc.err")" >&2
		rm -f "$out/elf/$n"
	fi
}
build prog-O2-fp      -O2 -fno-omit-frame-pointer $small "$tmp/prog.c"
build prog-O2-nofp    -O2 -fomit-frame-pointer $small "$tmp/prog.c"
build prog-O0-nopie   -O0 -no-pie $small "$tmp/prog.c"
build prog-drap       -O2 -mstackrealign -fomit-frame-pointer $small "$tmp/drap.c"
build lib.so          -O2 -fPIC -shared $small "$tmp/lib.c"
build cfi-static      -nostdlib -static $small "$tmp/cfi.S"
build cfi-static-pie  -nostdlib -static-pie $small "$tmp/cfi.S"
build prog-sframe-v1  -O2 -Wa,--gsframe $small "$tmp/prog.c"
build prog-m32        -m32 -O2 $small "$tmp/lib.c" -shared -fPIC
if [ -x "$gen" ] || command -v "$gen" >/dev/null 2>&1; then
	[ -f "$out/elf/prog-O2-nofp" ] &&
		"$gen" --inject -o "$out/elf/prog-injected-v3" "$out/elf/prog-O2-nofp" ||
		echo "mkcorpus: --inject failed" >&2
	[ -f "$out/elf/cfi-static" ] &&
		"$gen" --inject -V 2 -o "$out/elf/cfi-injected-v2" "$out/elf/cfi-static" ||
		echo "mkcorpus: --inject -V 2 failed" >&2
fi

# ---- raw section seeds: 8-byte vaddr, then the section ----
prefix() {	# vaddr, section file, output
	python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<Q", int(sys.argv[1], 0)) + open(sys.argv[2], "rb").read())' "$1" "$2" > "$3"
}
sec_addr() {	# the .sframe section address of an ELF
	python3 - "$1" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
shoff, = struct.unpack_from("<Q", d, 0x28)
shnum, shstrndx = struct.unpack_from("<HH", d, 0x3c)
sh = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + 64 * i) for i in range(shnum)]
stro = sh[shstrndx][4]
for s in sh:
    name = d[stro + s[0]:d.index(b"\0", stro + s[0])]
    if name == b".sframe":
        print(hex(s[3])); break
else:
    print(0)
EOF
}
if [ -d "$vec" ]; then
	for f in vec_shapes vec_drap vec_plt libvec.so; do
		[ -f "$vec/$f.sframe.bin" ] || continue
		prefix "$(sec_addr "$vec/$f")" "$vec/$f.sframe.bin" "$out/sframe/vector-$f"
	done
fi
if [ -x "$gen" ] || command -v "$gen" >/dev/null 2>&1; then
	for e in "$out"/elf/*; do
		b=$(basename "$e")
		case $b in *m32*|bin-true|vector-*) continue ;; esac
		for v in "3" "2" "2 --no-pcrel"; do
			tag=$(echo "v$v" | tr -d ' -')
			# shellcheck disable=SC2086
			if "$gen" --raw -V $v -o "$tmp/s" "$e" 2>/dev/null; then
				prefix 0 "$tmp/s" "$out/sframe/gen-$b-$tag"
			fi
		done
	done
	# the sections where --inject put them
	for e in "$out"/elf/*-injected-*; do
		[ -f "$e" ] || continue
		python3 - "$e" "$out/sframe/inj-$(basename "$e")" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
shoff, = struct.unpack_from("<Q", d, 0x28)
shnum, shstrndx = struct.unpack_from("<HH", d, 0x3c)
sh = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + 64 * i) for i in range(shnum)]
stro = sh[shstrndx][4]
for s in sh:
    if d[stro + s[0]:d.index(b"\0", stro + s[0])] == b".sframe":
        open(sys.argv[2], "wb").write(struct.pack("<Q", s[3]) + d[s[4]:s[4] + s[5]])
EOF
	done
else
	echo "mkcorpus: no sframe-gen ($gen): no generated sections" >&2
fi
# the smallest valid sections: no FDE, v2 and v3
printf '\000\000\000\000\000\000\000\000\342\336\003\005\003\000\370\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000' > "$out/sframe/empty-v3"
printf '\000\000\000\000\000\000\000\000\342\336\002\001\003\000\370\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000' > "$out/sframe/empty-v2"

echo "mkcorpus: $(ls "$out/elf" | wc -l) ELF seeds, $(ls "$out/sframe" | wc -l) raw sections, $(du -sk "$out" | cut -f1) KiB in $out"
