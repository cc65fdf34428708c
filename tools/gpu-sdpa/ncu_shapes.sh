# Sourced by excess.sh, locals.sh, heads.sh and layout.sh (from tools/gpu-sdpa/): ncu_shapes
# OUT METRICS runs one
# cold PyTorch SDPA call (writes_shape.py) under Nsight Compute for each shape on stdin
# ("batch heads kv_heads N d causal dtype N_kv" a line), appending ncu's raw page to
# OUT/ncu.csv and each shape to OUT/run.log.
ncu_shapes() {
	while read -r s; do
		[ -n "$s" ] || continue
		echo "shape $s" >>"$1/run.log"
		# shellcheck disable=SC2086
		ncu --csv --page raw --print-units base --clock-control none --cache-control all \
			--kernel-name regex:flash --metrics "$2" python3 writes_shape.py $s \
			>>"$1/ncu.csv" 2>>"$1/run.log" || echo "ncu failed on $s" >>"$1/run.log"
	done
}

# DRAM bytes, the L2's reads from the SMs and their lookup misses, the SMs' local loads and
# their L1 misses: what locals_parse.py reads (heads.sh, layout.sh).
LOOKUP_METRICS=dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,gpu__time_duration.sum
LOOKUP_METRICS=$LOOKUP_METRICS,lts__t_sectors_srcunit_tex_op_read.sum
LOOKUP_METRICS=$LOOKUP_METRICS,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
LOOKUP_METRICS=$LOOKUP_METRICS,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum
LOOKUP_METRICS=$LOOKUP_METRICS,l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_miss.sum
