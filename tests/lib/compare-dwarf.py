#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare user stacks unwound by the kernel with perf's DWARF unwinding.

  compare-dwarf.py --comm COMM [--through main] [--min-ips N] [--top-dso DSO]
                   [--require PATTERN [--min-samples M]]... [--registered LOG]
                   FP.txt DWARF.txt

FP.txt and DWARF.txt are `perf script --no-inline -F comm,tid,ip,sym,symoff,dso`
output of the same program recorded with --call-graph fp,defer (the
kernel's unwinder) and with --call-graph dwarf (stack copies unwound by
perf with libdw: the ground truth).  Samples of COMM are grouped by their
sample IP, the innermost user frame as symbol+offset in its file (so the
two runs' address layouts need not match).  A stack is the user frames
(not [kernel.kallsyms]) as (symbol, file) from the sample IP down to and
including the first --through frame (the chain part: what lies below
main differs between unwinders and is not compared).

For every IP seen in both recordings, every fp,defer stack must be one of
the DWARF stacks of that IP (an IP reached through two paths, e.g. a
function called from two places, legitimately has two).  Offsets are not
compared: DWARF frames are return address - 1, the kernel's the return
address itself.

Samples set aside, counted and shown with the reason:
  - either recording: the sample IP has no symbol (no position-independent
    key); with --top-dso DSO, the sample IP is not in DSO (to compare only
    the program's own code when a library it calls has no unwind
    information for the kernel in the fp,defer run);
  - fp,defer only, with --registered LOG (the stderr of the fp,defer run
    with SFRAME_AUDIT_DEBUG=1): the sample IP is in a file that
    sframe-audit.so registered, but not in the program's copy of it, the
    last one registered.  An audit module lives in a link namespace of
    its own, loaded before the program's objects, with its own copy of
    libc: its code (the strlen of the module's snprintf, say) has the same
    symbols as the program's libc at other addresses, is called from the
    module, and runs before its own SFrame is registered; its samples are
    not those of the program at the same symbol+offset.
  - DWARF only: the stack does not reach --through, so it cannot serve as
    truth: either it ends in [unknown] (libdw could not unwind it, e.g.
    from __restore_rt's syscall, just past its FDE), or it is outside
    main (the loader, exit).
An fp,defer stack that does not reach --through is compared as it is: it
fails if DWARF reached --through from that IP.

At least --min-ips IPs must be common to both, and for each --require
PATTERN (a symbol, or *@DSO) at least --min-samples compared fp,defer
samples must have it on top: under TCG samples land on few distinct IPs
(where QEMU's translation blocks start), so the count of IPs alone says
little about what was compared.  Prints the counts and, on
failure, each wrong stack with the DWARF stacks of its IP.
Exit 0 if all common IPs agree, 1 if not (or too few), 2 on bad usage.
"""
import argparse
import collections
import os
import re
import sys

from stacks import matches, parse_samples


# sframe-audit: add NAME sframe=A-B text=C-D (SOURCE)
AUDIT_ADD = re.compile(r"^sframe-audit: add (\S+) sframe=\S+ text=(0x[0-9a-f]+)-(0x[0-9a-f]+) ")


def registered(path):
    """{file basename: (text start, text end)} of the copy of each file that
    sframe-audit.so registered last, from its SFRAME_AUDIT_DEBUG=1 log."""
    regs = {}
    with open(path) as f:
        for line in f:
            m = AUDIT_ADD.match(line)
            if m:
                regs[os.path.basename(m.group(1))] = (int(m.group(2), 16), int(m.group(3), 16))
    return regs


def load(path, comm, through, truth, top_dso, regs=None):
    """Read one recording.

    Returns ({sample IP: Counter(stack)}, samples, samples not reaching
    through, {reason: Counter(stack)} of the samples set aside).  Only the
    truth (DWARF) sets aside stacks that do not reach through."""
    by_ip = collections.defaultdict(collections.Counter)
    aside = collections.defaultdict(collections.Counter)
    total = short = 0
    with open(path) as f:
        for head, frames in parse_samples(f, ips=True):
            user = [(sym, off, os.path.basename(dso), ip) for sym, off, dso, ip in frames
                    if dso != "[kernel.kallsyms]"]
            if head.split()[0] != comm or not user:
                continue
            total += 1
            names = [(sym, dso) for sym, _, dso, _ in user]
            cut = next((i for i, (sym, _) in enumerate(names) if sym == through), None)
            stack = tuple(names if cut is None else names[:cut + 1])
            sym, off, dso, ip = user[0]
            short += cut is None
            if top_dso and dso != top_dso:
                aside[f"the sample IP is not in {top_dso}"][stack] += 1
            elif regs and dso in regs and not regs[dso][0] <= (ip or 0) < regs[dso][1]:
                aside[f"the sample IP is in another copy of {dso} than the program's"][stack] += 1
            elif sym == "[unknown]" or off is None:
                aside["the sample IP has no symbol"][stack] += 1
            elif cut is None and truth and names[-1][0] == "[unknown]":
                aside["libdw could not unwind it (ends in [unknown])"][stack] += 1
            elif cut is None and truth:
                aside[f"outside {through} (loader, exit)"][stack] += 1
            else:
                by_ip[f"{sym}+{off:#x}@{dso}"][stack] += 1
    return by_ip, total, short, aside


def show(stack):
    return " <- ".join(s if s != "[unknown]" else f"[unknown]@{d}" for s, d in stack)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--comm", required=True)
    ap.add_argument("--through", default="main")
    ap.add_argument("--min-ips", type=int, default=10)
    ap.add_argument("--top-dso")
    ap.add_argument("--require", action="append", default=[])
    ap.add_argument("--min-samples", type=int, default=20)
    ap.add_argument("--registered")
    ap.add_argument("fp")
    ap.add_argument("dwarf")
    args = ap.parse_args()
    try:
        regs = registered(args.registered) if args.registered else None
        if args.registered and not regs:
            print(f"FAIL: {args.registered}: sframe-audit.so registered nothing")
            return 1
        fp, fp_total, fp_short, fp_aside = load(args.fp, args.comm, args.through, False,
                                                args.top_dso, regs)
        dw, dw_total, dw_short, dw_aside = load(args.dwarf, args.comm, args.through, True, args.top_dso)
    except OSError as e:
        print(f"compare-dwarf.py: {e}")
        return 2

    common = sorted(set(fp) & set(dw))
    compared = sum(sum(fp[ip].values()) for ip in common)
    print(f"{args.comm}: fp,defer {fp_total} samples ({fp_short} not reaching {args.through}) "
          f"on {len(fp)} IPs, dwarf {dw_total} samples ({dw_short} not reaching it) on "
          f"{len(dw)} IPs; {len(common)} IPs in both, {compared} fp,defer samples compared")
    for who, aside in (("fp,defer", fp_aside), ("dwarf", dw_aside)):
        for reason, stacks in aside.items():
            print(f"{who}: {sum(stacks.values())} samples set aside: {reason}; most frequent:")
            for stack, n in stacks.most_common(3):
                print(f"  {n:6d}  {show(stack)}")

    wrong = 0
    for ip in common:
        for stack, n in fp[ip].items():
            if stack in dw[ip]:
                continue
            wrong += n
            print(f"FAIL: at {ip}: {n} fp,defer samples with\n    {show(stack)}\n  dwarf has:")
            for d, k in dw[ip].most_common():
                print(f"  {k:6d}  {show(d)}")
    print(f"agree: {compared - wrong} of {compared} fp,defer samples at {len(common)} common IPs")
    if wrong:
        return 1
    if len(common) < args.min_ips:
        print(f"FAIL: {len(common)} IPs in both recordings, want at least {args.min_ips}")
        return 1
    for pattern in args.require:
        n = sum(sum(fp[ip].values()) for ip in common if matches(pattern, next(iter(fp[ip]))[0]))
        print(f"compared with {pattern} on top: {n} samples")
        if n < args.min_samples:
            print(f"FAIL: want at least {args.min_samples}")
            return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
