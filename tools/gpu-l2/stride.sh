#!/bin/sh
# stride.py under Nsight Compute without cache control (the L2 kept between kernels): DRAM and
# L2 bytes of every reduction. Writes $OUT (or out/l2-stride): ncu.csv, run.log; read with
# stride_parse.py.
set -eu
OUT="${OUT:-out/l2-stride}"
mkdir -p "$OUT"
cd "$(dirname "$0")"
date -u >"$OUT/run.log"
ncu --csv --page raw --print-units base --clock-control none --cache-control none \
	--kernel-name regex:reduce --metrics dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum \
	python3 stride.py "$@" >"$OUT/ncu.csv" 2>>"$OUT/run.log"
grep "^case\\|^device" "$OUT/ncu.csv" >>"$OUT/run.log" || true
