#!/bin/sh
# The L2 microbenchmarks of l2_policy.py under Nsight Compute, caches kept between kernels
# (--cache-control none) and between replay passes (--replay-mode application: the whole
# script runs once per pass; kernel replay would save and restore device memory around a
# kernel that needs several passes, which evicts everything), clocks as found. Writes to $OUT
# (or out/l2-policy); REPLAY=kernel METRICS=dram__bytes_read.sum,... repeat it otherwise:
#   cases.json  the experiments and their steps, the device, PyTorch's version
#   ncu.csv     ncu's raw page: one line per profiled kernel (markers included)
# parse.py (on any machine) turns them into l2-policy.csv.
set -eu
OUT="${OUT:-out/l2-policy}"
REPLAY="${REPLAY:-application}"
METRICS="${METRICS:-dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write.sum,gpu__time_duration.sum,launch__grid_size}"
mkdir -p "$OUT"
cd "$(dirname "$0")"
date -u
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
ncu --version | tail -1
python3 -c 'import torch; print("torch", torch.__version__)'
ncu --csv --page raw --print-units base --clock-control none --cache-control none --replay-mode "$REPLAY" \
	--kernel-name-base demangled --kernel-name "regex:reduce|Fill" \
	--metrics "$METRICS" \
	--log-file "$OUT/ncu.csv" python3 l2_policy.py "$OUT/cases.json" >"$OUT/run.log" 2>&1 || {
	echo "ncu failed:"; tail -20 "$OUT/run.log" "$OUT/ncu.csv"; exit 1; }
echo "$(grep -c FillFunctor "$OUT/ncu.csv") fills, $(wc -l <"$OUT/ncu.csv") lines"
cat "$OUT/run.log" | tail -3
