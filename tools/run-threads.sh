#!/bin/sh
# run --threads, run --trace-only --threads and replay --threads of a din trace (#24 items 2-3,
# one producer feeding the slice threads, sim/drive/feed.c): naive and flash2 at N (4 heads)
# through two hierarchies, and the din file of a `bench --shape naive` trace of ACCESSES
# accesses; best of 3 wall and CPU seconds each, and that every report's counters equal one
# thread's. tools/replay-threads.sh measures the binary trace format. Usage: MEMSIM=path
# [THREADS="1 2 4 8 16"] [N=4096] [ACCESSES=50000000] sh tools/run-threads.sh; writes
# $OUT/threads.csv (or out/run-threads). The h100 preset runs at N_H100 (8192) with 4 heads.
set -eu
MEMSIM=${MEMSIM:-build/memsim}
THREADS=${THREADS:-1 2 4 8 16}
N=${N:-4096}
ACCESSES=${ACCESSES:-50000000}
N_H100=${N_H100:-8192}
OUT=${OUT:-out/run-threads}
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# best WHAT T CMD...: the best of 3 wall and CPU seconds of CMD --threads T, a CSV row (the
# cache's commas in WHAT as +)
best() {
	what=$(echo "$1" | tr , +) t=$2
	shift 2
	best_w=999 best_c=999
	for r in 1 2 3; do
		/usr/bin/time -f "%e %U %S" -o "$work/time" "$@" --threads "$t" \
			--json "$work/r$t.json" >/dev/null 2>"$work/err"
		read -r w u s <"$work/time"
		c=$(echo "$u $s" | awk '{print $1 + $2}')
		best_w=$(echo "$w $best_w" | awk '{print ($1 < $2) ? $1 : $2}')
		best_c=$(echo "$c $best_c" | awk '{print ($1 < $2) ? $1 : $2}')
	done
	read -r same used <<E
$(python3 "$(dirname "$0")/same-report.py" "$work/r1.json" "$work/r$t.json")
E
	echo "$what,$t,$used,$best_w,$best_c,$same" >>"$OUT/threads.csv"
}

echo "case,threads,threads_used,best_wall_s,best_cpu_s,counters_equal" >"$OUT/threads.csv"
for cache in L1=32K:8:64,L2=1M:16:64 L1=48K:12:64,L2=2M:16:64,L3=32M:16:64; do
	for kernel in naive flash2; do
		for mode in "" --trace-only; do
			for t in $THREADS; do
				# shellcheck disable=SC2086
				best "run $kernel $mode $cache" "$t" "$MEMSIM" run --kernel "$kernel" \
					--N "$N" --heads 4 --cache "$cache" $mode
			done
		done
	done
done
for kernel in naive flash2; do
	for mode in "" --trace-only; do
		for t in $THREADS; do
			# shellcheck disable=SC2086
			best "run $kernel $mode h100 N=$N_H100" "$t" "$MEMSIM" run --kernel "$kernel" \
				--N "$N_H100" --heads 4 --cache h100 $mode
		done
	done
done
"$MEMSIM" bench --shape naive -n "$ACCESSES" -r 1 --keep --dir "$work" >"$OUT/bench.txt" 2>&1
din=$(find "$work" -name trace.din)
rm -f "$(find "$work" -name trace.mtr)"
for cache in L1=32K:8:64,L2=1M:16:64 L1=32K:8:64,L2=64K:8:64; do
	for t in $THREADS; do
		best "replay din $cache" "$t" "$MEMSIM" replay "$din" --format din --cache "$cache"
	done
done
cat "$OUT/threads.csv"
