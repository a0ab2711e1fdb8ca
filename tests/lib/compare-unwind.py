#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check `perf script --compare-unwind` output (--call-graph dwarf,defer).

  compare-unwind.py [--through SYM] [--min N] [--mode agree|disagree|report]
                    [--max-agree PCT] [--min-truncated N] [--lost N]
                    [--top-dso DSO] [--require PATTERN]... [--cut] FILE

perf compares, per sample, the user stack the kernel unwound (deferred)
with perf's DWARF unwinding of the sample's stack dump, exactly, frame by
frame (see perf-script(1)); a DWARF stack cut by the end of a full dump is
"truncated", not a disagreement.  This prints perf's summary line and the
same counts for the samples in the dynamic extent of --through (default
main): those whose stack, either one, has a frame in a function of that
name.  Outside it, in the dynamic loader's start-up, in an LD_AUDIT
module's own namespace and at exit, the objects on the stack may have no
unwind information for the kernel, whatever the unwinder is worth.
Truncated samples show no stack: they are counted, not selected.

  --mode agree     (default) every selected sample agrees, at least
                   --min of them
  --mode disagree  at least --min selected samples disagree, and at most
                   --max-agree percent (default 10) of those compared agree
  --mode report    the disagreements are listed, grouped; at least --min
                   samples compared, at least --min-agree percent (default
                   0) of them agree, at most --max-wrong (default: any)
                   disagree with a wrong frame, at most --max-shorter
                   (default: any) with a stack cut short
  --min-truncated  at least N samples (any) truncated by the stack dump
  --top-dso DSO    select only the samples whose sampled IP is in DSO
                   (file name): code the kernel has unwind information
                   for, when a library it calls has none
  --cut            compare the stacks only down to their first --through
                   frame: what lies below it (libc's start code without
                   unwind information for the kernel) is not compared
  --require PAT    at least --require-min (default 1) agreeing selected
                   samples have a frame matching PAT, a shell pattern of
                   SYM@DSO (DSO the file name: "sig_leaf@*", "*@[vdso]");
                   repeatable

In agree and report modes, a sample whose deferred record never came
("incomplete, deferred user callchain lost") fails the check, wherever it
was taken, unless --lost N says that perf lost N records in the recording
(PERF_RECORD_LOST, LOST_SAMPLES): then they are counted and shown.  A
sample that had no deferred user callchain to begin with (the kernel fell
back to an immediate one: an exiting task) is counted, not checked.

A disagreement is "shorter" when the kernel's stack is a prefix of the
DWARF one (the kernel stopped early, every frame it gave is right),
"longer" when DWARF gave only the sampled IP (no CFI there: _fini, crt
stubs) and the kernel went on from it (unchecked), and "wrong" otherwise.
One whose DWARF stack ends, where it differs, at an address that no
object maps while every frame of the kernel's is in one is "unmapped":
the sample's registers and stack dump didn't belong together (taken while
the kernel rewrote the registers, in signal delivery or sigreturn); it
is counted and shown, not compared.

The most frequent stacks are printed, and the disagreements on failure.
Exit 0 on success, 1 on failure, 2 on bad usage or unreadable input.
"""
import argparse
import collections
import fnmatch
import os
import re
import sys

HEAD = re.compile(r"^ *\S.* (\d+)/(\d+) +[0-9.]+: (.*)$")
FRAME = re.compile(r"^\t[ >] *(\d+) +([0-9a-f]+) (.*) \((.*)\)$")
SUMMARY = re.compile(r"^\d+ samples, \d+ with both, ")


def parse(f):
    """Yield (verdict, {"deferred": [sym...], "dwarf": [sym...]}, text,
    {"deferred": [sym@dso...], "dwarf": [...]}) per sample.  An agreeing
    sample's frames are listed only with perf script -v, its deferred
    side only: without, its sym@dso lists are empty."""
    cur = None
    side = None
    for line in f:
        line = line.rstrip("\n")
        m = HEAD.match(line)
        if m:
            if cur:
                yield cur
            text = m.group(3)
            stacks = {"deferred": [], "dwarf": []}
            if text.startswith("agree, "):
                syms = text.split(": ", 1)[1].split(" <- ") if ": " in text else []
                stacks = {"deferred": syms, "dwarf": syms}
                verdict = "agree"
            elif text.startswith("disagree"):
                verdict = "disagree"
            elif text.startswith("truncated"):
                verdict = "truncated"
            elif "deferred user callchain lost" in text:
                verdict = "lost"
            else:
                verdict = "incomplete"
            cur = (verdict, stacks, [line], {"deferred": [], "dwarf": []})
            side = None
            continue
        if cur is None or not line.startswith("\t"):
            continue
        cur[2].append(line)
        if line.startswith("\tdeferred, "):
            side = "deferred"
        elif line.startswith("\tdwarf, "):
            side = "dwarf"
        elif side:
            m = FRAME.match(line)
            if m:
                sym = re.sub(r"\+0x[0-9a-f]+$", "", m.group(3))
                if cur[0] != "agree":
                    cur[1][side].append(sym)
                cur[3][side].append(f"{sym}@{os.path.basename(m.group(4))}")
    if cur:
        yield cur


def dwarf_unmapped(st, full):
    """Does the DWARF stack end at an unmapped address, at the first frame
    where it differs, with every frame of the kernel's in a known object?"""
    d, w = full["deferred"], full["dwarf"]
    if not d or not w or any(f.endswith("@[unknown]") for f in d):
        return False
    i = next((i for i, (a, b) in enumerate(zip(d, w)) if a != b), None)
    return i is not None and i == len(w) - 1 and w[i].endswith("@[unknown]")


