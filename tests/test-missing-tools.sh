#!/bin/sh
# The test programs whose cases need gnuplot, chromium or valgrind, run with a PATH that lacks
# them: each case that cannot run is left out of the plan (a "# NAME left out: why" line), a
# plan left empty is TAP's "1..0 # SKIP why" (meson's SKIP), never a "not ok # SKIP" (cmocka's
# skip(), a failure to meson), and the program exits 0.
#
# test-missing-tools.sh TEST_PROGRAM...   (TAP on stdout)
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; shift; for l in "$@"; do echo "$l" | sed "s/^/# /"; done; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
# Every program on PATH but the tools (the first of each name, as PATH finds it).
mkdir "$tmp/bin" || exit 1
IFS=:
for d in $PATH; do
	for f in "$d"/*; do
		name=${f##*/}
		case $name in
		gnuplot | gnuplot-* | valgrind | valgrind.bin | chromium | chromium-browser) continue ;;
		esac
		[ -x "$f" ] && [ ! -d "$f" ] && [ ! -e "$tmp/bin/$name" ] && ln -s "$f" "$tmp/bin/$name"
	done
done
unset IFS
for tool in gnuplot valgrind chromium; do
	if PATH=$tmp/bin command -v "$tool" >/dev/null 2>&1; then
		not_ok "$tool is not on the reduced PATH"
	fi
done

for prog in "$@"; do
	name=${prog##*/}
	PATH=$tmp/bin CMOCKA_MESSAGE_OUTPUT=TAP "$prog" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -ne 0 ]; then
		not_ok "$name exits 0 without the tools" "exit status $rc" "$(tail -5 "$tmp/out")"
	elif grep -q '^not ok' "$tmp/out"; then
		not_ok "$name has no failed case without the tools" "$(grep '^not ok' "$tmp/out")"
	elif grep -q '^1\.\.0 # SKIP ' "$tmp/out"; then
		ok "$name: the whole plan skipped ($(sed -n 's/^1\.\.0 # SKIP //p' "$tmp/out"))"
	elif grep -q '^# .* left out: ' "$tmp/out"; then
		ok "$name: $(grep -c '^# .* left out: ' "$tmp/out") case(s) left out, the rest pass"
	else
		not_ok "$name says what it left out" "$(head -5 "$tmp/out")"
	fi
done
echo "1..$n"
exit $failed
