#!/bin/sh
# replay --threads on a machine with many cores (#24 item 2): a naive-attention trace made by
# `memsim bench --shape naive` (a quarter of its accesses miss L1), replayed through three
# hierarchies with 1, 2, 4, 8 and 16 threads; best of 3 wall and CPU seconds each, and that
# every report's counters equal one thread's. Usage: MEMSIM=path sh tools/replay-threads.sh
# [ACCESSES]; writes $OUT/threads.csv (or out/replay-threads). tools/run-threads.sh measures run,
# run --trace-only and din replays (one reader feeding the threads) the same way.
set -eu
MEMSIM=${MEMSIM:-build/memsim}
N=${1:-200000000}
OUT=${OUT:-out/replay-threads}
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$MEMSIM" bench --shape naive -n "$N" -r 1 --keep --dir "$work" >"$OUT/bench.txt" 2>&1
trace=$(find "$work" -name trace.mtr)
echo "cache,threads,threads_used,best_wall_s,best_cpu_s,counters_equal" >"$OUT/threads.csv"
for cache in L1=32K:8:64,L2=1M:16:64 L1=32K:8:64,L2=64K:8:64 \
	L1=48K:12:64,L2=2M:16:64,L3=32M:16:64; do
	for t in 1 2 4 8 16; do
		best_w=999 best_c=999
		for r in 1 2 3; do
			/usr/bin/time -f "%e %U %S" -o "$work/time" "$MEMSIM" replay "$trace" \
				--cache "$cache" --threads "$t" --json "$work/r$t.json" >/dev/null 2>"$work/err"
			read -r w u s <"$work/time"
			c=$(echo "$u $s" | awk '{print $1 + $2}')
			best_w=$(echo "$w $best_w" | awk '{print ($1 < $2) ? $1 : $2}')
			best_c=$(echo "$c $best_c" | awk '{print ($1 < $2) ? $1 : $2}')
		done
		read -r same used <<E
$(python3 "$(dirname "$0")/same-report.py" "$work/r1.json" "$work/r$t.json")
E
		echo "$cache,$t,$used,$best_w,$best_c,$same" >>"$OUT/threads.csv"
	done
done
cat "$OUT/threads.csv"
