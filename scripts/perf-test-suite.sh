#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf-test-suite.sh - run the whole `perf test` suite in the guest twice:
# with the perf of the series and with the perf of the tree just before
# the series' perf tools patches (built from a git worktree of TREE at that
# commit, into $BUILD_DIR/perf-base), and compare the failures.  Prints
# both lists; fails if the series adds a failure.  Slow under TCG (about
# an hour for both): not part of `make test`; `make perf-test-suite`.
#
# Results: $BUILD_DIR/perf-test-suite/{base,series}.log and failures.txt.

set -euo pipefail

. "$(dirname "$0")/paths.sh"
OUT=$BUILD_DIR/perf-test-suite
BASE_TREE=$BUILD_DIR/linux-perf-base
mkdir -p "$OUT"

first=$(git -C "$TREE" log --reverse --format=%H -E \
	--grep='^perf (tools|session|record|script|inject)(:| )' | head -n 1)
[ -n "$first" ] || { echo "perf-test-suite: no perf tools patch in $TREE" >&2; exit 1; }
base=$(git -C "$TREE" rev-parse "$first^")

if [ "$(git -C "$BASE_TREE" rev-parse HEAD 2>/dev/null)" != "$base" ]; then
	git -C "$TREE" worktree remove --force "$BASE_TREE" 2>/dev/null || rm -rf "$BASE_TREE"
	git -C "$TREE" worktree prune
	git -C "$TREE" worktree add --detach "$BASE_TREE" "$base" > /dev/null
	rm -rf "$BUILD_DIR/perf-base"
fi
echo "perf-test-suite: base $(git -C "$TREE" log -1 --format='%h %s' "$base")"
TREE=$BASE_TREE PERF_OUT=$BUILD_DIR/perf-base "$REPO/scripts/build-perf.sh"
make -s --no-print-directory -C "$REPO" perf
# Copies: the run takes long, and the build directories may change meanwhile.
# The base run is kept from an earlier one made with the same base perf
# binary, if that ran to the end (the base doesn't change with the series).
mkdir -p "$OUT/base" "$OUT/series"
run_base=1
if cmp -s "$BUILD_DIR/perf-base/perf" "$OUT/base/perf" && [ -f "$OUT/base.done" ]; then
	run_base=0
	echo "perf-test-suite: base perf unchanged, keeping $OUT/base.log"
else
	rm -f "$OUT/base.done"
	cp "$BUILD_DIR/perf-base/perf" "$OUT/base/perf"
fi
cp "$BUILD_DIR/perf/perf" "$OUT/series/perf"

# The crafted-data test's scale scenario (20000 samples, in a dozen
# forms) takes most of an hour under TCG; host test 50 runs it in full.
cat > "$OUT/run.sh" <<EOS
set -u
export PERF_DEFERRED_SCALE=${PERF_DEFERRED_SCALE:-1000}
run() {
	cd "\$2" && PATH=\$(dirname "\$3"):\$PATH "\$3" test > "$OUT/\$1.log" 2>&1
	rc=\$?
	echo "\$1: exit \$rc, \$(grep -c ': Ok' "$OUT/\$1.log") ok, \$(grep -c 'FAILED!' "$OUT/\$1.log") failed, \$(grep -c ': Skip' "$OUT/\$1.log") skipped"
	touch "$OUT/\$1.done"
}
[ $run_base = 1 ] && run base "$BASE_TREE" "$OUT/base/perf"
rm -f "$OUT/series.done"
run series "$TREE" "$OUT/series/perf"
EOS
"$REPO/scripts/vm" -t "${VM_TIMEOUT:-7200}" -m 4G -s "$OUT" -- bash "$OUT/run.sh"
for r in base series; do
	[ -f "$OUT/$r.done" ] || { echo "perf-test-suite: the $r run did not finish (log: $OUT/$r.log)" >&2; exit 1; }
done

# "NN: name : FAILED!" and "NN.M: name : FAILED!" (subtests)
failures() { sed -n 's/^ *[0-9.]*: \(.*[^ ]\) *: FAILED!.*/\1/p' "$OUT/$1.log" | sort -u; }
failures base > "$OUT/base.failed"
failures series > "$OUT/series.failed"
comm -13 "$OUT/base.failed" "$OUT/series.failed" > "$OUT/new.failed"
{
	echo "Failures without the series' perf patches:"
	sed 's/^/  /' "$OUT/base.failed"
	echo "Failures with them:"
	sed 's/^/  /' "$OUT/series.failed"
	echo "New failures:"
	sed 's/^/  /' "$OUT/new.failed"
} | tee "$OUT/failures.txt"
new=$(wc -l < "$OUT/new.failed")
echo "perf-test-suite: $new new failures"
[ "$new" = 0 ] && exit 0
# What the suite doesn't show: the new failures again, verbose.
"$REPO/scripts/vm" -t 1800 -m 4G -s "$OUT" -- bash -c "cd '$TREE' &&
	while read -r t; do PATH='$OUT/series':\$PATH '$OUT/series/perf' test -v \"\$t\"; done \
	< '$OUT/new.failed'" 2>&1 | tee "$OUT/new-failures.log"
exit 1
