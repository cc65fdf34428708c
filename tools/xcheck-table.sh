#!/bin/sh
# The cross-check table of docs/xcheck.md: memsim xcheck for naive, flash1 and flash2 at N = 256, 512,
# 1024 (d = 64, fp32, the cachegrind geometry), at B_r = B_c = 64 and at B_c = 32, then the
# summary of every report. Usage: sh tools/xcheck-table.sh [OUT_DIR] (default out/xcheck).
set -eu
cd "$(dirname "$0")/.."
out="${1:-out/xcheck}"
memsim=build/memsim
mkdir -p "$out"
for bc in 64 32; do
	for k in naive flash1 flash2; do
		for n in 256 512 1024; do
			f="$out/$k-N$n-Bc$bc.json"
			[ -s "$f" ] && continue # resume: reports already written stay
			echo "xcheck $k N=$n Bc=$bc" >&2
			"$memsim" xcheck --kernel "$k" --N "$n" --Bc "$bc" \
				--with cachegrind,callgrind --json "$f" >"$out/$k-N$n-Bc$bc.txt"
		done
	done
done
"$memsim" table "$out" --xcheck
