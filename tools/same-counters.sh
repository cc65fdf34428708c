#!/bin/sh
# Usage: tools/same-counters.sh BASELINE_BIN NEW_BIN [DIR]
#
# Checks that two memsim binaries count the same: both write JSON reports for a matrix of
# cache hierarchies (every replacement, write, write-miss and inclusion policy, quietwb,
# straddle=once, I1, 1 to 4 levels, hash-indexed levels, 32/64/128-byte lines, the presets) x
# inputs (the three bench trace shapes in memsim's binary format and in din, the Dinero test
# traces, a lackey trace with straddling accesses and instruction fetches, traced kernel runs
# with arrays, phases and scratch tiles) x flush and --no-flush, and the one-pass sweeps (a
# --cache-sweep of L1, L2 or L3: the stack pass over one set count and several, and fan-out),
# and every pair of reports (a sweep's: its results.json rows) must be byte-identical but for
# the timing fields. Exits 0 when all are, 1 otherwise.
#
# DIR (default: a new directory under $TMPDIR or /tmp) keeps the traces and the baseline's
# reports; a rerun with the same DIR and the same baseline binary reuses both, so checking a
# new build after each change only runs the new binary. BENCH is a memsim with the bench command
# that writes the traces [BASELINE_BIN, else memsim-bench beside it]. ACCESSES sets their length
# [3000000], JOBS the parallel runs [the number of CPUs].
set -eu

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: $0 BASELINE_BIN NEW_BIN [DIR]" >&2
	exit 2
