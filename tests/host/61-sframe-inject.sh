#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sframe-inject, sframe-gen --inject's ELF writer (driven by
# tests/sframe/inject-test.c, built by make sframe-tools).
#
# Injects real SFrame v3 sections (tests/vectors/*.sframe.bin) into
# programs built here and into copies of system files, then checks that
# each result runs as before, that readelf sees PT_GNU_SFRAME covering
# exactly .sframe inside a read-only PT_LOAD, that the section's bytes
# round-trip, that strip/objcopy keep all that, that re-injection works in
# place and that eu-elflint has nothing new but what it cannot know.  Bad
# inputs go through the ASan/UBSan build of the driver.  sframe-gen
# --inject's replacing of files: through a symlink, keeping mode and owner,
# refusing other hard links and an owner it can't give.
#
# Env: SFRAME_VECTORS  folder of the *.sframe.bin vectors (default: the
#                      repository's tests/vectors)
#      KEEP=1          keep the temporary folder
set -u

. "$(dirname "$0")/lib.sh"
OUT=$SFRAME_TOOLS
HERE=$REPO/tests/sframe
INJ=$OUT/inject-test
SAN=$OUT/inject-test-san
T=$(mktemp -d "${TMPDIR:-/tmp}/sframe-inject.XXXXXX") || exit 1
if [ "${KEEP:-}" = 1 ]; then
	echo "# keeping $T"
else
	inject_cleanup() { rm -rf "$T" "$HT"; }
	tap_cleanup=inject_cleanup
fi
export ASAN_OPTIONS=exitcode=99:detect_leaks=1
export UBSAN_OPTIONS=exitcode=98:print_stacktrace=1:halt_on_error=1

