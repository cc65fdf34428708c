#!/bin/sh
# A replay demo (./setup.sh main ran this before the study existed). memsim replays a Dinero IV trace, then a
# real program's accesses streamed from valgrind lackey, and Cachegrind runs the same program
# with the same geometry for comparison. Outputs land in out/demo/.
set -eu
cd "$(dirname "$0")/.."
memsim=build/memsim
prog=build/tests/xcheck-prog
out=out/demo
mkdir -p "$out"

echo "== memsim presets"
$memsim presets

echo "== a din trace (tests/data/dinero/t4_mixed.din) through the i5-8250u preset"
$memsim replay tests/data/dinero/t4_mixed.din --cache i5-8250u --json "$out/din-i5-8250u.json"

echo
echo "== $prog recorded by valgrind lackey, streamed into memsim, cachegrind preset"
valgrind --tool=lackey --trace-mem=yes --log-fd=3 "$prog" 3>&1 >/dev/null 2>&1 |
	$memsim replay - --format lackey --cache cachegrind --json "$out/lackey-cachegrind.json"

echo
echo "== the same program under Cachegrind, same geometry (compare D1 and LL data misses)"
valgrind --tool=cachegrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 \
	--LL=1048576,16,64 --cachegrind-out-file="$out/cachegrind.out" "$prog" 2>&1 >/dev/null |
	grep -E "D1  misses|LLd misses|I1  misses"
echo
echo "memsim: L1 misses = read_miss + write_miss of L1 above; LL data misses = L2 read_miss"
echo "minus its instruction-fetch misses ($out/lackey-cachegrind.json, levels[1])."
echo "JSON reports are in $out/."
