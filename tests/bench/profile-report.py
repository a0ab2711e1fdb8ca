#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""profile-report.py RAW PERF JSON: the profile section's tables from profile-run.sh output.

RAW has one line per run ("run mode=... build=... freq=... rep=... work_ns=...
cpu_ns=... total_cpu_ns=... [bytes=... data=PATH]").  Every recording (data=) is
read on the host with PERF: `perf report --stats` (samples, lost samples,
deferred callchain records), `perf report --header-only` (size of the data
section) and `perf script`, whose user stacks are checked against the
workload's call graph (CALLERS below, profile-work.c's header): a stack is
whole when every frame is called from the one below it, down to main.

Slowdown = median work time of a mode / median work time of the no-frame-
pointer build without perf (the workload's own clock_gettime around its
work, so perf's start and its writing of the file after the workload
exits are not in it, but perf's user-space work during the run is: one
CPU).  B/sample = perf.data bytes / samples; B/s = perf.data bytes per
second of the workload's CPU time (what one busy thread makes perf write at
that frequency).  In-task ns/sample = (the workload's CPU time over its
work - the same build's without perf) / samples: what the sampled task
pays per sample (interrupt, user stack copy or deferred unwind and record).
perf record CPU s: user + system time of the whole perf record command
(its start, the workload, the pass over perf.data at the end).  User
frames: the mean number per sample of the workload, as perf script shows
them.

Fails (exit 1, after printing what it found) when a run's checksum differs,
a recording has no samples (or, with fp,defer, no deferred callchain
record: perf fell back to plain fp), or fewer than MIN_WHOLE % (--min-whole, 90) of
the samples whose top frame is the program's own have a whole stack with
fp,defer; for dwarf, the same for the samples outside lz_compress, whose
16 KiB stack frame the 8 KiB stack copy cannot get past; for plain fp,
--min-whole-fp (75): it loses the caller of every sample taken in a
prologue or an epilogue, which the small functions here make frequent.
A broken configuration gives next to no whole stacks.  JSON gets the
cells, for plot.py.
"""
import argparse
import collections
import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from stacks import parse, user_frames  # noqa: E402

# Who calls whom in profile-work.c (callee: callers); LIBC is any frame in libc.
CALLERS = {
    'run_work': {'main'},
    'process_block': {'run_work'},
    'gen_text': {'process_block'},
    'pick_word': {'gen_text'},
    'count_words': {'process_block'},
    'ht_insert': {'count_words'},
    'hash_bytes': {'ht_insert', 'process_block'},
    'mix64': {'hash_bytes', 'run_work'},
    'lz_compress': {'process_block'},
    'lz_match_len': {'lz_compress'},
    'sort_keys': {'process_block'},
    'qs_sort': {'qs_sort', 'sort_keys'},
    'qs_partition': {'qs_sort'},
    'ins_sort': {'qs_sort'},
    'tree_build': {'tree_build', 'process_block'},
    'tree_eval': {'tree_eval', 'process_block'},
    'LIBC': {'pick_word', 'gen_text', 'count_words', 'ht_insert', 'hash_bytes',
             'lz_compress', 'lz_match_len', 'sort_keys'},
}
MODES = ('fp', 'dwarf', 'fp,defer')
BUILD = {'fp': 'fp', 'dwarf': 'no-fp', 'fp,defer': 'no-fp + SFrame'}


def name(frame):
    sym, dso = frame
    if os.path.basename(dso).startswith('libc.so') or sym.endswith('@plt'):
        return 'LIBC'
    return re.sub(r'\..*', '', sym)     # qs_sort.part.0 -> qs_sort


def classify(user):
    """(top, whole, under_lz): top is the program's or 'LIBC' or None (elsewhere)."""
    if not user:
        return None, False, False
    names = [name(f) for f in user]
    top = names[0]
    if top not in CALLERS:
        return None, False, False
    under_lz = top in ('lz_compress', 'lz_match_len') or \
        (top == 'LIBC' and len(names) > 1 and names[1] == 'lz_compress')
    for callee, caller in zip(names, names[1:]):
        if caller not in CALLERS.get(callee, ()):
            return top, False, under_lz
        if caller == 'main':
            return top, True, under_lz
    return top, False, under_lz


def check_stacks(perf, data, prefix):
    out = subprocess.run([perf, 'script', '--no-inline', '-F', 'comm,tid,ip,sym,dso', '-i', data],
                         capture_output=True, text=True)
    if out.returncode:
        sys.exit(f'profile-report: perf script -i {data} failed: {out.stderr[-500:]}')
    c, bad = collections.Counter(), collections.Counter()
    for comm, frames in parse(out.stdout.splitlines()):
        if not comm.startswith(prefix):
            continue
        c['samples'] += 1
        user = user_frames(frames)
        c['frames'] += len(user)
        top, whole, under_lz = classify(user)
        if top is None:
            c['other'] += 1
            continue
        kind = 'libc' if top == 'LIBC' else 'prog'
        c[kind] += 1
        c[kind + '_whole'] += whole
        if kind == 'prog' and not under_lz:
            c['prog_nolz'] += 1
            c['prog_nolz_whole'] += whole
        if not whole:
            bad[' <- '.join(name(f) for f in user[:12])] += 1
    return c, bad


def perf_stats(perf, data):
    out = subprocess.run([perf, 'report', '--stats', '-i', data],
                         capture_output=True, text=True)
    if out.returncode:
        sys.exit(f'profile-report: perf report --stats -i {data} failed: {out.stderr[-500:]}')
    ev = {}
    for line in out.stdout.splitlines():
        m = re.match(r'\s*(\S+) events:\s+(\d+)', line)
        if m and m.group(1) not in ev:      # the aggregated stats come first
            ev[m.group(1)] = int(m.group(2))
        # " DEFERRED CALLCHAINS: N samples: N merged, N without user part; ..."
        m = re.search(r'(\d+) without user part', line)
        if m:
            ev['no_user_part'] = int(m.group(1))
    hdr = subprocess.run([perf, 'report', '--header-only', '-i', data],
                         capture_output=True, text=True).stdout
    m = re.search(r'# data size\s*:\s*(\d+)', hdr)
    ev['data_size'] = int(m.group(1)) if m else 0
    return ev


def med(xs):
    return statistics.median(xs) if xs else float('nan')


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('raw')
    ap.add_argument('perf')
    ap.add_argument('json')
    ap.add_argument('--min-whole', type=float, default=90)
    ap.add_argument('--min-whole-fp', type=float, default=75)
    ap.add_argument('--stacks', help='write the stack checks here')
    ap.add_argument('--comm', default='profile-work', help="the workload's comm starts so")
    args = ap.parse_args()

    runs = collections.defaultdict(list)    # (mode, build, freq) -> [run]
    guest, calib, warnings = '', {}, []
    with open(args.raw) as f:
        for line in f:
            line = line.strip()
            if line.startswith('# guest:'):
                guest = line[2:]
            elif line.startswith('# '):
                warnings.append('perf record said: ' + line[2:])
            elif line.startswith('calib '):
                calib = dict(w.split('=', 1) for w in line.split()[1:])
            elif line.startswith('run '):
                kv = dict(w.split('=', 1) for w in line.split()[1:])
                for k in ('freq', 'rep', 'work_ns', 'cpu_ns', 'total_cpu_ns', 'iters',
                          'bytes', 'rec_samples'):
                    if k in kv:
                        kv[k] = int(kv[k])
                runs[(kv['mode'], kv['build'], kv['freq'])].append(kv)
    fails = []
    base = runs.get(('none', 'nofp', 0))
    if not base:
        sys.exit(f'profile-report: no run without perf in {args.raw}')
    sums = {r['checksum'] for rs in runs.values() for r in rs}
    if len(sums) != 1:
        fails.append(f'the runs computed different checksums: {sorted(sums)}')
    b_work = med([r['work_ns'] for r in base])
    b_cpu = med([r['cpu_ns'] for r in base])
    b_total = med([r['total_cpu_ns'] for r in base])

    def ratios(rs, key, b):
        xs = sorted(r[key] / b for r in rs)
        return med(xs), xs[0], xs[-1]

    freqs = sorted({k[2] for k in runs if k[0] != 'none'})
    reps = max(len(rs) for rs in runs.values())
    cells, stack_lines = [], []
    for mode in MODES:
        for fq in freqs:
            rs = [r for k, v in runs.items() if k[0] == mode and k[2] == fq for r in v]
            if not rs:
                continue
            c, bad = collections.Counter(), collections.Counter()
            st = []
            for r in rs:
                ev = perf_stats(args.perf, r['data'])
                st.append(ev)
                if ev.get('SAMPLE', 0) == 0:
                    fails.append(f'{mode} at {fq} Hz, run {r["rep"]}: no samples in {r["data"]}')
                if mode == 'fp,defer' and ev.get('CALLCHAIN_DEFERRED', 0) == 0:
                    fails.append(f'{mode} at {fq} Hz, run {r["rep"]}: no deferred callchain '
                                 f'records in {r["data"]} (perf fell back to plain fp?)')
                rc, rb = check_stacks(args.perf, r['data'], args.comm)
                c.update(rc)
                bad.update(rb)
            samples = [ev.get('SAMPLE', 0) for ev in st]
            lost = sum(ev.get('LOST_SAMPLES', 0) + ev.get('LOST', 0) for ev in st)
            no_user = sum(ev.get('no_user_part', 0) for ev in st)
            if no_user:
                warnings.append(f'{mode} {fq}: {no_user} samples whose deferred callchain '
                                'record was lost (no user part)')
            deferred = [ev.get('CALLCHAIN_DEFERRED', 0) for ev in st]
            bps = [r['bytes'] / n for r, n in zip(rs, samples) if n]
            dps = [ev['data_size'] / n for ev, n in zip(st, samples) if n]
            rate = [r['bytes'] / (r['cpu_ns'] / 1e9) for r in rs]
            sps = [n / (r['cpu_ns'] / 1e9) for r, n in zip(rs, samples)]

            def pct(a, b):
                return 100.0 * c[a] / c[b] if c[b] else float('nan')
            own = med([r['cpu_ns'] for r in runs.get(('none', rs[0]['build'], 0), [])])
            nsps = [(r['cpu_ns'] - own) / n for r, n in zip(rs, samples) if n]
            cell = {
                'mode': mode, 'build': BUILD[mode], 'freq': fq, 'runs': len(rs),
                'slowdown': ratios(rs, 'work_ns', b_work),
                'cpu': ratios(rs, 'cpu_ns', b_cpu),
                'total': ratios(rs, 'total_cpu_ns', b_total),
                'total_cpu_s': med([r['total_cpu_ns'] for r in rs]) / 1e9,
                'samples': med(samples), 'samples_per_s': med(sps), 'lost': lost,
                'deferred': med(deferred),
                'bytes': med([r['bytes'] for r in rs]),
                'bytes_per_sample': med(bps), 'data_per_sample': med(dps),
                'bytes_per_s': med(rate), 'ns_per_sample': med(nsps),
                'whole_prog': pct('prog_whole', 'prog'),
                'whole_prog_nolz': pct('prog_nolz_whole', 'prog_nolz'),
                'whole_libc': pct('libc_whole', 'libc'),
                'whole_all': 100.0 * (c['prog_whole'] + c['libc_whole']) / c['samples']
                if c['samples'] else float('nan'),
                'frames': c['frames'] / c['samples'] if c['samples'] else float('nan'),
                'prog': c['prog'], 'libc': c['libc'], 'other': c['other'],
                'checked': c['samples'],
            }
            cells.append(cell)
            key = 'whole_prog_nolz' if mode == 'dwarf' else 'whole_prog'
            what = ' outside lz_compress' if mode == 'dwarf' else ''
            want = args.min_whole_fp if mode == 'fp' else args.min_whole
            if not cell[key] >= want:
                fails.append(f'{mode} at {fq} Hz: {cell[key]:.1f}% of the samples with the '
                             f'program on top{what} have a whole stack, want >= {want:g}%')
            stack_lines.append(f'{mode} {fq} Hz: {c["samples"]} samples of profile-work, '
                               f'{c["prog"]} with the program on top ({c["prog_whole"]} whole), '
                               f'{c["libc"]} in libc ({c["libc_whole"]} whole), '
                               f'{c["other"]} elsewhere (start, exit)')
            for s, n in bad.most_common(6):
                stack_lines.append(f'  broken {n:6d}  {s}')

    if args.stacks:
        with open(args.stacks, 'w') as f:
            f.write('\n'.join(stack_lines) + '\n')

    def spread(t, fmt='{:.3f}'):
        m, lo, hi = t
        return f'{fmt.format(m)} ({fmt.format(lo)}-{fmt.format(hi)})'

    builds = (('nofp', 'no-fp (the baseline)'), ('sframe', 'no-fp + SFrame'),
              ('fp', 'fp'))
    print('Without perf, work time of each build / the no-fp build\'s:')
    print()
    print('| build | work ms | ratio, median (min-max) |')
    print('|---|---:|---:|')
    nop = {}
    for b, label in builds:
        rs = runs.get(('none', b, 0))
        if not rs:
            continue
        nop[b] = ratios(rs, 'work_ns', b_work)
        print(f'| {label} | {med([r["work_ns"] for r in rs]) / 1e6:.1f} | '
              f'**{spread(nop[b])}** |')
    print()
    print('With perf record -e cpu-clock -F FREQ --call-graph MODE, work time / the no-fp '
          'build\'s without perf, median (min-max):')
    print()
    print('| call graph | build | ' + ' | '.join(f'{f / 1000:g} kHz' for f in freqs) + ' |')
    print('|---|---|' + '---:|' * len(freqs))
    by = {(c['mode'], c['freq']): c for c in cells}
    for mode in MODES:
        row = [spread(by[(mode, f)]['slowdown']) if (mode, f) in by else '-' for f in freqs]
        print(f'| {mode} | {BUILD[mode]} | ' + ' | '.join(f'**{x}**' for x in row) + ' |')
    print()
    print('| call graph | kHz | samples | lost | deferred records | user frames | B/sample | MB/s '
          '| whole stacks: program on top | dwarf: outside lz_compress | libc on top '
          '| in-task ns/sample | perf record CPU s |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for c in cells:
        nolz = f'{c["whole_prog_nolz"]:.1f}%' if c['mode'] == 'dwarf' else '-'
        print(f'| {c["mode"]} | {c["freq"] / 1000:g} | {c["samples"]:.0f} | {c["lost"]} | '
              f'{c["deferred"]:.0f} | {c["frames"]:.1f} | **{c["bytes_per_sample"]:.0f}** | '
              f'{c["bytes_per_s"] / 1e6:.2f} | {c["whole_prog"]:.1f}% | {nolz} | '
              f'{c["whole_libc"]:.1f}% | {c["ns_per_sample"]:.0f} | {c["total_cpu_s"]:.2f} |')
    print()
    print(f'{reps} runs per cell, interleaved; {calib.get("iters", "?")} blocks of work '
          f'(calibrated for {calib.get("ms", "?")} ms of the no-fp build), '
          f'{b_work / 1e6:.1f} ms measured; user frames: the mean per sample, as perf '
          f'script shows them; the program alone, start to exit, '
          f'{b_total / 1e9:.2f} s CPU. Samples, records, B/sample, MB/s, ns/sample and '
          'CPU s are medians; lost is the sum over the runs; whole stacks over all of them.')
    if guest:
        print(f'{guest}.')
    for w in warnings:
        print(f'- note: {w}')
    # The target: fp,defer on the no-fp build with SFrame slows the program
    # less than fp on the fp build (its own cost included), at every rate.
    print()
    for fq in freqs:
        d, p = by.get(('fp,defer', fq)), by.get(('fp', fq))
        v = d['slowdown'][0] / p['slowdown'][0] if d and p else float('nan')
        ok = 'ok' if v <= 1.0 else 'miss'
        print(f'bench: profile-fp,defer/fp-{fq / 1000:g}kHz {v:.3f} 1.000 {ok}')
    with open(args.json, 'w') as f:
        json.dump({'cells': cells, 'none': nop, 'freqs': freqs}, f, indent=1)
    if fails:
        for x in fails:
            print(f'profile-report: FAIL: {x}', file=sys.stderr)
        sys.exit(1)


if __name__ == '__main__':
    main()
