# Sourced by excess.sh and locals.sh (from tools/gpu-sdpa/): ncu_shapes OUT METRICS runs one
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
