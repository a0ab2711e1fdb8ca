#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tree.sh on a small fake linux-source: each bad input gives a clear
# message naming its cause and a non-zero exit; a tree that doesn't match
# the series is rebuilt or reported, never reused; export round-trips.
. "$(dirname "$0")/lib.sh"

mktar() {	# mktar FILE VERSION PATCHLEVEL SUBLEVEL
	local d=$HT/src.$$
	rm -rf "$d"; mkdir -p "$d/linux-source-6.12/kernel"
	printf 'VERSION = %s\nPATCHLEVEL = %s\nSUBLEVEL = %s\nEXTRAVERSION =\n' "$2" "$3" "$4" \
		> "$d/linux-source-6.12/Makefile"
	printf 'int x;\n' > "$d/linux-source-6.12/kernel/a.c"
	printf '/*\n' > "$d/linux-source-6.12/.gitignore"
	tar -cJf "$1" -C "$d" linux-source-6.12
}
mktar "$HT/good.tar.xz" 6 12 118
mktar "$HT/old.tar.xz" 6 11 5
mkdir -p "$HT/patches" "$HT/bad-patches/01-bad" "$HT/nocover/01-bare"
printf 'Subject: [PATCH 0/1] Bad\n\nA bad topic.\n' > "$HT/bad-patches/01-bad/0000-cover-letter.patch"
cat > "$HT/bad-patches/01-bad/0001-kernel-touch-a-file-that-is-not-there.patch" <<'P'
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Test <test@example.com>
Date: Sat, 1 Jan 2000 00:00:00 +0000
Subject: [PATCH] kernel: touch a file that is not there

---
 kernel/missing.c | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/kernel/missing.c b/kernel/missing.c
--- a/kernel/missing.c
+++ b/kernel/missing.c
@@ -1 +1 @@
-int y;
+int z;
P

t() { env TREE="$HT/linux" LINUX_TARBALL="$1" PATCHES="$2" "$REPO/scripts/tree.sh" "${@:3}"; }

expect "tree: missing linux-source tarball is named" 1 "tarball .*/nope.tar.xz not found" -- \
	t "$HT/nope.tar.xz" "$HT/patches" prepare
expect "tree: wrong kernel version is refused" 1 "is linux 6.11.5, the series is for linux 6.12.x" -- \
	t "$HT/old.tar.xz" "$HT/patches" prepare
expect "tree: a failed attempt is redone, not reused" 0 "last attempt .* failed: rebuilding" -- \
	t "$HT/good.tar.xz" "$HT/patches" prepare
expect "tree: a patch that does not apply is named" 1 "patch 01-bad/0001-kernel-touch-a-file-that-is-not-there.patch does not apply" -- \
	t "$HT/good.tar.xz" "$HT/bad-patches" fresh
cp "$HT/bad-patches/01-bad/0001-"*.patch "$HT/nocover/01-bare/"
expect "tree: a topic without a cover letter is refused" 1 "topic 01-bare has no 0000-cover-letter.patch" -- \
	t "$HT/good.tar.xz" "$HT/nocover" fresh
expect "tree: empty series applies" 0 "applied 0 patches" -- \
	t "$HT/good.tar.xz" "$HT/patches" prepare
expect "tree: matching tree is reused" 0 "matches patches/" -- \
	t "$HT/good.tar.xz" "$HT/patches" prepare

# Developer workflow: commit in the tree, export, the series holds it.
echo 'int y;' > "$HT/linux/kernel/a.c"
expect "tree: local modification is reported" 1 "uncommitted changes" -- \
	t "$HT/good.tar.xz" "$HT/patches" prepare
git -C "$HT/linux" -c user.name=T -c user.email=t@example.com commit -q -am "kernel: change a" -m "Because."
expect "tree: unexported commit is reported, not discarded" 1 "commits that are not in patches/" -- \
	t "$HT/good.tar.xz" "$HT/patches" prepare
expect "tree: commits outside any topic are not exported" 1 "no topic branches" -- \
	t "$HT/good.tar.xz" "$HT/patches" export
expect "tree: ... and nothing is written" 0 "" -- \
	test -z "$(ls -A "$HT/patches")"
git -C "$HT/linux" branch 01-core
git -C "$HT/linux" config branch.01-core.description "kernel: The core

