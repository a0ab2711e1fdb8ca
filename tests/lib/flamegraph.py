#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write a flame graph (a standalone SVG) from perf script output or folded stacks.

  flamegraph.py [--folded] [--comm COMM] [--title TEXT] [--width PX]
                [-o OUT.svg] [INPUT]

INPUT (default stdin) is `perf script` output with callchains, e.g.
`perf script -F comm,tid,ip,sym,dso` (any fields, as long as each sample's
header line is followed by its frames, tab-indented `ADDR SYM[+OFF] (DSO)`,
innermost first), or with --folded one stack per line, outermost first:
`FRAME;FRAME;...;FRAME COUNT` (Brendan Gregg's stackcollapse format).

Each box is a function on the stack; its width is proportional to the
samples with that stack below it, callers at the bottom.  Colours: kernel
frames orange, user frames one hue per DSO (legend at the bottom), grey
for unknown symbols.  Hovering over a box shows its name, DSO, samples and
percentage (SVG <title>).  No scripts: any browser or viewer shows it.

Exit 0 on success, 1 on bad or empty input (the file and line are named),
2 on bad usage.
"""
import argparse
import collections
import hashlib
import html
import os
import re
import sys

FRAME = re.compile(r"^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")
KERNEL_DSOS = ("[kernel.kallsyms]", "[guest.kernel.kallsyms]")
ALL = "all"


class InputError(Exception):
    pass


def frame_name(sym, dso):
    """A frame as "sym (dso)"; offsets dropped, unknown symbols named by DSO."""
    sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
    if sym in ("", "[unknown]"):
        return f"[unknown] ({os.path.basename(dso)})"
    return f"{sym} ({os.path.basename(dso)})"


def read_perf_script(f, name, comm):
    """Count stacks (outermost first) in perf script output."""
    stacks = collections.Counter()
    cur_comm, frames = None, None

    def flush():
        if frames is not None and (comm is None or cur_comm == comm):
            if frames:
                stacks[tuple(reversed(frames))] += 1
            else:
                stacks[("[no callchain] (-)",)] += 1

    for n, line in enumerate(f, 1):
        line = line.rstrip("\n")
        if not line.strip():
            flush()
            frames = None
            continue
        if not line.startswith("\t"):
            flush()
            cur_comm, frames = line.split()[0], []
            continue
        m = FRAME.match(line)
        if frames is None or not m:
            why = "a frame before any sample header" if frames is None else \
                "not a frame (ADDR SYM (DSO))"
            raise InputError(f"{name}:{n}: {why}: {line.strip()[:80]!r}")
        frames.append(frame_name(m.group(2), m.group(3)))
    flush()
    return stacks


def read_folded(f, name):
    stacks = collections.Counter()
    for n, line in enumerate(f, 1):
        line = line.rstrip("\n")
        if not line.strip():
            continue
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            raise InputError(f"{name}:{n}: not \"FRAME;...;FRAME COUNT\": {line[:80]!r}")
        stacks[tuple(stack.split(";"))] += int(count)
    return stacks


def build_tree(stacks):
    """Nested dict: name -> [count, children]."""
    root = [0, {}]
    for stack, count in stacks.items():
        node = root
        node[0] += count
        for fr in stack:
            node = node[1].setdefault(fr, [0, {}])
            node[0] += count
    return root


def dso_of(name):
    m = re.search(r" \(([^()]*)\)$", name)
    return m.group(1) if m else ""


# User DSOs get these hues in order of their samples; kernel frames are orange.
HUES = [220, 130, 275, 180, 330, 60, 250, 100, 300, 200]


class Colours:
    def __init__(self, tree):
        weight = collections.Counter()
        self.unknown = False

        def walk(node):
            for name, child in node[1].items():
                weight[dso_of(name)] += child[0]
                self.unknown |= name.startswith("[unknown]")
                walk(child)
        walk(tree)
        self.user = [d for d, _ in weight.most_common() if not is_kernel(d)]
        self.kernel = [d for d in weight if is_kernel(d)]

    def hue(self, dso):
        i = self.user.index(dso) if dso in self.user else -1
        if 0 <= i < len(HUES):
            return HUES[i]
        return 70 + int(hashlib.md5(dso.encode()).hexdigest()[:4], 16) % 260

    def __call__(self, name):
        """Fill for a box; frames of the same DSO vary a little in lightness."""
        vary = int(hashlib.md5(name.encode()).hexdigest()[:2], 16)
        dso = dso_of(name)
        if is_kernel(dso):
            return f"hsl({20 + vary % 18},85%,{55 + vary % 10}%)"
        if name == ALL or dso in ("-", "[unknown]"):
            return "hsl(0,0%,80%)"
        if not dso:  # folded stacks without DSOs: a hue per name
            return f"hsl({70 + int(hashlib.md5(name.encode()).hexdigest()[:4], 16) % 260},55%,66%)"
        sat = 15 if name.startswith("[unknown]") else 55
        return f"hsl({self.hue(dso)},{sat}%,{62 + vary % 12}%)"

    def legend(self):
        """[(label, fill), ...]: the DSOs, then boxes without a symbol."""
        items = [(d, "hsl(20,85%,58%)") for d in self.kernel]
        items += [(d, f"hsl({self.hue(d)},55%,66%)") for d in self.user
                  if d not in ("", "-", "[unknown]")]
        return items + ([("(pale: no symbol)", "hsl(220,15%,70%)")] if self.unknown else [])


def is_kernel(dso):
    return dso in KERNEL_DSOS or dso.startswith("[kernel")


def svg(stacks, title, width):
    root = build_tree(stacks)
    total = root[0]
    pad, fh, font = 10, 17, 12
    avail = width - 2 * pad

    def depth(node):
        return 1 + max((depth(c) for c in node[1].values()), default=0)

    levels = depth(root)  # the root, "all", is a row too
    colour = Colours(root)
    legend_h = 24
    height = 40 + levels * fh + legend_h + 10
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="{font}">',
           '<rect width="100%" height="100%" fill="rgb(250,250,240)"/>',
           f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="16">'
           f'{html.escape(title)} ({total} samples)</text>']
    base = 40 + levels * fh  # y of the bottom of the lowest row

    def box(name, count, x, lvl):
        w = count / total * avail
        y = base - (lvl + 1) * fh
        tip = f"{name}: {count} samples, {100.0 * count / total:.2f}%"
        out.append(f'<g><title>{html.escape(tip)}</title>'
                   f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{fh - 1}" '
                   f'fill="{colour(name)}" rx="2"/>')
        chars = int((w - 6) / (font * 0.6))
        if chars >= 3:
            label = name if len(name) <= chars else name[:chars - 2] + ".."
            out.append(f'<text x="{x + 3:.2f}" y="{y + fh - 5}">{html.escape(label)}</text>')
        out.append('</g>')

    def draw(node, x, lvl):
        """The children of node, left to right by name, callers below."""
        for name in sorted(node[1]):
            child = node[1][name]
            if child[0] / total * avail >= 0.3:
                box(name, child[0], x, lvl)
                draw(child, x, lvl + 1)
            x += child[0] / total * avail

    box(ALL, total, pad, 0)
    draw(root, pad, 1)
    x, y = pad, height - legend_h
    for label, fill in colour.legend():
        out.append(f'<rect x="{x}" y="{y}" width="12" height="12" fill="{fill}"/>')
        out.append(f'<text x="{x + 16}" y="{y + 11}">{html.escape(label)}</text>')
        x += 16 + round(len(label) * font * 0.6) + 14
    out.append('</svg>')
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 usage=__doc__.split("\n\n")[1].strip(),
                                 epilog="\n\n".join(__doc__.split("\n\n")[2:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folded", action="store_true",
                    help="INPUT is folded stacks, not perf script output")
    ap.add_argument("--comm", help="only samples of this command (perf script input)")
    ap.add_argument("--title", default="Flame graph", metavar="TEXT",
                    help="heading (default: %(default)s)")
    ap.add_argument("--width", type=int, default=1200, metavar="PX",
                    help="image width (default: %(default)s)")
    ap.add_argument("-o", "--output", metavar="OUT.svg", help="output file (default: stdout)")
    ap.add_argument("input", nargs="?", default="-", metavar="INPUT",
                    help="perf script output or folded stacks (default: stdin)")
    args = ap.parse_args()
    if args.width < 200:
        ap.error("--width must be at least 200")
    if args.folded and args.comm:
        ap.error("--comm needs perf script input, not --folded")

    name = "<stdin>" if args.input == "-" else args.input
    sys.setrecursionlimit(10000)  # the tree is walked recursively, a level a frame
    try:
        f = sys.stdin if args.input == "-" else open(args.input)
        with f:
            stacks = read_folded(f, name) if args.folded else \
                read_perf_script(f, name, args.comm)
        if not stacks:
            what = f" of command {args.comm!r}" if args.comm else ""
            raise InputError(f"{name}: no samples{what}"
                             + ("" if args.folded else " (perf script output with callchains?)"))
        doc = svg(stacks, args.title, args.width)
        if args.output:
            with open(args.output + ".tmp", "w") as o:
                o.write(doc)
            os.replace(args.output + ".tmp", args.output)
        else:
            sys.stdout.write(doc)
    except OSError as e:
        print(f"flamegraph.py: {e.filename or name}: {e.strerror}", file=sys.stderr)
        return 1
    except (UnicodeDecodeError, InputError) as e:
        print(f"flamegraph.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
