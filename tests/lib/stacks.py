#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the user call stacks in `perf script -F comm,tid,ip,sym,dso` output.

Samples of --comm whose innermost user frame is --top are selected; their
user frames (kernel frames, dso [kernel.kallsyms], are set aside) are
compared with --expect, a comma-separated list of symbols, innermost first:

  --mode full       every selected sample's user stack starts with --expect
  --mode truncated  no selected sample's user stack starts with --expect
                    (the unwinder lost the callers)

At least --min samples must be selected.  The distinct stacks seen are
printed, most frequent first, so a failure shows what was there instead.
Exit 0 on success, 1 on failure, 2 on bad usage.
"""
import argparse
import collections
import sys


def parse(lines):
    """Yield (comm, frames) per sample; frames = [(sym, dso), ...]."""
    comm, frames = None, []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if comm is not None:
                yield comm, frames
            comm, frames = None, []
            continue
        if not line[0].isspace():
            if comm is not None:
                yield comm, frames
            comm, frames = line.split()[0], []
            continue
        parts = line.split(None, 1)
        rest = parts[1] if len(parts) > 1 else "[unknown] ([unknown])"
        sym, _, dso = rest.rpartition(" (")
        frames.append((sym or "[unknown]", dso.rstrip(")")))
    if comm is not None:
        yield comm, frames


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--comm", required=True)
    ap.add_argument("--top", required=True)
    ap.add_argument("--expect", required=True)
    ap.add_argument("--mode", choices=["full", "truncated"], default="full")
    ap.add_argument("--min", type=int, default=20)
    ap.add_argument("file", nargs="?", default="-")
    args = ap.parse_args()
    expect = args.expect.split(",")

    f = sys.stdin if args.file == "-" else open(args.file)
    seen = collections.Counter()
    total = selected = good = 0
    for comm, frames in parse(f):
        if comm != args.comm:
            continue
        total += 1
        user = [sym for sym, dso in frames if dso != "[kernel.kallsyms]"]
        if not user or user[0] != args.top:
            continue
        selected += 1
        seen[" <- ".join(user)] += 1
        if user[:len(expect)] == expect:
            good += 1

    print(f"{args.comm}: {total} samples, {selected} with {args.top} on top, "
          f"{good} with the expected chain {' <- '.join(expect)}")
    for stack, n in seen.most_common(5):
        print(f"  {n:6d}  {stack}")
    if selected < args.min:
        print(f"FAIL: {selected} samples with {args.top} on top, want at least {args.min}")
        return 1
    if args.mode == "full" and good != selected:
        print(f"FAIL: {selected - good} of {selected} stacks do not start with the expected chain")
        return 1
    if args.mode == "truncated" and good != 0:
        print(f"FAIL: {good} of {selected} stacks are complete, expected all truncated")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