Why the core."
expect "tree: export writes the topic" 0 "exported 1 patches in 1 topics" -- \
	t "$HT/good.tar.xz" "$HT/patches" export
expect "tree: exported patch and cover letter are in the topic's folder" 0 "" -- \
	test -f "$HT/patches/01-core/0001-kernel-change-a.patch" -a -f "$HT/patches/01-core/0000-cover-letter.patch"
expect "tree: the cover letter has the topic's subject and text" 0 "" -- \
	grep -Fqx -e "Subject: [PATCH 0/1] kernel: The core" "$HT/patches/01-core/0000-cover-letter.patch"
expect "tree: after export the tree matches" 0 "matches patches/: linux 6.12.118, 1 patches in 1 topics" -- \
	t "$HT/good.tar.xz" "$HT/patches" status

# A second topic; a commit after the last topic's branch goes into it.
echo 'int w;' > "$HT/linux/kernel/b.c"
git -C "$HT/linux" add -f kernel/b.c
git -C "$HT/linux" -c user.name=T -c user.email=t@example.com commit -q -m "kernel: add b" -m "For b."
git -C "$HT/linux" branch 02-more
git -C "$HT/linux" config branch.02-more.description "kernel: More, with a subject long enough to be folded by format-patch

More text."
echo 'int v;' >> "$HT/linux/kernel/b.c"
git -C "$HT/linux" -c user.name=T -c user.email=t@example.com commit -q -am "kernel: grow b" -m "For v."
expect "tree: a commit after the last topic goes into it" 0 "commits after 02-more go into 02-more" -- \
	t "$HT/good.tar.xz" "$HT/patches" export
expect "tree: the second topic holds its two patches" 0 "" -- \
	test -f "$HT/patches/02-more/0001-kernel-add-b.patch" -a -f "$HT/patches/02-more/0002-kernel-grow-b.patch" \
		-a ! -e "$HT/patches/02-more/0003-kernel-change-a.patch"
# A rebase that rewords the first topic's commit keeps both topics whole.
expect "tree: a rebase moves the topic branches" 0 "" -- \
	env GIT_SEQUENCE_EDITOR="sed -i '1s/^pick/reword/'" GIT_EDITOR="sed -i 's/^Because\\.$/Because, indeed./'" \
	git -C "$HT/linux" -c user.name=T -c user.email=t@example.com rebase -q -i base
expect "tree: export after the rebase" 0 "exported 3 patches in 2 topics" -- \
	t "$HT/good.tar.xz" "$HT/patches" export
expect "tree: the reworded commit is in the first topic" 0 "" -- \
	grep -qx "Because, indeed." "$HT/patches/01-core/0001-kernel-change-a.patch"
expect "tree: fresh tree re-applies the exported series" 0 "applied 3 patches in 2 topics" -- \
	t "$HT/good.tar.xz" "$HT/patches" fresh
expect "tree: re-applied series gives the same source" 0 "" -- \
	grep -qx 'int y;' "$HT/linux/kernel/a.c"
expect "tree: a folded cover subject comes back whole" 0 "" -- \
	test "$(git -C "$HT/linux" config branch.02-more.description | head -1)" = \
		"kernel: More, with a subject long enough to be folded by format-patch"
expect "tree: re-applied topics end where they ended" 0 "" -- \
	test "$(git -C "$HT/linux" rev-list --count base..01-core)" = 1 -a \
		"$(git -C "$HT/linux" rev-list --count 01-core..02-more)" = 2
sed -i 's/Because, indeed\./Because, really./' "$HT/patches/01-core/0001-kernel-change-a.patch"
expect "tree: changed series rebuilds the tree" 0 "patches/ changed .*: rebuilding" -- \
	t "$HT/good.tar.xz" "$HT/patches" prepare
touch -d '2001-01-01' "$HT/good.tar.xz"
expect "tree: changed base rebuilds the tree" 0 "changed since .*: rebuilding" -- \
	t "$HT/good.tar.xz" "$HT/patches" prepare
rm -rf "$HT/linux/.git/sframe-series"
expect "tree: a tree not made by tree.sh is reported" 1 "not made by tree.sh" -- \
	t "$HT/good.tar.xz" "$HT/patches" prepare
