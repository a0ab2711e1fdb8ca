#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the user call stacks in `perf script -F comm,tid,ip,sym,dso` output.

User frames are those not in [kernel.kallsyms]; symbol offsets (-F +symoff)
are ignored.  Frames of --top and --expect are patterns: a symbol name, or
*@DSO for any symbol of DSO (the file's basename, or [vdso]), or several
of those separated by '|' (any of them).  --expect is a comma-separated
list of them, innermost first.

  --mode full       every sample of --comm whose innermost user frame is
                    --top has a user stack starting with --expect
  --mode truncated  no such sample's user stack starts with --expect (the
                    unwinder lost the callers)
  --mode suffix     every sample of --comm whose innermost user frame is a
                    symbol named in --expect (not a *@DSO) has the rest of
                    --expect below it: the stack is right wherever in the
                    chain the sample landed.  --expect may be given more
                    than once (chains sharing callers); a sample matching
                    any one is good.  --top is optional here.

With --no-frame BINARY:SYMBOL (full mode, perf script -F symoff), a
sample on one of the instructions of SYMBOL (--top) where its frame
pointer is not set up yet or any more (up to its "mov %rsp,%rbp", the one
after its "pop %rbp" or "leave", from objdump -d) may miss the second
frame of --expect: a frame-pointer walk from there can't see the caller.

At least --min samples must be selected (in suffix mode with --top, at
least --min with --top on top).  In full and suffix modes every sample of
--comm must have a user stack: one without is a failure unless the task
was exiting (do_exit on its kernel stack: its user memory may be gone), in
an exec (bprm_execve and below: the registers are the old program's, the
memory the new one's, and the kernel gives no user part), its stack
dump (--call-graph dwarf) is empty in the perf report -D output given with
--dump (the kernel copies it in the interrupt, where a stack page that is
not in memory can't be read: a sample in the page fault that brings it in),
or --lost says perf lost records (PERF_RECORD_LOST, LOST_SAMPLES) in that
recording, which may have been the missing ones.  With --dump, the perf
script output must have -F time and --ns too.  The distinct stacks seen are printed, most
frequent first, and the wrong ones on failure.
Exit 0 on success, 1 on failure, 2 on bad usage.
"""
import argparse
import collections
import os
import re
import subprocess
import sys

# The exec proper (copy_strings() comes before it): the kernel gives no user
# part there, deferred or not.  Also imported by the guest tests' checkers.
EXEC_FUNCS = {"bprm_execve", "exec_binprm", "search_binary_handler", "load_elf_binary",
              "begin_new_exec", "elf_load", "setup_new_exec", "exec_mmap"}


def parse_samples(lines, ips=False):
    """Yield (header, frames) per sample; frames = [(sym, offset or None, dso), ...],
    with ips (sym, offset or None, dso, ip or None)."""
    head, frames = None, []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if head is not None:
                yield head, frames
            head, frames = None, []
            continue
        if not line[0].isspace():
            if head is not None:
                yield head, frames
            head, frames = line, []
            continue
        parts = line.split(None, 1)
        rest = parts[1] if len(parts) > 1 else "[unknown] ([unknown])"
        sym, _, dso = rest.rpartition(" (")
        m = re.match(r"(.*)\+0x([0-9a-f]+)$", sym)
        sym, off = (m.group(1), int(m.group(2), 16)) if m else (sym, None)
        frame = (sym or "[unknown]", off, dso.rstrip(")"))
        if ips:
            ip = parts[0] if len(parts) > 1 else ""
            frame += (int(ip, 16) if re.fullmatch(r"[0-9a-f]+", ip) else None,)
        frames.append(frame)
    if head is not None:
        yield head, frames


def parse_symoff(lines):
    """Yield (comm, frames) per sample; frames = [(sym, offset or None, dso), ...]."""
    for head, frames in parse_samples(lines):
        yield head.split()[0], frames


# perf report -D: a sample's pid/tid and time, then its stack dump's size.
DUMP_SAMPLE = re.compile(r"^(?:\d+ )?(\d+) 0x[0-9a-f]+ \[0x[0-9a-f]+\]: "
                         r"PERF_RECORD_SAMPLE\(IP, 0x[0-9a-f]+\): -?\d+/(-?\d+):")
DUMP_USTACK = re.compile(r"^\.\.\. ustack: size (\d+),")
# perf script -F comm,tid,time,... --ns
SCRIPT_HEAD = re.compile(r"^\S.*?\s+(-?\d+)\s+(\d+)\.(\d{9}):")


def dump_sizes(path):
    """{(tid, time in ns): size} of the stack dumps (PERF_SAMPLE_STACK_USER)
    of the samples in a perf report -D output."""
    sizes, key = {}, None
    with open(path) as f:
        for line in f:
            m = DUMP_SAMPLE.match(line)
            if m:
                key = (int(m.group(2)), int(m.group(1)))
                continue
            m = DUMP_USTACK.match(line)
            if m and key is not None:
                sizes[key] = int(m.group(1))
                key = None
    return sizes


def function_insns(binary, func):
    """[(offset, instruction text, spaces collapsed)] of FUNC in BINARY, from
    objdump -d, up to the blank line that ends it.  ValueError if it has no
    such function."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(rf"^([0-9a-f]+) <{re.escape(func)}>:\n(.*?)(?:\n\n|\Z)", out, re.M | re.S)
    if not m:
        raise ValueError(f"no function {func} in {binary}")
    start, insns = int(m.group(1), 16), []
    for line in m.group(2).splitlines():
        a = re.match(r"\s*([0-9a-f]+):\s+(.*)", line)
        if a:
            insns.append((int(a.group(1), 16) - start, " ".join(a.group(2).split())))
    return insns


def no_frame_offsets(binary, sym):
    """The offsets in SYM of BINARY where %rbp is not, or no longer, SYM's
    frame: up to and including its "mov %rsp,%rbp", and the instruction
    after its "pop %rbp" or "leave".  A frame-pointer walk from there
    misses SYM's caller."""
    try:
        insns = function_insns(binary, sym)
    except ValueError as e:
        sys.exit(f"stacks.py: {e}")
    offs, pro, epi = set(), True, False
    for off, text in insns:
        if pro or epi:
            offs.add(off)
        epi = text == "pop %rbp" or text == "leave"
        if pro and text == "mov %rsp,%rbp":
            pro = False
    if pro:
        sys.exit(f"stacks.py: no frame-pointer prologue in {sym} of {binary}")
    return offs


def sample_key(head):
    m = SCRIPT_HEAD.match(head)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)) * 10**9 + int(m.group(3))


