#!/bin/sh
# Where the DRAM writes of PyTorch's SDPA flash kernel come from, on the large shapes whose
# writes exceed O and the log-sum-exp (docs/gpu.md): ncu's L2 write sectors split by source
# and aperture, with DRAM bytes, on a few shapes (cold, one kernel each). Writes to $OUT (or
# out/sdpa-writes): metrics.txt (the L2 write metrics this ncu knows), ncu.csv, run.log.
set -eu
OUT="${OUT:-out/sdpa-writes}"
mkdir -p "$OUT"
cd "$(dirname "$0")"
ncu --query-metrics --chip gh100 >"$OUT/metrics-all.txt" 2>&1 || true
grep -E "^lts__t_(sectors|requests).*(write|red|atom)" "$OUT/metrics-all.txt" >"$OUT/metrics.txt" ||
	true
M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum
M=$M,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_ltcfabric_op_write.sum
M=$M,lts__t_sectors_srcunit_tex_aperture_device_op_write.sum
M=$M,lts__t_sectors_srcunit_tex_aperture_device_op_write_lookup_hit.sum
M=$M,lts__t_sectors_srcunit_tex_aperture_device_op_write_lookup_miss.sum
M=$M,lts__t_sectors_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum
M=$M,lts__t_sectors_srcunit_ltcfabric_op_read.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_op_red.sum
M=$M,gpu__time_duration.sum,launch__grid_size,launch__registers_per_thread
M=$M,sm__sass_inst_executed_op_local_st.sum,sm__sass_inst_executed_op_global_st.sum
M=$M,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
# only the metrics this ncu knows (launch__ ones always)
keep=""
for m in $(echo "$M" | tr , ' '); do
	case "$m" in
	launch__* | gpu__time_duration.sum) keep="$keep,$m" ;;
	*) grep -q "^${m%.sum} " "$OUT/metrics-all.txt" && keep="$keep,$m" ;;
	esac
done
M=${keep#,}
echo "metrics: $M" >"$OUT/run.log"
for s in "8 16 16 16384 64 1" "8 16 16 16384 64 0" "1 16 16 16384 128 0" "8 16 4 4096 64 0"; do
	# shellcheck disable=SC2086
	ncu --csv --page raw --print-units base --clock-control none --kernel-name regex:flash \
		--metrics "$M" python3 writes_shape.py $s >>"$OUT/ncu.csv" 2>>"$OUT/run.log" ||
		echo "ncu failed on $s" >>"$OUT/run.log"
done
grep -c flash "$OUT/ncu.csv" || true
