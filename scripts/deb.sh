#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deb.sh [BASE_CONFIG [NAME]] - installable Debian packages of the patched
# kernel, perf and the SFrame tools, in $BUILD_DIR/deb/NAME/:
#
#   linux-image-VERSION-sframe_*.deb (and linux-headers with modules):
#	the kernel of TREE, configured from BASE_CONFIG (default: the
#	running kernel's, /boot/config-$(uname -r), an x86-64 one) with
#	config/series.config merged on top (olddefconfig for the rest);
#	built in $BUILD_DIR/kbuild/deb-NAME/obj by the kernel's own
#	"make bindeb-pkg" (its linux-libc-dev is left out: it would replace
#	the distribution's, which libc6-dev needs);
#   perf-sframe_*.deb: /usr/bin/perf of make perf; it replaces Debian's
#	linux-perf, whose /usr/bin/perf it is;
#   sframe-tools_*.deb: sframe-gen, sframe-dump, sframe-check in /usr/bin,
#	sframe-audit.so in /usr/lib/x86_64-linux-gnu, their README.
#
# NAME (default: host) keeps builds from different bases apart.  The
# packages' library dependencies are dpkg-shlibdeps'.  A distribution's
# configuration builds thousands of modules: hours on a small machine.

set -euo pipefail

. "$(dirname "$0")/build-common.sh"
base=${1:-/boot/config-$(uname -r)}
name=${2:-host}
case $name in
*[!a-z0-9-]* | "") echo "deb: NAME '$name': lower-case letters, digits and '-' only" >&2; exit 2 ;;
esac
[ -f "$base" ] || { echo "deb: base configuration $base: no such file (BASE_CONFIG=...)" >&2; exit 1; }
base=$(realpath "$base")
grep -qx 'CONFIG_X86_64=y' "$base" ||
	{ echo "deb: $base is not an x86-64 kernel configuration (no CONFIG_X86_64=y)" >&2; exit 1; }
for t in dpkg-buildpackage dpkg-shlibdeps dpkg-deb; do
	command -v $t > /dev/null || { echo "deb: no $t (apt-get install dpkg-dev)" >&2; exit 1; }
done
# bindeb-pkg writes its packages into the parent of the object directory:
# one parent per NAME, so that two builds never take each other's
obj=$BUILD_DIR/kbuild/deb-$name/obj
top=${obj%/obj}
out=$BUILD_DIR/deb/$name
mkdir -p "$top"
exec 9> "$top/.lock"
flock -n 9 || { echo "deb: another make deb of $name runs (lock $top/.lock)" >&2; exit 1; }
perf=$BUILD_DIR/perf/perf
tools=$BUILD_DIR/sframe-tools
for f in "$perf" "$tools/sframe-gen" "$tools/sframe-dump" "$tools/sframe-check" \
	 "$tools/sframe-audit.so"; do
	[ -x "$f" ] || { echo "deb: no $f (make perf sframe-tools)" >&2; exit 1; }
done

# ---- the kernel ----
use_objdir "$obj" deb
kmake=(make --no-print-directory -C "$TREE" O="$obj" ARCH=x86_64 CC="$cc" HOSTCC="$cc"
       -j"$JOBS" LOCALVERSION=-sframe KBUILD_BUILD_USER=sframe KBUILD_BUILD_HOST=deb
       KBUILD_BUILD_TIMESTAMP="$(git -C "$TREE" log -1 --format=%cD)")
# configure again only when the base or the series' options changed
cat "$base" "$REPO/config/series.config" > "$obj/base+series.config"
if ! cmp -s "$obj/base+series.config" "$obj/.base+series.used" 2>/dev/null ||
   [ ! -f "$obj/.config" ]; then
	cp "$base" "$obj/.config"
	"$TREE/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
		"$REPO/config/series.config" > "$obj/merge.log" 2>&1 || {
		cat "$obj/merge.log" >&2
		echo "deb: merging config/series.config onto $base failed" >&2
		exit 1
	}
	# a distribution's signing keys are not here: build without them
	for k in SYSTEM_TRUSTED_KEYS SYSTEM_REVOCATION_KEYS; do
		v=$("$TREE/scripts/config" --file "$obj/.config" --state $k)
		if [ -n "$v" ] && [ "$v" != undef ] && [ ! -f "$TREE/$v" ]; then
			"$TREE/scripts/config" --file "$obj/.config" --set-str $k ""
		fi
	done
	"${kmake[@]}" -s olddefconfig
	cp "$obj/base+series.config" "$obj/.base+series.used"
