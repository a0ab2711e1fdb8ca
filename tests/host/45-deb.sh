#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Debian packages of make deb, as make deb-test builds them from the
# nounwind kernel's configuration (the guest's without the series'
# options): the kernel package's configuration has the options that
# config/series.config adds to the base; perf and the SFrame tools come
# with their library dependencies; and the kernel taken out of its
# package boots in QEMU, where the packaged perf records whole stacks of
# a program without frame pointers from its SFrame data (--call-graph
# fp,defer) and the packaged sframe-dump reads that program.
. "$(dirname "$0")/lib.sh"

debs=$BUILD_DIR/deb/test
base=$BUILD_DIR/kbuild/nounwind/.config
vm=$REPO/scripts/vm
prog=$WORKLOADS/chain-sframe3

pkg() { ls "$debs"/$1_*.deb 2> /dev/null | grep -v -- '-dbg_' | head -n 1; }
image=$(pkg 'linux-image-*')
perfdeb=$(pkg perf-sframe)
toolsdeb=$(pkg sframe-tools)
check "make deb-test made the kernel, perf and SFrame tools packages" \
	test -f "$image" -a -f "$perfdeb" -a -f "$toolsdeb"
check "no linux-libc-dev, which would replace the distribution's" \
	test -z "$(pkg linux-libc-dev)"
[ -f "$image" ] && [ -f "$perfdeb" ] && [ -f "$toolsdeb" ] || exit 1

# every package is well formed: dpkg-deb reads its control file
for d in "$debs"/*.deb; do
	check "$(basename "$d"): dpkg-deb --info" dpkg-deb --info "$d"
done
field() { dpkg-deb --field "$1" "$2"; }
expect "perf-sframe depends on the libraries perf links (libdw, libtraceevent)" 0 \
	"libdw1 .*libtraceevent1|libtraceevent1 .*libdw1" -- field "$perfdeb" Depends
expect "perf-sframe replaces Debian's linux-perf" 0 "^linux-perf$" -- field "$perfdeb" Replaces
expect "sframe-tools depends on libdw1 and libc6" 0 "libc6 .*libdw1|libdw1 .*libc6" -- \
	field "$toolsdeb" Depends

# the contents
root=$HT/scratch/root
mkdir -p "$root"
for d in "$image" "$perfdeb" "$toolsdeb"; do
	dpkg-deb -x "$d" "$root" || not_ok "dpkg-deb -x $d"
done
krel=$(basename "$image" | sed -n 's/^linux-image-\([^_]*\)_.*/\1/p')
expect "the base lacks CONFIG_UNWIND_USER" 0 "" -- grep -qx "# CONFIG_UNWIND_USER is not set" "$base"
for o in CONFIG_PERF_EVENTS CONFIG_UNWIND_USER CONFIG_UNWIND_USER_SFRAME; do
	expect "linux-image $krel: $o=y in its /boot/config" 0 "" -- \
		grep -qx "$o=y" "$root/boot/config-$krel"
done
for f in usr/bin/perf usr/bin/sframe-gen usr/bin/sframe-dump usr/bin/sframe-check \
	 usr/lib/x86_64-linux-gnu/sframe-audit.so usr/share/doc/sframe-tools/README.md \
	 "boot/vmlinuz-$krel"; do
	check "packaged: /$f" test -s "$root/$f"
done
expect "packaged sframe-gen runs (--help)" 0 "sframe-gen" -- "$root/usr/bin/sframe-gen" --help

# the packaged kernel boots; the packaged perf unwinds with SFrame there
[ -x "$prog" ] || { not_ok "workload $prog (make workloads)"; exit 1; }
expect "packaged kernel boots and is the packaged release" 0 "^$krel\$" -- \
	"$vm" --kernel "$root/boot/vmlinuz-$krel" -- uname -r
data=$HT/scratch/perf.data
# perf script in the guest too: the kernel's symbols are its /proc/kallsyms
expect "packaged perf records --call-graph fp,defer in the packaged kernel" 0 "" -- \
	"$vm" --kernel "$root/boot/vmlinuz-$krel" --scratch "$HT/scratch" -- sh -c "
	$root/usr/bin/perf record -q -e cpu-clock -F 1000 --call-graph fp,defer \
		-o $data -- $prog 1500 &&
	$root/usr/bin/perf script -i $data -F comm,tid,time,ip,sym,symoff,dso --ns \
		> $HT/scratch/script.txt &&
	$root/usr/bin/perf report -i $data --stats > $HT/scratch/stats.txt"
lost=$(awk '/^ *LOST(_SAMPLES)? events:/ { n += $3 } END { print n + 0 }' "$HT/scratch/stats.txt")
expect "whole stacks of a program without frame pointers, from its SFrame" 0 "^OK" -- \
	python3 "$REPO/tests/lib/stacks.py" --lost "$lost" --comm chain-sframe3 --top chain_leaf \
		--expect chain_leaf,chain_c,chain_b,chain_a,main --mode full --min 100 "$HT/scratch/script.txt" &&
	note "$(head -n 3 "$HT/.out")"
expect "packaged sframe-dump reads the program's SFrame v3" 0 "SFRAME_VERSION_3" -- \
	"$root/usr/bin/sframe-dump" "$prog"