# result NAME WHY...: ok if every WHY is empty, else not ok with them
result() {
	local n=$1 w why=()
	shift
	for w in "$@"; do
		[ -z "$w" ] || why+=("$w")
	done
	if [ ${#why[@]} = 0 ]; then ok "$n"; else not_ok "$n" "${why[@]}"; fi
}

hex() { printf '0x%x' "$1"; }
num() { echo $((16#${1#0x})); }
fsize() { stat -c %s "$1"; }

# putle FILE OFFSET NBYTES VALUE: write VALUE little-endian into FILE
putle() {
	local f=$1 off=$2 n=$3 v=$4 i s=
	for ((i = 0; i < n; i++)); do
		s+=$(printf '\\x%02x' $(((v >> (8 * i)) & 255)))
	done
	printf "$s" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none
}

# getle FILE OFFSET NBYTES: read a little-endian value
getle() {
	local b v=0 i=0
	for b in $(od -An -v -tu1 -j "$2" -N "$3" "$1"); do
		v=$((v | b << (8 * i)))
		i=$((i + 1))
	done
	echo $v
}

# ------------------------------------------------------------------
# What readelf sees

# phdrs FILE: "index type offset vaddr filesz memsz flags" per entry
phdrs() {
	readelf -lW "$1" 2>/dev/null | awk '
		/^Program Headers:/ { p = 1; next }
		/Section to Segment mapping/ { p = 0 }
		p && $2 ~ /^0x/ {
			fl = ""
			for (i = 7; i < NF; i++) fl = fl $i
			t = $1
			if (t == "LOOS+0x474e554") t = "GNU_SFRAME"
			print n++, t, $2, $3, $5, $6, fl
		}'
}

# segmap FILE INDEX: the sections readelf maps to segment INDEX
segmap() {
	readelf -lW "$1" 2>/dev/null | awk -v want="$2" '
		/Segment Sections/ { p = 1; next }
		p && $1 ~ /^[0-9]+$/ && $1 + 0 == want + 0 {
			$1 = ""; print; exit
		}'
}

# sframe_shdrs FILE: "addr offset size type" of each .sframe section
sframe_shdrs() {
	readelf -SW "$1" 2>/dev/null | sed -n 's/^ *\[ *[0-9]*\] //p' |
		awk '$1 == ".sframe" { print $3, $4, $5, $2 }'
}

has_shdrs() { ! readelf -SW "$1" 2>&1 | grep -q "There are no sections"; }

# check_layout FILE SECFILE [VADDR]: prints what is wrong, nothing if fine
check_layout() {
	local f=$1 sec=$2 want=${3:-} n sf nsf idx t off va fs ms fl
	local soff sva lidx= sh map
	n=$(fsize "$sec")
	sf=$(phdrs "$f" | awk '$2 == "GNU_SFRAME"')
	nsf=$(printf '%s' "$sf" | grep -c .)
	if [ "$nsf" != 1 ]; then
		echo "want 1 PT_GNU_SFRAME, readelf -lW shows $nsf"
		return
	fi
	read -r idx t soff sva fs ms fl <<<"$sf"
	soff=$(num "$soff") sva=$(num "$sva")
	[ "$(num "$fs")" = "$n" ] && [ "$(num "$ms")" = "$n" ] ||
		echo "PT_GNU_SFRAME size $fs/$ms, section is $(hex "$n") bytes"
	[ "$fl" = R ] || echo "PT_GNU_SFRAME flags '$fl', want R"
	[ -z "$want" ] || [ "$sva" = "$((want))" ] ||
		echo "PT_GNU_SFRAME at $(hex "$sva"), planned $want"
	while read -r idx t off va fs ms fl; do
		[ "$t" = LOAD ] || continue
		off=$(num "$off") va=$(num "$va") fs=$(num "$fs")
		if ((off <= soff && soff + n <= off + fs && va - off == sva - soff)); then
			lidx=$idx
			[ "$fl" = R ] || echo "the PT_LOAD ($idx) holding it has flags '$fl', want R"
			break
		fi
	done < <(phdrs "$f")
	[ -n "$lidx" ] || echo "no PT_LOAD holds PT_GNU_SFRAME's bytes"
	if ! has_shdrs "$f"; then
		dd if="$f" of="$T/rt.bin" bs=1 skip="$soff" count="$n" status=none
		cmp -s "$T/rt.bin" "$sec" || echo "bytes at PT_GNU_SFRAME differ from the section"
		return
	fi
	sh=$(sframe_shdrs "$f")
	if [ "$(printf '%s' "$sh" | grep -c .)" != 1 ]; then
		echo "want 1 .sframe section, readelf -SW shows: ${sh:-none}"
		return
	fi
	read -r va off fs t <<<"$sh"
	[ "$(num "$va")" = "$sva" ] && [ "$(num "$off")" = "$soff" ] && [ "$(num "$fs")" = "$n" ] ||
		echo ".sframe section ($va $off $fs) is not PT_GNU_SFRAME's range"
	if [ -n "$lidx" ]; then
		map=$(segmap "$f" "$lidx")
		case " $map " in
		*" .sframe "*) ;;
		*) echo "segment $lidx maps '$map', no .sframe";;
		esac
	fi
	rm -f "$T/rt.bin"
	if ! objcopy -O binary --only-section=.sframe "$f" "$T/rt.bin" 2>"$T/rt.err"; then
		echo "objcopy --only-section=.sframe failed: $(cat "$T/rt.err")"
	elif ! cmp -s "$T/rt.bin" "$sec"; then
		echo "objcopy --only-section=.sframe gives $(fsize "$T/rt.bin") bytes, not the injected $n"
	fi
}

# ------------------------------------------------------------------
# Running

# Each target has a runner: run_NAME FILE prints the program's output and
# exit code; a library runner also checks that FILE itself was loaded.
run_exe() { "$@" 2>&1; echo "exit $?"; }

# run_lib FILE CMD...: run CMD with FILE's folder first in the search path
run_lib() {
	local f=$1 dir
	shift
	dir=$(dirname "$f")
	LD_LIBRARY_PATH=$dir "$@" 2>&1
	echo "exit $?"
	LD_LIBRARY_PATH=$dir LD_DEBUG=libs "$@" 2>&1 >/dev/null |
		grep -q "calling init: $f\$" || echo "$f was not loaded"
}

run_libc() {
	local f=$1 dir
	dir=$(dirname "$f")
	"$LDSO" --library-path "$dir" /bin/echo hi 2>&1
	echo "exit $?"
	LD_DEBUG=libs "$LDSO" --library-path "$dir" /bin/echo hi 2>&1 >/dev/null |
		grep -q "calling init: $f\$" || echo "$f was not loaded"
}

runner() {
	local kind=$1 f=$2
	shift 2
	case $kind in
	exe) run_exe "$f" "$@";;
	lib) run_lib "$f" "$@";;
	libc) run_libc "$f";;
	esac
}

# same_run KIND ORIG NEW ARGS...: prints the difference, nothing if none
same_run() {
	local kind=$1 a=$2 b=$3 ra rb
	shift 3
	ra=$(runner "$kind" "$a" "$@")
	rb=$(runner "$kind" "$b" "$@")
	[ "$ra" = "$rb" ] && return
	echo "original:"
	printf '%s\n' "$ra" | head -5 | sed 's/^/  /'
	echo "injected:"
	printf '%s\n' "$rb" | head -5 | sed 's/^/  /'
}

# ------------------------------------------------------------------
# eu-elflint: what it says about the output and not about the input

ELFLINT_KNOWN="unknown program header entry type 0x6474e554|'\.sframe' has unsupported type 1879048180"