fi
"$REPO/scripts/kconfig-check.sh" "$obj/.config" "$REPO/config/series.config" || {
	echo "deb: $base cannot have what the series needs (above): its dependencies?" >&2
	rm -f "$obj/.base+series.used"
	exit 1
}
krel=$("${kmake[@]}" -s kernelrelease)
[[ $krel =~ ^[0-9][A-Za-z0-9.+~-]*$ ]] || { echo "deb: kernel release '$krel'?" >&2; exit 1; }
rm -f "$top"/*.deb "$top"/*.buildinfo "$top"/*.changes
"${kmake[@]}" -s KDEB_PKGVERSION="$krel-1" bindeb-pkg > "$obj/bindeb-pkg.log" 2>&1 || {
	tail -n 30 "$obj/bindeb-pkg.log" >&2
	echo "deb: make bindeb-pkg failed (all of it in $obj/bindeb-pkg.log)" >&2
	exit 1
}
rm -rf "$out"
mkdir -p "$out"
rm -f "$top"/linux-libc-dev_*.deb
mv "$top"/linux-*.deb "$out/"
rm -f "$top"/*.buildinfo "$top"/*.changes

# ---- perf and the SFrame tools: dpkg-deb on a staged tree ----
# debpkg NAME DESCRIPTION EXTRA-CONTROL-LINES FILE:DEST...
debpkg() {
	local pkg=$1 desc=$2 extra=$3 root f deps
	shift 3
	root=$obj/stage-$pkg
	rm -rf "$root"
	for f; do
		case ${f#*:} in
		usr/share/*) install -D -m 644 "${f%%:*}" "$root/${f#*:}" ;;
		*) install -D -m 755 "${f%%:*}" "$root/${f#*:}" ;;
		esac
	done
	mkdir -p "$root/DEBIAN" "$root/debian"
	printf 'Source: %s\n\nPackage: %s\nArchitecture: amd64\n' "$pkg" "$pkg" \
		> "$root/debian/control"
	deps=$(cd "$root" && dpkg-shlibdeps -O $(find usr/bin usr/lib -type f 2> /dev/null) \
		2> "$obj/shlibdeps-$pkg.log" | sed -n 's/^shlibs:Depends=//p') || true
	[ -n "$deps" ] || { cat "$obj/shlibdeps-$pkg.log" >&2; echo "deb: dpkg-shlibdeps for $pkg" >&2; exit 1; }
	rm -rf "$root/debian"
	{
		echo "Package: $pkg"
		echo "Version: $krel-1"
		echo "Architecture: amd64"
		echo "Maintainer: $(git -C "$TREE" log -1 --format='%an <%ae>')"
		echo "Depends: $deps"
		[ -z "$extra" ] || printf '%s\n' "$extra"
		echo "Section: devel"
		echo "Priority: optional"
		echo "Description: $desc"
	} > "$root/DEBIAN/control"
	dpkg-deb --root-owner-group -Zxz --build "$root" "$out/${pkg}_$krel-1_amd64.deb" > /dev/null
}
debpkg perf-sframe "perf with deferred user callchains (--call-graph fp,defer)" \
	"$(printf 'Conflicts: linux-perf\nReplaces: linux-perf\nProvides: linux-perf')" \
	"$perf:usr/bin/perf"
debpkg sframe-tools "SFrame generator, dump, checker and LD_AUDIT registration helper" "" \
	"$tools/sframe-gen:usr/bin/sframe-gen" "$tools/sframe-dump:usr/bin/sframe-dump" \
	"$tools/sframe-check:usr/bin/sframe-check" \
	"$tools/sframe-audit.so:usr/lib/x86_64-linux-gnu/sframe-audit.so" \
	"$REPO/tools/sframe/README.md:usr/share/doc/sframe-tools/README.md"
echo "deb: $out ($krel, base $base):"
ls "$out" | sed 's/^/  /'
