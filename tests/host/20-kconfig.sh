#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every option of the config fragments stuck in the built .config; an
# option that did not is named.
. "$(dirname "$0")/lib.sh"
cfg=$BUILD_DIR/kbuild/guest/.config
printf 'CONFIG_PERF_EVENTS=y\nCONFIG_SFRAME_NO_SUCH_OPTION=y\n# CONFIG_KUNIT is not set\n' > "$HT/frag"
expect "kconfig: guest.config options all set in the guest .config" 0 "" -- \
	"$REPO/scripts/kconfig-check.sh" "$cfg" "$REPO/config/guest.config"
expect "kconfig: an option that did not stick is named" 1 "CONFIG_SFRAME_NO_SUCH_OPTION=y.*nothing" -- \
	"$REPO/scripts/kconfig-check.sh" "$cfg" "$HT/frag"
expect "kconfig: an option set against the fragment is named" 1 "# CONFIG_KUNIT is not set.*CONFIG_KUNIT=y" -- \
	"$REPO/scripts/kconfig-check.sh" "$cfg" "$HT/frag"
