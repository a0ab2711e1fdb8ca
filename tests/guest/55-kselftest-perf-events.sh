# SPDX-License-Identifier: GPL-2.0
# The other kselftests of perf_events still pass on the patched kernel:
# sigtrap_threads, watermark_signal, mmap. (remove_on_exec counts
# PERF_COUNT_HW_INSTRUCTIONS, and a TCG guest has no PMU: not run here.)
. "$(dirname "$0")/lib.sh"

dir=${KSELFTEST:?}/perf_events
n=0
for t in sigtrap_threads watermark_signal mmap; do
	[ -x "$dir/$t" ] || fail "no $dir/$t"
	"$dir/$t" > "$TMP/$t.txt" 2>&1
	rc=$?
	echo "$t: exit $rc, $(grep -E '^# Totals' "$TMP/$t.txt")"
	[ $rc = 0 ] || { tail -20 "$TMP/$t.txt"; fail "$t exited $rc"; }
	grep -q '^not ok' "$TMP/$t.txt" && { grep '^not ok' "$TMP/$t.txt"; fail "$t"; }
	grep -qE '^# Totals: pass:[1-9][0-9]* fail:0 .*skip:0 ' "$TMP/$t.txt" ||
		fail "$t: not every case passed"
	n=$((n + 1))
done
[ $n = 3 ] || fail "ran $n of 3"
