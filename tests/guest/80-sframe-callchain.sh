# SPDX-License-Identifier: GPL-2.0
# Programs built without frame pointers, with SFrame from sframe-gen
# injected (PT_GNU_SFRAME, registered by the kernel at exec): with
# --call-graph fp,defer the kernel unwinds them with SFrame, and every
# sample in chain_leaf has the whole chain, for v3, v2 (PC-relative
# starts) and v2 (section-relative starts).  The same program without
# SFrame falls back to frame pointers and loses the callers.
. "$(dirname "$0")/lib.sh"

for v in sframe3 sframe2 sframe2s; do
	record_chain "$WORKLOADS/chain-$v" fp,defer
	python3 "$LIB/stacks.py" --lost "${LOST:-0}" --comm "chain-$v" --top chain_leaf --expect "$CHAIN" \
		--mode full "$TMP/script.txt" || fail "chain-$v: SFrame $v unwinding"
done
record_chain "$WORKLOADS/chain-nofp" fp,defer
python3 "$LIB/stacks.py" --lost "${LOST:-0}" --comm chain-nofp --top chain_leaf --expect "$CHAIN" \
	--mode truncated "$TMP/script.txt" || fail "chain-nofp: no SFrame, yet whole stacks"
