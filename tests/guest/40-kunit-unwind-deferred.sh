# SPDX-License-Identifier: GPL-2.0
# KUnit suite unwind_deferred (built in, run at boot): every case of the
# source passed.
. "$(dirname "$0")/lib.sh"

src=$TREE/kernel/unwind/deferred_kunit.c
[ -f "$src" ] || fail "no $src"
want=$(grep -c '^\s*KUNIT_CASE(' "$src")
[ "$want" -gt 0 ] || fail "no KUNIT_CASE in $src"

dmesg > "$TMP/dmesg" || fail "dmesg"
line=$(grep -E '# unwind_deferred: pass:[0-9]+ fail:[0-9]+ skip:[0-9]+ total:[0-9]+' "$TMP/dmesg")
[ -n "$line" ] || { grep -i kunit "$TMP/dmesg"; fail "suite unwind_deferred did not run (CONFIG_UNWIND_DEFERRED_KUNIT_TEST?)"; }
echo "$line"
grep -E '^\[[ 0-9.]+\]     (not )?ok [0-9]+ unwind_test_' "$TMP/dmesg" | sed 's/^\[[ 0-9.]*\]//'
grep -qE "unwind_deferred: pass:$want fail:0 skip:0 total:$want\$" <<< "$line" ||
	fail "want $want cases passed"
grep -qE '^\[[ 0-9.]+\] ok [0-9]+ unwind_deferred$' "$TMP/dmesg" || fail "suite not ok"
