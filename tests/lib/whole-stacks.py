#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""How many user call stacks are whole, in `perf script -F comm,tid,ip,sym,dso` output.

  whole-stacks.py --comm COMM [--root SYM]... [--min PCT | --max PCT] FILE

A sample's user stack (the frames not in [kernel.kallsyms]) is whole when
one of its frames is a --root: the unwinder got from the sampled
instruction down to main or an entry point.  The default roots are main,
glibc's __libc_start_main and __libc_start_call_main (which call main:
stripped programs have no "main" in perf's output), _start, and the
loader's _dl_start_user (its start-up, before main; named with libc6-dbg).
Symbol versions (@@GLIBC_2.34) are ignored.  Prints the samples of COMM, those with
user frames, those with kernel and user frames together, the percentage
whole, and for the others the most frequent outermost frames (where the
unwinding stopped).

  --min PCT   exit 1 unless at least PCT% of the stacks are whole
  --max PCT   exit 1 unless at most PCT% are (for unwinders that truncate)

Exit 0 on success, 1 when the bound is not met or there are no samples,
2 on bad usage or unreadable input.
"""
import argparse
import collections
import os
import re
import sys

FRAME = re.compile(r"^\t\s*[0-9a-f]+\s+(.*?)(?:\+0x[0-9a-f]+)?\s+\((.*)\)\s*$")


def samples(f):
    """Yield (comm, [(sym, dso), ...]) per sample, innermost frame first."""
    comm, frames = None, []
    for line in f:
        line = line.rstrip("\n")
        if not line.strip():
            continue
        if not line.startswith("\t"):
            if comm is not None:
                yield comm, frames
            comm, frames = line.split()[0], []
            continue
        m = FRAME.match(line)
        if m:
            frames.append((m.group(1), m.group(2)))
    if comm is not None:
        yield comm, frames


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="\n\n".join(__doc__.split("\n\n")[2:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--comm", required=True, help="command whose samples are counted")
    ap.add_argument("--root", action="append", metavar="SYM",
                    help="a frame that makes a stack whole (repeatable)")
    bound = ap.add_mutually_exclusive_group()
    bound.add_argument("--min", type=float, metavar="PCT", help="at least PCT%% whole")
    bound.add_argument("--max", type=float, metavar="PCT", help="at most PCT%% whole")
    ap.add_argument("file", help="perf script output")
    args = ap.parse_args()
    roots = set(args.root or ["main", "__libc_start_main", "__libc_start_call_main",
                              "_start", "_dl_start_user"])

    try:
        with open(args.file) as f:
            seen = list(samples(f))
    except OSError as e:
        print(f"whole-stacks.py: {args.file}: {e.strerror}", file=sys.stderr)
        return 2
    total = user = both = whole = 0
    ends = collections.Counter()
    for comm, frames in seen:
        if comm != args.comm:
            continue
        total += 1
        u = [(s, d) for s, d in frames if d != "[kernel.kallsyms]"]
        if not u:
            continue
        user += 1
        both += len(u) < len(frames)
        if any(s.split("@@")[0] in roots for s, _ in u):
            whole += 1
        else:
            ends[" <- ".join(f"{s}@{os.path.basename(d)}" for s, d in u[-2:])] += 1
    if not user:
        print(f"whole-stacks.py: {args.file}: no samples of {args.comm} with user frames")
        return 1
    pct = 100.0 * whole / user
    print(f"{args.comm}: {total} samples, {user} with user frames, {both} of them with "
          f"kernel frames too; whole (down to {', '.join(sorted(roots))}): "
          f"{whole} ({pct:.1f}%)")
    if ends:
        print("  the others end at (outermost two frames):")
        for end, n in ends.most_common(4):
            print(f"  {n:6d}  {end}")
    if args.min is not None and pct < args.min:
        print(f"FAIL: {pct:.1f}% whole, want at least {args.min:g}%")
        return 1
    if args.max is not None and pct > args.max:
        print(f"FAIL: {pct:.1f}% whole, want at most {args.max:g}%")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
