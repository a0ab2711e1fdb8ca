#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Copy an ELF program with another interpreter (PT_INTERP).

  set-interp.py PROGRAM INTERP OUTPUT

The new path is written over the old one, in place: it must not be longer
than the old (the segment keeps its size, padded with NULs).  64-bit
little-endian ELF only.  Exit 0 on success, 1 on error.
"""
import os
import shutil
import struct
import sys

PT_INTERP = 3


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 1
    prog, interp, out = sys.argv[1:]
    data = bytearray(open(prog, "rb").read())
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        print(f"set-interp.py: {prog}: not a 64-bit little-endian ELF", file=sys.stderr)
        return 1
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    new = interp.encode() + b"\0"
    for i in range(phnum):
        off = phoff + i * phentsize
        p_type, = struct.unpack_from("<I", data, off)
        if p_type != PT_INTERP:
            continue
        p_offset, = struct.unpack_from("<Q", data, off + 8)
        p_filesz, = struct.unpack_from("<Q", data, off + 32)
        if len(new) > p_filesz:
            print(f"set-interp.py: {interp}: longer than the {p_filesz - 1} bytes of "
                  f"{prog}'s PT_INTERP", file=sys.stderr)
            return 1
        data[p_offset:p_offset + p_filesz] = new.ljust(p_filesz, b"\0")
        with open(out + ".tmp", "wb") as f:
            f.write(data)
        shutil.copymode(prog, out + ".tmp")
        os.replace(out + ".tmp", out)
        return 0
    print(f"set-interp.py: {prog}: no PT_INTERP", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
