#!/bin/sh
# Does the SDPA forward kernel's DRAM writes beyond O and the log-sum-exp grow with its thread
# blocks or with its K/V steps? One shape (batch 8, 16 heads, d 64 and 128, not causal, fp16) with
# the query blocks fixed and N_kv varied (the steps a block makes), and the other way round.
# Cold, one kernel each, DRAM bytes and the SMs' local and global store sectors. Writes to $OUT
# (or out/sdpa-excess): ncu.csv, run.log. Read with tools/gpu-sdpa/excess_parse.py.
set -eu
OUT="${OUT:-out/sdpa-excess}"
mkdir -p "$OUT"
cd "$(dirname "$0")"
M=dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,gpu__time_duration.sum
M=$M,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
M=$M,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum
date -u >"$OUT/run.log"
# batch heads kv_heads N d causal dtype N_kv
. ./ncu_shapes.sh
ncu_shapes "$OUT" "$M" <<SHAPES
8 16 16 16384 64 0 fp16 1024
8 16 16 16384 64 0 fp16 2048
8 16 16 16384 64 0 fp16 4096
8 16 16 16384 64 0 fp16 8192
8 16 16 16384 64 0 fp16 16384
8 16 16 16384 64 0 fp16 32768
8 16 16 4096 64 0 fp16 16384
8 16 16 8192 64 0 fp16 16384
2 16 16 16384 64 0 fp16 16384
8 16 16 16384 128 0 fp16 2048
8 16 16 16384 128 0 fp16 8192
8 16 16 16384 128 0 fp16 16384
8 16 16 4096 128 0 fp16 16384
8 16 16 16384 64 1 fp16 16384
8 16 16 16384 128 1 fp16 16384
SHAPES
grep -c flash "$OUT/ncu.csv" || true
