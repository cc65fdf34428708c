#!/bin/sh
# slicelat.cu on the GPU (issue 22): every line's L2 hit latency from every SM, for lines of 1
# MiB at the arena's start and 1 MiB 256 MiB in. Writes $OUT (or out/l2-slicelat): run.log,
# lat-0.bin.gz, lat-262144.bin.gz. Usage: [MEMSIM_SLICELAT_PASSES=N] [OFFSETS="0 262144"]
# sh tools/gpu-l2/slicelat.sh
set -eu
OUT="${OUT:-out/l2-slicelat}"
mkdir -p "$OUT"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
nvcc -O2 -arch=sm_90 -o "$bin/slicelat" "$(dirname "$0")/slicelat.cu"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$OUT/run.log"
echo "passes ${MEMSIM_SLICELAT_PASSES:-4}" >>"$OUT/run.log"
for off in ${OFFSETS:-0 262144}; do
	"$bin/slicelat" "$OUT/lat-$off.bin" "$off" 8192 $(seq 0 131) 2>>"$OUT/run.log"
	gzip -9 "$OUT/lat-$off.bin"
done
