#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh - build, boot the patched kernel in QEMU and run the benchmarks,
# each measuring alternatives side by side in one run, as ratios of counted
# work (bytes, samples, unwinds), never as pass/fail. Writes a markdown
# report to $BUILD_DIR/bench-results/report.md and prints it.
#
# BENCH_MS (2000) is how long each workload runs, per mode.
# BENCH_ONLY (all) runs only the named sections, e.g. BENCH_ONLY=unwind or
# BENCH_ONLY="defer script": defer (deferred vs plain callchains), script
# (perf script merging), gen (sframe-gen), unwind (cost per unwound frame,
# SFrame vs frame pointers, by number of FDEs), profile (a CPU-bound
# program's slowdown and perf.data bytes under perf record with fp, dwarf
# and fp,defer, by sampling frequency).
# BENCH_BUILD=0 builds none of kernel, tree and perf (uses what is there:
# for a tree with work in progress); the benchmark programs are built.
# unwind: BENCH_UNWIND_FDES (100 1000 10000 100000 1000000),
# BENCH_UNWIND_DEPTHS (32 96: a user callchain has at most
# kernel.perf_event_max_stack entries, 127 by default), BENCH_UNWIND_ITERS (2000),
# BENCH_UNWIND_REPS (3); BENCH_ICOUNT=off boots without -icount (unwind
# and profile).
# profile: BENCH_PROFILE_FREQS (1000 4000 10000), BENCH_PROFILE_MS (1000:
# work per run, in ms of the no-frame-pointer build without perf),
# BENCH_PROFILE_REPS (3), BENCH_PROFILE_KEEP=1 keeps the perf.data files
# (bench-results/profile/), deleted once read otherwise.
# unwind and profile draw PNG plots with gnuplot (scripts/deps.sh installs
# gnuplot-nox): missing, the benchmark stops before running anything.

set -euo pipefail
. "$(dirname "$0")/paths.sh"

only=${BENCH_ONLY:-defer script gen unwind profile}
only=" ${only//,/ } "
for s in $only; do
	case $s in defer|script|gen|unwind|profile) ;; *) echo "bench: unknown section '$s' in BENCH_ONLY (defer script gen unwind profile)" >&2; exit 2 ;; esac
done
run() { [[ $only == *" $1 "* ]]; }

if [ "${BENCH_BUILD:-1}" != 0 ]; then
	make -s --no-print-directory -C "$REPO" bench-build
fi
perf=$BUILD_DIR/perf/perf
if run unwind || run profile; then
	command -v gnuplot > /dev/null || {
		echo "bench: gnuplot not found, needed for the unwind and profile plots: apt-get install gnuplot-nox (scripts/deps.sh does)" >&2
		exit 1
	}
fi
if run profile; then
	[ -x "$perf" ] || { echo "bench: no perf at $perf (make perf)" >&2; exit 1; }
fi
# The guest kernel without the lock and atomic-sleep checkers that the
# test kernel has: they add to the costs measured (build-kernel.sh bench).
kernel=$BUILD_DIR/kbuild/bench/arch/x86/boot/bzImage
[ -f "$kernel" ] || { echo "bench: no kernel at $kernel (make kernel-bench)" >&2; exit 1; }
hdr=$BUILD_DIR/kbuild/bench/usr/include
sframe_gen=$BUILD_DIR/sframe-tools/sframe-gen
unwind_fdes=${BENCH_UNWIND_FDES:-100 1000 10000 100000 1000000}
t0=$SECONDS
make -s -C "$REPO/tests/bench" OUT="$BUILD_DIR/bench" KHDR="$hdr" \
	SFRAME_GEN="$( (run unwind || run profile) && echo "$sframe_gen")" \
	UNWIND_FDES="$(run unwind && echo "$unwind_fdes")"
build_s=$((SECONDS - t0))

