#!/bin/sh
# The GPU-free parts of the L2 microbenchmarks: `memsim-gpu l2probe`'s refusals (exit 2, one
# line), every case of tools/gpu-l2/probe.sh's grid accepted by memsim-gpu's parser, and
# tools/gpu-l2/probe_parse.py on the hand-written run of tests/data/l2probe/ (expected rows
# worked out by hand in probe.csv) and on broken ones.
#
# test-l2probe.sh SOURCE_ROOT PYTHON MEMSIM_GPU|none   (TAP on stdout; none: no CUDA build)
src=$1 py=$2 gpu=$3
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

# refuse_gpu ARGS EXPECTED: memsim-gpu ARGS exits 2, nothing on stdout, one line on stderr
# containing EXPECTED; refuse ARGS EXPECTED: the same for `memsim-gpu l2probe ARGS`
refuse_gpu() {
	# shellcheck disable=SC2086
	"$gpu" $1 >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" = 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" = 1 ] &&
		grep -qF -- "$2" "$tmp/err"; then
		ok "$1: exit 2, $2"
	else
		not_ok "$1" "exit $rc" "$(cat "$tmp/out" "$tmp/err")"
	fi
}
refuse() { refuse_gpu "l2probe $1" "$2"; }

if [ "$gpu" != none ]; then
	refuse "--kind bogus" "--kind: 'bogus' is not rewrite, tiles or crossread"
	refuse "--tile 32" "l2probe: --kind is needed"
	refuse "--kind rewrite --total 8" "--total: not an option of --kind rewrite"
	refuse "--kind rewrite --same-half" "--same-half: not an option of --kind rewrite"
	refuse "--kind tiles --region 4" "--region: not an option of --kind tiles"
	refuse "--kind crossread --stream 1" "--stream: not an option of --kind crossread"
	refuse "--kind tiles --out-tile 4" "--out-tile: not an option of --kind tiles"
	refuse "--kind rewrite --out-tile 2048" "--out-tile: a multiple of 0.5 KiB up to 1 MiB"
	refuse "--kind rewrite --tile 6" "--tile: a multiple of 4 KiB from 4 KiB to 4 MiB"
	refuse "--kind rewrite --tile 8192" "--tile: a multiple of 4 KiB from 4 KiB to 4 MiB"
	refuse "--kind rewrite --steps 0" "--steps: '0' is not a whole number from 1 to 2^30"
	refuse "--kind rewrite --steps 100001" "--steps: 1 to 100000"
	refuse "--kind rewrite --region -1" "--region: '-1' is not a whole number from 0 to 2^30"
	refuse "--kind rewrite --region 5000" "--region: a multiple of 0.5 KiB up to 4 MiB"
	refuse "--kind tiles --total 1 --tile 3072" "--total: a multiple of the tile up to 16 GiB"
	refuse "--kind tiles --total 8 --stream 12" "--stream: 0 or 1 to 16 times --total"
	refuse "--kind tiles --total 8 --stream 136" "--stream: 0 or 1 to 16 times --total"
	refuse "--kind crossread --buffer 0" "--buffer: '0' is not a whole number from 1 to 2^30"
	refuse "--kind crossread --buffer 40 --tile 3072" "--buffer: a multiple of the tile"
	refuse "--kind crossread --lag 0" "--lag: '0' is not a whole number from 1 to 2^30"
	refuse "--kind crossread --lag x" "--lag: 'x' is not a whole number from 1 to 2^30"
	refuse "--kind rewrite --local --region 3" "--local: --region 1, 2, 4, 8, 16, 32, 64 or 128 (KiB)"
	refuse "--kind rewrite --local --region 0" "--local: --region 1, 2, 4, 8, 16, 32, 64 or 128 (KiB)"
	refuse "--kind tiles --local" "--local: not an option of --kind tiles"
	refuse "--kind rewrite --nope 1" "unknown option '--nope'"
	refuse "--kind rewrite --steps" "option '--steps' needs a value"
	refuse "--kind rewrite extra" "l2probe: unexpected argument"
	refuse "--kind rewrite --steps 2000000000" "--steps: '2000000000' is not a whole number from 1 to 2^30"

	# memsim-gpu's other commands, on the same option layer: refused before any GPU is asked
	for c in "run --N 0|--N: '0' is not a list of up to 32 positive numbers" \
		"check --kernel x|--kernel: 'x' is not naive or flash2" \
		"time --dtype fp8|--dtype: 'fp8' is not fp32, fp16 or bf16" \
		"run --reps 0|--reps: '0' is not a whole number from 1 to 10000" \
		"run --heads 0|--heads: '0' is not a positive whole number" \
		"run extra|unexpected argument" \
		"idle --ms -1|--ms: '-1' is not a positive number of milliseconds" \
		"idle|idle takes --ms T"; do
		refuse_gpu "${c%%|*}" "${c#*|}"
	done

	# the grid: through a stand-in that runs memsim-gpu and records its exit status (2 would
	# be a case the parser refuses; here, without a GPU, the others fail with 1 or run)
	cat >"$tmp/stand-in" <<EOF
