# SPDX-License-Identifier: GPL-2.0
# No-frame-pointer build, --call-graph fp: today's kernel loses the callers
# (no frame records to follow).  Asserted so that the fix shows: once the
# kernel unwinds with SFrame, this is the stack that becomes whole.
. "$(dirname "$0")/lib.sh"
record_chain "$WORKLOADS/chain-nofp" fp
python3 "$LIB/stacks.py" --lost "${LOST:-0}" --comm chain-nofp --top chain_leaf --expect "$CHAIN" --mode truncated "$TMP/script.txt"
