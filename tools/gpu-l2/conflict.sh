#!/bin/sh
# conflict.py under Nsight Compute without cache control (the L2 kept between kernels): the L2
# lookups and misses of every reduction. Writes $OUT (or out/l2-conflict): ncu.csv, run.log;
# read with conflict_parse.py.
set -eu
OUT="${OUT:-out/l2-conflict}"
mkdir -p "$OUT"
cd "$(dirname "$0")"
date -u >"$OUT/run.log"
ncu --csv --page raw --print-units base --clock-control none --cache-control none \
	--kernel-name regex:reduce --metrics dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum \
	python3 conflict.py "$@" >"$OUT/ncu.csv" 2>>"$OUT/run.log"
grep "^case" "$OUT/ncu.csv" >>"$OUT/run.log" || true
