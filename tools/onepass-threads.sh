#!/bin/sh
# sweep --threads on one-pass runs (#24 item 2: the one-pass sweep split by set, each slice
# thread a one-pass model of its sets, sim/drive/feed.c): naive and flash2 at N (4 heads),
# --trace-only, L3 of 1 to 64 MiB in one pass, by the stack pass (LRU) and by fan-out (FIFO);
# best of 2 wall and CPU seconds each, and that every row's counters equal one thread's.
# Usage: MEMSIM=path [THREADS="1 2 4 8 16"] [N=4096] sh tools/onepass-threads.sh; writes
# $OUT/onepass.csv (or out/onepass-threads).
set -eu
MEMSIM=${MEMSIM:-build/memsim}
THREADS=${THREADS:-1 2 4 8 16}
N=${N:-4096}
OUT=${OUT:-out/onepass-threads}
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "case,threads,threads_used,best_wall_s,best_cpu_s,counters_equal" >"$OUT/onepass.csv"
for policy in lru fifo; do
	for kernel in naive flash2; do
		for t in $THREADS; do
			best_w=999 best_c=999
			for r in 1 2; do
				rm -rf "$work/s$t"
				/usr/bin/time -f "%e %U %S" -o "$work/time" "$MEMSIM" sweep \
					--out "$work/s$t" --jobs 1 --threads "$t" --trace-only \
					--kernel "$kernel" --N "$N" --heads 4 \
					--cache "L1=48K:12:64,L2=2M:16:64,L3=32M:16:64:$policy" \
					--cache-sweep L3=1M:64M:x2 >/dev/null 2>"$work/err"
				read -r w u s <"$work/time"
				c=$(echo "$u $s" | awk '{print $1 + $2}')
				best_w=$(echo "$w $best_w" | awk '{print ($1 < $2) ? $1 : $2}')
				best_c=$(echo "$c $best_c" | awk '{print ($1 < $2) ? $1 : $2}')
			done
			method=$(grep -o '"method":"[a-z]*"' "$work/s$t/results.json" | head -1 | cut -d'"' -f4)
			read -r same used <<X
$(python3 "$(dirname "$0")/same-report.py" "$work/s1/results.json" "$work/s$t/results.json")
X
			echo "onepass $method $kernel N=$N,$t,$used,$best_w,$best_c,$same" >>"$OUT/onepass.csv"
		done
	done
done