elflint_msgs() {
	eu-elflint --gnu-ld "$1" 2>&1 | grep -v '^No errors$' |
		sed -E 's/\[ *[0-9]+\]/[N]/g; s/entry [0-9]+/entry N/g; s/section [0-9]+/section N/g' |
		sort -u
}

check_elflint() {
	local name=$1 a=$2 b=$3 new bad known
	if ! command -v eu-elflint >/dev/null; then
		skip "$name: eu-elflint" "eu-elflint not installed (Debian package elfutils)"
		return
	fi
	elflint_msgs "$a" >"$T/lint.a"
	elflint_msgs "$b" >"$T/lint.b"
	new=$(comm -13 "$T/lint.a" "$T/lint.b")
	bad=$(printf '%s' "$new" | grep -Ev "$ELFLINT_KNOWN" | grep .)
	known=$(printf '%s' "$new" | grep -E "$ELFLINT_KNOWN")
	if [ -n "$bad" ]; then
		not_ok "$name: eu-elflint --gnu-ld has nothing new" "new complaints:" "$bad"
		return
	fi
	ok "$name: eu-elflint --gnu-ld has nothing new but PT_GNU_SFRAME/SHT_GNU_SFRAME"
	[ -z "$known" ] || note "new, elfutils $(eu-elflint --version | awk 'NR==1{print $NF}') does not know them:" "$known"
}

# ------------------------------------------------------------------
# One target: inject, run, look, strip, re-inject

# inject NAME IN OUTFILE SEC [DRIVER]: sets VADDR and HOW
inject() {
	local name=$1 in=$2 out=$3 sec=$4 drv=${5:-$INJ} o
	VADDR= HOW=
	if ! o=$("$drv" "$in" "$out" "$sec" 2>&1); then
		not_ok "$name: inject $(basename "$sec")" "$o"
		return 1
	fi
	VADDR=$(printf '%s' "$o" | sed -n 's/^vaddr \(0x[0-9a-f]*\) (\(.*\))$/\1/p')
	HOW=$(printf '%s' "$o" | sed -n 's/^vaddr \(0x[0-9a-f]*\) (\(.*\))$/\2/p')
	[ -n "$VADDR" ] || { not_ok "$name: inject $(basename "$sec")" "driver said: $o"; return 1; }
	return 0
}

# tools_keep NAME KIND ORIG FILE SEC VADDR ARGS...: strip, objcopy
tools_keep() {
	local name=$1 kind=$2 orig=$3 f=$4 sec=$5 va=$6 how d o why
	shift 6
	d=$(dirname "$f")
	for how in strip "strip --strip-debug" objcopy; do
		mkdir -p "$d/${how// /_}"
		o=$d/${how// /_}/$(basename "$f")
		case $how in
		objcopy) why=$(objcopy "$f" "$o" 2>&1);;
		*) why=$($how -o "$o" "$f" 2>&1);;
		esac
		if [ $? != 0 ]; then
			not_ok "$name: $how" "$why"
			continue
		fi
		result "$name: $how: runs, PT_GNU_SFRAME still covers .sframe" \
			"$(same_run "$kind" "$orig" "$o" "$@")" "$(check_layout "$o" "$sec" "$va")"
		[ -z "$why" ] || note "$how said: $why"
	done
}

# target NAME KIND FILE SEC WANT ARGS...
#   KIND: exe, lib (ARGS: the program using it), libc
#   WANT: "new segment" or "in place"
target() {
	local name=$1 kind=$2 file=$3 sec=$4 want=$5 d orig f f2 va
	shift 5
	TARGET_OUT=
	d=$T/$name
	mkdir -p "$d/orig" "$d/inj" "$d/again" "$d/san"
	orig=$d/orig/$(basename "$file")
	f=$d/inj/$(basename "$file")
	f2=$d/again/$(basename "$file")
	cp "$file" "$orig"
	inject "$name" "$orig" "$f" "$sec" || return
	va=$VADDR
	result "$name: inject $(basename "$sec") at $va ($HOW)" \
		"$([ "$HOW" = "$want" ] || echo "want $want")"
	result "$name: runs, same output" "$(same_run "$kind" "$orig" "$f" "$@")"
	result "$name: PT_GNU_SFRAME = .sframe in a read-only PT_LOAD, bytes round-trip" \
		"$(check_layout "$f" "$sec" "$va")"
	if inject "$name" "$orig" "$d/san/$(basename "$file")" "$sec" "$SAN"; then
		result "$name: ASan/UBSan driver gives the same file" \
			"$(cmp "$f" "$d/san/$(basename "$file")" 2>&1)"
	fi
	if has_shdrs "$f"; then
		tools_keep "$name" "$kind" "$orig" "$f" "$sec" "$va" "$@"
	fi
	if inject "$name" "$f" "$f2" "$sec"; then
		result "$name: re-inject over own output: in place, same file" \
			"$([ "$HOW" = "in place" ] || echo "went to a $HOW")" \
			"$([ "$VADDR" = "$va" ] || echo "vaddr $VADDR, first $va")" \
			"$(cmp "$f" "$f2" 2>&1)"
	fi
	check_elflint "$name" "$orig" "$f"
	TARGET_OUT=$f
}

