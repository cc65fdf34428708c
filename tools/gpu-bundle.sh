#!/bin/sh
# Prepares the GPU check for a machine with an H100 (and ncu) but without memsim's build
# dependencies: builds memsim (without PAPI) and memsim-gpu into build-dev/, copies them with
# libcjson into dev/, and computes memsim's side of every configuration of the table in docs/gpu.md
# into gpu-memsim/ (no GPU needed; the largest sizes take tens of minutes on 2 cores).
# Then, on the GPU machine, from the repository root: sh tools/gpu-run.sh
set -eu
cd "$(dirname "$0")/.."
[ -f build-dev/build.ninja ] || meson setup build-dev -Dpapi=disabled -Dcuda=enabled -Dwerror=true
ninja -C build-dev memsim memsim-gpu
mkdir -p dev gpu-memsim
cp build-dev/memsim build-dev/memsim-gpu dev/
cp /usr/lib/x86_64-linux-gnu/libcjson.so.1 dev/
for n in 1024 2048 4096 8192 16384; do
	for k in naive flash2; do
		f=gpu-memsim/$k-N$n.json
		[ -s "$f" ] && continue
		dev/memsim gpucheck --kernel $k --N $n --d 64 --heads 16 --dtype fp16 \
			--model sequential --no-gpu \
			--json "$f" >gpu-memsim/$k-N$n.txt &
	done
	wait
done
