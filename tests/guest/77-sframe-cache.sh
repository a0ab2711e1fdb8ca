# SPDX-License-Identifier: GPL-2.0
# The kernel keeps the SFrame rules of recent addresses per task, for one
# generation of the process's registry of sections.  The workload
# (tests/workloads/sframe-cache.c) samples its own page faults in code at
# a fixed address that it changes between phases, to code whose frame at
# the same return address is another, with another section: munmap + map,
# rewritten in place, MAP_FIXED over it, in a forked child, after exec in
# the same task, and from another thread between its rounds.  Every
# deferred callchain must be exact; a rule kept from the code before reads
# the return address from the wrong slot.  Each phase must also hit the
# cache (unwind_user/stats sframe_hits), and none when it is off
# (unwind_user/sframe_cache N), which must be as right.
. "$(dirname "$0")/lib.sh"

prog=$WORKLOADS/sframe-cache-sframe3
knob=/sys/kernel/debug/unwind_user/sframe_cache
[ -x "$prog" ] || fail "no $prog (make -C tests/workloads)"
[ -f "$knob" ] || fail "no $knob"
[ "$(cat "$knob")" = Y ] || fail "$knob: $(cat "$knob"), want Y by default"

phases="first munmap inplace mapfixed fork-child fork-child fork-parent thread before-exec exec"

# run LABEL ARGS...: the workload, every phase ok.
run() {
	label=$1
	shift
	"$prog" "$@" > "$TMP/$label.log" 2>&1
	rc=$?
	cat "$TMP/$label.log"
	[ $rc = 0 ] || fail "$label: exit $rc"
	got=$(sed -n 's/^\([a-z-]*\): .*, ok$/\1/p' "$TMP/$label.log" | tr '\n' ' ')
	[ "$got" = "$phases " ] || fail "$label: phases ok: '$got', want '$phases '"
}

run on
# The tests after this one run with the cache on, whatever happens here.
trap 'echo Y > "$knob"' EXIT
echo N > "$knob"
run off -n
echo Y > "$knob"
# The cache on again: the check of hits is what says so.
run on-again -i 5
echo ok
