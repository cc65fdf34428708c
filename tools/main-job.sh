#!/bin/sh
# The main job of ./setup.sh main: memsim's default study (memsim study): the bytes-moved lab's
# sweep (naive vs flash2, d = 64, B_r = B_c = 64, fp32 and fp16, N = 256 .. 8192, on the lab
# and i5-8250u presets) and the exactness sweep (every kernel on fully associative caches of
# 32 KiB .. 64 MiB), the formulas at the labs' sizes, this machine's ceilings, the layer
# profile, the cross-checks, the plots and the report (out/study/report.html). Results land in
# out/study/; an interrupted study resumes where it stopped.
set -eu
cd "$(dirname "$0")/.."
if [ -f out/study/lab/results.json ] || [ -f out/study/exact/results.json ]; then
	exec build/memsim study --out out/study --resume
fi
exec build/memsim study --out out/study
