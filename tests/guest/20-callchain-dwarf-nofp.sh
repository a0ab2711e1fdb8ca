# SPDX-License-Identifier: GPL-2.0
# No-frame-pointer build, --call-graph dwarf (8 KiB stack copies unwound by
# perf with libdw): the whole chain, the ground truth for later tests.
. "$(dirname "$0")/lib.sh"
record_chain "$WORKLOADS/chain-nofp" dwarf
python3 "$LIB/stacks.py" --dump "$TMP/dump.txt" --lost "${LOST:-0}" --comm chain-nofp --top chain_leaf --expect "$CHAIN" --mode full "$TMP/script.txt"
