#!/bin/sh
# schedule.cu on the GPU (issue 22): a FlashAttention-shaped causal grid (N 16384: 128 query
# blocks) that reads only K and V. Each case B-H-GAP-LAYOUT-CYCLES (batch, heads, head gap,
# bh|hb, spin cycles a step) runs once plain, its blocks' SMs and times to blocks-CASE.csv, and
# once under Nsight Compute (cold, as the SDPA rows) for its DRAM bytes and L2 read lookup
# misses (ncu.csv, in case order). Writes $OUT (or out/sdpa-schedule), with run.log; read with
# schedule_report.py. Usage: sh tools/gpu-sdpa/schedule.sh [CASE...]
set -eu
OUT="${OUT:-out/sdpa-schedule}"
mkdir -p "$OUT"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
nvcc -O2 -arch=sm_90 -o "$bin/schedule" "$(dirname "$0")/schedule.cu"
[ $# -gt 0 ] || set -- 1-16-1-bh-5000 1-128-1-bh-5000 8-16-1-bh-5000
date -u >"$OUT/run.log"
for c in "$@"; do
	IFS=- read -r b h gap layout cycles <<E
$c
E
	"$bin/schedule" 128 "$b" "$h" causal "$cycles" "$gap" "$layout" >"$OUT/blocks-$c.csv"
	echo "case $c" >>"$OUT/run.log"
	ncu --csv --page raw --print-units base --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,gpu__time_duration.sum \
		"$bin/schedule" 128 "$b" "$h" causal "$cycles" "$gap" "$layout" 2>>"$OUT/run.log" |
		grep '^"' >"$OUT/ncu-$c.csv"
done
