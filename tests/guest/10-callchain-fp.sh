# SPDX-License-Identifier: GPL-2.0
# Frame-pointer build, --call-graph fp: every sample in chain_leaf shows the
# whole user chain, innermost first.
. "$(dirname "$0")/lib.sh"
record_chain "$WORKLOADS/chain-fp" fp
python3 "$LIB/stacks.py" --lost "${LOST:-0}" --comm chain-fp --top chain_leaf --expect "$CHAIN" --mode full "$TMP/script.txt"
