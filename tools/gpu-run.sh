#!/bin/sh
# The GPU tables of docs/gpu.md, on a machine with an NVIDIA GPU and Nsight Compute, after
# tools/gpu-bundle.sh: memsim gpucheck for naive and flash2 at N = 1024 .. 16384 (d = 64,
# 16 heads, fp16) with memsim's side read from gpu-memsim/, then memsim-gpu's timings.
# Results go to $OUT (or out/gpu).
export LD_LIBRARY_PATH="$PWD/dev${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
OUT="${OUT:-out/gpu}"
mkdir -p "$OUT"
date -u
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
ncu --version | tail -1
for k in naive flash2; do
	for n in 1024 2048 4096 8192 16384; do
		[ -f gpu-memsim/$k-N$n.json ] || { echo "no memsim side for $k N=$n"; continue; }
		dev/memsim gpucheck --kernel $k --N $n --heads 16 --d 64 --dtype fp16 --model sequential \
			--memsim-from gpu-memsim/$k-N$n.json --json "$OUT/gc-$k-$n.json" \
			>"$OUT/gc-$k-$n.txt" 2>&1 || echo "gpucheck $k $n failed"
		grep -E "^total|^verdict" "$OUT/gc-$k-$n.txt" | sed "s/^/$k N=$n: /"
	done
done
for t in fp32 fp16; do
	dev/memsim-gpu time --kernel naive --dtype $t --N 128,512,1024,2048,4096,8192 --heads 8 \
		--d 64 --reps 20
	dev/memsim-gpu time --kernel flash2 --dtype $t --N 128,512,1024,2048,4096,8192 --heads 8 \
		--d 64 --reps 5
done 2>&1 | tee "$OUT/time.txt"
