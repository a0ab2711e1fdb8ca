# SPDX-License-Identifier: GPL-2.0
# What a process makes the kernel allocate for its SFrame sections is
# charged to its memory cgroup, the registry's maple tree nodes included,
# and freed with the process.  The workload (tests/workloads/sframe-many)
# registers N (8000) sections in a cgroup of its own; the cgroup's
# slab_unreclaimable (memory.stat, flushed every 2 s) must grow by at
# least N section records (kmalloc-96) and the tree leaves that hold N
# entries (maple nodes of 256 bytes, 16 slots each), and be back below
# where it was once the process has exited; and in a cgroup with little
# room, the registrations end with ENOMEM.  A registry that lets the maple tree
# allocate its nodes itself gets them from GFP_NOWAIT first, uncharged:
# the records alone (N * 104 bytes) are short of the bound.
. "$(dirname "$0")/lib.sh"

prog=$WORKLOADS/sframe-many
n=${MEMCG_SECTIONS:-8000}
[ -x "$prog" ] || fail "no $prog (make -C tests/workloads)"
cg=/sys/fs/cgroup
if ! grep -q "^cgroup2 $cg " /proc/mounts; then
	mount -t cgroup2 cgroup2 $cg || fail "cannot mount cgroup2 on $cg"
fi
grep -qw memory $cg/cgroup.controllers || fail "no memory controller (CONFIG_MEMCG)"
echo +memory > $cg/cgroup.subtree_control || fail "cannot enable the memory controller"
d=$cg/sframe-memcg-$$
mkdir $d || fail "mkdir $d"
cleanup() {
	[ -n "${HELPER_PID:-}" ] && kill -9 "$HELPER_PID" 2> /dev/null
	wait 2> /dev/null
	rmdir $d 2> /dev/null
}
trap cleanup EXIT

# slab: the cgroup's slab_unreclaimable, in bytes, once the periodic flush
# of the per-CPU statistics (every 2 s) has run.
slab() {
	sleep 3
	awk '$1 == "slab_unreclaimable" { print $2 }' $d/memory.stat
}

coproc HELPER { echo "$BASHPID" > $d/cgroup.procs && exec "$prog" "$n" 2>&1; }
read -r -t 60 line <&"${HELPER[0]}"
[ "$line" = mapped ] || fail "sframe-many: '$line', want 'mapped'"
before=$(slab)
echo go >&"${HELPER[1]}"
read -r -t 120 line <&"${HELPER[0]}"
[ "$line" = "registered $n" ] || fail "sframe-many: '$line', want 'registered $n'"
after=$(slab)
echo go >&"${HELPER[1]}"
pid=$HELPER_PID
wait "$pid" || fail "sframe-many: exit $?"
HELPER_PID=
# kfree_rcu() and the statistics take their time: up to 30 s until the
# cgroup is below what the process had before it registered anything.
for i in $(seq 10); do
	gone=$(slab)
	[ -n "$gone" ] && [ "$gone" -le "$before" ] && break
done
[ -n "$before" ] && [ -n "$after" ] && [ -n "$gone" ] || fail "no slab_unreclaimable in $d/memory.stat"

want=$((n * 96 + (n + 2 + 15) / 16 * 256))
echo "slab_unreclaimable of the cgroup: $before before, $after with $n sections" \
	"(+$((after - before)), $(((after - before) / n)) bytes per section), $gone after exit"
echo "want at least +$want: $n records of 96 bytes and $(((n + 2 + 15) / 16)) maple nodes of 256"
[ $((after - before)) -ge $want ] || fail "+$((after - before)) charged for $n sections, want at least +$want"
[ "$gone" -le "$before" ] || fail "$((gone - before)) bytes more than before still charged 30 s after the process exited"

# The same loop in a cgroup whose memory.max leaves 256 KiB above what the
# process uses once its sections are mapped: the registrations end with
# ENOMEM, as documented, before N (8000 take about 1 MiB), with no more of
# them than what fits in about 256 KiB, and nothing is OOM-killed.  A registry
# that allocated outside the cgroup would register them all.
room=262144
d2=$cg/sframe-memcg-max-$$
mkdir $d2 || fail "mkdir $d2"
cleanup2() {
	cleanup
	rmdir $d2 2> /dev/null
}
trap cleanup2 EXIT
coproc HELPER { echo "$BASHPID" > $d2/cgroup.procs && exec "$prog" "$n" 2>&1; }
read -r -t 60 line <&"${HELPER[0]}"
[ "$line" = mapped ] || fail "sframe-many: '$line', want 'mapped'"
echo $(($(cat $d2/memory.current) + room)) > $d2/memory.max || fail "memory.max"
sunreclaim=$(awk '$1 == "SUnreclaim:" { print $2 }' /proc/meminfo)
echo go >&"${HELPER[1]}"
read -r -t 120 line <&"${HELPER[0]}"
pid=$HELPER_PID
wait "$pid"
status=$?
HELPER_PID=
echo "memory.max $(cat $d2/memory.max): '$line', exit $status;" \
	"SUnreclaim $sunreclaim kB before, $(awk '$1 == "SUnreclaim:" { print $2 }' /proc/meminfo) kB after"
grep -E '^(max|oom|oom_kill) ' $d2/memory.events
k=$(sed -n 's/^sframe-many: PR_ADD_SFRAME of section \([0-9]*\): Cannot allocate memory$/\1/p' <<< "$line")
[ -n "$k" ] && [ $status = 1 ] || fail "want ENOMEM from PR_ADD_SFRAME at the cgroup's limit"
[ "$k" -lt "$n" ] || fail "all $n registered"
# (The room grows by what reclaim frees of the cgroup's page cache.)
[ $((k * 96)) -le $((2 * room)) ] || fail "$k sections registered: more than fit in $room bytes"
grep -qx 'oom_kill 0' $d2/memory.events || fail "the cgroup's OOM killer ran"
grep -qE '^max [1-9]' $d2/memory.events || fail "the cgroup never reached memory.max"
echo "ok: $k sections registered, then ENOMEM"
