#!/bin/sh
# Does where the heads lie change the SDPA kernel's DRAM reads? The same shapes with q, k and v
# stored batch-major (PyTorch's default [b, h, N, d]) and head-major (SDPA_LAYOUT=hb: the same
# tensors as strided views, grid neighbours next to each other in memory). Cold, one kernel
# each. Writes to $OUT (or out/sdpa-layout): ncu.csv, run.log; read with locals_parse.py.
set -eu
OUT="${OUT:-out/sdpa-layout}"
mkdir -p "$OUT"
cd "$(dirname "$0")"
. ./ncu_shapes.sh
M=$LOOKUP_METRICS
{ date -u; echo "metrics: $M"; } >"$OUT/run.log"
for layout in bh hb; do
	echo "layout $layout" >>"$OUT/run.log"
	# batch heads kv_heads N d causal dtype N_kv
	export SDPA_LAYOUT=$layout
	ncu_shapes "$OUT" "$M" <<SHAPES
8 16 16 16384 128 1 fp16 16384
8 16 4 16384 128 1 fp16 16384
8 16 16 4096 128 1 fp16 4096
8 16 4 4096 64 0 fp16 4096
SHAPES
done
grep -c flash "$OUT/ncu.csv" || true
