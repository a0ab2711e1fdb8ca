# SPDX-License-Identifier: GPL-2.0
# Frame-pointer build, --call-graph fp: every sample in chain_leaf shows the
# whole user chain, innermost first; but for a sample on the instructions
# of chain_leaf where %rbp is still chain_c's frame (its prologue up to
# "mov %rsp,%rbp", its "ret"), where perf's frame-pointer walk misses
# chain_c, as it must: those are counted apart.
. "$(dirname "$0")/lib.sh"
record_chain "$WORKLOADS/chain-fp" fp
python3 "$LIB/stacks.py" --lost "${LOST:-0}" --comm chain-fp --top chain_leaf --expect "$CHAIN" \
	--no-frame "$WORKLOADS/chain-fp:chain_leaf" --mode full "$TMP/script.txt"
