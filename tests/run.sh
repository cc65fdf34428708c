#!/bin/sh
# Runs every test of the build directories given (default build), one directory after the
# other, and closes with one line "N passed, N failed" over all of them: each cmocka case and
# each fuzz harness is a TAP line in meson's log, and a test program that skips its whole plan
# (valgrind tests in a sanitized build) counts as one skipped. Exits non-zero if anything failed.
# The tests run with a TMPDIR of their own: anything they leave in it (each test removes what it
# and the memsim it runs make) fails the run, named.
set -u
[ $# -gt 0 ] || set -- build
suite_tmp=$(mktemp -d "${TMPDIR:-/tmp}/memsim-suite-XXXXXX") || exit 1
trap 'rm -rf "$suite_tmp"' EXIT
trap 'exit 130' INT TERM
TMPDIR=$suite_tmp
export TMPDIR
passed=0
failed=0
skipped=0
fuzz=""
repro=""
for dir in "$@"; do
	log="$dir/meson-logs/testlog.txt"
	# A log left by an earlier run must not stand in for this one.
	rm -f "$log"
	echo "== tests in $dir"
	meson test -C "$dir" --print-errorlogs --num-processes 2
	rc=$?
	p=0
	f=0
	s=0
	if [ -f "$log" ]; then
		s_case=$(grep -cE '^ok [0-9]+.*# (SKIP|skip)' "$log")
		s=$((s_case + $(grep -cE '^1\.\.0 # (SKIP|skip)' "$log")))
		p=$(($(grep -cE '^ok [0-9]+' "$log") - s_case))
		f=$(grep -cE '^not ok [0-9]+' "$log")
		fuzz="$fuzz$(sed -n 's/^# fuzz /  /p' "$log")
"
		repro="$repro$(sed -n 's/^# reproducer: /  /p' "$log")
"
	fi
	# A failure outside any case (a crash, a timeout, a build error) still fails the run.
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	left=$(ls -A "$suite_tmp")
	if [ -n "$left" ]; then
		echo "== $dir: the tests left in their TMPDIR ($suite_tmp):"
		echo "$left" | sed 's/^/  /'
		f=$((f + 1))
		find "$suite_tmp" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
	fi
	echo "== $dir: $p passed, $f failed, $s skipped"
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
done
if [ -n "$(echo "$fuzz" | tr -d ' \n')" ]; then
	echo "fuzzers (inputs tried):"
	printf '%s' "$fuzz" | sed '/^$/d'
fi
if [ -n "$(echo "$repro" | tr -d ' \n')" ]; then
	echo "fuzz failures, replay with the harness and the file:"
	printf '%s' "$repro" | sed '/^$/d'
fi
echo "($skipped skipped)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
