#!/bin/sh
# Runs every test of the build directory given (default build) and closes with the line
# "N passed, N failed" that counts test cases: each cmocka case is a TAP line in the log.
set -u
dir="${1:-build}"
meson test -C "$dir" --print-errorlogs --num-processes 2
rc=$?
log="$dir/meson-logs/testlog.txt"
passed=0
failed=0
skipped=0
if [ -f "$log" ]; then
	skipped=$(grep -cE '^ok [0-9]+.*# (SKIP|skip)' "$log")
	passed=$(( $(grep -cE '^ok [0-9]+' "$log") - skipped ))
	failed=$(grep -cE '^not ok [0-9]+' "$log")
fi
# A failure outside any case (a crash, a timeout, a build error) still fails the run.
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
	failed=1
fi
echo "($skipped skipped)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
