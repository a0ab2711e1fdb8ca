#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""plot.py profile JSON DIR | plot.py unwind TABLE_OR_RAW DIR: the benchmarks' PNG plots, with gnuplot.

profile: JSON from profile-report.py -> DIR/profile-slowdown.png (slowdown
         vs sampling frequency, per call-graph mode, min-max as error bars,
         the frame-pointer build's own cost without perf as a line) and
         DIR/profile-bytes.png (perf.data bytes per sample, per mode and
         frequency, log scale).
unwind:  unwind.txt (unwind-report.py's tables), or unwind-raw.txt, which
         is run through unwind-report.py first -> DIR/unwind-cost.png
         (ns per unwound frame vs number of FDEs, SFrame and frame
         pointers, unwinder alone and with the record).

Fails with a message when gnuplot is missing or makes no image: plots are
never skipped silently.  Prints the files written.
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TERM = 'set terminal pngcairo size 960,600 font "sans,11" noenhanced'


def gnuplot(script, png):
    exe = shutil.which('gnuplot')
    if not exe:
        sys.exit('plot.py: gnuplot not found: apt-get install gnuplot-nox '
                 '(scripts/deps.sh installs it)')
    if os.path.exists(png):
        os.unlink(png)
    r = subprocess.run([exe], input=f'{TERM}\nset output "{png}"\n{script}\nset output\n',
                       capture_output=True, text=True)
    if r.returncode or not os.path.exists(png) or os.path.getsize(png) == 0:
        sys.exit(f'plot.py: gnuplot made no {png}: {r.stderr.strip()[-800:]}')
    print(png)


def block(name, rows):
    return f'${name} << EOD\n' + '\n'.join(' '.join(str(x) for x in r) for r in rows) + '\nEOD\n'


def profile(path, out):
    with open(path) as f:
        d = json.load(f)
    cells, freqs = d['cells'], d['freqs']
    modes = [m for m in ('fp', 'dwarf', 'fp,defer') if any(c['mode'] == m for c in cells)]
    label = {'fp': 'fp (fp build)', 'dwarf': 'dwarf (no-fp build)',
             'fp,defer': 'fp,defer (no-fp build + SFrame)'}
    color = {'fp': '#1f77b4', 'dwarf': '#d62728', 'fp,defer': '#2ca02c'}
    data = ''
    plots = []
    for i, m in enumerate(modes):
        rows = [(c['freq'] / 1000, *c['slowdown']) for c in cells if c['mode'] == m]
        data += block(f'm{i}', rows)
        plots.append(f'$m{i} using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb "{color[m]}" '
                     f'title "{label[m]}"')
    fp_none = d['none'].get('fp')
    if fp_none:
        plots.append(f'{fp_none[0]} with lines dt 2 lw 2 lc rgb "#555555" '
                     f'title "fp build without perf ({fp_none[0]:.3f})"')
    plots.append('1 with lines lw 1 lc rgb "black" title "no-fp build without perf (1.0)"')
    top = max([c['slowdown'][2] for c in cells] + [1.1])
    xmax = max(freqs) / 1000
    gnuplot(data + f'''
set title "Workload slowdown under perf record -e cpu-clock (1 vCPU, QEMU -icount)"
set xlabel "sampling frequency (kHz)"
set ylabel "work time / no-fp build without perf"
set xrange [0:{xmax * 1.08:.2f}]
set yrange [0.95:{top * 1.05 + 0.02:.3f}]
set xtics ({", ".join(f'"{f / 1000:g}" {f / 1000:g}' for f in freqs)})
set grid ytics
set key left top
plot {", ".join(plots)}
''', os.path.join(out, 'profile-slowdown.png'))

    rows = []
    for f in freqs:
        r = [f'"{f / 1000:g} kHz"']
        for m in modes:
            c = [x for x in cells if x['mode'] == m and x['freq'] == f]
            r.append(round(c[0]['bytes_per_sample'], 1) if c else 'NaN')
        rows.append(r)
    plots = [f'$b using {i + 2}:xtic(1) title "{label[m]}" lc rgb "{color[m]}"'
             for i, m in enumerate(modes)]
    n = len(modes)
    labels = [f'$b using ($0 + ({i} - {(n - 1) / 2}) * 0.8 / {n}):{i + 2}:(sprintf("%.0f", ${i + 2})) '
              f'with labels offset 0,0.7 notitle' for i in range(n)]
    gnuplot(block('b', rows) + f'''
set title "perf.data bytes per sample (file size / samples)"
set ylabel "bytes per sample (log scale)"
set logscale y
set yrange [10:100000]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.8
set grid ytics
set key top center horizontal
plot {", ".join(plots + labels)}
''', os.path.join(out, 'profile-bytes.png'))


def unwind(path, out):
    text = open(path).read()
    if re.search(r'^fdes=', text, re.M):
        # raw measurements: make the tables first
        text = subprocess.run([sys.executable, os.path.join(HERE, 'unwind-report.py'), path],
                              capture_output=True, text=True, check=True).stdout
    rows = []
    for line in text.splitlines():
        cols = [c.strip().strip('*') for c in line.strip().strip('|').split('|')]
        # FDEs, log2, frames, SFrame, cold, FP, 2 ratios, + record: SFrame, FP, ratio
        if len(cols) == 11 and re.fullmatch(r'\d+', cols[0]):
            n = int(cols[0])
            vals = []
            for c in (cols[3], cols[4], cols[5], cols[8], cols[9]):
                try:
                    vals.append(float(c))
                except ValueError:
                    vals.append(float('nan'))
            rows.append((n, *['NaN' if math.isnan(v) else v for v in vals]))
        elif rows:
            break
    if not rows:
        sys.exit(f'plot.py: no "FDEs | ... | ns/frame" table in {path}')
    plots = [
        '$u using 1:2 with linespoints lw 2 pt 7 lc rgb "#2ca02c" title "SFrame, unwinder"',
        '$u using 1:3 with linespoints lw 2 pt 9 lc rgb "#d62728" title "SFrame cold (no cache), unwinder"',
        '$u using 1:4 with linespoints lw 2 pt 5 lc rgb "#1f77b4" title "frame pointers, unwinder"',
        '$u using 1:5 with linespoints lw 2 pt 7 dt 2 lc rgb "#2ca02c" title "SFrame, + record"',
        '$u using 1:6 with linespoints lw 2 pt 5 dt 2 lc rgb "#1f77b4" title "frame pointers, + record"',
    ]
    gnuplot(block('u', rows) + f'''
set title "Kernel unwinder: cost per user frame vs FDEs in the SFrame section"
set xlabel "FDEs (log scale)"
set ylabel "guest ns per frame (-icount: instructions)"
set logscale x
set xrange [{rows[0][0] / 2}:{rows[-1][0] * 2}]
set yrange [0:*]
set grid
set key below
plot {", ".join(plots)}
''', os.path.join(out, 'unwind-cost.png'))


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ('profile', 'unwind'):
        sys.exit(__doc__)
    os.makedirs(sys.argv[3], exist_ok=True)
    (profile if sys.argv[1] == 'profile' else unwind)(sys.argv[2], sys.argv[3])


if __name__ == '__main__':
    main()
