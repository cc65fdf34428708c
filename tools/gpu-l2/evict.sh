#!/bin/sh
# evict.cu on the GPU (issue 22): minimal eviction sets and, for each, every line of the
# first 64 MiB of the arena in the same L2 set. Writes $OUT (or out/l2-evict)/evict.txt and
# run.log. Usage: sh tools/gpu-l2/evict.sh [TARGET_MIB ...] (default 32 targets, 200 to 975 MiB)
set -eu
OUT="${OUT:-out/l2-evict}"
mkdir -p "$OUT"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
nvcc -O2 -arch=sm_90 -o "$bin/evict" "$(dirname "$0")/evict.cu"
[ $# -gt 0 ] || set -- $(seq 200 25 975)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$OUT/run.log"
"$bin/evict" "$@" >"$OUT/evict.txt" 2>>"$OUT/run.log"
