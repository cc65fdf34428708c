#!/bin/sh
# slices.py under Nsight Compute, each kernel cold, with the L2 read sectors of every LTS slice
# (--print-metric-instances values). Writes $OUT (or out/l2-slices): ncu.csv, run.log; read with
# slices_parse.py.
set -eu
OUT="${OUT:-out/l2-slices}"
mkdir -p "$OUT"
cd "$(dirname "$0")"
date -u >"$OUT/run.log"
ncu --csv --page raw --print-units base --clock-control none --cache-control all \
	--print-metric-instances values --kernel-name regex:reduce \
	--metrics lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum \
	python3 slices.py >"$OUT/ncu.csv" 2>>"$OUT/run.log"
grep "^case" "$OUT/ncu.csv" >>"$OUT/run.log" || true