def deferred_keys(path):
    """(tid, time) of the samples of perf script --no-merge-callchains
    output that carry a deferred user callchain."""
    keys, key = set(), None
    with open(path) as f:
        for line in f:
            if line[:1] and not line[0].isspace():
                key = sample_key(line)
            elif key and "(user callchain deferred, cookie" in line:
                keys.add(key)
    return keys


def parse(lines):
    """Yield (comm, frames) per sample; frames = [(sym, dso), ...]."""
    for comm, frames in parse_symoff(lines):
        yield comm, [(sym, dso) for sym, _, dso in frames]


def user_frames(frames):
    return [(sym, dso) for sym, dso in frames if dso != "[kernel.kallsyms]"]


def matches(pattern, frame):
    """pattern: a symbol name, or *@DSO (basename of the frame's dso), or
    alternatives of those separated by '|'."""
    if "|" in pattern:
        return any(matches(p, frame) for p in pattern.split("|"))
    sym, dso = frame
    if pattern.startswith("*@"):
        return os.path.basename(dso) == pattern[2:]
    return sym == pattern


def starts_with(user, chain):
    return len(user) >= len(chain) and all(matches(p, f) for p, f in zip(chain, user))


def show(user):
    return " <- ".join(sym if sym != "[unknown]" else f"[unknown]@{os.path.basename(dso)}"
                       for sym, dso in user)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--comm", required=True)
    ap.add_argument("--top")
    ap.add_argument("--expect", required=True, action="append")
    ap.add_argument("--mode", choices=["full", "truncated", "suffix"], default="full")
    ap.add_argument("--min", type=int, default=20)
    ap.add_argument("--lost", type=int, default=0,
                    help="records perf reported lost in the recording")
    ap.add_argument("--dump",
                    help="perf report -D output of the recording (with perf script "
                    "-F comm,tid,time,... --ns)")
    ap.add_argument("--no-frame", metavar="BINARY:SYMBOL",
                    help="--mode full: a sample on an instruction of SYMBOL (--top) "
                    "where its frame pointer is not set up may lack the chain's "
                    "second frame (needs -F symoff)")
    ap.add_argument("--raw", metavar="RAW",
                    help="perf script --no-merge-callchains -F ...,time --ns of the "
                    "same recording: samples that perf unwound at once (no deferred "
                    "user callchain) are counted, not checked")
    ap.add_argument("--max-immediate", type=int, default=0)
    ap.add_argument("file", nargs="?", default="-")
    args = ap.parse_args()
    sizes = dump_sizes(args.dump) if args.dump else {}
    noframe = set()
    if args.no_frame:
        binary, _, sym = args.no_frame.rpartition(":")
        noframe = {(sym, off) for off in no_frame_offsets(binary, sym)}
    chains = [e.split(",") for e in args.expect]
    if args.mode != "suffix" and (args.top is None or len(chains) != 1):
        ap.error(f"--mode {args.mode} needs --top and one --expect")

    f = sys.stdin if args.file == "-" else open(args.file)
    seen, bad = collections.Counter(), collections.Counter()
    unexplained = []
    total = selected = good = on_top = exiting = nouser = nodump = undumped = unframed = 0
    deferred = deferred_keys(args.raw) if args.raw else None
    immediate = collections.Counter()
    for head, frames in parse_samples(f):
        if head.split()[0] != args.comm:
            continue
        top = next(((sym, off) for sym, off, dso in frames if dso != "[kernel.kallsyms]"), None)
        frames = [(sym, dso) for sym, _, dso in frames]
        total += 1
        size = sizes.get(sample_key(head))
        undumped += args.dump is not None and size is None
        user = user_frames(frames)
        if not user:
            ksyms = {sym.split(".")[0] for sym, dso in frames
                     if dso == "[kernel.kallsyms]"}
            if "do_exit" in ksyms or ksyms & EXEC_FUNCS:
                exiting += 1
            elif size == 0:
                nodump += 1
            else:
                nouser += 1
                unexplained.append((frames, size))
            continue
        if args.mode == "suffix":
            # Every place where the top frame is named in a chain: the
            # rest of that chain must follow.
            rests = [c[i:] for c in chains for i, p in enumerate(c)
                     if not p.startswith("*@") and matches(p, user[0])]
            if not rests:
                continue
            ok = any(starts_with(user, r) for r in rests)
        else:
            if not matches(args.top, user[0]):
                continue
            ok = starts_with(user, chains[0])
            if not ok and top in noframe and starts_with(user, chains[0][:1] + chains[0][2:]):
                ok = True
                unframed += 1
        if deferred is not None and sample_key(head) not in deferred:
            # perf unwound it in the interrupt: the kernel refused to
            # defer it (its registers were being replaced), not a stack
            # of the deferred unwinder
            immediate[show(user)] += 1
            continue
        selected += 1
        on_top += args.top is not None and matches(args.top, user[0])
        seen[show(user)] += 1
        good += ok
        if not ok:
            bad[show(user)] += 1

    if args.mode == "suffix":
        print(f"{args.comm}: {total} samples, {selected} with a frame of the chain on top"
              + (f" ({on_top} with {args.top})" if args.top else "")
              + f", {good} with the rest of the chain below it")
        for c in chains:
            print(f"  chain {' <- '.join(c)}")
    else:
        print(f"{args.comm}: {total} samples, {selected} with {args.top} on top, "
              f"{good} with the expected chain {' <- '.join(chains[0])}"
              + (f" ({unframed} where {args.top} has no frame yet or any more, "
                 f"without {chains[0][1]})" if args.no_frame else ""))
    print(f"  {nouser + exiting + nodump} without a user stack ({exiting} exiting or in exec"
          + (f", {nodump} with an empty stack dump" if args.dump else "")
          + f"); {args.lost} records lost")
    for stack, n in seen.most_common(5):
        print(f"  {n:6d}  {stack}")
    if deferred is not None:
        n = sum(immediate.values())
        print(f"  {n} unwound by perf at once, not deferred (not checked), "
              f"at most {args.max_immediate} allowed")
        for stack, k in immediate.most_common(3):
            print(f"  {k:6d}  {stack} (at once)")
        if n > args.max_immediate:
            print(f"FAIL: {n} samples unwound at once, want at most {args.max_immediate}")
            return 1
    if undumped:
        print(f"FAIL: {undumped} samples not found in {args.dump}")
        return 1
    need, have = (args.min, on_top) if args.top else (args.min, selected)
    if have < need:
        what = f"with {args.top} on top" if args.top else "selected"
        print(f"FAIL: {have} samples {what}, want at least {need}")
        return 1
    if args.mode in ("full", "suffix") and nouser and not args.lost:
        print(f"FAIL: {nouser} samples without a user stack, and no loss counted")
        for frames, size in unexplained[:3]:
            print("  kernel stack: " + " <- ".join(sym for sym, _ in frames[:16])
                  + (f"; stack dump {size} bytes" if size is not None else ""))
        return 1
    if args.mode in ("full", "suffix") and good != selected:
        print(f"FAIL: {selected - good} of {selected} stacks do not have the expected chain:")
        for stack, n in bad.most_common(10):
            print(f"  {n:6d}  {stack}")
        return 1
    if args.mode == "truncated" and good != 0:
        print(f"FAIL: {good} of {selected} stacks are complete, expected all truncated")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
