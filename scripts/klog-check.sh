#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# klog-check.sh LOG - fail (exit 1) if a kernel log holds any report of a
# kernel problem: WARNING, BUG, Oops, panic, lockdep, RCU, KASAN, UBSAN,
# kmemleak, hung task, soft/hard lockup.  Prints the lines found.
[ -f "${1:-}" ] || { echo "usage: $0 KERNEL-LOG" >&2; exit 2; }
pattern='WARNING:|BUG:|BUG kmalloc|Oops|Kernel panic|general protection fault|'
pattern+='possible recursive locking|possible circular locking|inconsistent lock state|'
pattern+='suspicious RCU usage|INFO: lockdep|lockdep: |KASAN|UBSAN|kmemleak: [0-9]+ new suspected|'
pattern+='unreferenced object|blocked for more than|soft lockup|hard LOCKUP|'
pattern+='Call Trace:|stack-protector|list_add corruption|list_del corruption'
if grep -E -n "$pattern" "$1"; then
	exit 1
fi
exit 0
