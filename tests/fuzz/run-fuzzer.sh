#!/bin/sh
# Runs one libFuzzer harness over its seeds for a bounded time, as one TAP test.
#   run-fuzzer.sh HARNESS NAME SEEDS DICT WORKDIR
# MEMSIM_FUZZ_SECONDS sets the time [10]. The corpus starts from the seeds every run (WORKDIR
# holds this run's corpus and log), so a run tries the same kind of inputs each time. A crash,
# leak, timeout or broken check fails the test and names the reproducer; `HARNESS FILE` replays it.
set -u
harness=$1 name=$2 seeds=$3 dict=$4 work=$5
# meson passes the harness relative to the build directory; the replay hint needs it whole.
harness="$(cd "$(dirname "$harness")" && pwd)/$(basename "$harness")"
secs=${MEMSIM_FUZZ_SECONDS:-10}

rm -rf "$work/corpus"
mkdir -p "$work/corpus" "$work/artifacts"
log="$work/fuzz.log"
echo "1..1"
start=$(date +%s)
# -max_len: at most half the harnesses' 16 KiB input buffer, so that the readers read as they
# do with their full 1 MiB buffer (traces/input.c); the 512 KiB line limit is a unit test's.
# -timeout is generous: an input the model is known to be slow on is filtered by the harness.
"$harness" -max_total_time="$secs" -timeout=30 -max_len=8192 -rss_limit_mb=2048 \
	-print_final_stats=1 -dict="$dict" -artifact_prefix="$work/artifacts/" \
	"$work/corpus" "$seeds" >"$log" 2>&1
rc=$?
wall=$(($(date +%s) - start))
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
corpus=$(ls "$work/corpus" | wc -l)
# run.sh collects these lines from the test log for its summary.
echo "# fuzz $name: ${runs:-?} inputs in $wall s, corpus $corpus files"
if [ "$rc" -eq 0 ]; then
	echo "ok 1 - $name: ${runs:-?} inputs in $wall s"
	exit 0
fi
repro=$(sed -n 's/.*Test unit written to //p' "$log" | tail -n 1)
tail -n 60 "$log" | sed 's/^/# /'
echo "# reproducer: ${repro:-none written} (replay: $harness ${repro:-FILE})"
echo "not ok 1 - $name: failed (exit $rc) after ${runs:-?} inputs; reproducer ${repro:-none}"
exit 1