def cut(stack, through):
    """STACK down to and including its first THROUGH frame."""
    return stack[:stack.index(through) + 1] if through in stack else stack


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--through", default="main")
    ap.add_argument("--min", type=int, default=100)
    ap.add_argument("--mode", choices=["agree", "disagree", "report"], default="agree")
    ap.add_argument("--max-agree", type=float, default=10.0)
    ap.add_argument("--min-agree", type=float, default=0.0)
    ap.add_argument("--max-wrong", type=int)
    ap.add_argument("--max-shorter", type=int)
    ap.add_argument("--lost", type=int, default=0,
                    help="records perf reported lost in the recording")
    ap.add_argument("--min-truncated", type=int, default=0)
    ap.add_argument("--top-dso")
    ap.add_argument("--cut", action="store_true")
    ap.add_argument("--require", action="append", default=[])
    ap.add_argument("--require-min", type=int, default=1)
    ap.add_argument("file")
    args = ap.parse_args()
    try:
        with open(args.file) as f:
            lines = f.readlines()
    except OSError as e:
        print(f"compare-unwind.py: {e}")
        return 2

    summary = [l.strip() for l in lines if SUMMARY.match(l)]
    if not summary:
        print("FAIL: no summary line from perf script --compare-unwind")
        return 1
    print(f"all samples: {summary[-1]}")

    counts = collections.Counter()
    stacks = collections.Counter()
    groups = collections.Counter()
    bad = []
    wrong = []
    lost = []
    required = collections.Counter()
    unmapped = []
    for verdict, st, text, full in parse(lines):
        counts["all " + verdict] += 1
        if verdict == "lost":
            lost.append(text)
        if not any(args.through in st[s] for s in st):
            continue
        if (args.top_dso or args.require) and not full["deferred"]:
            print("compare-unwind.py: --top-dso and --require need the "
                  "frames of every sample: perf script -v --compare-unwind")
            return 2
        if args.top_dso and not full["deferred"][0].endswith("@" + args.top_dso):
            counts["other top"] += 1
            continue
        if verdict == "disagree" and args.cut:
            st = {s: cut(st[s], args.through) for s in st}
            if st["deferred"] == st["dwarf"]:
                verdict = "agree"
        if verdict == "disagree" and dwarf_unmapped(st, full):
            # DWARF went to an address no object maps, where the kernel
            # has a frame of a known object at every step: the sample's
            # registers and stack dump didn't match (taken while the
            # kernel rewrote the registers, in signal delivery or
            # sigreturn).  Not a check of the kernel: counted, shown.
            verdict = "unmapped"
            groups[f"unmapped: DWARF goes to {full['dwarf'][len(full['dwarf']) - 1]}, "
                   f"kernel to {full['deferred'][min(len(full['dwarf']), len(full['deferred'])) - 1]}"] += 1
            unmapped.append(text)
        if verdict == "disagree":
            d, w = st["deferred"], st["dwarf"]
            shorter = len(d) < len(w) and w[:len(d)] == d
            # DWARF had no CFI for the sampled IP (_fini, crt stubs) and
            # the kernel went on: its frames can't be checked there; not
            # counted as agreeing, nor as wrong.  Anywhere else, a stack
            # longer than DWARF's is wrong.
            longer = len(w) == 1 and len(d) > 1 and d[0] == w[0]
            if longer:
                counts["longer"] += 1
                groups[f"longer: DWARF stops at {w[0]}, "
                       f"kernel goes on to {d[1]}"] += 1
            elif shorter:
                counts["shorter"] += 1
                # where the kernel stopped, and what DWARF found below
                groups[f"shorter: kernel stops at {d[-1] if d else '(nothing)'}, "
                       f"DWARF goes on to {w[len(d)]}"] += 1
            else:
                counts["wrong"] += 1
                wrong.append(text)
                i = next((i for i, (a, b) in enumerate(zip(d, w)) if a != b),
                         min(len(d), len(w)))
                groups[f"wrong: frame {i}: kernel "
                       f"{d[i] if i < len(d) else '(end)'}, DWARF "
                       f"{w[i] if i < len(w) else '(end)'}"] += 1
        counts[verdict] += 1
        if verdict == "agree":
            stacks[" <- ".join(st["deferred"])] += 1
            for pat in args.require:
                if any(fnmatch.fnmatchcase(f, pat) for f in full["deferred"]):
                    required[pat] += 1
        elif verdict == "disagree":
            bad.append(text)
    agree, disagree = counts["agree"], counts["disagree"]
    compared = agree + disagree
    pct = f"{100.0 * agree / compared:.2f}%" if compared else "-"
    print(f"through {args.through}: {compared} samples compared, {agree} agree "
          f"({pct}), {disagree} disagree ({counts['shorter']} shorter, "
          f"{counts['longer']} longer, {counts['wrong']} wrong); "
          f"{counts['unmapped']} where DWARF went where nothing is mapped "
          "(not compared); "
          f"{counts['all truncated']} samples (any) "
          "truncated by the stack dump; "
          f"{counts['all lost']} whose deferred record never came, "
          f"{counts['all incomplete']} without a deferred user callchain; "
          f"{args.lost} records lost")
    if args.top_dso:
        print(f"  {counts['other top']} samples through {args.through} set aside: "
              f"sampled IP not in {args.top_dso}")
    for stack, n in stacks.most_common(4):
        print(f"  {n:6d}  {stack}")
    for g, n in groups.most_common():
        print(f"  {n:6d}  {g}")

    ok = True
    if args.mode in ("agree", "report") and lost and not args.lost:
        print(f"FAIL: {len(lost)} samples without their deferred record, "
              "and no loss counted; the first:")
        for text in lost[:3]:
            print("\n".join(text))
        ok = False
    if args.mode == "report":
        if compared < args.min:
            print(f"FAIL: {compared} samples through {args.through} compared, "
                  f"want at least {args.min}")
            ok = False
        if compared and 100.0 * agree / compared < args.min_agree:
            print(f"FAIL: {pct} agree, want at least {args.min_agree}%")
            ok = False
        if args.max_shorter is not None and counts["shorter"] > args.max_shorter:
            print(f"FAIL: {counts['shorter']} samples with a stack cut short, "
                  f"want at most {args.max_shorter}")
            ok = False
        if args.max_wrong is not None and counts["wrong"] > args.max_wrong:
            print(f"FAIL: {counts['wrong']} samples with a wrong frame, "
                  f"want at most {args.max_wrong}; the first:")
            # on FAIL lines too: make test repeats those at the end of its log
            for g, n in groups.most_common():
                if g.startswith("wrong: "):
                    print(f"FAIL: {n} x {g}")
            for text in wrong[:3]:
                print("\n".join(text))
            ok = False
    elif args.mode == "agree":
        if disagree:
            print(f"FAIL: {disagree} samples through {args.through} disagree; the first:")
            for text in bad[:5]:
                print("\n".join(text))
            ok = False
        if agree < args.min:
            print(f"FAIL: {agree} samples through {args.through} agree, want at least {args.min}")
            ok = False
    else:
        for text in bad[:2]:
            print("\n".join(text))
        if disagree < args.min:
            print(f"FAIL: {disagree} samples through {args.through} disagree, "
                  f"want at least {args.min}")
            ok = False
        if compared and 100.0 * agree / compared > args.max_agree:
            print(f"FAIL: {pct} agree, want at most {args.max_agree}%")
            ok = False
    for pat in args.require:
        if required[pat] < args.require_min:
            print(f"FAIL: {required[pat]} agreeing samples through {args.through} "
                  f"have a frame {pat}, want at least {args.require_min}")
            ok = False
    if counts["all truncated"] < args.min_truncated:
        print(f"FAIL: {counts['all truncated']} samples truncated by the stack dump, "
              f"want at least {args.min_truncated}")
        ok = False
    if ok:
        print("OK")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