out=$BUILD_DIR/bench-results
mkdir -p "$out"
ms=${BENCH_MS:-2000}
if run defer; then
"$REPO/scripts/vm" --kernel "$kernel" --log "$out/kernel.log" -- sh -c "
	echo \"guest: \$(uname -r), \$(nproc) vCPUs, clocksource \$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)\"
	$BUILD_DIR/bench/defer-bench $ms 10000" > "$out/defer-bench.txt" 2>&1 || {
	cat "$out/defer-bench.txt"
	echo "bench: defer-bench failed" >&2
	exit 1
}
fi

# perf script with and without merging deferred callchains: the data is
# recorded in the guest (the syscall loop, 2 events at 10 kHz) or crafted
# (1M samples), perf script runs on the host, whose timing is stable.
scale=${BENCH_SCRIPT_SAMPLES:-1000000}
if run script; then
"$REPO/scripts/vm" --kernel "$kernel" -s "$out" -- sh -c "
	cat /proc/kallsyms > $out/kallsyms
	$perf record -q -e cpu-clock,task-clock -F 10000 --call-graph fp,defer \
		-o $out/deferloop.data -- $perf test -w deferloop ${BENCH_RECORD_S:-20}
	$perf record -q -e cpu-clock,task-clock -F 10000 --call-graph fp \
		-o $out/deferloop-fp.data -- $perf test -w deferloop ${BENCH_RECORD_S:-20}" \
	> "$out/record.txt" 2>&1 || {
	cat "$out/record.txt"
	echo "bench: recording in the guest failed" >&2
	exit 1
}
python3 "$TREE/tools/perf/tests/shell/lib/perf_deferred_data.py" scale --count "$scale" \
	--file "$out/crafted.data"
python3 "$REPO/tests/bench/perf-script-bench.py" --kallsyms "$out/kallsyms" \
	--baseline "deferloop, fp" "$perf" "deferloop, fp=$out/deferloop-fp.data" \
	"deferloop, fp,defer=$out/deferloop.data" "scale, crafted=$out/crafted.data" \
	> "$out/perf-script.txt"
fi

# sframe-gen on the host: throughput and size against .eh_frame
if run gen; then
gcc -O2 -fomit-frame-pointer -o "$out/chain-nofp" "$REPO/tests/workloads/chain.c"
libc=$(readlink -f "$(ldconfig -p | awk '$1 == "libc.so.6" && /x86-64/ { print $NF; exit }')")
libstdcxx=$(readlink -f "$(ldconfig -p | awk '$1 == "libstdc++.so.6" && /x86-64/ { print $NF; exit }')")
python3 "$REPO/tests/sframe/bench-gen.py" "$BUILD_DIR/sframe-tools/sframe-gen" \
	"$libc" "$libstdcxx" "$(readlink -f /usr/bin/python3)" "$out/chain-nofp" > "$out/sframe-gen.txt"
fi

# unwind and profile boot a guest with one CPU whose clock counts
# instructions (scripts/vm --icount: QEMU TCG -icount), so that costs are
# counts that repeat from run to run.
vmargs=()
icount_clock="The guest has one CPU and runs without -icount
(BENCH_ICOUNT=off): its clock follows the host's, about +-15% from run to
run."
unwind_clock=$icount_clock
if [ "${BENCH_ICOUNT:-}" != off ]; then
	vmargs=(--icount "${BENCH_ICOUNT:-shift=0,sleep=off}")
	icount_clock="The guest has one CPU and runs under QEMU -icount
${BENCH_ICOUNT:-shift=0,sleep=off} (shift=0: 1 ns is one guest instruction), so these are
instruction counts, which repeat across runs and boots"
	unwind_clock="$icount_clock, but cache and TLB
misses are not modelled (the binary search over 10^6 FDEs walks a 16 MB
index: more on real hardware)."
	icount_clock="$icount_clock."
else
	vmargs=(-a maxcpus=1)
fi

