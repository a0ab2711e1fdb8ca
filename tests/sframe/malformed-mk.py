#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""malformed-mk.py elf|sec KIND IN OUT - make one bad input from a good one.

elf KIND: patch an x86-64 ELF (header, section table, .eh_frame);
sec KIND: patch a raw SFrame v2/v3 section.  Prints one line saying what
it changed and where ("file offset 0x..."), for the test's detail lines.
"""
import struct
import sys


def u8(d, o):
    return d[o]


def get(d, fmt, o):
    return struct.unpack_from("<" + fmt, d, o)[0]


def put(d, fmt, o, v):
    struct.pack_into("<" + fmt, d, o, v)


# ---------------------------------------------------------------- ELF

class Elf:
    def __init__(self, d):
        self.d = d
        self.phoff = get(d, "Q", 0x20)
        self.shoff = get(d, "Q", 0x28)
        self.phnum = get(d, "H", 0x38)
        self.shnum = get(d, "H", 0x3c)
        self.shstrndx = get(d, "H", 0x3e)

    def sh(self, i):
        return self.shoff + 64 * i

    def secs(self):
        stro = get(self.d, "Q", self.sh(self.shstrndx) + 0x18)
        for i in range(self.shnum):
            o = self.sh(i)
            n = get(self.d, "I", o)
            name = bytes(self.d[stro + n:self.d.index(b"\0", stro + n)])
            yield i, o, name.decode()

    def find(self, want):
        for i, o, name in self.secs():
            if name == want:
                return o
        sys.exit("malformed-mk: no section " + want)


def uleb(d, o):
    v = s = 0
    while True:
        b = d[o]
        o += 1
        v |= (b & 0x7f) << s
        s += 7
        if not b & 0x80:
            return v, o


def sleb(d, o):
    v = s = 0
    while True:
        b = d[o]
        o += 1
        v |= (b & 0x7f) << s
        s += 7
        if not b & 0x80:
            if b & 0x40:
                v -= 1 << s
            return v, o


class EhFrame:
    """CIEs and FDEs of .eh_frame, with file offsets of their fields."""

    def __init__(self, elf):
        self.elf = elf
        d = elf.d
        sh = elf.find(".eh_frame")
        self.shdr = sh
        self.addr = get(d, "Q", sh + 0x10)
        self.off = get(d, "Q", sh + 0x18)
        self.size = get(d, "Q", sh + 0x20)
        self.cies = {}
        self.fdes = []
        o = self.off
        end = self.off + self.size
        while o + 4 <= end:
            ln = get(d, "I", o)
            if ln == 0:
                break
            body = o + 4
            cid = get(d, "I", body)
            if cid == 0:
                self.cies[o] = self.parse_cie(o, body, body + ln)
            else:
                cie = body - cid
                self.fdes.append({"off": o, "len": ln, "cie": cie,
                                  "pc": body + 4, "end": body + ln})
            o = body + ln
        for f in self.fdes:
            c = self.cies[f["cie"]]
            assert c["enc"] == 0x1b, "pcrel sdata4 FDEs expected"
            f["start"] = self.addr + (f["pc"] - self.off) + get(d, "i", f["pc"])
            f["range_at"] = f["pc"] + 4
            f["range"] = get(d, "I", f["pc"] + 4)

    def parse_cie(self, o, body, end):
        d = self.elf.d
        p = body + 4
        ver = p
        p += 1
        aug_at = p
        aug = bytes(d[p:d.index(b"\0", p)]).decode()
        p += len(aug) + 1
        _, p = uleb(d, p)
        _, p = sleb(d, p)
        if d[ver] == 1:
            p += 1
        else:
            _, p = uleb(d, p)
        enc = 0
        enc_at = None
        if aug.startswith("z"):
            _, p = uleb(d, p)
            for ch in aug[1:]:
                if ch == "R":
                    enc_at = p
                    enc = d[p]
                    p += 1
                elif ch == "L":
                    p += 1
                elif ch == "P":
                    raise SystemExit("malformed-mk: 'P' augmentation")
        return {"off": o, "ver": ver, "aug": aug_at, "augstr": aug,
                "enc": enc, "enc_at": enc_at}

    def set_start(self, f, start):
        put(self.elf.d, "i", f["pc"],
            start - (self.addr + (f["pc"] - self.off)))


def elf_kind(kind, d):
    e = Elf(d)
    if kind == "bigendian":
        d[5] = 2
        return "EI_DATA (file offset 0x5) = 2 (big-endian)"
    if kind == "aarch64":
        put(d, "H", 0x12, 183)
        return "e_machine (file offset 0x12) = 183 (EM_AARCH64)"
    if kind == "phoff-past":
        put(d, "Q", 0x20, len(d) + 0x1000)
        return "e_phoff (file offset 0x20) = 0x%x, past EOF" % (len(d) + 0x1000)
    if kind == "shoff-past":
        put(d, "Q", 0x28, len(d) + 0x1000)
        return "e_shoff (file offset 0x28) = 0x%x, past EOF" % (len(d) + 0x1000)
    if kind == "shstrndx":
        put(d, "H", 0x3e, e.shnum + 5)
        return "e_shstrndx (file offset 0x3e) = %d of %d" % (e.shnum + 5, e.shnum)
    if kind == "no-eh-frame":
        for i, o, name in e.secs():
            if name in (".eh_frame", ".eh_frame_hdr"):
                stro = get(d, "Q", e.sh(e.shstrndx) + 0x18)
                at = stro + get(d, "I", o) + 1
                d[at] = ord("E")
        # and PT_GNU_EH_FRAME -> PT_NULL, so that nothing finds it
        for i in range(e.phnum):
            o = e.phoff + 56 * i
            if get(d, "I", o) == 0x6474e550:
                put(d, "I", o, 0)
        return ".eh_frame and .eh_frame_hdr renamed, PT_GNU_EH_FRAME cleared"
    if kind == "text-noexec":
        for i in range(e.phnum):
            o = e.phoff + 56 * i
            if get(d, "I", o) == 1:
                put(d, "I", o + 4, get(d, "I", o + 4) & ~1)
        return "PF_X cleared on every PT_LOAD"
    if kind == "sframe-magic":
        o = e.find(".sframe")
        at = get(d, "Q", o + 0x18)
        put(d, "H", at, 0xbeef)
        return ".sframe at file offset 0x%x: magic 0xbeef" % at
    eh = EhFrame(e)
    f0, f1 = eh.fdes[0], eh.fdes[1]
    c0 = eh.cies[f0["cie"]]
    if kind == "ehframe-past":
        put(d, "Q", eh.shdr + 0x20, len(d))
        return (".eh_frame header (file offset 0x%x): sh_offset 0x%x + sh_size "
                "0x%x past EOF" % (eh.shdr, eh.off, len(d)))
    if kind == "ehframe-trunc":
        cut = f1["off"] + 10 - eh.off
        put(d, "Q", eh.shdr + 0x20, cut)
        return (".eh_frame sh_size = 0x%x: ends inside the FDE at .eh_frame "
                "offset 0x%x (file offset 0x%x)" % (cut, f1["off"] - eh.off,
                                                    f1["off"]))
    if kind == "cie-version":
        d[c0["ver"]] = 99
        return "CIE at file offset 0x%x: version 99" % c0["off"]
    if kind == "cie-aug":
        assert c0["augstr"] == "zR"
        d[c0["aug"] + 1] = ord("Q")
        return "CIE at file offset 0x%x: augmentation \"zQ\"" % c0["off"]
    if kind == "fde-cie-nowhere":
        put(d, "I", f1["off"] + 4, 0x7ffffff0)
        return "FDE at file offset 0x%x: CIE pointer 0x7ffffff0" % f1["off"]
    if kind == "fde-huge":
        put(d, "I", f1["range_at"], 0xffffffff)
        return "FDE at file offset 0x%x: address range 0xffffffff" % f1["off"]
    if kind in ("enc-0f", "enc-70"):
        v = 0x0f if kind == "enc-0f" else 0x70
        d[c0["enc_at"]] = v
        return "CIE at file offset 0x%x: FDE pointer encoding 0x%02x" % (
            c0["off"], v)
    if kind == "fde-overlap":
        # the FDEs of two real functions (the first ones may be PLT/crt)
        a, b = eh.fdes[-2], eh.fdes[-1]
        eh.set_start(b, a["start"])
        return "FDE at file offset 0x%x starts at 0x%x like the one before" % (
            b["off"], a["start"])
    if kind == "fde-zero":
        put(d, "I", f1["range_at"], 0)
        return "FDE at file offset 0x%x: address range 0" % f1["off"]
    sys.exit("malformed-mk: unknown elf kind " + kind)


# ---------------------------------------------------------- SFrame

class Sec:
    def __init__(self, d):
        self.d = d
        self.ver = d[2]
        h = 28 + d[7]
        self.nfdes = get(d, "I", 8)
        self.fre_len = get(d, "I", 16)
        self.fdes = h + get(d, "I", 20)
        self.fres = h + get(d, "I", 24)
        self.ent = 16 if self.ver == 3 else 20

    def fde(self, i):
        return self.fdes + self.ent * i

    def attr(self, i):
        """v3: offset of FDE i's attribute; v2: of its info byte."""
        if self.ver == 2:
            return self.fde(i) + 16
        return self.fres + get(self.d, "I", self.fde(i) + 12)

    def info(self, i):
        return self.attr(i) + (0 if self.ver == 2 else 2)

    def first_fre(self, i):
        if self.ver == 2:
            return self.fres + get(self.d, "I", self.fde(i) + 8)
        return self.attr(i) + 5

    def nfres(self, i):
        if self.ver == 2:
            return get(self.d, "I", self.fde(i) + 12)
        return get(self.d, "H", self.attr(i))

    def flex(self, i):
        return self.ver == 3 and self.d[self.attr(i) + 3] == 1

    def start_size(self, i):
        return (1, 2, 4)[self.d[self.info(i)] & 0xf]

    def fre_words(self, at, ss):
        info = self.d[at + ss]
        return (info >> 1) & 0xf, 1 << ((info >> 5) & 3)

    def find(self, pred, what):
        for i in range(self.nfdes):
            if pred(i):
                return i
        sys.exit("malformed-mk: no FDE with " + what)


