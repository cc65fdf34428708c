#!/bin/sh
# Usage: tools/formula-survey.sh [MEMSIM] [DIR]
#
# Held-out check of the exact formulas: every kernel on sizes nobody tuned for (N = 160, 300,
# 777: rows that are not whole lines; d = 24, 40, 64; B_r, B_c in 16 .. 80, unequal), on fully
# associative LRU caches of 16 KiB to 8 MiB with the tiles in scratch, in three shapes (one
# head; causal grouped-query; batch 2, 3 heads, fp16; proj takes grouped-query without causal),
# then decode shapes (N_kv keys; flashdecode's S = 1 and S > 1, packed at N = 1) and tiny and odd sizes (below), simulated with --trace-only. Prints `memsim table --exact`
# per shape: how many runs have every array equal to the byte. MEMSIM defaults to build/memsim, DIR to a new directory.
set -eu

memsim=${1:-build/memsim}
dir=${2:-$(mktemp -d "${TMPDIR:-/tmp}/formula-survey.XXXXXX")}
mkdir -p "$dir"
caches="--cache L1=16K:full:64,tiles=scratch --cache L1=128K:full:64,tiles=scratch"
caches="$caches --cache L1=1M:full:64,tiles=scratch --cache L1=8M:full:64,tiles=scratch"
sizes="--N 160,300,777 --d 24,40,64 --Br 16,48,64 --Bc 16,80"

survey() {
	name=$1
	shift
	# shellcheck disable=SC2086 # the option lists split on purpose
	"$memsim" sweep --out "$dir/$name" $sizes $caches --trace-only "$@" >"$dir/$name.log" 2>&1 || {
		echo "$0: sweep $name failed: $(tail -1 "$dir/$name.log")" >&2
		exit 1
	}
	echo "== $name"
	"$memsim" table "$dir/$name" --exact
}

survey plain --kernel naive,flash1,flash2,proj
survey gqa-causal --kernel naive,flash1,flash2 --heads 2 --kv-heads 1 --causal
survey gqa-proj --kernel proj --heads 2 --kv-heads 1
survey batch-fp16 --kernel naive,flash1,flash2,proj --batch 2 --heads 3 --dtype fp16
# Decode and chunked prefill: N query rows against N_kv keys (naive and flash2 take N_kv), the
# causal mask aligned at the end, multi-query heads.
sizes="--N 1,4,16,100 --N-kv 1000,3000,4097 --d 40,64 --Br 16,64 --Bc 48,64"
survey decode --kernel naive,flash2 --heads 4 --kv-heads 1 --causal=no,yes
# flashdecode: N = 1 with grouped heads runs packed (g = 4, 16 query rows against B_r 16, 64);
# S = 1 on the caches above; S > 1 only on caches that hold every line it touches (its exact
# scope: below that the formula is an estimate), write-allocate and -validate, 32- to 128-byte
# lines.
sizes="--N 1,4,16 --N-kv 1000,3000,4097 --d 40,64 --Br 16,64 --Bc 48,64"
survey flashdecode-s1 --kernel flashdecode --splits 1 --heads 16 --kv-heads 1,4 --causal=no,yes \
	--dtype fp16,bf16
caches="--cache L1=24M:full:64,tiles=scratch --cache L1=24M:full:128:wv,tiles=scratch"
caches="$caches --cache L1=24M:full:32,tiles=scratch"
survey flashdecode-split --kernel flashdecode --splits 3,1000 --heads 16 --kv-heads 1,4 \
	--causal=no,yes --dtype fp16
# S > 1 line by line, on caches from a few key blocks to past the footprint: packed
# grouped-query decode (N = 1), heads = kv_heads (N = 1, 4, 16) and grouped-query heads not
# packed (N = 4, 16: a kv head's K and V re-read by each head), paged and not (batch 3: block
# table lines shared by batches), rows of whole lines, S = 3,
# 7 (with empty splits at N_kv = 1000, B_c = 64: 16 blocks in 3 x 5 + 1 + 0 x 1) and 1000.
caches="--cache L1=16K:full:64,tiles=scratch --cache L1=128K:full:64,tiles=scratch"
caches="$caches --cache L1=1M:full:64,tiles=scratch --cache L1=128K:full:128:wv,tiles=scratch"
caches="$caches --cache L1=256K:full:32,tiles=scratch"
sizes="--N-kv 1000,4097 --d 64 --Br 16,64 --Bc 48,64"
survey flashdecode-split-lru --kernel flashdecode --N 1 --splits 3,7,1000 --heads 16 \
	--kv-heads 1,4 --causal=no,yes --dtype fp16,fp32
survey flashdecode-split-lru-mha --kernel flashdecode --N 1,4,16 --splits 3,7,1000 --heads 4 \
	--kv-heads 4 --batch 2 --causal=no,yes --dtype bf16
survey flashdecode-split-lru-gqa --kernel flashdecode --N 4,16 --splits 3,7,1000 --heads 8 \
	--kv-heads 2 --causal=no,yes --dtype fp16
survey flashdecode-split-lru-paged --kernel flashdecode --N 1,4 --splits 3,7 --heads 8 \
	--kv-heads 2 --batch 3 --kv-page 1,7,16 --dtype fp16
survey flashdecode-split-lru-no-flush --kernel flashdecode --N 1 --splits 7 --heads 16 \
	--kv-heads 4 --no-flush
# S > 1 walked line by line (formula_flashdecode_walk.c): several query blocks a head (N = 40,
# 100 over B_r 8, 64; packed g = 16 over B_r 8) and rows not whole lines (fp16 d = 8, 24, 40:
# rows of 16, 48, 80 bytes, partial rows of 32, 96, 160), causal and not; paged (fp32 d = 16,
# 64: rows of 64 bytes that share 128-byte lines, and 256), batch 2, no final flush.
sizes="--N-kv 300,1000 --d 8,24,40 --Br 8,64 --Bc 48"
survey flashdecode-split-walk --kernel flashdecode --N 1,40,100 --splits 3,7 --heads 16 \
	--kv-heads 1,4 --causal=no,yes --dtype fp16
sizes="--N-kv 300,1000 --d 16,64 --Br 8,64 --Bc 16,48"
survey flashdecode-split-walk-paged --kernel flashdecode --N 40,100 --splits 3,7 --heads 4 \
	--kv-heads 2 --batch 2 --kv-page 7,16 --causal=no,yes --no-flush
caches="--cache L1=16K:full:64,tiles=scratch --cache L1=128K:full:64,tiles=scratch"
caches="$caches --cache L1=1M:full:64,tiles=scratch --cache L1=8M:full:64,tiles=scratch"
# Tiny and odd: single rows, one-element tiles, rows of 1 to 72 elements, 4 KiB caches, 32- and
# 128-byte lines, write-validate, no final flush.
sizes="--N 1,7,33,130,513 --d 1,3,24,72 --Br 1,5,128 --Bc 1,3,64"
caches="--cache L1=4K:full:64,tiles=scratch --cache L1=32K:full:64,tiles=scratch"
caches="$caches --cache L1=256K:full:128:wv,tiles=scratch --cache L1=2M:full:32,tiles=scratch"
survey tiny --kernel naive,flash1,flash2,proj
survey tiny-gqa-causal --kernel naive,flash1,flash2 --heads 4 --kv-heads 2 --causal --dtype bf16
survey tiny-gqa-proj --kernel proj --heads 4 --kv-heads 2 --dtype bf16
survey tiny-no-flush --kernel naive,flash1,flash2,proj --no-flush --batch 2
echo "results in $dir"