# The kernel's cost per unwound user frame, SFrame vs frame pointers, by
# number of FDEs: in a guest with one CPU whose clock counts instructions
# (scripts/vm --icount: QEMU TCG -icount), so that the costs are
# exact counts that repeat from run to run.
if run unwind; then
	u=$BUILD_DIR/bench/unwind
	counts=()
	for n in $unwind_fdes; do
		c=$("$BUILD_DIR/sframe-tools/sframe-dump" "$u/sframe-$n" | awk '/Num FDEs:/ { print $3; exit }') || true
		[ "$c" = "$n" ] || { echo "bench: sframe-$n: sframe-dump reads ${c:-no} FDEs, not $n" >&2; exit 1; }
		counts+=("$n=$c")
	done
	"$REPO/scripts/vm" --kernel "$kernel" "${vmargs[@]}" --log "$out/kernel-unwind.log" -- \
		"$REPO/tests/bench/unwind-run.sh" "$u" "$unwind_fdes" \
		-n "${BENCH_UNWIND_ITERS:-2000}" -r "${BENCH_UNWIND_REPS:-3}" \
		${BENCH_UNWIND_DEPTHS:-32 96} > "$out/unwind-raw.txt" 2>&1 || {
		cat "$out/unwind-raw.txt"
		echo "bench: unwind-bench failed" >&2
		exit 1
	}
	python3 "$REPO/tests/bench/unwind-report.py" "$out/unwind-raw.txt" "${counts[@]}" \
		> "$out/unwind.txt"
fi
# The unwind plot, from this run's tables or, when only the profile
# section runs, from those an earlier run left (plot.py makes them from
# unwind-raw.txt when unwind.txt is missing).
if run unwind || { run profile && { [ -s "$out/unwind.txt" ] || [ -s "$out/unwind-raw.txt" ]; }; }; then
	src=$out/unwind.txt
	[ -s "$src" ] || src=$out/unwind-raw.txt
	if run unwind; then
		python3 "$REPO/tests/bench/plot.py" unwind "$src" "$out" > /dev/null
	else
		echo "bench: unwind-cost.png from the $(basename "$src") of an earlier run"
		python3 "$REPO/tests/bench/plot.py" unwind "$src" "$out" > /dev/null ||
			echo "bench: WARNING: no unwind-cost.png from $src (above)" >&2
	fi
fi

# A CPU-bound program's slowdown and perf.data bytes under perf record, by
# call-graph mode and sampling frequency: in the one-CPU -icount guest,
# recordings checked and counted on the host, plotted.
if run profile; then
	t0=$SECONDS
	pd=$out/profile
	rm -rf "$pd"
	mkdir -p "$pd"
	profile_freqs=${BENCH_PROFILE_FREQS:-1000 4000 10000}
	profile_reps=${BENCH_PROFILE_REPS:-3}
	profile_ms=${BENCH_PROFILE_MS:-1000}
	profile_note="Instructions are not cycles: a rep movs counts one per iteration
