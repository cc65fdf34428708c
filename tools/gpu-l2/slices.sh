#!/bin/sh
# slices.py under Nsight Compute, each kernel cold, with the L2 read sectors of the LTS slices:
# in all, and of the slice that got most, least and on average (.max, .min, .avg). Writes $OUT (or out/l2-slices): ncu.csv, run.log; read with
# slices_parse.py.
set -eu
OUT="${OUT:-out/l2-slices}"
mkdir -p "$OUT"
cd "$(dirname "$0")"
date -u >"$OUT/run.log"
ncu --csv --page raw --print-units base --clock-control none --cache-control all \
	--kernel-name regex:reduce \
	--metrics lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.max,lts__t_sectors_srcunit_tex_op_read.min,lts__t_sectors_srcunit_tex_op_read.avg \
	python3 slices.py >"$OUT/ncu.csv" 2>>"$OUT/run.log"
grep "^case" "$OUT/ncu.csv" >>"$OUT/run.log" || true
