#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# series-check.sh - build the state after every patch of the series and
# say which patch breaks the build.
#
# Usage: series-check.sh [--no-perf] [FIRST [LAST]]
#
# For each patch (the commits base..HEAD of the tree, or patches FIRST to
# LAST counted through the whole series), in a worktree of the tree at that commit, with the guest
# config (make olddefconfig):
#  - the directories of the .c files it changes outside tools/, and, for a
#    change of a header, Kconfig or Makefile, kernel/unwind/ and
#    kernel/events/ too (what the config enables at that patch);
#  - a patch that changes tools/perf: perf (incrementally; --no-perf skips).
# Warnings count as failures (W=1 is not used: the base tree has some).
# Prints "ok N TOPIC/NNNN subject" or "BROKEN N TOPIC/NNNN subject"
# (N counts through the series, NNNN within the topic) with the first
# errors; exit status 1 if a patch broke the build.
set -uo pipefail

. "$(dirname "$0")/build-common.sh"

perf=true
if [ "${1:-}" = --no-perf ]; then
	perf=false
	shift
fi
first=${1:-1} last=${2:-9999}
base=$(git -C "$TREE" rev-parse --verify -q base) ||
	{ echo "series-check: $TREE has no 'base' tag (make tree)" >&2; exit 1; }
config=$BUILD_DIR/kbuild/guest/.config
[ -f "$config" ] || { echo "series-check: no $config (make kernel)" >&2; exit 1; }

out=$BUILD_DIR/series-check
wt=$out/tree
mkdir -p "$out/kbuild" "$out/perf"
git -C "$TREE" worktree remove --force "$wt" > /dev/null 2>&1
rm -rf "$wt"
git -C "$TREE" worktree add -q --detach "$wt" "$base" ||
	{ echo "series-check: cannot make a worktree at $wt" >&2; exit 1; }
trap 'git -C "$TREE" worktree remove --force "$wt" > /dev/null 2>&1' EXIT

# "commit topic number-in-topic" for every commit of the series; commits
# after the last topic branch belong to the last topic (tree.sh export).
series() {
	local prev=$base t c i=0
	for t in $("$REPO/scripts/tree.sh" topics) ""; do
		[ -z "$t" ] || i=0
		for c in $(git -C "$TREE" rev-list --reverse "$prev..${t:-HEAD}"); do
			i=$((i + 1))
			echo "$c ${t:-$last_topic} $i"
		done
		[ -z "$t" ] || { prev=$t; last_topic=$t; }
	done
}
last_topic=none

broken=0 n=0 built=0
while read -r c topic i; do
	n=$((n + 1))
	[ "$n" -lt "$first" ] || [ "$n" -gt "$last" ] && continue
	built=$((built + 1))
	subj=$(git -C "$TREE" log -1 --format=%s "$c")
	tag=$(printf '%d %s/%04d %s' "$n" "$topic" "$i" "$subj")
	files=$(git -C "$TREE" diff-tree --no-commit-id --name-only -r "$c")
	git -C "$wt" checkout -q "$c" || { echo "BROKEN $tag: checkout"; exit 1; }

	# Directories, not objects: a directory builds what the config
	# enables at this patch, an object is built whatever the config says.
	dirs=$(echo "$files" | grep -v -e '^tools/' -e '^Documentation/' |
	       grep '\.c$' | xargs -r -n1 dirname | sort -u | sed 's|$|/|')
	if echo "$files" | grep -v '^tools/' | grep -qE '\.h$|Kconfig|Makefile'; then
		dirs=$(printf '%s\n' kernel/unwind/ kernel/events/ $dirs | sort -u)
	fi
	log=$out/$(printf %04d "$n").log
	: > "$log"
	if [ -n "$dirs" ]; then
		cp "$config" "$out/kbuild/.config"
		make -C "$wt" O="$out/kbuild" CC="$cc" -j"$JOBS" olddefconfig > /dev/null 2>&1 &&
		make -C "$wt" O="$out/kbuild" CC="$cc" -j"$JOBS" $dirs >> "$log" 2>&1 ||
			echo "make failed" >> "$log"
	fi
	if $perf && echo "$files" | grep -q '^tools/perf/'; then
		make -C "$wt/tools/perf" O="$out/perf" -j"$JOBS" CC="$cc" HOSTCC="$cc" \
			NO_LIBPYTHON=1 NO_LIBPERL=1 BUILD_BPF_SKEL=0 NO_LIBUNWIND=1 \
			NO_SLANG=1 NO_GTK2=1 NO_LIBBABELTRACE=1 NO_JVMTI=1 \
			NO_LIBLLVM=1 NO_CAPSTONE=1 NO_SDT=1 >> "$log" 2>&1 ||
			echo "make failed" >> "$log"
	fi
	if grep -qE 'warning:|error:|make failed' "$log"; then
		echo "BROKEN $tag"
		grep -E 'warning:|error:|make failed' "$log" | head -n 5 | sed 's/^/    /'
		broken=$((broken + 1))
	else
		echo "ok $tag"
	fi
done < <(series)
echo "series-check: $built of $n patches built, $broken broken"
[ "$broken" = 0 ]
