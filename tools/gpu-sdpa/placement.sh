#!/bin/sh
# Does where PyTorch's allocation lands change the SDPA kernel's DRAM reads? The six rows the
# model reads too little on (docs/gpu.md) and a batch-1 control, each run in a fresh process
# with q, k and v behind a pad of PADS MiB (SDPA_PAD_MIB in writes_shape.py; 0 twice: the
# same call again), cold, one kernel each; SHAPES=FILE takes the shapes from FILE instead (one
# "batch heads kv_heads N d causal dtype N_kv" a line). Writes to $OUT (or out/sdpa-placement):
# ncu.csv, run.log (each pass as "layout padM"); read with locals_parse.py.
set -eu
OUT="${OUT:-out/sdpa-placement}"
PADS="${PADS:-0 6 30 0}"
mkdir -p "$OUT"
cd "$(dirname "$0")"
. ./ncu_shapes.sh
{ date -u; echo "metrics: $LOOKUP_METRICS"; nvidia-smi -L; } >"$OUT/run.log"
for pad in $PADS; do
	echo "layout pad$pad" >>"$OUT/run.log"
	export SDPA_PAD_MIB=$pad
	if [ -n "${SHAPES:-}" ]; then
		ncu_shapes "$OUT" "$LOOKUP_METRICS" <"$SHAPES"
		continue
	fi
	# batch heads kv_heads N d causal dtype N_kv
	ncu_shapes "$OUT" "$LOOKUP_METRICS" <<SHAPES
8 16 4 4096 64 0 fp16 4096
8 16 4 4096 64 1 fp16 4096
8 16 16 4096 128 1 fp16 4096
8 16 4 4096 128 1 fp16 4096
8 16 16 16384 128 1 fp16 16384
8 16 4 16384 128 1 fp16 16384
1 16 16 16384 128 1 fp16 16384
SHAPES
done
grep -c flash "$OUT/ncu.csv" || true
