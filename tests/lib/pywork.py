# SPDX-License-Identifier: GPL-2.0
# A Python workload: recursion through C (sum() and map() call back into
# the interpreter, so each level is C frames too), getrandom(2), zlib,
# write(2) and read(2) of a file, for the seconds given.
#   python3 pywork.py FILE SECONDS
import os, sys, time, zlib

def tree(depth):
    if depth == 0:
        return len(os.urandom(16))
    return sum(map(tree, [depth - 1] * 3))

def save(path, rounds):
    with open(path, "wb", buffering=0) as f:
        for _ in range(rounds):
            tree(4)
            f.write(zlib.compress(os.urandom(4096), 1) * 4)

def load(path):
    with open(path, "rb", buffering=0) as f:
        while f.read(4096):
            pass

end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    save(sys.argv[1], 50)
    load(sys.argv[1])
