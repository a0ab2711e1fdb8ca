#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deps.sh - install with apt-get what building, booting and testing need.
# Does nothing if everything is there already (apt-get update first if not).

set -euo pipefail
pkgs=(linux-source-6.12 build-essential flex bison bc libelf-dev libssl-dev
      cpio kmod rsync ccache git python3 xz-utils procps file
      qemu-system-x86 elfutils binutils
      libdw-dev libtraceevent-dev zlib1g-dev libzstd-dev liblzma-dev
      libcap-dev libnuma-dev gcc-multilib
      clang libclang-rt-dev gdb
      gnuplot-nox debhelper shellcheck)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f '${Status}\n' "$p" 2> /dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}"
[ "$(id -u)" = 0 ] || { echo "deps: need root for apt-get (missing: ${missing[*]})" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
apt-get update -q > /dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" > /dev/null
