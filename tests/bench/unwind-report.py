#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""unwind-report.py RAW [N=COUNT...]: markdown tables from unwind-run.sh output.

RAW has one line per measurement of unwind-bench (key=value words,
prefixed with fdes=N variant=fp|sframe|sframe-cold). N=COUNT gives the FDE count
sframe-dump read from sframe-N, shown in place of N.

Per (FDEs, variant, mode, depth): the cost of an unwind is
  c = (shortest loop time in the mode - shortest loop time with plain
       samples, all depths) / unwinds counted in the loop,
in guest ns (under -icount shift=0, instructions), for the modes unwind
(deferred unwinds, no record) and defer (with the record), and per
sample for the mode fp (the walk in the fault handler). The cost per
frame is the slope of c between the lowest and highest depth, where the
fixed costs per unwind cancel (request, task work, topmost frame, the
record's header); frames per unwind are read from the records. Under
-icount a run's time is its instructions plus whatever interrupts landed
in it, which only add: the shortest run is the estimate, and the spread
of the runs, per unwind, is the noise. Everything is derived from counts;
the last lines compare them with the targets, "bench: NAME VALUE GOAL
ok|miss", VALUE and GOAL ratios, VALUE at most GOAL.
"""
import math
import statistics
import sys
from collections import defaultdict


def parse(path):
    runs = defaultdict(list)  # (fdes, variant, depth, mode) -> [dict]
    info = {}
    guest = ''
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith('# guest:'):
                guest = line[2:]
                continue
            words = line.split()
            kv = dict(w.split('=', 1) for w in words if '=' in w)
            if 'fdes' not in kv:
                continue
            key = (int(kv['fdes']), kv['variant'])
            if '#' in words:
                info[key] = kv
                continue
            runs[key + (int(kv['depth']), kv['mode'])].append(
                {k: (int(v) if v.lstrip('-').isdigit() else v) for k, v in kv.items()})
    return runs, info, guest




def bench_line(name, value, goal):
    """The summary line of a target: VALUE and GOAL as ratios, at most GOAL."""
    ok = not math.isnan(value) and value <= goal
    return f'bench: {name} {value:.2f} {goal:.2f} {"ok" if ok else "miss"}'


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    runs, info, guest = parse(sys.argv[1])
    dumped = dict(a.split('=') for a in sys.argv[2:])
    fdes = sorted({k[0] for k in runs})
    depths = sorted({k[2] for k in runs})
    variants = ('sframe', 'sframe-cold', 'fp')
    nan = float('nan')
    modes = ('unwind', 'defer', 'fp')
    notes = []
    cost = {}      # (n, v, mode, d) -> ns per unwind (fp: per sample)
    frames = {}    # (n, v, d) -> frames per unwind, from the records
    noise = defaultdict(float)   # mode -> largest (max - min) / unwinds
    reps = 0

    for n in fdes:
        for v in variants:
            base = [r['cpu_ns'] for d in depths for r in runs[(n, v, d, 'base')]]
            if not base:
                continue
            tb = min(base)
            iters = runs[(n, v, depths[0], 'base')][0]['iters']
            noise['base'] = max(noise['base'], (max(base) - tb) / iters)
            for d in depths:
                for m in modes:
                    rs = runs[(n, v, d, m)]
                    if not rs:
                        continue
                    reps = max(reps, len(rs))
                    ts = [r['cpu_ns'] for r in rs]
                    t = min(ts)
                    # fp: the walk is the sample's, one per sampled fault
                    u = rs[0]['iters'] if m == 'fp' else \
                        statistics.median(r['unwinds'] for r in rs)
                    noise[m] = max(noise[m], (max(ts) - t) / u if u else nan)
                    if u != rs[0]['iters']:
                        notes.append(f'{n} FDEs, {v}, {m}, depth {d}: {u} unwinds for '
                                     f'{rs[0]["iters"]} sampled faults')
                    cost[(n, v, m, d)] = (t - tb) / u if u else float('nan')
                for m in ('defer', 'fp') if v == 'fp' else ('defer',):
                    r0 = runs[(n, v, d, m)][0]
                    f = r0['frames']
                    if m == 'defer':
                        frames[(n, v, d)] = f
                    if r0['other'] or r0['frames2_n'] or r0['top_ok'] != r0['records'] \
                            or r0['bad'] or r0['lost']:
                        notes.append(f'{n} FDEs, {v}, {m}, depth {d}: records with {f} frames '
                                     f'{r0["frames_n"]}, with {r0["frames2"]} frames '
                                     f'{r0["frames2_n"]}, others {r0["other"]}, ending in the '
                                     f'top frame {r0["top_ok"]}/{r0["records"]}, bad {r0["bad"]}, '
                                     f'lost {r0["lost"]}')
                    if f != d:
                        notes.append(f'{n} FDEs, {v}, {m}: {f} frames per unwind, not {d}: '
                                     'the unwinder stopped early')

    lo, hi = depths[0], depths[-1]

    def slope(n, v, m):
        """ns per frame, and the fixed ns per unwind."""
        try:
            c1, c2 = cost[(n, v, m, lo)], cost[(n, v, m, hi)]
            f1, f2 = frames[(n, v, lo)], frames[(n, v, hi)]
        except KeyError:
            return nan, nan
        b = (c2 - c1) / (f2 - f1) if f2 != f1 else nan
        return b, c1 - b * f1

    def label(n):
        return dumped.get(str(n), str(n))

    def ratio(a, b):
        return a / b if b else nan

    def fit(v):
        pts = [(math.log2(n), slope(n, v, 'unwind')[0]) for n in fdes]
        pts = [(x, y) for x, y in pts if not math.isnan(y)]
        if len(pts) < 2:
            return None
        mx = statistics.mean(x for x, _ in pts)
        my = statistics.mean(y for _, y in pts)
        k = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
        return f'{my - k * mx:.0f} + {k:.1f} x log2(FDEs)'

    print('Cost per unwound frame, ns (the unwinder, no record): SFrame with the '
          'kernel\'s cache of rules (steady state: the same code unwound again and '
          'again), SFrame without it (cold: every lookup searches the section, as '
          'the first unwind through code does), frame pointers.')
    print()
    print('| FDEs | log2 FDEs | frames per unwind | SFrame | SFrame cold | FP '
          '| SFrame / FP | cold / FP | + record: SFrame | FP | ratio |')
    print('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    fixed = defaultdict(list)
    steady, cold = [], {}
    for n in fdes:
        (bs, as_), (bc, _), (bf, af) = (slope(n, v, 'unwind') for v in variants)
        (rs, ars), (rf, arf) = slope(n, 'sframe', 'defer'), slope(n, 'fp', 'defer')
        for k, a in (('sframe unwind', as_), ('fp unwind', af), ('sframe defer', ars),
                     ('fp defer', arf)):
            fixed[k].append(a)
        steady.append(ratio(bs, bf))
        cold[n] = bc
        fr = '/'.join(str(frames[(n, 'sframe', d)]) for d in depths if (n, 'sframe', d) in frames)
        print(f'| {label(n)} | {math.log2(n):.1f} | {fr} | {bs:.0f} | {bc:.0f} | {bf:.0f} | '
              f'**{ratio(bs, bf):.2f}** | {ratio(bc, bf):.2f} | {rs:.0f} | {rf:.0f} | '
              f'{ratio(rs, rf):.2f} |')
    print()
    for v, what in (('sframe', 'SFrame'), ('sframe-cold', 'SFrame cold')):
        f = fit(v)
        if f:
            print(f'{what} ns/frame ~ {f}, least squares over {len(fdes)} counts.')

    def rng(vals):
        vals = [v for v in vals if not math.isnan(v)]
        return f'{min(vals):.0f}-{max(vals):.0f}' if vals else '-'
    print(f'Fixed cost per unwind (intercept: request, task work, topmost frame; '
          f'with the record also its header), ns: unwinder SFrame '
          f'{rng(fixed["sframe unwind"])}, FP {rng(fixed["fp unwind"])}; with the record '
          f'SFrame {rng(fixed["sframe defer"])}, FP {rng(fixed["fp defer"])}.')
    print()
    print('Per sample, all in: a deferred sample on the build with SFrame (perf record '
          '--call-graph fp,defer: request, task work, unwind, record) against a plain '
          'sample on the frame-pointer build (--call-graph fp: the walk in the fault '
          'handler, the ips in the sample), the sample itself in the baseline of each; '
          'the deferred one broken down into request + task work (the rest), the walk '
          '(ns/frame x frames) and the record (defer - unwind), ns:')
    print()
    print('| FDEs | frames | deferred, SFrame | plain fp, FP build | ratio '
          '| request + task work | walk | record |')
    print('|---:|---:|---:|---:|---:|---:|---:|---:|')
    per_sample = []
    for n in fdes:
        bs = slope(n, 'sframe', 'unwind')[0]
        for d in depths:
            try:
                cs, cf = cost[(n, 'sframe', 'defer', d)], cost[(n, 'fp', 'fp', d)]
                cu, f = cost[(n, 'sframe', 'unwind', d)], frames[(n, 'sframe', d)]
            except KeyError:
                continue
            per_sample.append(ratio(cs, cf))
            walk = bs * f
            print(f'| {label(n)} | {f} | {cs:.0f} | {cf:.0f} | **{ratio(cs, cf):.2f}** | '
                  f'{cu - walk:.0f} | {walk:.0f} | {cs - cu:.0f} |')
    print()
    print(f'{reps} runs per mode and depth, the shortest taken; the runs of one mode '
          f'differed by at most {noise["unwind"]:.0f} ns per unwind when unwinding, '
          f'{noise["defer"]:.0f} with records, {noise["fp"]:.0f} per plain fp sample, '
          f'{noise["base"]:.0f} for the baselines (plain samples, per iteration).')
    if guest:
        print(f'{guest}.')
    for (n, v), kv in sorted(info.items()):
        if v == 'sframe' and kv.get('pt_gnu_sframe', '0') == '0':
            notes.append(f'sframe-{n} has no PT_GNU_SFRAME')
    for note in notes:
        print(f'- note: {note}')

    # The targets: SFrame at most 1.3x FP per frame at every size; the
    # cold cost growing no faster than log N; a deferred sample at most
    # 1.5x a plain fp sample of the same depth.
    print()
    valid = [x for x in steady if not math.isnan(x)]
    print(bench_line('unwind-frame-sframe/fp', max(valid) if valid else nan, 1.3))
    if len(fdes) >= 2 and fdes[0] > 1:
        a, b = cold[fdes[0]], cold[fdes[-1]]
        print(bench_line(f'unwind-frame-cold-{label(fdes[-1])}/{label(fdes[0])}-fdes',
                         ratio(b, a), math.log2(fdes[-1]) / math.log2(fdes[0])))
    valid = [x for x in per_sample if not math.isnan(x)]
    print(bench_line('deferred-sample/fp-sample', max(valid) if valid else nan, 1.5))


if __name__ == '__main__':
    main()
