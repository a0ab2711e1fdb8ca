#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tree.sh - keep the kernel tree outside the repository in step with patches/.
#
#   tree.sh prepare   make TREE = pristine linux-source + patches/ (git am);
#                     reuse it only if it provably matches, rebuild it if the
#                     series or the base changed and the tree holds no work
#                     of its own, refuse (exit 1) if it does
#   tree.sh fresh     always re-create TREE from the tarball (CI does this)
#   tree.sh export    write TREE's commits back into patches/ (format-patch,
#                     one folder per topic, cover letters kept)
#   tree.sh status    say whether TREE matches patches/ (exit 0 if it does)
#   tree.sh topics    TREE's topic branches, in order (for series-check.sh)
#
# Environment (defaults in parentheses):
#   TREE           kernel tree ($BUILD_DIR/linux)
#   BUILD_DIR      build directory (../build-<clone name>)
#   LINUX_TARBALL  linux-source tarball (/usr/src/linux-source-6.12.tar.xz)
#   PATCHES        the series (<repo>/patches)
#   BASE_VERSION   kernel version the series is for (6.12)
#
# The series is a sequence of topic series, each posted on its own:
# patches/NN-topic/ holds 0000-cover-letter.patch and the topic's patches,
# and the topics apply in the order of NN.  In TREE, branch NN-topic marks
# the last commit of each topic (rebase.updateRefs keeps the branches on
# their commits through a rebase) and its description holds the cover
# letter's text; commits after the last topic's branch belong to it.
#
# The stamp .git/sframe-series in TREE records what the tree was made
# from: tarball identity, kernel version, series hash and the HEAD that
# matched the series.  Anything that disagrees with it is reported.

set -euo pipefail