(dwarf's 8 KiB stack copy: ~8000), more than on hardware, where such a
copy is cheap, and SFrame's lookups miss no cache here."
	"$REPO/scripts/vm" --kernel "$kernel" "${vmargs[@]}" --timeout "${BENCH_PROFILE_TIMEOUT:-3600}" \
		-s "$pd" --log "$out/kernel-profile.log" -- \
		"$REPO/tests/bench/profile-run.sh" "$perf" "$BUILD_DIR/bench/profile" "$pd" \
		"$profile_freqs" "$profile_reps" "$profile_ms" > "$out/profile-raw.txt" 2>&1 || {
		cat "$out/profile-raw.txt"
		echo "bench: profile-run failed" >&2
		exit 1
	}
	profile_guest_s=$((SECONDS - t0))
	python3 "$REPO/tests/bench/profile-report.py" --stacks "$out/profile-stacks.txt" \
		"$out/profile-raw.txt" "$perf" "$out/profile.json" > "$out/profile.txt" || {
		cat "$out/profile.txt" "$out/profile-stacks.txt"
		echo "bench: the profile recordings are not what they should be (kept in $pd/data)" >&2
		exit 1
	}
	python3 "$REPO/tests/bench/plot.py" profile "$out/profile.json" "$out" > /dev/null
	[ "${BENCH_PROFILE_KEEP:-0}" = 1 ] || rm -rf "$pd/data"
	profile_s=$((SECONDS - t0))
fi

{
	echo "# Benchmarks ($(date -u +%Y-%m-%d), $(git -C "$REPO" describe --always --dirty))"
	echo
	echo "QEMU TCG guest on $(nproc) host cores; counts of work, so the ratios"
	echo "hold across machines; absolute rates do not."
	if run defer; then
	echo
	echo "## Deferred vs plain user callchains"
	echo
	echo "A syscall loop (getppid, ${ms} ms per mode) in a frame-pointer chain"
	echo "(main, chain_a, +frames of recursion, chain_b, chain_c, chain_leaf),"
	echo "sampled by cpu-clock and task-clock at 10 kHz each. A plain"
	echo "sample walks the user stack itself; deferred samples share one unwind"
	echo "per kernel entry (unwinds from /sys/kernel/debug/unwind_user/stats)."
	echo
	sed -n '1p' "$out/defer-bench.txt"
	echo
	sed -n '2,$p' "$out/defer-bench.txt"
	fi
	if run script; then
	echo
	echo "## perf script: merging deferred callchains or not"
	echo
	echo "\`perf script\` (default: merged) vs \`perf script --no-merge-callchains\`,"
	echo "median of 3 runs each on the host, peak RSS; recorded: \`perf test -w"
	echo "deferloop\` in the guest, cpu-clock and task-clock at 10 kHz, fp,defer;"
	echo "crafted: $scale samples, 4 per record, one record in ten missing."
	echo "Merged output prints the user part of every sample, raw output once"
	echo "per record, so merge vs no merge also measures printing ~10x more"
	echo "frames; the last column compares the time per sample with the same"
	echo "workload recorded with plain fp (the same stacks to print, nothing to"
	echo "merge): that is the cost of merging."
	echo
	cat "$out/perf-script.txt"
	fi
	if run gen; then
	echo
	echo "## sframe-gen: throughput and size"
	echo
	echo "On the host: the SFrame section generated from each object's"
	echo ".eh_frame, against .eh_frame alone and with .eh_frame_hdr (which"
	echo "an .eh_frame unwinder needs as its index; SFrame carries its own)."
	echo
	cat "$out/sframe-gen.txt"
	fi
	if run unwind; then
	echo
	echo "## Kernel unwinder: cost per user frame, SFrame vs frame pointers"
	echo
	echo "A program samples itself with deferred user callchains (page-faults,"
	echo "period 1: one sampled kernel entry per iteration of a madvise + read"
	echo "fault loop, ${BENCH_UNWIND_ITERS:-2000} iterations) at the bottom of a stack of known depth,"
	echo "built with frame pointers and no SFrame (FP), or without frame pointers"
	echo "and with SFrame injected by sframe-gen (every frame unwound by SFrame),"
	echo "with tiny functions linked in so that the section has the given number"
	echo "of FDEs (as sframe-dump reads them back). Cost of an unwind = (loop time"
	echo "- loop time with plain samples) / unwinds counted in"
	echo "/sys/kernel/debug/unwind_user/stats, and ns/frame its slope between the"
	echo "two depths, where the fixed costs cancel: without any defer_output event"
	echo "(the unwinder alone), and \"+ record\" with the"
	echo "PERF_RECORD_CALLCHAIN_DEFERRED written, as perf record pays it; every"
	echo "record is checked (that many ips, the last one in the outermost frame)."
	echo "SFrame is measured twice: with the kernel's per-task cache of the rules"
	echo "of recent addresses (the steady state of a profile) and without it"
	echo "(/sys/kernel/debug/unwind_user/sframe_cache N: every lookup searches the"
	echo "section, as the first unwind through code does). The frame-pointer"
	echo "build is also sampled with plain callchains (--call-graph fp: the walk"
	echo "in the fault handler), the per-sample reference."
	echo "$unwind_clock"
	echo "What noise remains is interrupts landing in a run, which only add: the"
	echo "shortest of the runs is taken, their spread is on the last lines."
	echo "Building the programs took ${build_s} s in this run (0 when cached in"
	echo "\$BUILD_DIR/bench/unwind)."
	echo
	grep -v '^bench: ' "$out/unwind.txt"
	echo
	echo "![ns per frame vs FDEs](unwind-cost.png)"
	fi
	if run profile; then
	echo
	echo "## Profiling a CPU-bound program: fp, dwarf, fp,defer with SFrame"
	echo
	echo "A CPU-bound C program (tests/bench/profile-work.c: text generation,"
	echo "word counting in a hash table, an LZ4-style compressor whose 16 KiB"
	echo "hash table is on its stack as in LZ4, hashing, a recursive quicksort,"
	echo "a recursive expression tree; memcpy, memcmp, memset and strlen from"
	echo "libc) does a fixed amount of work and times it itself (clock_gettime"
	echo "around the work only), built -O2 -fno-optimize-sibling-calls (the"
	echo "call graph the checks expect) with frame pointers (fp:"
	echo "-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer) and without"
	echo "(no-fp: -fomit-frame-pointer), the latter also with SFrame injected by"
	echo "sframe-gen. Recorded by perf record -e cpu-clock -F FREQ at"
	echo "${profile_freqs// /, } Hz: --call-graph fp on the fp build, dwarf (8 KiB"
	echo "stack copies) on the no-fp build, fp,defer on the no-fp build with"
	echo "SFrame. Every ratio is against the no-fp build without perf, so the fp"
	echo "rows include the fp build's own cost, which the first table shows"
	echo "alone: what SFrame lets a distribution save when nobody profiles."
	echo "$icount_clock"
	[ "${BENCH_ICOUNT:-}" != off ] || profile_note=
	[ -z "$profile_note" ] || echo "$profile_note"
	echo "With one CPU, perf record's own user-space work (draining the ring"
	echo "buffer) runs in the workload's time, as on a single-CPU machine."
	echo "In-task ns/sample is only what the sampled task paid: its CPU time"
	echo "over the work (sampling interrupt, stack copy or deferred unwind and"
	echo "record) less that of the same build without perf, per sample. perf"
	echo "record CPU s is the user + system time of the whole perf record"
	echo "command (its start, the workload, its pass over perf.data at the"
	echo "end); perf's own share is the difference with the program alone."
	echo "B/sample is the perf.data file's size / its samples (perf report"
	echo "--stats); MB/s is per CPU second of the workload. Every recording is"
	echo "checked with perf script on the host against the program's call"
	echo "graph: a stack is whole when each frame is called by the next one,"
	echo "down to main. Samples in libc (Debian's has no SFrame and no frame"
	echo "pointers) lose their callers with fp,defer; plain fp skips the caller"
	echo "of a sample taken in a prologue, an epilogue or libc; dwarf's 8 KiB"
	echo "copy cannot reach past lz_compress's 16 KiB frame. The run stops if"
	echo "any recording has no samples, or too few whole stacks for its mode"
	echo "(tests/bench/profile-report.py): a broken configuration is not"
	echo "measured silently. This section took $((profile_s / 60)) min $((profile_s % 60)) s"
	echo "($((profile_guest_s / 60)) min $((profile_guest_s % 60)) s in the guest)."
	echo
	grep -v '^bench: ' "$out/profile.txt"
	echo
	echo "![slowdown vs sampling frequency](profile-slowdown.png)"
	echo "![perf.data bytes per sample](profile-bytes.png)"
	fi
} > "$out/report.md"
cat "$out/report.md"
echo "bench: report in $out/report.md"
# The targets, one line each: "bench: NAME VALUE GOAL ok|miss", also at
# the end of the report.
echo
echo "## Targets" >> "$out/report.md"
echo >> "$out/report.md"
for s in unwind profile; do
	if run $s; then
		grep -E '^bench: [^ ]+ [^ ]+ [^ ]+ (ok|miss)$' "$out/$s.txt" | tee -a "$out/report.md" ||
			{ echo "bench: no target lines in $out/$s.txt" >&2; exit 1; }
	fi
done
