# SPDX-License-Identifier: GPL-2.0
# A call through the PLT into a shared library, all built without frame
# pointers, with binutils 2.46's own SFrame v3 (tests/vectors: vec_plt ->
# plt_caller -> libvec_entry@plt -> libvec_leaf in libvec.so): the
# kernel registers vec_plt at exec, sframe-audit.so (LD_AUDIT) registers
# libvec.so with PR_ADD_SFRAME, and every sample in libvec_leaf has the
# whole chain.  Without the audit module libvec.so has no SFrame for the
# kernel, and the stack stops in the library.
. "$(dirname "$0")/lib.sh"

vec=$LIB/../vectors
audit=${SFRAME_TOOLS:?}/sframe-audit.so
[ -f "$audit" ] || fail "no $audit"
want=libvec_leaf,libvec_entry,plt_caller,main

record_plt() {
	"$PERF" record -q -e cpu-clock -F 1000 --call-graph fp,defer -o "$TMP/perf.data" \
		-- env "$@" "$vec/vec_plt" 100000 > "$TMP/record.log" 2>&1 ||
		{ cat "$TMP/record.log"; fail "perf record $*"; }
	grep -v '^100000$' "$TMP/record.log" | grep . && fail "vec_plt printed more than its result"
	"$PERF" script -i "$TMP/perf.data" -F comm,tid,ip,sym,dso > "$TMP/script.txt" 2> "$TMP/script.log" ||
		{ cat "$TMP/script.log"; fail "perf script"; }
	LOST=$(lost_records "$TMP/perf.data")
}

record_plt LD_AUDIT="$audit"
python3 "$LIB/stacks.py" --lost "${LOST:-0}" --comm vec_plt --top libvec_leaf --expect "$want" \
	--mode full "$TMP/script.txt" || fail "with sframe-audit.so"
record_plt SFRAME_NONE=1
python3 "$LIB/stacks.py" --lost "${LOST:-0}" --comm vec_plt --top libvec_leaf --expect "$want" \
	--mode truncated "$TMP/script.txt" || fail "without sframe-audit.so, yet whole stacks"
