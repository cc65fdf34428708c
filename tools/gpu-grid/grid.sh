#!/bin/sh
# memsim's CUDA kernels under Nsight Compute on the shapes of shapes.txt (issue 22 item 5).
#   sh tools/gpu-grid/grid.sh bundle   here (no GPU): builds memsim and memsim-gpu into
#                                      build-dev/, copies them with libcjson into dev/, and
#                                      computes memsim's side of every shape into gpu-grid/
#   sh tools/gpu-grid/grid.sh check    there: memsim-gpu check on small shapes of each kind
#                                      (N_kv, bf16, causal, GQA) against the CPU reference
#   sh tools/gpu-grid/grid.sh run      there: memsim gpucheck on every shape, with memsim's
#                                      side from gpu-grid/; results to $OUT (or out/gpu-grid)
# report.py turns the results into docs/gpu.md's table.
set -eu
cd "$(dirname "$0")/../.."
name() { echo "$1-N$2-K$3-d$4-h$5-kv$6-b$7-$8-c$9"; }
args() {
	c=""; [ "$9" = 1 ] && c="--causal"
	echo "--kernel $1 --N $2 --N-kv $3 --d $4 --heads $5 --kv-heads $6 --batch $7 --dtype $8 $c"
}
shapes() { grep -v '^#' tools/gpu-grid/shapes.txt | grep -v '^$'; }
case "${1:-}" in
bundle)
	[ -f build-dev/build.ninja ] ||
		meson setup build-dev -Dpapi=disabled -Dcuda=enabled -Dwerror=true
	ninja -C build-dev memsim memsim-gpu
	mkdir -p dev gpu-grid
	cp build-dev/memsim build-dev/memsim-gpu dev/
	cp /usr/lib/x86_64-linux-gnu/libcjson.so.1 dev/
	shapes | while read -r k n nk d h kv b t c; do
		f=gpu-grid/$(name $k $n $nk $d $h $kv $b $t $c).json
		[ -s "$f" ] && continue
		# shellcheck disable=SC2046
		dev/memsim gpucheck $(args $k $n $nk $d $h $kv $b $t $c) --no-gpu --json "$f" \
			>/dev/null || { echo "memsim side failed: $k $n $nk $d $h $kv $b $t $c"; exit 1; }
	done
	echo "memsim sides: $(ls gpu-grid/*.json | wc -l)"
	;;
check)
	export LD_LIBRARY_PATH="$PWD/dev${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	fails=0
	for t in fp32 fp16 bf16; do
		for k in naive flash2; do
			for a in "--N 1 --N-kv 300" "--N 64,100 --N-kv 257 --causal" \
				"--N 257 --causal --kv-heads 2" "--N 16 --N-kv 1000 --batch 2"; do
				# shellcheck disable=SC2086
				dev/memsim-gpu check --kernel $k --dtype $t --heads 4 --d 128 $a ||
					fails=$((fails + 1))
			done
		done
	done
	echo "check: $fails failed"
	;;
run)
	export LD_LIBRARY_PATH="$PWD/dev${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	OUT="${OUT:-out/gpu-grid}"
	mkdir -p "$OUT"
	date -u
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
	ncu --version | tail -1
	shapes | while read -r k n nk d h kv b t c; do
		x=$(name $k $n $nk $d $h $kv $b $t $c)
		# shellcheck disable=SC2046
		dev/memsim gpucheck $(args $k $n $nk $d $h $kv $b $t $c) \
			--memsim-from gpu-grid/$x.json --json "$OUT/$x.json" >"$OUT/$x.txt" 2>&1 ||
			echo "gpucheck $x failed: $(tail -1 "$OUT/$x.txt")"
		grep -E "^total" "$OUT/$x.txt" | sed "s/^/$x: /" || true
	done
	;;
*)
	echo "usage: sh tools/gpu-grid/grid.sh bundle|check|run" >&2
	exit 2
	;;
esac
