# SPDX-License-Identifier: GPL-2.0
# Ground truth per sample on real Debian programs, built without frame
# pointers as Debian builds them: python3 running tests/lib/pywork.py, xz
# compressing a file, sort sorting one.  Each gets SFrame from sframe-gen:
# an injected copy of the program and of the loader, v3 sidecars of every
# library ldd names (compare.sh).  perf record --call-graph dwarf,defer;
# perf script --compare-unwind compares, per sample, the kernel's user
# stack with perf's DWARF unwinding of the stack dump.
#
# Every sample from main on (through __libc_start_call_main) is counted;
# the disagreements are listed, grouped by where the stacks part:
# "shorter" (the kernel stopped early, every frame it gave right),
# "longer" (DWARF had no CFI for the sampled IP, the kernel went on) or
# "wrong".  The test fails on any wrong frame, on any stack cut short, on
# any sample whose deferred record never came (unless perf counted lost
# records), and on fewer than 100 samples compared.  Measured: 100% (docs/testing.md,
# Ground truth); once in a make test run, longer: an xz sample in liblzma's fini
# code, which has no CFI, that the kernel unwound on through
# _dl_call_fini.  Before sframe-audit.so kept libc registered at exit and
# registered its own namespace, a run now and then had a wrong frame
# there (frame-pointer fallback at a function's first instruction).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/compare.sh"

# inject PROGRAM: $TMP/inj/NAME, an injected copy of PROGRAM, and a
# sidecar of each of its libraries
mkdir "$TMP/inj" || fail "mkdir"
inject() {
	local prog lib
	prog=$(readlink -f "$(command -v "$1")") || fail "no $1"
	"$tools/sframe-gen" --inject -o "$TMP/inj/$1" "$prog" ||
		fail "sframe-gen --inject $prog"
	for lib in $(ldd "$prog" | awk '$3 ~ /^\// { print $3 }'); do
		sidecar "$lib"
	done
}

# The input of sort: 200000 random lines, 3.6 MB; of xz, the first 50000.
python3 -c '
import random
random.seed(1)
with open("'"$TMP/input"'", "w") as f:
    for i in range(200000):
        f.write("%08x %s\n" % (random.getrandbits(32), "x" * random.randrange(1, 20)))
' || fail "input"
head -n 50000 "$TMP/input" > "$TMP/xz-input" || fail "xz input"

check=(--through __libc_start_call_main --mode report --min 100 --max-wrong 0
       --max-shorter 0)

inject python3
ARGS=(-S "$LIB/pywork.py" "$TMP/py.bin" 1)
compare python3 "$TMP/inj/python3" dwarf,defer "${check[@]}"

inject xz
ARGS=(-T1 -3 -k -f "$TMP/xz-input")
compare xz "$TMP/inj/xz" dwarf,defer "${check[@]}"

inject sort
ARGS=(-o "$TMP/sorted" "$TMP/input")
compare sort "$TMP/inj/sort" dwarf,defer "${check[@]}"
