#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kconfig-check.sh DOTCONFIG FRAGMENT...
#
# Check that every option a fragment asks for stuck in the resulting .config
# (Kconfig silently drops options whose dependencies are not met).  Prints
# each option that did not stick with what it became, exits 1 if any.

set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 DOTCONFIG FRAGMENT..." >&2; exit 2; }
dotconfig=$1; shift
[ -f "$dotconfig" ] || { echo "kconfig-check: $dotconfig: no such file" >&2; exit 1; }

bad=0
for frag; do
	[ -f "$frag" ] || { echo "kconfig-check: $frag: no such file" >&2; exit 1; }
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			opt=${line%%=*}; want=$line ;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }; opt=${opt%% *}; want=$line ;;
		*) continue ;;
		esac
		got=$(grep -E "^($opt=|# $opt is not set)" "$dotconfig" || true)
		# An option that is off may be absent altogether.
		[ -z "$got" ] && [ "$want" = "# $opt is not set" ] && continue
		if [ "$got" != "$want" ]; then
			echo "kconfig-check: $frag asks for '$want' but $dotconfig has '${got:-nothing (dependencies not met or no such option)}'" >&2
			bad=1
		fi
	done < "$frag"
done
exit $bad
