#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-gen.py GEN FILE... - sframe-gen throughput and output size.

For each ELF: the size of .eh_frame (+ .eh_frame_hdr, which an unwinder
using .eh_frame needs too) and of the SFrame v3 and v2 sections generated
from it, and the generator's throughput in MB of .eh_frame per second
(median of RUNS runs of the whole program, start-up included).  Prints a
markdown table.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

RUNS = int(os.environ.get("RUNS", "7"))


def section_sizes(path):
    out = subprocess.run(["readelf", "-SW", path], capture_output=True,
                         text=True, check=True).stdout
    sizes = {}
    for line in out.splitlines():
        if "]" not in line:
            continue
        f = line.split("]", 1)[1].split()
        try:
            sizes[f[0]] = int(f[4], 16)
        except (IndexError, ValueError):
            pass
    return sizes


def gen_time(gen, path, out, args):
    times = []
    for _ in range(RUNS):
        t = time.perf_counter()
        subprocess.run([gen] + args + ["-o", out, path], check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times), os.path.getsize(out)


def main():
    gen, files = sys.argv[1], sys.argv[2:]
    print("| object | .eh_frame | +.eh_frame_hdr | SFrame v3 | v3 / .eh_frame "
          "| v3 / (both) | SFrame v2 | v2 / .eh_frame | generator | MB/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    tot_eh = tot_t = 0
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.sframe")
        for path in files:
            s = section_sizes(path)
            eh, hdr = s.get(".eh_frame", 0), s.get(".eh_frame_hdr", 0)
            t3, n3 = gen_time(gen, path, out, [])
            _, n2 = gen_time(gen, path, out, ["-V2"])
            tot_eh += eh
            tot_t += t3
            print("| %s | %d | %d | %d | %.2fx | %.2fx | %d | %.2fx | %.1f ms | %.1f |"
                  % (os.path.basename(path), eh, eh + hdr, n3, n3 / eh,
                     n3 / (eh + hdr), n2, n2 / eh, t3 * 1e3,
                     eh / t3 / 1e6))
    print()
    print("All together: %.1f MB of .eh_frame per second (v3, median of %d "
          "runs each, process start-up included)." % (tot_eh / tot_t / 1e6,
                                                      RUNS))


if __name__ == "__main__":
    main()
