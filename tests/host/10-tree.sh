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
mkdir -p "$HT/patches" "$HT/bad-patches"
cat > "$HT/bad-patches/0001-kernel-touch-a-file-that-is-not-there.patch" <<'P'
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
expect "tree: a patch that does not apply is named" 1 "patch 0001-kernel-touch-a-file-that-is-not-there.patch does not apply" -- \
	t "$HT/good.tar.xz" "$HT/bad-patches" fresh
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
expect "tree: export writes the series" 0 "exported 1 patches" -- \
	t "$HT/good.tar.xz" "$HT/patches" export
expect "tree: exported patch and cover letter exist" 0 "" -- \
	test -f "$HT/patches/0001-kernel-change-a.patch" -a -f "$HT/patches/0000-cover-letter.patch"
expect "tree: after export the tree matches" 0 "matches patches/: linux 6.12.118, 1 patches" -- \
	t "$HT/good.tar.xz" "$HT/patches" status
expect "tree: fresh tree re-applies the exported series" 0 "applied 1 patches" -- \
	t "$HT/good.tar.xz" "$HT/patches" fresh
expect "tree: re-applied series gives the same source" 0 "" -- \
	grep -qx 'int y;' "$HT/linux/kernel/a.c"
sed -i 's/Because\./Because, really./' "$HT/patches/0001-kernel-change-a.patch"
expect "tree: changed series rebuilds the tree" 0 "patches/ changed .*: rebuilding" -- \
	t "$HT/good.tar.xz" "$HT/patches" prepare
touch -d '2001-01-01' "$HT/good.tar.xz"
expect "tree: changed base rebuilds the tree" 0 "changed since .*: rebuilding" -- \
	t "$HT/good.tar.xz" "$HT/patches" prepare
rm -rf "$HT/linux/.git/sframe-series"
expect "tree: a tree not made by tree.sh is reported" 1 "not made by tree.sh" -- \
	t "$HT/good.tar.xz" "$HT/patches" prepare
