#!/bin/sh
# Usage: tools/interval-check.sh [MEMSIM] [DIR]
#
# The exact formula on the set-associative presets, across their crossovers: naive
# N = 1000 .. 1500 on i5-8250u (K, V and S against its 6 MiB 12-way L3), naive N = 300 .. 700 on
# cachegrind (1 MiB 16-way), flash2, flash1 and proj on both, naive N = 3000 .. 4200 and flash2
# on h100, simulated with --trace-only (a few minutes). Prints `memsim table --exact` per
# preset: "total within 5%" counts the runs whose bytes are within the claim: inside the bound
# where the scope is interval (h100's flash2), within 5% of the formula elsewhere (estimates:
# i5-8250u and cachegrind have several levels, naive's bound needs more ways than h100's).
set -eu

memsim=${1:-build/memsim}
dir=${2:-$(mktemp -d "${TMPDIR:-/tmp}/interval-check.XXXXXX")}
mkdir -p "$dir"

check() {
	name=$1
	shift
	"$memsim" sweep --out "$dir/$name" --trace-only "$@" >"$dir/$name.log" 2>&1 || {
		echo "$0: sweep $name failed: $(tail -1 "$dir/$name.log")" >&2
		exit 1
	}
	echo "== $name"
	"$memsim" table "$dir/$name" --exact
}

check i5-naive --kernel naive --N 1000:1500:+50 --cache i5-8250u
check i5-naive-fp16 --kernel naive --N 1100,1200,1254,1300 --d 128 --dtype fp16 --cache i5-8250u
check i5-flash --kernel flash2,flash1 --N 2048,4096,8192 --cache i5-8250u
check i5-flash2-big --kernel flash2 --N 12288 --cache i5-8250u
check i5-proj --kernel proj --N 1024,2048,4096 --heads 8 --cache i5-8250u
check cachegrind-naive --kernel naive --N 300:700:+50 --cache cachegrind
check cachegrind-flash2 --kernel flash2 --N 1024,2048,4096 --cache cachegrind
check h100-naive --kernel naive --N 3000,3400,3600,3800,4200 --cache h100
check h100-flash2 --kernel flash2 --N 8192,16384 --heads 4 --d 128 --dtype fp16 --cache h100
echo "results in $dir"
