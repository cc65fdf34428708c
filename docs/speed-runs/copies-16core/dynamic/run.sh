#!/bin/sh
# The dynamic feed (more slices than threads, taken by whichever thread is free) on the 16-core
# host. Usage from the repo root on the device, dev/ carried (dev/memsim, dev/memsim-old and
# their libraries):
#   sh run.sh times OUTDIR [ROUNDS]  8 threads, the binary before (old) and the new one at 1,
#       2, 4 and 8 slices a thread, interleaved rounds: each run's wall seconds, the DRAM total
#       and MEMSIM_FEED_TIMES's line; then one thread of each kernel
#   sh run.sh bench OUTDIR F...      memsim bench --threads 2,4,8 at F slices a thread each
# N (default 16384) is the sequence length; --heads 16 --cache h100 --trace-only. FACTORS
# (default "1 2 4 8") the new binary's slices a thread in `times`, OLD_F (1) the old one's.
set -u
what=$1
out=$2
shift 2
export LD_LIBRARY_PATH=$PWD/dev
N=${N:-16384}
args="--N $N --heads 16 --cache h100 --trace-only"
nproc >"$out/host.txt"
grep -m1 "model name" /proc/cpuinfo >>"$out/host.txt"
one() { # LABEL BIN SLICES-A-THREAD KERNEL THREADS
	s=$(date +%s.%N)
	MEMSIM_FEED_TIMES=1 MEMSIM_FEED_SLICES_A_THREAD=$3 "$2" run --kernel "$4" $args \
		--threads "$5" --json /tmp/r.json 2>/tmp/err >/dev/null
	e=$(date +%s.%N)
	dram=$(tr -d ' \n\t' </tmp/r.json | grep -o '"dram":{[^}]*' | grep -o '"total_bytes":[0-9]*')
	printf "%s %s T%s %s %s | %s\n" "$4" "$1" "$5" "$(awk "BEGIN { print $e - $s }")" "$dram" \
		"$(grep 'feed of' /tmp/err)" >>"$out/times-N$N.txt"
}
if [ "$what" = times ]; then
	for r in $(seq "${1:-2}"); do
		for k in naive flash2; do
			one old dev/memsim-old "${OLD_F:-1}" $k 8
			for f in ${FACTORS:-1 2 4 8}; do one "new-${f}x" dev/memsim $f $k 8; done
		done
	done
	for k in naive flash2; do one one dev/memsim 1 $k 1; done
	exit 0
fi
for f in "$@"; do
	MEMSIM_FEED_SLICES_A_THREAD=$f dev/memsim bench --threads 2,4,8 $args \
		--json "$out/bench-N$N-${f}x.json" >"$out/bench-N$N-${f}x.txt" 2>&1
done
