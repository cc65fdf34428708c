#!/bin/sh
# Do the spilled registers' loads reach the L2, and does the L2 miss on them? The SMs' local
# loads and stores split into L1 hits and misses, and the L2's reads from the SMs split into
# hits and misses, on the SDPA rows the model reads too little on (docs/gpu.md) and controls.
# Cold, one kernel each. Writes to $OUT (or out/sdpa-locals): ncu.csv, run.log.
set -eu
OUT="${OUT:-out/sdpa-locals}"
mkdir -p "$OUT"
cd "$(dirname "$0")"
ncu --query-metrics --chip gh100 >"$OUT/metrics-all.txt" 2>&1 || true
M=dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size
M=$M,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum
M=$M,l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit.sum
M=$M,l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_miss.sum
M=$M,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
M=$M,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
M=$M,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
M=$M,lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum
keep=""
for m in $(echo "$M" | tr , ' '); do
	case "$m" in
	launch__*) keep="$keep,$m" ;;
	*) grep -q "^${m%.sum} " "$OUT/metrics-all.txt" && keep="$keep,$m" ;;
	esac
done
M=${keep#,}
{ date -u; echo "metrics: $M"; } >"$OUT/run.log"
# batch heads kv_heads N d causal dtype N_kv
. ./ncu_shapes.sh
ncu_shapes "$OUT" "$M" <<SHAPES
8 16 4 4096 64 0 fp16 4096
8 16 16 4096 64 0 fp16 4096
8 16 4 4096 64 1 fp16 4096
8 16 16 16384 128 1 fp16 16384
1 16 16 16384 128 1 fp16 16384
8 16 16 4096 128 1 fp16 4096
SHAPES
rm -f "$OUT/metrics-all.txt"
grep -c flash "$OUT/ncu.csv" || true
