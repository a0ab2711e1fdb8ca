# SPDX-License-Identifier: GPL-2.0
# The other kselftests of perf_events still pass on the patched kernel:
# sigtrap_threads, watermark_signal, mmap. A TCG guest has no PMU:
# remove_on_exec (PERF_COUNT_HW_INSTRUCTIONS) is not run, and the AUX
# cases of mmap are the only skips allowed.
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
	grep -qE '^# Totals: pass:[1-9][0-9]* fail:0 ' "$TMP/$t.txt" || fail "$t: no case passed"
	if grep -E '^ok [0-9]+ .*# SKIP' "$TMP/$t.txt" | grep -v '# SKIP No AUX event found'; then
		fail "$t: skipped cases other than AUX ones (above)"
	fi
	n=$((n + 1))
done
[ $n = 3 ] || fail "ran $n of 3"
