#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The QEMU runner: exit status, streamed output, read-only host, writable
# scratch, 2 vCPUs, and a clear failure for each way a guest can go wrong.
. "$(dirname "$0")/lib.sh"
vm="$REPO/scripts/vm"
mkdir -p "$HT/scratch"
expect "vm: command output is streamed and its status returned" 7 "^hello from the guest$" -- \
	"$vm" -- sh -c 'echo hello from the guest; exit 7'
expect "vm: guest has 2 CPUs, host / read-only, scratch writable at the host path" 0 "^2 ro ok$" -- \
	"$vm" --scratch "$HT/scratch" -- sh -c "n=\$(nproc); touch /usr/vm-ro-test 2>/dev/null && echo rw || echo -n; echo \$n ro \$(echo x > $HT/scratch/f && echo ok)"
expect "vm: file written in the guest scratch is on the host" 0 "" -- grep -qx x "$HT/scratch/f"
expect "vm: missing kernel is named" 125 "no kernel at /nonexistent/bzImage" -- \
	"$vm" --kernel /nonexistent/bzImage -- true
# QEMU refuses an image whose setup size (byte 0x1f1) exceeds the file...
{ head -c $((0x1f1)) /dev/zero; printf '\377'; head -c 3606 /dev/zero; } > "$HT/junk-header"
expect "vm: an image QEMU refuses is reported" 125 "vm: +qemu: .*invalid kernel header" -- \
	"$vm" --accel tcg --timeout 30 --kernel "$HT/junk-header" -- true
# ...and loads one of zeros, which then never prints a kernel banner.
head -c 4096 /dev/zero > "$HT/junk-zero"
expect "vm: a kernel that never starts is reported at the boot timeout" 125 "did not boot .*within 10s" -- \
	env VM_BOOT_TIMEOUT=10 "$vm" --accel tcg --timeout 30 --kernel "$HT/junk-zero" -- true
expect "vm: kernel panic is reported" 125 "kernel panic" -- \
	"$vm" -- sh -c 'echo c > /proc/sysrq-trigger; sleep 60'
expect "vm: a hung guest is killed at the timeout" 124 "did not finish within 15s" -- \
	"$vm" --timeout 15 -- sleep 600
echo marker > "$HT/marker"
expect "vm: a current directory under /tmp stays visible in the guest" 0 "^visible$" -- \
	sh -c "cd '$HT' && '$vm' -- sh -c 'grep -q marker marker && echo visible'"
