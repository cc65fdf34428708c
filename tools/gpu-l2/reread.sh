#!/bin/sh
# reread.cu on the GPU (issue 22): every line's latency on a first and a second pass over a
# buffer stored as pieces, from one SM and from all. Writes $OUT (or out/l2-reread): run.log
# and lat-*.bin; reread_parse.py turns them into classes.txt.gz and hist.csv.
# Usage: sh tools/gpu-l2/reread.sh [W,P,S,MODE[,OFF] ...]
set -eu
OUT="${OUT:-out/l2-reread}"
mkdir -p "$OUT"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
nvcc -O2 -arch=sm_90 -o "$bin/reread" "$(dirname "$0")/reread.cu"
[ $# -gt 0 ] || set -- 4,512,512,all 16,512,512,all 20,512,512,all 24,512,512,all \
	28,512,512,all 32,512,512,all 40,512,512,all 28,512,512,one \
	20,512,2048,all 24,512,2048,all 28,512,2048,all 32,512,2048,all 28,512,2048,one \
	28,512,2048,all 28,512,2048,all,512 28,512,2048,all,1024 28,512,768,all 28,512,1024,all \
	28,512,2560,all 28,512,8192,all 28,128,512,all 28,2048,4096,all 28,4096,8192,all \
	28,4096,65536,all 32,4096,65536,all 28,512,512,all
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$OUT/run.log"
"$bin/reread" "$OUT" "$@" >>"$OUT/run.log"