# ------------------------------------------------------------------
# Setup

need() {
	local t miss=
	for t in "$@"; do
		command -v "$t" >/dev/null || miss+=" $t"
	done
	[ -z "$miss" ] && return
	not_ok "tools present" "missing:$miss"
	exit 1
}

find_vectors() {
	local d
	for d in "${SFRAME_VECTORS:-}" "$REPO/tests/vectors"; do
		[ -n "$d" ] && [ -f "$d/vec_shapes.sframe.bin" ] && { (cd "$d" && pwd); return 0; }
	done
	return 1
}

need gcc readelf objcopy strip cmp od dd awk sed
[ -x "$INJ" ] && [ -x "$SAN" ] || {
	not_ok "drivers built" "no $INJ or $SAN: make sframe-tools"
	exit 1
}
VEC=$(find_vectors) || {
	not_ok "SFrame vectors found" "no tests/vectors/*.sframe.bin; set SFRAME_VECTORS"
	echo "1..1"
	exit 1
}
SHAPES=$VEC/vec_shapes.sframe.bin	# 0x11d bytes
DRAP=$VEC/vec_drap.sframe.bin		# 0xd9
PLT=$VEC/vec_plt.sframe.bin		# 0xbc
LIBVEC=$VEC/libvec.so.sframe.bin	# 0xa0
LDSO=$(readelf -lW /bin/true | sed -n 's/.*program interpreter: \(.*\)]$/\1/p')
LIBC=$(ldd /bin/true | awk '$1 == "libc.so.6" { print $3 }')
echo "# vectors: $VEC"
echo "# tools: $(gcc --version | head -1); $(readelf --version | head -1)"

cat >"$T/hello.c" <<'EOF'
#include <stdio.h>
static int depth(int n)
{
	if (n)
		return depth(n - 1) + 1;
	puts("hello");
	return 0;
}
int main(int argc, char **argv)
{
	(void)argv;
	return depth(argc + 2) == argc + 2 ? 0 : 1;
}
EOF
# .data ends 3 bytes into a word: the new segment cannot start where
# strip will put it and stay 8-aligned (strip warns, result still runs).
cat >"$T/odd.c" <<'EOF'
#include <stdio.h>
char odd[3] = "ab";
int main(void) { printf("%s\n", odd); return 0; }
EOF
cat >"$T/demo.c" <<'EOF'
#include <stdio.h>
__attribute__((noinline)) int demo_leaf(int x) { return x * 7; }
int demo_entry(int x) { printf("demo %d\n", demo_leaf(x)); return 0; }
EOF
cat >"$T/usedemo.c" <<'EOF'
int demo_entry(int);
int main(void) { return demo_entry(6); }
EOF
cat >"$T/v1.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) static int leaf(int x) { return x * 3 + 1; }
__attribute__((noinline)) static int frame(int x)
{
	volatile int a[16];
	for (int i = 0; i < 16; i++)
		a[i] = leaf(i + x);
	return a[x & 15];
}
__attribute__((noinline)) static int alloc(int n)
{
	char *p = __builtin_alloca(n + 16);
	memset(p, 'a', n);
	p[n] = 0;
	return (int)strlen(p) + frame(n);
}
__attribute__((noinline)) static long heap(int n)
{
	long *v = malloc(n * sizeof(*v)), s = 0;
	for (int i = 0; i < n; i++)
		v[i] = alloc(i % 7 + 1);
	for (int i = 0; i < n; i++)
		s += v[i];
	free(v);
	return s;
}
int main(int argc, char **argv) { (void)argv; printf("sum %ld\n", heap(argc + 9)); return 0; }
EOF

build() {
	local name=$1 o
	shift
	if ! o=$(gcc "$@" 2>&1); then
		not_ok "build $name" "gcc $*" "$o"
		return 1
	fi
}
mkdir -p "$T/bin" "$T/lib"
build nonpie -O2 -g -no-pie -o "$T/bin/nonpie" "$T/hello.c"
build pie -O2 -g -pie -fPIE -o "$T/bin/pie" "$T/hello.c"
build odd -O2 -g -o "$T/bin/odd" "$T/odd.c"
build libdemo -O2 -g -fPIC -shared -Wl,-soname,libdemo.so -o "$T/lib/libdemo.so" "$T/demo.c"
build usedemo -O2 -g -o "$T/bin/usedemo" "$T/usedemo.c" -L"$T/lib" -ldemo
build v1 -O2 -g -Wa,--gsframe -o "$T/bin/v1" "$T/v1.c"
STATIC=
if [ -f "$(gcc -print-file-name=libc.a)" ]; then
	build static -O2 -g -static -o "$T/bin/static" "$T/hello.c" && STATIC=1
	build static-pie -O2 -g -static-pie -o "$T/bin/static-pie" "$T/hello.c" || STATIC=
