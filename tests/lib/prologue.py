#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Count the samples taken in a function's prologue and epilogue.

  prologue.py --binary ELF --func F --comm COMM [--min N] [--min-insns K] SCRIPT

SCRIPT is `perf script -F comm,tid,ip,sym,symoff,dso` output.  Samples of
COMM whose innermost user frame is F are counted per offset in F.  Each
instruction of F (objdump -d of ELF) is given the stack depth at which it
runs, by walking F in address order from depth 0 at the entry: push and
pop move it by 8, "sub/add $N,%rsp" by N.  The body runs at the greatest
depth; an instruction at any other depth is in the prologue or epilogue
(for those the CFA is not the body's).  F must be laid out as one
straight prologue, body, epilogue and ret (back to depth 0), else exit 2.

Prints the samples per prologue/epilogue instruction, and fails unless
at least N samples landed on them, on at least K distinct instructions.
Exit 0 on success, 1 on failure, 2 on bad usage or a function it cannot
classify.
"""
import argparse
import collections
import re
import subprocess
import sys

from stacks import function_insns, parse_symoff


def depths(binary, func):
    """[(offset, instruction text, depth it runs at)] of func."""
    insns, depth = [], 0
    for off, text in function_insns(binary, func):
        insns.append((off, text, depth))
        mnem = text.split()[0]
        imm = re.match(r"(sub|add) +\$0x([0-9a-f]+),%rsp$", text)
        if mnem.startswith("push"):
            depth += 8
        elif mnem.startswith("pop"):
            depth -= 8
        elif imm:
            depth += int(imm.group(2), 16) * (1 if imm.group(1) == "sub" else -1)
        elif re.search(r",%rsp$", text) or mnem in ("leave", "enter"):
            raise ValueError(f"{func}+{off:#x}: {text}: changes rsp in a way not followed")
        if depth < 0:
            raise ValueError(f"{func}+{off:#x}: {text}: stack depth below the entry's")
        if mnem == "ret":
            break
    if not insns or insns[-1][1].split()[0] != "ret" or insns[-1][2] != 0:
        raise ValueError(f"{func}: no ret at the entry's stack depth at its end")
    return insns


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--func", required=True)
    ap.add_argument("--comm", required=True)
    ap.add_argument("--min", type=int, default=20)
    ap.add_argument("--min-insns", type=int, default=1)
    ap.add_argument("file")
    args = ap.parse_args()
    try:
        insns = depths(args.binary, args.func)
    except (ValueError, subprocess.CalledProcessError) as e:
        print(f"prologue.py: {e}")
        return 2
    body = max(d for _, _, d in insns)
    at = {off: (text, d) for off, text, d in insns}

    per_off, total = collections.Counter(), 0
    for comm, frames in parse_symoff(open(args.file)):
        user = [f for f in frames if f[2] != "[kernel.kallsyms]"]
        if comm != args.comm or not user or user[0][0] != args.func:
            continue
        total += 1
        per_off[user[0][1]] += 1

    stray = [off for off in per_off if off not in at]
    if stray:
        print(f"FAIL: samples at {', '.join(hex(o) for o in stray)}: not instructions of {args.func}")
        return 1
    pe = {off: n for off, n in per_off.items() if at[off][1] != body}
    print(f"{args.func}: {total} samples on top, {sum(pe.values())} in the prologue or "
          f"epilogue on {len(pe)} instructions (body at depth {body}):")
    for off in sorted(pe):
        text, d = at[off]
        print(f"  {args.func}+{off:#x}  {text:<28} depth {d:4d}  {pe[off]:5d}")
    if sum(pe.values()) < args.min or len(pe) < args.min_insns:
        print(f"FAIL: want at least {args.min} samples on at least {args.min_insns} "
              "prologue/epilogue instructions")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