. "$(dirname "$0")/paths.sh"
LINUX_TARBALL=${LINUX_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
PATCHES=${PATCHES:-$REPO/patches}
BASE_VERSION=${BASE_VERSION:-6.12}
STAMP=$TREE/.git/sframe-series
COVER=0000-cover-letter.patch

# Reproducible import commit: same tarball, same commit id.
IMPORT_ENV=(GIT_AUTHOR_NAME="linux-source import" GIT_AUTHOR_EMAIL="import@localhost"
	    GIT_COMMITTER_NAME="linux-source import" GIT_COMMITTER_EMAIL="import@localhost"
	    GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z")

die() { echo "tree: error: $*" >&2; exit 1; }
note() { echo "tree: $*" >&2; }

# The topic folders, in order.
series_topics() {
	[ -d "$PATCHES" ] || return 0
	find "$PATCHES" -mindepth 1 -maxdepth 1 -type d -name '[0-9][0-9]-*' -printf '%f\n' | LC_ALL=C sort
}

# The patches of topic $1, in order.
topic_files() {
	find "$PATCHES/$1" -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' ! -name "$COVER" | LC_ALL=C sort
}

series_files() {
	local t
	for t in $(series_topics); do topic_files "$t"; done
}

series_hash() {
	local f
	{ for f in $(series_files) $(series_topics | sed "s|^|$PATCHES/|; s|\$|/$COVER|"); do
		[ -f "$f" ] || continue
		echo "${f#"$PATCHES"/}"; cat "$f"
	done; } | sha256sum | cut -d' ' -f1
}

# The topic branches of TREE, in order.
tree_topics() {
	git -C "$TREE" for-each-ref --format='%(refname:short)' 'refs/heads/[0-9][0-9]-*' | LC_ALL=C sort
}

tarball_id() {
	[ -f "$LINUX_TARBALL" ] || die "linux-source tarball $LINUX_TARBALL not found (apt-get install linux-source-$BASE_VERSION, or set LINUX_TARBALL)"
	stat -L -c '%s:%Y' "$LINUX_TARBALL" | sed "s|^|$(readlink -f "$LINUX_TARBALL"):|"
}

tree_version() {
	awk -F' *= *' '$1=="VERSION"{v=$2} $1=="PATCHLEVEL"{p=$2} $1=="SUBLEVEL"{s=$2}
		END{if (v=="" || p=="") exit 1; printf "%s.%s.%s\n", v, p, s}' "$1/Makefile"
}

stamp_get() { sed -n "s/^$1=//p" "$STAMP" 2>/dev/null; }

write_stamp() {
	{
		echo "tarball=$(tarball_id)"
		echo "version=$(tree_version "$TREE")"
		echo "series=$(series_hash)"
		echo "head=$(git -C "$TREE" rev-parse HEAD)"
		echo "generation=$1"
	} > "$STAMP.tmp"
	mv "$STAMP.tmp" "$STAMP"
}

# Why TREE doesn't match the series: prints a reason, or nothing if it does.
# Second word of the reason: "stale" (safe to rebuild) or "work" (refuse).
mismatch() {
	if [ ! -e "$TREE" ]; then echo "missing stale $TREE does not exist"; return; fi
	if [ -e "$TREE.incomplete" ]; then echo "incomplete stale the last attempt to make $TREE failed"; return; fi
	if [ ! -f "$STAMP" ]; then
		echo "foreign work $TREE exists but was not made by tree.sh (no $STAMP); move it away or set TREE"
		return
	fi
	# --ignored: Debian's .gitignore hides every new file; builds go to O=.
	if [ -n "$(git -C "$TREE" status --porcelain --ignored 2>/dev/null)" ]; then
		echo "modified work $TREE has uncommitted changes; commit them and run 'make export', or 'make tree-reset' to discard"
		return
	fi
	if [ "$(git -C "$TREE" rev-parse HEAD)" != "$(stamp_get head)" ]; then
		echo "commits work $TREE has commits that are not in patches/; run 'make export', or 'make tree-reset' to discard them"
		return
	fi
	if [ "$(stamp_get tarball)" != "$(tarball_id)" ]; then
		echo "base stale $LINUX_TARBALL changed since $TREE was made from it"
		return
	fi
	if [ "$(stamp_get series)" != "$(series_hash)" ]; then
		echo "series stale patches/ changed since $TREE was made"
		return
	fi
}

apply_series() {
	local t f n=0 topics=0
	for t in $(series_topics); do
		topics=$((topics + 1))
		[ -f "$PATCHES/$t/$COVER" ] || die "topic $t has no $COVER"
		[ -n "$(topic_files "$t")" ] || die "topic $t has no patches"
		for f in $(topic_files "$t"); do
			n=$((n + 1))
			if ! git -C "$TREE" am --quiet --keep-cr "$f" > "$TREE/.git/am.log" 2>&1; then
				sed 's/^/tree:   /' "$TREE/.git/am.log" >&2
				git -C "$TREE" am --abort > /dev/null 2>&1 || true
				die "patch $t/$(basename "$f") does not apply to linux $(tree_version "$TREE") (patch $n of the series)"
			fi
		done
		git -C "$TREE" branch --quiet -f "$t" HEAD
		load_description "$t"
	done
	note "applied $n patches in $topics topics"
}

# A topic's cover letter text lives in its branch's description while the
# tree is in use, so that export regenerates shortlog and diffstat around it.
load_description() {
	local cover=$PATCHES/$1/$COVER desc
	desc=$(awk '
		/^Subject: / { sub(/^Subject: \[[^]]*\] */, ""); subj = $0; insubj = 1; next }
		insubj && /^[ \t]/ { sub(/^[ \t]+/, " "); subj = subj $0; next }
		{ insubj = 0 }
		subj != "" && !body && /^$/ { body = 1; next }
		body && /^[^ ].* \([0-9]+\):$/ { exit }
		body { text = text $0 "\n" }
		END { printf "%s\n\n%s", subj, text }' "$cover")
	git -C "$TREE" config "branch.$1.description" "$desc"
}

create() {
	local version gen
	tarball_id > /dev/null
	note "creating $TREE from $LINUX_TARBALL"
	mkdir -p "$(dirname "$TREE")"
	touch "$TREE.incomplete"
	rm -rf "$TREE"
	mkdir -p "$TREE"
	tar -xJf "$LINUX_TARBALL" -C "$TREE" --strip-components=1 ||
		die "cannot unpack $LINUX_TARBALL"
	version=$(tree_version "$TREE") || die "$LINUX_TARBALL holds no kernel Makefile"
	case $version in
	"$BASE_VERSION".*) ;;
	*) die "$LINUX_TARBALL is linux $version, the series is for linux $BASE_VERSION.x" ;;
	esac
	git -C "$TREE" init --quiet --initial-branch=main
	git -C "$TREE" config core.autocrlf false
	# Debian's top-level .gitignore ignores everything ("/*"): force.
	git -C "$TREE" add -A -f
	env "${IMPORT_ENV[@]}" git -C "$TREE" commit --quiet --no-verify --no-gpg-sign \
		-m "Import linux-source $version" \
		-m "Pristine $(basename "$LINUX_TARBALL")$(dpkg-query -W -f ' (Debian ${Version})' "linux-source-$BASE_VERSION" 2>/dev/null || true)."
	git -C "$TREE" tag -f base > /dev/null
	# A rebase moves the topic branches with their commits.
	git -C "$TREE" config rebase.updateRefs true
	apply_series
	gen=$(date +%s.%N)
	write_stamp "$gen"
	rm -f "$TREE.incomplete"
	note "linux $version + series ready in $TREE"
}

