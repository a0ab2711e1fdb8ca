#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that SFrame describes a C library's rt_sigreturn trampoline as a signal frame.

  restore_rt.py ELF DUMP

ELF is an x86-64 C library: its executable segments are searched for the
rt_sigreturn trampoline, "mov $15,%rax; syscall" (48 c7 c0 0f 00 00 00 0f
05: glibc's __restore_rt, musl's __restore_rt), the return address of
every signal handler.  DUMP is sframe-dump output of the SFrame made for
it (a sidecar: its addresses are the ELF's).  Each trampoline must be
covered by a signal-frame FDE (attr with "S"), from the byte before it on
(the unwinder looks a return address up at address - 1; glibc starts the
FDE there for that reason).  The FDE and its rows are printed.
Exit 0 if every trampoline is covered so, 1 if not or none was found, 2 on
bad usage.
"""
import re
import struct
import sys

TRAMPOLINE = bytes.fromhex("48c7c00f0000000f05")
PT_LOAD, PF_X = 1, 1


def trampolines(path):
    """Virtual addresses of the trampoline in the executable PT_LOADs."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError(f"{path}: not a little-endian ELF64 file")
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    found = []
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(
            "<IIQQQQ", data, phoff + i * phentsize)
        if p_type != PT_LOAD or not p_flags & PF_X:
            continue
        seg = data[p_offset:p_offset + p_filesz]
        pos = seg.find(TRAMPOLINE)
        while pos >= 0:
            found.append(p_vaddr + pos)
            pos = seg.find(TRAMPOLINE, pos + 1)
    return found


def fdes(path):
    """[(pc, size, attr, header and row lines)] from sframe-dump output."""
    out, cur = [], None
    for line in open(path):
        m = re.match(r'\s*func idx \[\d+\]: pc = (0x[0-9a-f]+), size = (\d+) bytes(?:, attr = "(\w*)")?', line)
        if m:
            cur = (int(m.group(1), 16), int(m.group(2)), m.group(3) or "", [line.rstrip()])
            out.append(cur)
        elif cur and line.strip():
            cur[3].append(line.rstrip())
        else:
            cur = None
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    try:
        addrs, table = trampolines(sys.argv[1]), fdes(sys.argv[2])
    except (OSError, ValueError, struct.error) as e:
        print(f"restore_rt.py: {e}")
        return 2
    if not addrs:
        print(f"FAIL: no rt_sigreturn trampoline in {sys.argv[1]}")
        return 1
    bad = 0
    for a in addrs:
        cover = [f for f in table if f[0] <= a - 1 and a < f[0] + f[1]]
        print(f"rt_sigreturn trampoline at {a:#x}:")
        for f in cover:
            print("\n".join("  " + line.strip() for line in f[3]))
        if not any("S" in f[2] for f in cover):
            print(f"FAIL: no signal-frame FDE covers {a - 1:#x}-{a:#x}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
