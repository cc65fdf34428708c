#!/bin/sh
# Usage: tools/sampling-error.sh [MEMSIM] [DIR]
#
# Measures set sampling's error (--sample-sets K, K = 2, 4, ..., 64) against exact runs: one
# exact `memsim sweep --trace-only` over every kernel, footprints from a few lines (N = 4) to
# realistic ones (N = 2048), and seven caches (one to three levels, 4- to 16-way, 64- and
# 128-byte lines, tiles in scratch, Cachegrind's straddling I1/D1/LL, an inclusive L3), then
# the same sweep sampled at each K. For each K it prints the largest relative error of the
# DRAM bytes by the sample's effective number of chunks m (estimate.sample_events.
# dram_effective_chunks, sim/drive/sample.h), how many runs the judgement flags (sample_too_small:
# estimated error over the 10% bound), the largest DRAM-byte and level-miss errors of the runs
# it does not flag, and the largest ratio of error to estimated error. MEMSIM defaults to
# build/memsim, DIR to a new directory; SIZES, DS, CACHES and KS override the lists (a
# quick look: SIZES=4,64,512 KS="8 64").
set -eu

memsim=${1:-build/memsim}
dir=${2:-$(mktemp -d "${TMPDIR:-/tmp}/sampling-error.XXXXXX")}
mkdir -p "$dir"
sizes=${SIZES:-4,16,32,64,128,256,512,1024,2048}
ds=${DS:-8,64}
ks=${KS:-2 4 8 16 32 64}
caches=${CACHES:-"L1=32K:8:64 L1=32K:8:64,L2=256K:8:64 L1=16K:4:64,L2=1M:16:64
L1=64K:8:64,L2=512K:8:128 L1=48K:12:64,L2=2M:16:64,tiles=scratch cachegrind i5-8250u"}

sweep() {
	name=$1
	shift
	cache_args=""
	for c in $caches; do
		cache_args="$cache_args --cache $c"
	done
	# shellcheck disable=SC2086 # the option lists split on purpose
	"$memsim" sweep --out "$dir/$name" --kernel naive,flash1,flash2,proj --N "$sizes" \
		--d "$ds" $cache_args --trace-only "$@" >"$dir/$name.log" 2>&1 || {
		echo "$0: sweep $name failed: $(tail -1 "$dir/$name.log")" >&2
		exit 1
	}
}

[ -f "$dir/exact/results.json" ] || sweep exact
for k in $ks; do
	[ -f "$dir/k$k/results.json" ] || sweep "k$k" --sample-sets "$k"
done

files="$dir/exact/results.json"
for k in $ks; do
	files="$files $dir/k$k/results.json"
done
# shellcheck disable=SC2086
awk -v ks="$ks" '
# The number after "key": in s (the first one), or -1.
function num(s, key,    i, rest) {
	i = index(s, "\"" key "\":")
	if (!i)
		return -1
	rest = substr(s, i + length(key) + 3)
	if (!match(rest, /^-?[0-9][0-9.eE+-]*/))
		return -1
	return substr(rest, 1, RLENGTH) + 0
}
# s from the first "key": on.
function from(s, key,    i) {
	i = index(s, "\"" key "\":")
	return i ? substr(s, i) : ""
}
# The misses of each level of row s into m[1..]; returns the level count.
function misses(s, m,    lv, n, i) {
	lv = from(s, "levels")
	lv = substr(lv, 1, index(lv, "]"))
	n = 0
	while ((i = index(lv, "\"misses\":")) > 0) {
		lv = substr(lv, i)
		m[++n] = num(lv, "misses")
		lv = substr(lv, 10)
	}
	return n
}
function rel(est, full) {
	if (full > 0)
		return (est > full ? est - full : full - est) / full
	return est > 0 ? 1 : 0
}
function bucket(m) {
	if (m <= 0) return 1
	if (m < 16) return 2
	if (m < 64) return 3
	if (m < 256) return 4
	if (m < 1024) return 5
	if (m < 4096) return 6
	return 7
}
FNR == 1 {
	file++
	k = file == 1 ? 1 : kk[file - 1]
}
BEGIN {
	nk = split(ks, kk, " ")
	split("m=0 1-15 16-63 64-255 256-1023 1024-4095 >=4096", head, " ")
}
{
	idx = num($0, "index")
	d = from($0, "dram")
	dram = num(d, "read_bytes") + num(d, "write_bytes")
	nl = misses($0, lm)
	if (k == 1) {
		exact[idx] = dram
		for (l = 1; l <= nl; l++)
			exact_miss[idx, l] = lm[l]
		next
	}
	if (!(idx in exact))
		next
	e = from($0, "estimate")
	m = num(e, "dram_effective_chunks")
	est_err = num(e, "estimated_error")
	flagged = index(e, "\"sample_too_small\":true") > 0
	err = rel(dram, exact[idx])
	lerr = 0
	for (l = 1; l <= nl; l++)
		if (rel(lm[l], exact_miss[idx, l]) > lerr)
			lerr = rel(lm[l], exact_miss[idx, l])
	b = bucket(m)
	runs[k]++
	cnt[k, b]++
	if (err > worst[k, b])
		worst[k, b] = err
	if (flagged) {
		nflag[k]++
		if (err > fworst[k])
			fworst[k] = err
	} else {
		if (err > uworst[k])
			uworst[k] = err
		if (lerr > ulworst[k])
			ulworst[k] = lerr
		if (est_err > 0 && err / est_err > ratio[k])
			ratio[k] = err / est_err
	}
}
END {
	print "max |relative error| of DRAM bytes, by the sample'"'"'s effective chunks m (runs):"
	printf "%4s", "K"
	for (b = 1; b <= 7; b++)
		printf " %16s", head[b]
	printf "\n"
	for (i = 1; i <= nk; i++) {
		k = kk[i]
		printf "%4d", k
		for (b = 1; b <= 7; b++)
			if (cnt[k, b])
				printf " %9.1f%% (%3d)", 100 * worst[k, b], cnt[k, b]
			else
				printf " %16s", "-"
		printf "\n"
	}
	printf "\nthe judgement (sample_too_small: estimated error of DRAM bytes over 10%%):\n"
	printf "%4s %6s %8s %14s %14s %14s %14s\n", "K", "runs", "flagged", "flagged: max",
		"unflagged: max", "level misses", "err/estimate"
	for (i = 1; i <= nk; i++) {
		k = kk[i]
		printf "%4d %6d %8d %13.1f%% %13.2f%% %13.2f%% %14.2f\n", k, runs[k], nflag[k],
			100 * fworst[k], 100 * uworst[k], 100 * ulworst[k], ratio[k]
	}
}' $files
echo "runs in $dir"