cmd_prepare() {
	local why
	why=$(mismatch)
	if [ -z "$why" ]; then
		note "$TREE matches patches/ (linux $(stamp_get version))"
		return 0
	fi
	case $why in
	*" stale "*) note "${why#* * }: rebuilding"; create ;;
	*) die "${why#* * }" ;;
	esac
}

cmd_fresh() {
	local why
	why=$(mismatch)
	case $why in
	*" work "*) [ "${FORCE:-}" = 1 ] || die "${why#* * } (FORCE=1 discards it)" ;;
	esac
	create
}

cmd_export() {
	local tmp n total=0 t prev=base last=
	[ -f "$STAMP" ] || die "$TREE was not made by tree.sh"
	[ -z "$(git -C "$TREE" status --porcelain --ignored)" ] ||
		die "$TREE has uncommitted changes: commit them first"
	n=$(git -C "$TREE" rev-list --count base..HEAD)
	[ "$n" -eq 0 ] || [ -n "$(tree_topics)" ] ||
		die "$TREE has no topic branches (NN-name at each topic's last commit)"
	for t in $(tree_topics); do
		git -C "$TREE" merge-base --is-ancestor "$prev" "$t" ||
			die "topic branch $t does not follow $prev"
		last=$t prev=$t
	done
	if [ -n "$last" ]; then
		git -C "$TREE" merge-base --is-ancestor "$last" HEAD ||
			die "topic branch $last is not in HEAD"
		if [ "$(git -C "$TREE" rev-parse "$last")" != "$(git -C "$TREE" rev-parse HEAD)" ]; then
			note "the commits after $last go into $last"
			git -C "$TREE" branch --quiet -f "$last" HEAD
		fi
	fi
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' RETURN
	prev=base
	for t in $(tree_topics); do
		n=$(git -C "$TREE" rev-list --count "$prev..$t")
		[ "$n" -gt 0 ] || die "topic $t has no commits of its own"
		git -C "$TREE" config "branch.$t.description" > /dev/null ||
			die "topic $t has no description (its cover letter's subject and text)"
		git -C "$TREE" format-patch --quiet --cover-letter --cover-from-description=subject \
			--zero-commit --no-signature --subject-prefix=PATCH \
			-o "$tmp/$t" "$prev..refs/heads/$t"
		total=$((total + n)) prev=$t
	done
	mkdir -p "$PATCHES"
	for t in $(series_topics); do
		find "$PATCHES/$t" -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' -delete
		rmdir --ignore-fail-on-non-empty "$PATCHES/$t"
	done
	for t in $(tree_topics); do
		mkdir -p "$PATCHES/$t"
		cp "$tmp/$t"/*.patch "$PATCHES/$t"/
	done
	write_stamp "$(stamp_get generation)"
	note "exported $total patches in $(tree_topics | wc -l) topics to $PATCHES"
}

cmd_status() {
	local why
	why=$(mismatch)
	if [ -n "$why" ]; then
		echo "${why#* * }"
		return 1
	fi
	echo "$TREE matches patches/: linux $(stamp_get version), $(git -C "$TREE" rev-list --count base..HEAD) patches in $(tree_topics | wc -l) topics"
}

case ${1:-} in
prepare) cmd_prepare ;;
fresh) cmd_fresh ;;
export) cmd_export ;;
status) cmd_status ;;
generation) stamp_get generation ;;
topics) tree_topics ;;
*) sed -n '3,28s/^# \{0,1\}//p' "$0"; exit 2 ;;
esac