fi

# ------------------------------------------------------------------
# Good targets

target nonpie exe "$T/bin/nonpie" "$SHAPES" "new segment"
NONPIE_OUT=$TARGET_OUT
target pie exe "$T/bin/pie" "$DRAP" "new segment"
PIE_OUT=$TARGET_OUT
target odd-data-end exe "$T/bin/odd" "$PLT" "new segment"
target libdemo lib "$T/lib/libdemo.so" "$LIBVEC" "new segment" "$T/bin/usedemo"
if [ -n "$STATIC" ]; then
	target static exe "$T/bin/static" "$SHAPES" "new segment"
	target static-pie exe "$T/bin/static-pie" "$DRAP" "new segment"
else
	skip "static, static-pie" "no libc.a (Debian package libc6-dev)"
fi
target bin-true exe /bin/true "$PLT" "new segment" --version
if [ -n "$LIBC" ]; then
	target libc libc "$LIBC" "$SHAPES" "new segment"
else
	not_ok "libc.so.6 found" "ldd /bin/true shows no libc.so.6"
fi
if [ -n "$LDSO" ]; then
	target ld.so exe "$LDSO" "$LIBVEC" "new segment" /bin/echo hi
else
	not_ok "ld.so found" "/bin/true has no PT_INTERP"
fi

# binutils 2.40's v1 .sframe (0xf0 bytes, 0x112 up to the segment's end)
readelf -lW "$T/bin/v1" | grep -q GNU_SFRAME ||
	not_ok "v1: gcc -Wa,--gsframe made PT_GNU_SFRAME" "$(readelf -lW "$T/bin/v1" | head -30)"
target v1-inplace exe "$T/bin/v1" "$DRAP" "in place"
result "v1-inplace: same file size" \
	"$([ "$(fsize "$TARGET_OUT")" = "$(fsize "$T/bin/v1")" ] || echo "size changed")"
target v1-toobig exe "$T/bin/v1" "$SHAPES" "new segment"
V1BIG=$TARGET_OUT
a=$(phdrs "$T/bin/v1" | grep -c .) b=$(phdrs "$V1BIG" | grep -c .)
result "v1-toobig: old PT_GNU_SFRAME retargeted, only a PT_LOAD added" \
	"$([ $((a + 1)) = "$b" ] || echo "$a program headers became $b")"

# Without section headers: placed by PT_GNU_SFRAME alone the second time.
cp "$T/bin/pie" "$T/bin/noshdr"
putle "$T/bin/noshdr" 40 8 0	# e_shoff
putle "$T/bin/noshdr" 60 2 0	# e_shnum
putle "$T/bin/noshdr" 62 2 0	# e_shstrndx
target no-shdrs exe "$T/bin/noshdr" "$PLT" "new segment"

# ------------------------------------------------------------------
# Re-injection of other sizes and gdb

d=$T/reinject
mkdir -p "$d"
if inject pie-smaller "$PIE_OUT" "$d/pie.small" "$LIBVEC"; then
	result "pie: re-inject a smaller section ($HOW), runs" \
		"$([ "$HOW" = "in place" ] || echo "went to a $HOW")" \
		"$(same_run exe "$T/bin/pie" "$d/pie.small")" "$(check_layout "$d/pie.small" "$LIBVEC" "$VADDR")"
fi
if inject pie-larger "$PIE_OUT" "$d/pie.large" "$SHAPES"; then
	result "pie: re-inject a larger section ($HOW), runs" \
		"$([ "$HOW" = "new segment" ] || echo "went $HOW")" \
		"$(same_run exe "$T/bin/pie" "$d/pie.large")" "$(check_layout "$d/pie.large" "$SHAPES" "$VADDR")"
	if inject pie-larger-again "$d/pie.large" "$d/pie.large2" "$DRAP"; then
		result "pie: and the first again ($HOW), runs" \
			"$([ "$HOW" = "in place" ] || echo "went to a $HOW")" \
			"$(same_run exe "$T/bin/pie" "$d/pie.large2")" "$(check_layout "$d/pie.large2" "$DRAP" "$VADDR")"
	fi
fi

