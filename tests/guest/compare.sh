# SPDX-License-Identifier: GPL-2.0
# Sourced by the ground-truth tests (87, 90), after lib.sh: the setup of
# perf record --call-graph dwarf,defer + perf script --compare-unwind,
# and compare().
#
# Every object on the stacks has SFrame for the kernel: the program its
# own (injected) section, libraries a v3 sidecar registered by
# sframe-audit.so (sidecar LIB), the dynamic loader an injected copy
# (set-interp.py makes a copy of the program whose PT_INTERP names it:
# the kernel registers the interpreter's PT_GNU_SFRAME at exec).
tools=${SFRAME_TOOLS:?}
for t in sframe-gen sframe-audit.so; do
	[ -f "$tools/$t" ] || fail "no $tools/$t"
done
ms=${CHAIN_MS:-1500}

# The programs' libc and loader (the host's, over 9p, without SFrame).
ref=$WORKLOADS/chain-sframe3
[ -x "$ref" ] || fail "no $ref (make -C tests/workloads)"
libc=$(ldd "$ref" | awk '$1 ~ /^libc\.so/ { print $3 }')
[ -f "$libc" ] || fail "no libc in ldd $ref"
interp=$(readelf -l "$ref" | sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
[ -f "$interp" ] || fail "no interpreter in $ref"
mkdir "$TMP/sidecar" || fail "mkdir"

# sidecar LIB: a v3 sidecar of LIB for sframe-audit.so, named after LIB
# as the loader names it (libz.so.1, not the file libz.so.1.2.13)
sidecar() {
	[ -f "$TMP/sidecar/$(basename "$1").sframe" ] && return
	"$tools/sframe-gen" -o "$TMP/sidecar/$(basename "$1").sframe" "$(readlink -f "$1")" ||
		fail "sframe-gen $1"
}
sidecar "$libc"
# the audit module itself: it adds its own namespace (itself, its libc)
sidecar "$tools/sframe-audit.so"
"$tools/sframe-gen" --inject -o "$TMP/ld.so" "$(readlink -f "$interp")" ||
	fail "sframe-gen --inject $interp"
audit=("LD_AUDIT=$tools/sframe-audit.so" "SFRAME_SIDECAR_DIR=$TMP/sidecar" LD_BIND_NOW=1)

# compare NAME PROGRAM CALLGRAPH CHECK-OPTIONS...: record the copy of
# PROGRAM with the loader copy, under sframe-audit.so, and check
# $TMP/NAME.cmp.
# The program's arguments are ARGS (default: $ms).
compare() {
	local name=$1 prog=$2 cg=$3 bin
	shift 3
	[ ${#ARGS[@]} -gt 0 ] || ARGS=("$ms")
	bin=$TMP/$(basename "$prog")
	python3 "$LIB/set-interp.py" "$prog" "$TMP/ld.so" "$bin" || fail "set-interp.py $prog"
	# Stack dumps are big: a bigger buffer loses fewer samples.  perf
	# record caches (in $HOME/.debug) only the objects that a sample's
	# IP is in, unless --buildid-all: the vDSO, which perf script can
	# only read back from there, was left out when no sample's IP was in
	# it, and DWARF stopped at its frames (137 of 837 samples wrong, in
	# a fresh $HOME; later recordings found the earlier one's copy).
	env "${audit[@]}" "$PERF" record -q -e cpu-clock -F 1000 --call-graph "$cg" -m 1024 \
		--buildid-all \
		-o "$TMP/$name.data" -- "$bin" "${ARGS[@]}" > "$TMP/$name.log" 2>&1 ||
		{ cat "$TMP/$name.log"; fail "perf record --call-graph $cg $bin"; }
	grep -i 'sframe-audit' "$TMP/$name.log" && fail "$name: sframe-audit.so complained"
	"$PERF" script -i "$TMP/$name.data" --comms "$(basename "$prog")" --compare-unwind \
		> "$TMP/$name.cmp" 2> "$TMP/$name.err" ||
		{ cat "$TMP/$name.err"; fail "perf script --compare-unwind $name"; }
	echo "## $name: $(basename "$prog"), --call-graph $cg"
	python3 "$LIB/compare-unwind.py" --lost "$(lost_records "$TMP/$name.data")" "$@" \
		"$TMP/$name.cmp" || {
		# perf reads the vDSO back from its build-id cache ($HOME/.debug)
		"$PERF" buildid-list -i "$TMP/$name.data"
		ls -lR "$HOME/.debug/[vdso]"
		cat "$TMP/$name.log" "$TMP/$name.err"
		fail "$name"
	}
	rm -f "$TMP/$name.data"
	ARGS=()
}
ARGS=()