#!/bin/sh
"$gpu" "\$@" >/dev/null 2>"$tmp/last.err"
echo "\$? \$*" >>"$tmp/grid"
EOF
	chmod +x "$tmp/stand-in"
	MEMSIM_GPU="$tmp/stand-in" sh "$src/tools/gpu-l2/probe.sh" cases >/dev/null 2>&1
	cases=$(wc -l <"$tmp/grid")
	bad=$(grep -c '^2 ' "$tmp/grid")
	kinds=$(cut -d' ' -f4 "$tmp/grid" | sort -u | tr '\n' ' ')
	if [ "$cases" = 86 ] && [ "$bad" = 0 ] && [ "$kinds" = "crossread rewrite tiles " ]; then
		ok "probe.sh's grid: 86 cases of the three kinds, none refused"
	else
		not_ok "probe.sh's grid" "$cases cases, $bad refused, kinds $kinds" \
			"$(grep '^2 ' "$tmp/grid" | head -3)"
	fi
fi

# probe_parse.py on the hand-written run
d=$src/tests/data/l2probe
if "$py" "$src/tools/gpu-l2/probe_parse.py" "$d" >"$tmp/got.csv" 2>"$tmp/err" &&
	cmp -s "$tmp/got.csv" "$d/probe.csv" &&
	grep -qF "1 kernels of failed cases left out" "$tmp/err"; then
	ok "probe_parse.py: the four cases as worked out by hand, the failed one's kernel left out"
else
	not_ok "probe_parse.py on tests/data/l2probe" "$(diff "$tmp/got.csv" "$d/probe.csv")" \
		"$(cat "$tmp/err")"
fi

# broken runs: parse DIR EXPECTED (exit 1, one line containing EXPECTED)
broken() {
	"$py" "$src/tools/gpu-l2/probe_parse.py" "$tmp/b" >/dev/null 2>"$tmp/err"
	rc=$?
	if [ "$rc" = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -qF -- "$2" "$tmp/err"; then
		ok "probe_parse.py, $1: exit 1, $2"
	else
		not_ok "probe_parse.py, $1" "exit $rc" "$(cat "$tmp/err")"
	fi
	rm -rf "$tmp/b"
}
mkdir "$tmp/b" && sed 's/pid=104/pid=105/' "$d/run.log" >"$tmp/b/run.log" && cp "$d/ncu.csv" "$tmp/b/"
broken "a case without its kernel" "1 cases without a kernel in ncu.csv (processes 105)"
mkdir "$tmp/b" && cp "$d/run.log" "$tmp/b/" && sed 's/"(132, 1, 1)","0","9.0","52,428,800","1,048,576","50,000","132"/"(132, 1, 1)","0","9.0","52,428,800","1,048,576","50,000","66"/' "$d/ncu.csv" >"$tmp/b/ncu.csv"
broken "a grid unlike the case's" "process 104: 132 blocks but a grid of 66"
mkdir "$tmp/b" && cp "$d/run.log" "$tmp/b/" && sed 's/"probe_crossread"/"probe_tiles"/' "$d/ncu.csv" >"$tmp/b/ncu.csv"
broken "a kernel of another kind" "process 104: case crossread but kernel probe_tiles"
mkdir "$tmp/b" && sed 's/local=1/local=0/' "$d/run.log" >"$tmp/b/run.log" && cp "$d/ncu.csv" "$tmp/b/"
broken "a local case run as global" "process 106: case rewrite but kernel probe_rewrite_local<16>"
mkdir "$tmp/b" && cp "$d/run.log" "$tmp/b/" && sed 's/"dram__bytes_write.sum",//' "$d/ncu.csv" >"$tmp/b/ncu.csv"
broken "a metric not collected" "no column dram__bytes_write.sum"
mkdir "$tmp/b" && grep -v '^l2probe kind' "$d/run.log" >"$tmp/b/run.log" && cp "$d/ncu.csv" "$tmp/b/"
broken "no case lines" "no case lines"
mkdir "$tmp/b" && cp "$d/run.log" "$tmp/b/"
broken "no ncu.csv" "ncu.csv: no such file"

echo "1..$n"
exit $failed
