#!/bin/sh
# The L2 microbenchmarks of `memsim-gpu l2probe` (kernels/cuda/l2probe_gpu.h) on a grid, under
# Nsight Compute, each kernel cold (--cache-control all: ncu flushes the caches before each
# kernel, as the SDPA rows were measured; every metric in one pass, so no replay).
#   sh tools/gpu-l2/probe.sh bundle   here (no GPU): builds memsim-gpu into build-dev/ and
#                                     copies it with libcjson into dev/
#   sh tools/gpu-l2/probe.sh [run]    there: the grid under ncu, into $OUT (or out/gpu-l2probe):
#       ncu.csv     ncu's raw page, one line per kernel, in launch order
#       run.log     the device, ncu's version, and memsim-gpu's line per case ("l2probe ...")
#       probe.csv   one row per case (tools/gpu-l2/probe_parse.py; again anywhere with
#                   `python3 tools/gpu-l2/probe_parse.py $OUT > probe.csv`)
#   sh tools/gpu-l2/probe.sh cases    the grid without ncu (what `run` runs under it)
# MEMSIM_GPU=path runs another memsim-gpu than dev/memsim-gpu. About 70 kernels of at most
# 2 GiB each: the time is ncu's per-process start, about 2 to 3 s a case.
set -eu
G="${MEMSIM_GPU:-}"
case "$G" in "" | /*) ;; *) G="$PWD/$G" ;; esac
cd "$(dirname "$0")/../.."
G="${G:-$PWD/dev/memsim-gpu}"
METRICS=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum
METRICS=$METRICS,lts__t_sectors_srcunit_tex_op_write.sum,gpu__time_duration.sum
METRICS=$METRICS,launch__grid_size

# One case a line: memsim-gpu l2probe's arguments. PROBE_PART=a|b|c|d|e runs one part alone.
grid() {
	case "${PROBE_PART:-all}" in
	all) grid_all; grid_d; grid_e ;;
	d) grid_d ;;
	e) grid_e ;;
	a | b | c) grid_all | grep -- "$(part_kind "$PROBE_PART")" ;;
	*) echo "probe.sh: PROBE_PART: a, b, c, d or e, not '$PROBE_PART'" >&2; exit 2 ;;
	esac
}

part_kind() {
	case "$1" in
	a) echo "--kind rewrite" ;;
	b) echo "--kind tiles" ;;
	*) echo "--kind crossread" ;;
	esac
}

# (d) (a) with dirty pressure: each step a block also writes 1 or 4 KiB of fresh output (32 or
#     128 MiB over the kernel, past the ~21.5 MiB the L2 keeps dirty), as finished blocks' O
#     tiles do: are the rewritten regions written back then?
grid_d() {
	for o in 1 4; do
		for r in 0 4 16; do
			echo "--kind rewrite --tile 32 --steps 124 --region $r --out-tile $o"
		done
		for r in 4 16; do
			echo "--kind rewrite --tile 32 --steps 124 --region $r --local --out-tile $o"
		done
	done
}

# (e) spill footprints as large as FlashAttention's may be: local regions of 16 to 128 KiB a
#     block (4 to 33 MiB over the 264 blocks), alone and under 128 MiB of other output.
grid_e() {
	for r in 16 32 64 128; do
		echo "--kind rewrite --tile 32 --steps 124 --region $r --local"
		echo "--kind rewrite --tile 32 --steps 124 --region $r --local --out-tile 4"
	done
}

grid_all() {
	# (a) a region per block rewritten every step while each step streams 264 x 32 KiB:
	#     8, 31, 124, 248 steps stream 66 MiB, 256 MiB, 1 GiB, 2 GiB
	for s in 8 31 124 248; do
		for r in 0 1 2 4 8 16; do
			[ "$s" = 248 ] && [ "$r" != 0 ] && [ "$r" != 4 ] && [ "$r" != 16 ] && continue
			echo "--kind rewrite --tile 32 --steps $s --region $r"
		done
	done
	#     the same with the region in local memory, as the spills are (1 GiB streamed)
	for r in 1 2 4 8 16; do
		echo "--kind rewrite --tile 32 --steps 124 --region $r --local"
	done
	# (b) 32 KiB output tiles written once each, alone and after reading as much
	for t in 8 16 24 32 48 64 128 256 512; do
		echo "--kind tiles --tile 32 --total $t --stream 0"
		echo "--kind tiles --tile 32 --total $t --stream $t"
	done
	# (c) each 32 KiB chunk read twice, lag steps of 66 chunks apart (lag 8: 16.5 MiB),
	#     partners across the SM halves or within one; then whole buffers read twice
	for l in 1 2 4 6 8 10 12 16; do
		echo "--kind crossread --tile 32 --buffer 40 --lag $l"
		echo "--kind crossread --tile 32 --buffer 40 --lag $l --same-half"
	done
	for b in 8 16 24 32; do
		echo "--kind crossread --tile 32 --buffer $b --lag 16"
		echo "--kind crossread --tile 32 --buffer $b --lag 16 --same-half"
	done
}

case "${1:-run}" in
bundle)
	[ -f build-dev/build.ninja ] ||
		meson setup build-dev -Dpapi=disabled -Dcuda=enabled -Dwerror=true
	ninja -C build-dev memsim-gpu
	mkdir -p dev
	cp build-dev/memsim-gpu /usr/lib/x86_64-linux-gnu/libcjson.so.1 dev/
	;;
cases)
	export LD_LIBRARY_PATH="$PWD/dev${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	grid | while read -r a; do
		# shellcheck disable=SC2086
		"$G" l2probe $a || echo "l2probe failed: $a"
	done
	;;
run)
	OUT="${OUT:-out/gpu-l2probe}"
	mkdir -p "$OUT"
	[ -x "$G" ] || { echo "probe.sh: $G not found (sh tools/gpu-l2/probe.sh bundle)" >&2; exit 1; }
	{
		date -u
		nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
		ncu --version | tail -1
	} >"$OUT/run.log" 2>&1
	t0=$(date +%s)
	MEMSIM_GPU="$G" ncu --csv --page raw --print-units base --clock-control none \
		--cache-control all --kernel-name "regex:^probe_" --metrics "$METRICS" \
		--log-file "$OUT/ncu.csv" sh tools/gpu-l2/probe.sh cases >>"$OUT/run.log" 2>&1 || {
		echo "ncu failed:"; tail -20 "$OUT/run.log" "$OUT/ncu.csv"; exit 1; }
	echo "$(grep -c '^l2probe ' "$OUT/run.log") cases ran, $(grep -c 'l2probe failed' \
		"$OUT/run.log") failed, in $(($(date +%s) - t0)) s" | tee -a "$OUT/run.log"
	python3 tools/gpu-l2/probe_parse.py "$OUT" >"$OUT/probe.csv"
	echo "wrote $OUT/probe.csv ($(($(wc -l <"$OUT/probe.csv") - 1)) rows)"
	;;
*)
	echo "usage: sh tools/gpu-l2/probe.sh bundle|run|cases" >&2
	exit 2
	;;
esac