fi
abs() {
	case $1 in
	/*) echo "$1" ;;
	*) echo "$(pwd)/$1" ;;
	esac
}
base=$(abs "$1")
new=$(abs "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${3:-$(mktemp -d "${TMPDIR:-/tmp}/same-counters.XXXXXX")}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
accesses=${ACCESSES:-3000000}
# The traces come from `bench`: the baseline's own, or memsim-bench beside it (-Dbench=true).
bench=${BENCH:-$base}
if ! "$bench" help bench >/dev/null 2>&1; then
	bench=$(dirname "$base")/bench/memsim-bench
	[ -x "$bench" ] || {
		echo "$0: $base has no bench command and $bench is missing: build with -Dbench=true or set BENCH" >&2
		exit 2
	}
fi
jobs=${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
for b in "$base" "$new"; do
	[ -x "$b" ] || {
		echo "$0: $b is not an executable" >&2
		exit 2
	}
done

# Hierarchies, one spec a line. The first 17 are 03313eb:docs/speed-notes.md's "Method" set.
specs="L1=32K:8:64,L2=1M:16:64
L1=32K:8:64:fifo,L2=1M:16:64:fifo
L1=32K:8:64:random,L2=1M:16:64:random
L1=32K:8:64:plru,L2=1M:16:64:plru
L1=32K:8:64:wt,L2=1M:16:64
L1=32K:8:64:nwa,L2=1M:16:64
L1=32K:8:64:wv,L2=1M:16:64:wv
L1=32K:8:64,L2=256K:4:64:incl
L1=32K:8:64,L2=256K:8:64:excl
L1=32K:full:64,L2=1M:16:64
L1=32K:1:64,L2=1M:1:64
L1=32K:8:64,L2=256K:4:64,L3=2M:16:64
L1=32K:8:32,L2=1M:16:32
L1=32K:8:128,L2=1M:16:128
L1=32K:8:64,L2=1M:16:64:quietwb
cachegrind
i5-8250u
callgrind
h100
lab
L1=32K:8:64:straddle=once,L2=1M:16:64:straddle=once
I1=32K:8:64,L1=32K:8:64:plru:straddle=once,L2=256K:4:64:incl:straddle=once,L3=2M:16:64:quietwb:straddle=once
L1=16K:4:32,L2=128K:8:64:fifo:incl,L3=1M:16:64:excl,L4=8M:16:128:random:incl
I1=16K:4:64:fifo,L1=32K:8:64:wv:plru,L2=512K:8:64:incl
L1=16K:8:64,L2=256K:full:64
L1=8K:full:64:fifo,L2=256K:128:64:plru,L3=1M:256:64:random
L1=32K:8:64:wt:nwa,L2=256K:8:64:wt,L3=2M:16:64
L1=32K:8:64,L2=1M:16:128:wv
L1=32K:8:64:wv,L2=256K:8:64:excl
L1=16K:full:64:fifo,L2=128K:8:64:excl:random
L1=1K:2:64,L2=4K:4:64:incl"

# ---- inputs, made once per DIR (by the baseline binary) ----
traces=$dir/traces
if [ ! -f "$traces/.done" ]; then
	rm -rf "$traces"
	mkdir -p "$traces"
	for shape in blocked unblocked unblocked-pad0; do
		case $shape in
		blocked) args="--shape blocked" ;;
		unblocked) args="--shape unblocked" ;;
		unblocked-pad0) args="--shape unblocked --pad 0" ;;
		esac
		# shellcheck disable=SC2086
		"$bench" bench -n "$accesses" -r 1 --keep -d "$traces" $args >/dev/null \
			2>"$traces/bench.err"
		kept=$(sed -n 's/^memsim: bench: the trace files are in //p' "$traces/bench.err")
		mv "$kept/trace.mtr" "$traces/$shape.mtr"
		mv "$kept/trace.din" "$traces/$shape.din"
		rmdir "$kept"
	done
	cp "$root"/tests/data/dinero/*.din "$traces/"
	# Lackey: instruction fetches, loads, stores and modifies of 1 to 32 bytes, half of
	# them in a small hot region, many starting near a line's end so they straddle lines.
	awk 'BEGIN {
		x = 12345
		for (i = 0; i < 300000; i++) {
			x = (x * 16807) % 2147483647; r = x
			x = (x * 16807) % 2147483647; s = x
			sz = (r % 6 == 0) ? 1 : (r % 6 == 1) ? 2 : (r % 6 == 2) ? 4 : (r % 6 == 3) ? 8 : (r % 6 == 4) ? 16 : 32
			span = (r % 2) ? 65536 : 4194304
			a = 268435456 + (s % span)
			if (s % 3 == 0)
				a = a - (a % 64) + 64 - (s % 13) - 1
			k = r % 10
			if (k < 2)
				printf "I  %x,%d\n", 4194304 + (s % 32768), (s % 15) + 1
			else if (k < 6)
				printf " L %x,%d\n", a, sz
			else if (k < 9)
				printf " S %x,%d\n", a, sz
			else
				printf " M %x,%d\n", a, sz
		}
	}' >"$traces/straddle.lackey"
	rm -f "$traces/bench.err"
	touch "$traces/.done"
fi

# ---- the cases: "NAME ARGS..." a line ----
cases=$dir/cases
: >"$cases"
i=0
echo "$specs" | while IFS= read -r spec; do
	i=$((i + 1))
	for flush in flush no-flush; do
		# No trailing blank: xargs -L would join the next line to this one.
		fl=""
		[ $flush = no-flush ] && fl=" --no-flush"
		for t in blocked.mtr blocked.din unblocked.mtr unblocked.din unblocked-pad0.mtr \
			unblocked-pad0.din t1_hand.din t2_random.din t3_stream.din t4_mixed.din \
			straddle.lackey; do
			echo "h$i-$t-$flush replay ../traces/$t --cache $spec$fl" >>"$cases"
		done
		for k in naive flash1 flash2 proj; do
			# proj has no causal mask: memsim refuses --causal for it
			causal=" --causal"
			[ $k = proj ] && causal=""
			echo "h$i-run-$k-$flush run --kernel $k --N 300 --d 40 --Br 48 --Bc 80 --heads 2 --kv-heads 1$causal --cache $spec$fl" >>"$cases"
		done
	done
done
# One-pass sweeps, a spec and its --cache-sweep a line: the stack pass (several set counts, one
# set count, direct mapped, 64 ways, a swept L1, an L3 below two levels, L1 lines of 32 B
# above) and fan-out (plru; a FIFO L3 below the swept L2).
sweeps="L1=32K:8:64,L2=1M:8:64 L2=64K:16M:x2
L1=32K:8:64,L2=1M:full:64 L2=64K:16M:x2
L1=4K:4:64,L2=64K:1:64 L2=8K:4M:x2
L1=2K:4:64,L2=64K:64:64 L2=8K:8M:x2
L1=8K:4:64 L1=1K:1M:x2
L1=4K:2:64,L2=32K:4:64,L3=256K:16:64 L3=64K:8M:x2
L1=4K:4:32,L2=64K:16:64 L2=16K:4M:x2
L1=32K:8:64,L2=1M:8:64:plru L2=64K:16M:x2
L1=4K:4:64,L2=32K:8:64,L3=1M:16:64:fifo L2=16K:1M:x2"
j=0
echo "$sweeps" | while read -r spec sweep; do
	j=$((j + 1))
	for flush in flush no-flush; do
		fl=""
		[ $flush = no-flush ] && fl=" --no-flush"
		for k in naive flash2; do
			echo "s$j-$k-$flush sweep --jobs 1 --kernel $k --N 300 --d 40 --Br 48 --Bc 80 --heads 2 --kv-heads 1 --causal --trace-only --cache $spec --cache-sweep $sweep$fl" >>"$cases"
		done
	done
done

# Runs every case with binary $1 into directory $2; each case leaves NAME.json and NAME.rc.
run_all() {
	mkdir -p "$2"
	# shellcheck disable=SC2016 # the inner script expands its own arguments
	(cd "$2" && xargs -L 1 -P "$jobs" sh -c '
		bin=$1 name=$2
		shift 2
		if [ "$1" = sweep ]; then
			# results.json holds a row a line: without its timing fields, rows compare
			# as lines.
			"$bin" "$@" --out "$name.d" >/dev/null 2>"$name.err"
			rc=$?
			sed -E "s/\"(traced_seconds|peak_rss_bytes)\":[^,}]*,?//g" \
				"$name.d/results.json" >"$name.json" 2>>"$name.err" || rc=1
			rm -rf "$name.d"
			echo $rc >"$name.rc"
		else
			"$bin" "$@" --json "$name.json" >/dev/null 2>"$name.err"
			echo $? >"$name.rc"
		fi' sh "$1" <"$cases")
}

stamp="$(cksum <"$base") $(cksum <"$cases")"
if [ ! -f "$dir/base/.stamp" ] || [ "$(cat "$dir/base/.stamp")" != "$stamp" ]; then
	rm -rf "$dir/base"
	run_all "$base" "$dir/base"
	echo "$stamp" >"$dir/base/.stamp"
fi
rm -rf "$dir/new"
run_all "$new" "$dir/new"

# ---- compare ----
volatile='^[[:space:]]*"(seconds|traced_seconds|peak_rss_bytes|model_revision)":'
total=0
same=0
bad=""
while read -r name _; do
	total=$((total + 1))
	a=$dir/base/$name
	b=$dir/new/$name
	if [ "$(cat "$a.rc")" != 0 ]; then
		bad="$bad $name(baseline-failed)"
	elif [ "$(cat "$b.rc")" != 0 ]; then
		bad="$bad $name(new-failed)"
	elif grep -vE "$volatile" "$a.json" >"$a.filtered" &&
		grep -vE "$volatile" "$b.json" >"$b.filtered" &&
		cmp -s "$a.filtered" "$b.filtered"; then
		same=$((same + 1))
	else
		bad="$bad $name"
	fi
done <"$cases"
echo "same-counters: $same of $total reports identical ($(echo "$specs" | wc -l) hierarchies, $(echo "$sweeps" | wc -l) sweeps; reports in $dir)"
if [ -n "$bad" ]; then
	echo "differ:$bad" | tr ' ' '\n' | head -40
	exit 1
fi
