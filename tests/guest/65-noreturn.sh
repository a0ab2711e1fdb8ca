# SPDX-License-Identifier: GPL-2.0
# Return addresses past the end of their function: in the workload
# noreturn-fp, nr_outer and nr_middle end with the call of a function that
# doesn't return, and their return addresses are the first bytes of
# nr_after_outer and nr_after_middle.  perf must name every frame of
# nr_spin <- nr_middle <- nr_outer <- main right (it looks a return
# address up one byte before it), with --call-graph fp (the interrupt's
# walk) and fp,defer (the kernel's deferred walk), in perf script and
# perf report, and perf script must still print the addresses as
# recorded.  (perf's DWARF unwinding has always looked them up so; it is
# not run here, for time.)
. "$(dirname "$0")/lib.sh"

prog=$WORKLOADS/noreturn-fp
[ -x "$prog" ] || fail "no $prog (make -C tests/workloads)"
addr() {
	local a

	a=$(nm "$prog" | awk -v s="$1" '$3 == s { print $1 }')
	[ -n "$a" ] && printf '%x\n' "$((16#$a))"
}
src=$LIB/../workloads/noreturn.c
[ -f "$src" ] || fail "no $src"
after_middle=$(addr nr_after_middle)
after_outer=$(addr nr_after_outer)
[ -n "$after_middle" ] && [ -n "$after_outer" ] || fail "no nr_after_* in $prog"

failed=
for cg in fp fp,defer; do
	"$PERF" record -q -e cpu-clock -F 1000 --call-graph "$cg" -o "$TMP/$cg.data" \
		-- "$prog" 600 > "$TMP/$cg.log" 2>&1 || { cat "$TMP/$cg.log"; fail "$cg: perf record"; }
	"$PERF" script -i "$TMP/$cg.data" -F comm,tid,ip,sym,dso > "$TMP/$cg.txt" 2> "$TMP/$cg.err" ||
		{ cat "$TMP/$cg.err"; fail "$cg: perf script"; }
	echo "--call-graph $cg:"
	python3 "$LIB/stacks.py" --lost "$(lost_records "$TMP/$cg.data")" --comm noreturn-fp \
		--top nr_spin --expect nr_spin,nr_middle,nr_outer,main --mode full "$TMP/$cg.txt" ||
		failed="$failed $cg"
	"$PERF" report -i "$TMP/$cg.data" --stdio --no-children -G 2> /dev/null > "$TMP/$cg.report" ||
		fail "$cg: perf report"
	for f in nr_middle nr_outer; do
		grep -q " $f\b" "$TMP/$cg.report" ||
			{ echo "FAIL: $cg: perf report has no $f"; failed="$failed $cg"; }
	done
	if grep -q "nr_after_" "$TMP/$cg.report"; then
		grep "nr_after_" "$TMP/$cg.report" | head -3
		echo "FAIL: $cg: perf report names a function after a caller"
		failed="$failed $cg"
	fi
	# The source line of a caller is that of its call.
	"$PERF" script -i "$TMP/$cg.data" -F ip,sym,srcline > "$TMP/$cg.src" 2> /dev/null ||
		fail "$cg: perf script -F ip,sym,srcline"
	for f in nr_middle:nr_spin nr_outer:nr_middle; do
		want=$(grep -n "^	${f#*:}();" "$src" | cut -d: -f1)
		got=$(awk -v f="${f%:*}" '$2 == f { getline; print $1; exit }' "$TMP/$cg.src")
		[ "$got" = "noreturn.c:$want" ] ||
			{ echo "FAIL: $cg: ${f%:*} at '$got', want noreturn.c:$want";
			  failed="$failed $cg"; }
	done
	for a in "$after_middle nr_middle" "$after_outer nr_outer"; do
		sed 's/ (.*//' "$TMP/$cg.txt" | grep -Eq "^\s+$a\$" ||
			{ echo "FAIL: $cg: no '$a' entry (the return address as recorded)"; failed="$failed $cg"; }
	done
done
[ -z "$failed" ] || fail "$failed"