def sec_kind(kind, d):
    s = Sec(d)
    if kind == "magic":
        put(d, "H", 0, 0xbeef)
        return "offset 0: magic 0xbeef"
    if kind in ("version1", "version4"):
        d[2] = int(kind[-1])
        return "offset 2: version %d" % d[2]
    if kind == "flags80":
        d[3] |= 0x80
        return "offset 3: flags | 0x80"
    if kind == "abi1":
        d[4] = 1
        return "offset 4: abi 1 (aarch64-BE)"
    if kind == "ra16":
        d[6] = 0xf0
        return "offset 6: RA offset -16"
    if kind == "num-fdes":
        put(d, "I", 8, 0xffffffff)
        return "offset 8: num_fdes 0xffffffff"
    if kind == "no-fdes":
        put(d, "I", 8, 0)
        return "offset 8: num_fdes 0"
    if kind == "unsorted":
        d[3] &= ~1
        return "offset 3: SFRAME_F_FDE_SORTED clear"
    if kind == "fp8":
        d[5] = 8
        return "offset 5: fixed FP offset 8"
    if kind == "num-fres-total":
        put(d, "I", 12, get(d, "I", 16))
        return "offset 12: num_fres = fre_len"
    if kind == "fdes-off":
        put(d, "I", 20, len(d))
        return "offset 20: fdes_off 0x%x (past the end)" % len(d)
    if kind == "fre-len":
        put(d, "I", 16, len(d))
        return "offset 16: fre_len 0x%x (past the end)" % len(d)
    if kind == "index-overlap":
        put(d, "I", 24, get(d, "I", 20))
        return "offset 24: fres_off = fdes_off (FREs over the index)"
    if kind == "fre-off-past":
        at = s.fde(1) + (12 if s.ver == 3 else 8)
        put(d, "I", at, s.fre_len + 0x10)
        return "offset 0x%x: FDE 1's start_fre_off 0x%x > fre_len" % (
            at, s.fre_len + 0x10)
    if kind == "num-fres":
        at = s.attr(0) if s.ver == 3 else s.fde(0) + 12
        put(d, "H" if s.ver == 3 else "I", at, 65535)
        return "offset 0x%x: FDE 0's num_fres 65535" % at
    if kind == "fre-type3":
        at = s.info(0)
        d[at] = (d[at] & 0xf0) | 3
        return "offset 0x%x: FDE 0's FRE type 3" % at
    if kind == "wsize3":
        at = s.first_fre(0) + s.start_size(0)
        d[at] |= 0x60
        return "offset 0x%x: FDE 0's first FRE word size code 3" % at
    if kind == "default-3words":
        i = s.find(lambda i: not s.flex(i) and s.nfres(i), "DEFAULT FREs")
        at = s.first_fre(i) + s.start_size(i)
        d[at] = (d[at] & ~0x1e) | (3 << 1)
        return "offset 0x%x: FDE %d's first FRE has 3 words" % (at, i)
    if kind in ("flex-bit2", "flex-cfa-pad"):
        i = s.find(s.flex, "FLEX")
        at = s.first_fre(i) + s.start_size(i)
        n, ws = s.fre_words(at, 0)
        w0 = at + 1
        if kind == "flex-bit2":
            d[w0] |= 0x4
            return "offset 0x%x: FDE %d's first FRE: control word | 4" % (w0, i)
        for k in range(ws):
            d[w0 + k] = 0
        return "offset 0x%x: FDE %d's first FRE: CFA control word 0" % (w0, i)
    if kind in ("rows-order", "row-past"):
        i = s.find(lambda i: s.nfres(i) >= 2 and not s.flex(i) and
                   not (s.d[s.info(i)] & 0x10), "2 rows")
        at = s.first_fre(i)
        ss = s.start_size(i)
        n, ws = s.fre_words(at, ss)
        nxt = at + ss + 1 + n * ws
        if kind == "rows-order":
            # the second row at 0, like the first
            d[nxt:nxt + ss] = bytes(ss)
            return "offset 0x%x: FDE %d's second FRE starts at 0" % (nxt, i)
        size = get(d, "I", s.fde(i) + 8 if s.ver == 3 else s.fde(i) + 4)
        d[nxt:nxt + ss] = min(size, (1 << (8 * ss)) - 1).to_bytes(ss, "little")
        return "offset 0x%x: FDE %d's second FRE starts at the size 0x%x" % (
            nxt, i, size)
    if kind == "mask-rep0":
        i = s.find(lambda i: s.d[s.info(i)] & 0x10, "PC type MASK")
        at = s.attr(i) + 4 if s.ver == 3 else s.fde(i) + 17
        d[at] = 0
        return "offset 0x%x: FDE %d (MASK): rep_size 0" % (at, i)
    if kind == "mask-set-rep0":
        at = s.info(0)
        d[at] |= 0x10
        rep = s.attr(0) + 4 if s.ver == 3 else s.fde(0) + 17
        d[rep] = 0
        return "offset 0x%x: FDE 0: PC type MASK, rep_size 0" % at
    if kind == "pauth":
        at = s.info(0)
        d[at] |= 0x20
        return "offset 0x%x: FDE 0's info: pauth bit" % at
    if kind == "fde-overlap":
        # FDE 2 starts where FDE 1 does
        a, b = s.fde(1), s.fde(2)
        if s.ver == 3:
            put(d, "q", b, get(d, "q", a) - (b - a))
        else:
            pcrel = d[3] & 4
            put(d, "i", b, get(d, "i", a) - ((b - a) if pcrel else 0))
        return "offset 0x%x: FDE 2 starts where FDE 1 does" % b
    sys.exit("malformed-mk: unknown sec kind " + kind)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    mode, kind, src, dst = sys.argv[1:]
    d = bytearray(open(src, "rb").read())
    what = (elf_kind if mode == "elf" else sec_kind)(kind, d)
    open(dst, "wb").write(d)
    print(what)


main()
