#!/bin/sh
# PyTorch's SDPA kernels under Nsight Compute on the grid of sdpa_grid.py: DRAM bytes read and
# written, L2 sectors, time, grid and block of every flash kernel, cold (ncu flushes the
# caches before each kernel, its default), clocks as found. Writes to $OUT (or out/sdpa):
#   shapes.json  the grid, the device, PyTorch's version
#   ncu.csv      ncu's raw page: one line per profiled kernel (the markers included)
# parse.py (on any machine) joins them into sdpa.csv.
set -eu
OUT="${OUT:-out/sdpa}"
mkdir -p "$OUT"
cd "$(dirname "$0")"
date -u
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
ncu --version | tail -1
python3 -c 'import torch; print("torch", torch.__version__)'
ncu --csv --page raw --print-units base --clock-control none \
	--kernel-name-base demangled --kernel-name 'regex:flash|fmha|FillFunctor|fill_kernel' \
	--metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__occupancy_limit_warps,launch__waves_per_multiprocessor \
	--log-file "$OUT/ncu.csv" python3 sdpa_grid.py "$OUT/shapes.json" >"$OUT/run.log" 2>&1 || {
	echo "ncu failed:"; tail -20 "$OUT/run.log" "$OUT/ncu.csv"; exit 1; }
echo "$(grep -c FillFunctor "$OUT/ncu.csv") markers, $(grep -c flash "$OUT/ncu.csv") flash kernels"
grep -c "'ok': True" "$OUT/run.log" || true
grep "'ok': False" "$OUT/run.log" | head -5 || true
