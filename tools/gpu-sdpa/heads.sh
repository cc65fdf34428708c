#!/bin/sh
# Do the L2's misses per head grow with the kernel's length? PyTorch SDPA on shapes that differ
# only in how many heads (or batches) run, in the same order and layout: causal d = 128 at
# N 4096 and 16384 with 16 to 128 heads, and grouped-query d = 64 at N 4096 with batch 1 to 8.
# Cold, one kernel each: DRAM bytes, the L2's reads from the SMs and their lookup misses.
# Writes to $OUT (or out/sdpa-heads): ncu.csv, run.log; read with locals_parse.py.
set -eu
OUT="${OUT:-out/sdpa-heads}"
mkdir -p "$OUT"
cd "$(dirname "$0")"
. ./ncu_shapes.sh
M=$LOOKUP_METRICS
{ date -u; echo "metrics: $M"; } >"$OUT/run.log"
# batch heads kv_heads N d causal dtype N_kv
ncu_shapes "$OUT" "$M" <<SHAPES
1 16 16 16384 128 1 fp16 16384
1 32 32 16384 128 1 fp16 16384
1 64 64 16384 128 1 fp16 16384
1 128 128 16384 128 1 fp16 16384
1 16 16 4096 128 1 fp16 4096
1 32 32 4096 128 1 fp16 4096
1 64 64 4096 128 1 fp16 4096
1 128 128 4096 128 1 fp16 4096
1 16 4 4096 64 0 fp16 4096
2 16 4 4096 64 0 fp16 4096
4 16 4 4096 64 0 fp16 4096
8 16 4 4096 64 0 fp16 4096
SHAPES
grep -c flash "$OUT/ncu.csv" || true
