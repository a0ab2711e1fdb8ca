#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""perf script with and without merging deferred callchains, side by side.

usage: perf-script-bench.py [--runs N] [--kallsyms FILE] PERF NAME=FILE...

For each perf.data FILE, runs `perf script -i FILE` (merging, the default)
and `perf script -i FILE --no-merge-callchains` N times each, alternating,
and prints a markdown table of the median wall time and the peak RSS of
each, and their ratios (merge / no merge).  With --baseline NAME, also the
time per sample of each merged run over that of NAME (a recording of the
same workload with plain fp callchains: the same stacks to print, no
merging), for the rows whose name starts like NAME's (up to a comma).
The sample and record counts come from `perf report --stats`.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd):
    """Run cmd with output discarded; return (seconds, peak RSS in KiB)."""
    start = time.monotonic()
    # stderr to a file, not a pipe: nothing reads a pipe during wait4().
    with open(os.devnull, 'wb') as null, tempfile.TemporaryFile() as errf:
        proc = subprocess.Popen(cmd, stdout=null, stderr=errf)
        _, status, usage = os.wait4(proc.pid, 0)
        errf.seek(0)
        err = errf.read().decode(errors='replace')
    took = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"perf-script-bench: {' '.join(cmd)} failed:\n{err}")
    return took, usage.ru_maxrss


def stats(perf, path):
    out = subprocess.run([perf, 'report', '--stats', '-i', path],
                         capture_output=True, text=True, check=True).stdout
    def count(name):
        m = re.search(r'^\s*%s events:\s+(\d+)' % name, out, re.M)
        return int(m.group(1)) if m else 0
    return count('SAMPLE'), count('CALLCHAIN_DEFERRED')


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--kallsyms', help='kallsyms of the machine that recorded')
    ap.add_argument('--baseline', help='NAME of the plain fp recording')
    ap.add_argument('perf')
    ap.add_argument('files', nargs='+', metavar='NAME=FILE')
    args = ap.parse_args()

    rows = []
    for spec in args.files:
        name, _, path = spec.partition('=')
        samples, records = stats(args.perf, path)
        cmd = [args.perf, 'script', '-i', path]
        if args.kallsyms:
            cmd.append('--kallsyms=' + args.kallsyms)
        modes = {'merge': [], 'raw': []}
        for _ in range(args.runs):
            modes['merge'].append(run(cmd))
            if records:
                modes['raw'].append(run(cmd + ['--no-merge-callchains']))
        t = {m: statistics.median(r[0] for r in v) for m, v in modes.items() if v}
        rss = {m: max(r[1] for r in v) / 1024 for m, v in modes.items() if v}
        rows.append((name, samples, records, t, rss))

    base = {r[0]: r for r in rows}.get(args.baseline)
    print('| data | samples | records | merge s | no merge s | time ratio '
          '| merge MiB | no merge MiB | memory ratio | us/sample | vs fp /sample |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for name, samples, records, t, rss in rows:
        raw = 'raw' in t
        per = t['merge'] / samples * 1e6
        same = base and base[0] != name and name.split(',')[0] == base[0].split(',')[0]
        vs = per / (base[3]['merge'] / base[1] * 1e6) if same else None
        print(f"| {name} | {samples} | {records} | {t['merge']:.2f} "
              f"| {t['raw']:.2f} | {t['merge'] / t['raw']:.2f} " if raw else
              f"| {name} | {samples} | {records} | {t['merge']:.2f} | - | - ",
              end='')
        print(f"| {rss['merge']:.0f} | " +
              (f"{rss['raw']:.0f} | {rss['merge'] / rss['raw']:.2f} " if raw else "- | - ") +
              f"| {per:.2f} | " + (f"{vs:.2f} |" if vs else "- |"))


if __name__ == '__main__':
    main()
