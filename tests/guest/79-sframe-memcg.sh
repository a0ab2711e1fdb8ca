# SPDX-License-Identifier: GPL-2.0
# What a process makes the kernel allocate for its SFrame sections is
# charged to its memory cgroup, the registry's maple tree nodes included,
# and freed with the process.  The workload (tests/workloads/sframe-many)
# registers N (8000) sections in a cgroup of its own; the cgroup's
# slab_unreclaimable (memory.stat, flushed every 2 s) must grow by at
# least N section records (kmalloc-96) and the tree leaves that hold N
# entries (maple nodes of 256 bytes, 16 slots each), and be back below
# where it was once the process has exited.  A registry that lets the maple tree
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
echo "ok"