gdb_bt() {
	local name=$1 f=$2 o
	if ! command -v gdb >/dev/null; then
		skip "$name: gdb bt" "gdb not installed"
		return
	fi
	o=$(gdb -nx -q -batch -ex 'break depth' -ex run -ex bt "$f" </dev/null 2>&1)
	if printf '%s' "$o" | grep -q '^#1 .*main .* at .*hello\.c:'; then
		ok "$name: gdb: break depth, run, bt shows main at hello.c"
	else
		not_ok "$name: gdb: break depth, run, bt shows main at hello.c" "$o"
	fi
}
gdb_bt pie "$PIE_OUT"
gdb_bt nonpie "$NONPIE_OUT"

# ------------------------------------------------------------------
# sframe-gen --inject: replacing a file keeps what its users rely on

GEN=$OUT/sframe-gen
d=$T/replace
mkdir -p "$d"
# has_sframe FILE: prints what is wrong
has_sframe() { readelf -SW "$1" 2>&1 | grep -q ' \.sframe ' || echo "$1 has no .sframe"; }
# no_tmp DIR: prints what the generator left behind
no_tmp() { local l; l=$(ls "$1"/*.tmp* 2>/dev/null); [ -z "$l" ] || echo "left behind: $l"; }
# gen_inject ARGS...: sframe-gen --inject ARGS; GEN_RC, GEN_ERR
gen_inject() { GEN_ERR=$("$GEN" --inject "$@" 2>&1 >/dev/null); GEN_RC=$?; }

if [ ! -x "$GEN" ]; then
	not_ok "sframe-gen --inject: $GEN built" "make sframe-tools"
else
	# in place through a symlink: the target is replaced, the link stays
	cp "$T/bin/pie" "$d/real"
	ln -s real "$d/link"
	gen_inject "$d/link"
	result "gen --inject through a symlink: the link stays, its target gets .sframe, runs" \
		"$([ $GEN_RC = 0 ] || echo "exit $GEN_RC: $GEN_ERR")" \
		"$([ -L "$d/link" ] && [ "$(readlink "$d/link")" = real ] || echo "link replaced: $(ls -l "$d/link")")" \
		"$(has_sframe "$d/real")" "$(same_run exe "$T/bin/pie" "$d/link")" "$(no_tmp "$d")"

	# -o naming an existing file, through a symlink: its target, its mode
	cp "$T/bin/nonpie" "$d/out-real"
	chmod 0700 "$d/out-real"
	ln -s out-real "$d/out-link"
	gen_inject -o "$d/out-link" "$T/bin/pie"
	result "gen --inject -o SYMLINK: the link stays, its target is replaced, mode 0700 kept" \
		"$([ $GEN_RC = 0 ] || echo "exit $GEN_RC: $GEN_ERR")" \
		"$([ -L "$d/out-link" ] || echo "link replaced")" \
		"$([ "$(stat -c %a "$d/out-real")" = 700 ] || echo "mode $(stat -c %a "$d/out-real")")" \
		"$(has_sframe "$d/out-real")" "$(same_run exe "$T/bin/pie" "$d/out-real")" "$(no_tmp "$d")"

	# the mode is kept
	cp "$T/bin/pie" "$d/mode"
	chmod 0750 "$d/mode"
	gen_inject "$d/mode"
	result "gen --inject: mode 0750 kept" \
		"$([ $GEN_RC = 0 ] || echo "exit $GEN_RC: $GEN_ERR")" \
		"$([ "$(stat -c %a "$d/mode")" = 750 ] || echo "mode $(stat -c %a "$d/mode")")" \
		"$(has_sframe "$d/mode")" "$(no_tmp "$d")"

	# a file with another hard link is refused: both names keep the old one
	cp "$T/bin/pie" "$d/h1"
	ln "$d/h1" "$d/h2"
	cp "$d/h1" "$d/h.orig"
	gen_inject "$d/h1"
	want="sframe-gen: $(realpath "$d/h1") has 2 hard links; replacing it would break them: use -o"
	result "gen --inject refuses a file with 2 hard links, both unchanged" \
		"$([ $GEN_RC = 1 ] || echo "exit $GEN_RC, want 1")" \
		"$([ "$GEN_ERR" = "$want" ] || echo "said: $GEN_ERR; want: $want")" \
		"$(cmp "$d/h1" "$d/h.orig" 2>&1)" "$(cmp "$d/h2" "$d/h.orig" 2>&1)" "$(no_tmp "$d")"

	if [ "$(id -u)" = 0 ]; then
		# owner and group kept, and the set-user-ID bit chown would clear
		cp "$T/bin/pie" "$d/own"
		chown 12345:12346 "$d/own"
		chmod 4750 "$d/own"
		gen_inject "$d/own"
		result "gen --inject as root: owner 12345:12346 and mode 4750 kept" \
			"$([ $GEN_RC = 0 ] || echo "exit $GEN_RC: $GEN_ERR")" \
			"$([ "$(stat -c '%u:%g %a' "$d/own")" = "12345:12346 4750" ] ||
			   echo "now $(stat -c '%u:%g %a' "$d/own")")" \
			"$(has_sframe "$d/own")" "$(no_tmp "$d")"

		# a user who may replace the file but not give it its owner
		chmod 0711 "$T"
		mkdir -p "$T/nr"
		cp "$T/bin/pie" "$T/nr/f"
		chmod 0644 "$T/nr/f"
		chown 12345:12345 "$T/nr"
		cp "$T/nr/f" "$T/nr.orig"
		GEN_ERR=$(setpriv --reuid=12345 --regid=12345 --clear-groups \
			  "$GEN" --inject "$T/nr/f" 2>&1 >/dev/null)
		GEN_RC=$?
		want="sframe-gen: $(realpath "$T/nr/f"): owner 0, group 0: the new file can't be given them (Operation not permitted): nothing written"
		result "gen --inject as uid 12345 on root's file in its folder: refused, unchanged" \
			"$([ $GEN_RC = 1 ] || echo "exit $GEN_RC, want 1")" \
			"$([ "$GEN_ERR" = "$want" ] || echo "said: $GEN_ERR; want: $want")" \
			"$([ "$(stat -c '%u:%g' "$T/nr/f")" = 0:0 ] || echo "owner now $(stat -c '%u:%g' "$T/nr/f")")" \
			"$(cmp "$T/nr/f" "$T/nr.orig" 2>&1)" "$(no_tmp "$T/nr")"
		chmod 0700 "$T"
	else
		skip "gen --inject keeps owner and group" "needs root (chown)"
	fi
fi

# ------------------------------------------------------------------
# Bad inputs, through the sanitizer build

printf '' >"$T/empty.sec"
# bad NAME FILE EXPECT [SEC]: must fail with EXPECT in the message
bad() {
	local name=$1 f=$2 want=$3 sec=${4:-$LIBVEC} o rc
	o=$("$SAN" "$f" "$T/bad.out" "$sec" 2>&1)
	rc=$?
	if [ $rc = 1 ] && printf '%s' "$o" | grep -qF -- "$want" &&
	   ! printf '%s' "$o" | grep -q Sanitizer; then
		ok "bad input: $name"
		note "$o"
	else
		not_ok "bad input: $name" "exit $rc, want 1 and '$want'" "$o"
	fi
}

# mutant NAME: a fresh copy of the PIE to patch
mutant() { cp "$T/bin/pie" "$T/bad-$1"; echo "$T/bad-$1"; }

PHOFF=$(getle "$T/bin/pie" 32 8)
SHOFF=$(getle "$T/bin/pie" 40 8)
LOADS=$(phdrs "$T/bin/pie" | awk '$2 == "LOAD" { print $1 }')
L0=$(echo $LOADS | cut -d' ' -f1) L1=$(echo $LOADS | cut -d' ' -f2) LL=${LOADS##*[^0-9]}

bad "empty file" "$T/empty.sec" "file too short for an ELF header (0x0 < 0x40)"
head -c 40 "$T/bin/pie" >"$T/bad-trunc"
bad "truncated ELF header" "$T/bad-trunc" "file too short for an ELF header (0x28 < 0x40)"
bad "not ELF" "$T/hello.c" "not an ELF file"
m=$(mutant class32); putle "$m" 4 1 1
bad "32-bit ELF (EI_CLASS 1)" "$m" "offset 0x4: not a 64-bit ELF file"
if gcc -m32 -o "$T/bad-real32" "$T/hello.c" 2>/dev/null; then
	bad "real 32-bit executable (gcc -m32)" "$T/bad-real32" "not a 64-bit ELF file"
fi
m=$(mutant be); putle "$m" 5 1 2
bad "big-endian ELF (EI_DATA 2)" "$m" "offset 0x5: not a little-endian ELF file"
m=$(mutant aarch64); putle "$m" 18 2 183
bad "EM_AARCH64" "$m" "offset 0x12: e_machine 183 is not EM_X86_64"
gcc -O2 -c -o "$T/bad-rel.o" "$T/hello.c"
bad "ET_REL object" "$T/bad-rel.o" "offset 0x10: e_type 1 (ET_REL"
m=$(mutant core); putle "$m" 16 2 4
bad "ET_CORE" "$m" "e_type 4 (ET_CORE"
m=$(mutant phoff); putle "$m" 32 8 $(($(fsize "$m") - 100))
bad "e_phoff past EOF" "$m" "program header table past end of file"
m=$(mutant phoff-wrap); putle "$m" 32 8 -8
bad "e_phoff + size overflows" "$m" "overflows"
m=$(mutant phnum); putle "$m" 56 2 65000
bad "e_phnum huge" "$m" "program header table past end of file"
m=$(mutant pnxnum); putle "$m" 56 2 65535
bad "e_phnum PN_XNUM" "$m" "PN_XNUM"
m=$(mutant phnum0); putle "$m" 56 2 0
bad "e_phnum 0" "$m" "no program header table"
m=$(mutant phentsize); putle "$m" 54 2 32
bad "e_phentsize 32" "$m" "e_phentsize 32, want 56"
m=$(mutant unsorted)
dd if="$T/bin/pie" of="$m" bs=1 skip=$((PHOFF + L0 * 56)) seek=$((PHOFF + L1 * 56)) count=56 conv=notrunc status=none
dd if="$T/bin/pie" of="$m" bs=1 skip=$((PHOFF + L1 * 56)) seek=$((PHOFF + L0 * 56)) count=56 conv=notrunc status=none
bad "PT_LOADs not sorted by p_vaddr" "$m" "not sorted by p_vaddr"
m=$(mutant overlap); putle "$m" $((PHOFF + L0 * 56 + 40)) 8 0x100000
bad "overlapping PT_LOADs" "$m" "overlaps the previous PT_LOAD"
m=$(mutant filesz); putle "$m" $((PHOFF + L1 * 56 + 32)) 8 0x10000000
bad "PT_LOAD contents past EOF" "$m" "contents past end of file"
m=$(mutant memsz); putle "$m" $((PHOFF + L1 * 56 + 40)) 8 16
bad "p_filesz > p_memsz" "$m" "p_filesz"
m=$(mutant congruent); putle "$m" $((PHOFF + L1 * 56 + 16)) 8 0x1010
bad "p_vaddr and p_offset differ modulo the page" "$m" "differ modulo the page size"
m=$(mutant noload)
for l in $LOADS; do putle "$m" $((PHOFF + l * 56)) 4 0; done
bad "no PT_LOAD" "$m" "no PT_LOAD"
m=$(mutant vaddr-top)
putle "$m" $((PHOFF + LL * 56 + 16)) 8 $((0x7fffffffe000 + $(getle "$m" $((PHOFF + LL * 56 + 8)) 8) % 4096))
bad "last PT_LOAD at the top of user space" "$m" "no room above for another"
m=$(mutant shoff); putle "$m" 40 8 $(($(fsize "$m") - 10))
bad "section header table past EOF" "$m" "section header table past end of file"
m=$(mutant shoff-huge); putle "$m" 40 8 -64
bad "e_shoff near 2^64" "$m" "past end of file"
m=$(mutant shentsize); putle "$m" 58 2 40
bad "e_shentsize 40" "$m" "e_shentsize 40, want 64"
m=$(mutant shstrndx); putle "$m" 62 2 200
bad "e_shstrndx out of range" "$m" "offset 0x3e: e_shstrndx 200 out of range"
m=$(mutant shstrtype); putle "$m" 62 2 1
bad "e_shstrndx not SHT_STRTAB" "$m" "is not SHT_STRTAB"
m=$(mutant secoff); putle "$m" $((SHOFF + 64 + 24)) 8 0x7fffffff0000
bad "section contents past EOF" "$m" "section 1: contents past end of file"
m=$(mutant shnum0); putle "$m" 60 2 0; putle "$m" $((SHOFF + 32)) 8 0x7fffffff
bad "extended e_shnum past EOF" "$m" "past end of file"
bad "seclen 0" "$T/bin/pie" "section is empty (seclen 0)" "$T/empty.sec"

# Random damage to the headers: any answer but a crash will do.
crashes=
for ((i = 0; i < 300; i++)); do
	m=$T/bad-rand
	cp "$T/bin/pie" "$m"
	for ((j = 0; j < 1 + RANDOM % 4; j++)); do
		case $((RANDOM % 3)) in
		0) off=$((RANDOM % 64));;
		1) off=$((PHOFF + RANDOM % (13 * 56)));;
		2) off=$((SHOFF + RANDOM % (37 * 64)));;
		esac
		putle "$m" "$off" 1 $((RANDOM % 256))
	done
	"$SAN" "$m" "$T/bad.out" "$LIBVEC" >"$T/rand.log" 2>&1
	rc=$?
	if [ $rc != 0 ] && [ $rc != 1 ] || grep -q Sanitizer "$T/rand.log"; then
		cp "$m" "$T/crash-$i"
		crashes+=" $i (exit $rc: $(grep -m1 -E 'ERROR|runtime error' "$T/rand.log"))"
	fi
done
result "300 randomly damaged headers: no crash under ASan/UBSan" "${crashes:+crashed:$crashes}"

