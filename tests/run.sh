#!/bin/sh
# Runs every test of the build directories given (default build), one directory after the
# other, and closes with one line "N passed, N failed" over all of them: each cmocka case and
# each fuzz harness is a TAP line in meson's log, and a test program that skips its whole plan
# (valgrind tests in a sanitized build) counts as one skipped. Exits non-zero if anything failed.
# The tests run with a TMPDIR of their own: anything they leave in it (each test removes what it
# and the memsim it runs make) fails the run, named. The tests of suite 'host' then run once
# more in the first directory with the sysfs root (MEMSIM_SYSFS_ROOT) at an empty directory.
set -u
[ $# -gt 0 ] || set -- build
suite_tmp=$(mktemp -d "${TMPDIR:-/tmp}/memsim-suite-XXXXXX") || exit 1
no_sysfs=$(mktemp -d "${TMPDIR:-/tmp}/memsim-no-sysfs-XXXXXX") || exit 1
trap 'rm -rf "$suite_tmp" "$no_sysfs"' EXIT
trap 'exit 130' INT TERM
TMPDIR=$suite_tmp
export TMPDIR
passed=0
failed=0
skipped=0
fuzz=""
repro=""
# One meson test run in $1 (more meson test arguments after it), its cases added to the totals.
run_pass() {
	dir=$1
	shift
	log="$dir/meson-logs/testlog.txt"
	# A log left by an earlier run must not stand in for this one.
	rm -f "$log"
	meson test -C "$dir" --print-errorlogs --num-processes 2 "$@"
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
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
}

for dir in "$@"; do
	echo "== tests in $dir"
	run_pass "$dir"
	echo "== $dir: $p passed, $f failed, $s skipped"
done
# The tests that read this machine's caches, again as on a VM or container without cache
# sysfs: MEMSIM_SYSFS_ROOT at an empty directory (the host preset then asks sysconf()).
echo "== tests in $1 that read this machine's caches, with no cache sysfs"
MEMSIM_SYSFS_ROOT=$no_sysfs
export MEMSIM_SYSFS_ROOT
run_pass "$1" --suite host
unset MEMSIM_SYSFS_ROOT
echo "== $1 without cache sysfs: $p passed, $f failed, $s skipped"
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
