#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Damage the SFrame v3 rows of one function of an x86-64 ELF, in place.

Usage: sframe_corrupt.py ELF FUNCTION

The header and the FDE index are left as they are, so the section passes
the checks done when it is registered; only the rows (FREs) of FUNCTION
get an impossible data word size (3, "bad FRE data word size"), which a
lookup in FUNCTION finds.  Prints what it changed: the file offset of the
.sframe section, the FDE and its rows.
Exit 0 on success, 1 on error (the message says why).
"""
import struct
import subprocess
import sys


def fail(msg):
    print(f"sframe_corrupt: {msg}", file=sys.stderr)
    sys.exit(1)


def section(data, name):
    """(file offset, address, size) of section NAME of an ELF64 file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        fail("not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    str_off, = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 0x18)
    for i in range(shnum):
        sh = shoff + i * shentsize
        nm, = struct.unpack_from("<I", data, sh)
        end = data.index(b"\0", str_off + nm)
        if data[str_off + nm:end].decode() == name:
            addr, off, size = struct.unpack_from("<QQQ", data, sh + 0x10)
            return off, addr, size
    fail(f"no {name} section")


def symbol(path, name):
    out = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[2] == name:
            return int(f[0], 16)
    fail(f"no symbol {name} in {path}")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    path, func = sys.argv[1:]
    data = bytearray(open(path, "rb").read())
    off, addr, size = section(data, ".sframe")
    want = symbol(path, func)

    magic, version, flags, _abi, _fp, _ra, auxlen, nfdes, _nfres, _frelen, \
        fdes_off, fres_off = struct.unpack_from("<HBBBbbBIIIII", data, off)
    if magic != 0xdee2 or version != 3:
        fail(f".sframe at file offset {off:#x}: not SFrame v3")
    if not flags & 0x4:
        fail("function starts not PC-relative")
    hdr = off + 28 + auxlen
    for i in range(nfdes):
        fde = hdr + fdes_off + i * 16
        start, fsize, fre_attr = struct.unpack_from("<qII", data, fde)
        # PC-relative: from the address of the field itself.
        start += addr + (fde - off)
        if start != want:
            continue
        attr = hdr + fres_off + fre_attr
        nfres, info, _info2, _rep = struct.unpack_from("<HBBB", data, attr)
        asize = 1 << (info & 0xf)
        p = attr + 5
        for j in range(nfres):
            finfo = data[p + asize]
            count, wsize = (finfo >> 1) & 0xf, 1 << ((finfo >> 5) & 3)
            data[p + asize] = finfo | 0x60
            print(f"{path}: .sframe at {off:#x}, FDE {i} ({func}, {fsize} bytes), "
                  f"FRE {j} at {p:#x}: info {finfo:#04x} -> {data[p + asize]:#04x}")
            p += asize + 1 + count * wsize
        if not nfres:
            fail(f"FDE {i} ({func}) has no rows")
        open(path, "wb").write(data)
        return 0
    fail(f"no FDE for {func} at {want:#x}")


if __name__ == "__main__":
    sys.exit(main())
