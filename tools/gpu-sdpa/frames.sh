#!/bin/sh
# The local-memory (stack) frames of PyTorch's FlashAttention kernels, read off the library
# PyTorch ships (cuobjdump -res-usage, sm_90), and each kernel's local stores and loads in its
# SASS (count, and the highest frame offset touched). For the SDPA model's spill footprint:
# frame bytes x 128 threads x 264 resident blocks. Writes to $OUT (or out/sdpa-frames):
#   res.txt   cuobjdump's "Function ... REG: STACK: ..." lines of every flash kernel
#   sass.txt  one line a flash kernel: name, STL count, LDL count, highest offset + width
#   run.log   the library, cuobjdump's version
# `frames.sh sass` instead writes $OUT/sass.tgz: the whole SASS of each kernel named in
# tools/gpu-sdpa/frames-kernels.txt (the forward kernels the 72 SDPA rows run), one file each.
set -eu
OUT="${OUT:-out/sdpa-frames}"
mkdir -p "$OUT"
lib=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
if [ "${1:-}" = sass ]; then
	want="$(cd "$(dirname "$0")" && pwd)/frames-kernels.txt"
	mkdir -p "$OUT/sass"
	timeout 500 cuobjdump -sass -arch sm_90 "$lib/libtorch_cuda.so" | awk -v dir="$OUT/sass" '
		BEGIN { while ((getline l < ARGV[1]) > 0) want[l] = ++n; ARGV[1] = "" }
		/Function : / { f = ($NF in want) ? dir "/kernel-" want[$NF] ".sass" : "" }
		f != "" { print > f }' "$want" -
	(cd "$OUT" && tar czf sass.tgz sass && rm -r sass)
	exit 0
fi
{
	date -u
	python3 -c 'import torch; print("torch", torch.__version__)'
	cuobjdump --version | tail -1
	ls -la "$lib"
} >"$OUT/run.log" 2>&1
: >"$OUT/res.txt"
: >"$OUT/sass.txt"
for f in "$lib"/libtorch_cuda*.so; do
	echo "library $f" >>"$OUT/run.log"
	timeout 300 cuobjdump -res-usage -arch sm_90 "$f" 2>>"$OUT/run.log" |
		grep -A1 -E "Function .*flash" >>"$OUT/res.txt" || true
	# STL/LDL per flash function: [R1+0xOFF] is the frame offset (R1 the stack pointer)
	timeout 400 cuobjdump -sass -arch sm_90 "$f" 2>>"$OUT/run.log" | awk '
		function hex(h,   i, v) {
			v = 0
			for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
			return v
		}
		function flush() { if (fn ~ /flash/) print fn, "STL", stl, "LDL", ldl, "top", top }
		/Function : / { flush(); fn = $NF; stl = 0; ldl = 0; top = 0; next }
		fn !~ /flash/ { next }
		/ STL| LDL/ {
			w = 4
			if ($0 ~ /\.64/) w = 8
			if ($0 ~ /\.128/) w = 16
			if ($0 ~ / STL/) stl++; else ldl++
			off = 0
			if (match($0, /\[R1\+0x[0-9a-f]+\]/)) {
				h = substr($0, RSTART + 6, RLENGTH - 7)
				off = hex(h)
			}
			if (off + w > top) top = off + w
		}
		END { flush() }' >>"$OUT/sass.txt" || echo "sass dump of $f failed or timed out" >>"$OUT/run.log"
done
echo "$(grep -c Function "$OUT/res.txt") flash functions, $(wc -l <"$OUT/sass.txt") in SASS" |
	tee -a "$OUT/run.log"
