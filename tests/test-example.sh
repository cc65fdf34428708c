#!/bin/sh
# The example outside the tree (examples/sliding-window/): installs this build into a temporary
# --destdir, builds the plugin there with its own Makefile and only the installed memsim.pc,
# and runs it through `memsim run` and `memsim sweep`: a hand count on tiny cases, its formula
# byte-equal over a grid of N, W, d, B_r, B_c and fully associative LRU caches, and the DRAM
# counters of `memsim run --kernel flash2 --causal` where W >= N.
#
# test-example.sh BUILD_ROOT SOURCE_ROOT MEMSIM MESON   (TAP on stdout)
build=$1 src=$2 memsim=$3 meson=$4
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
skip_all() { echo "1..0 # SKIP $1"; exit 0; }

for tool in cc make pkg-config python3; do
	command -v "$tool" >/dev/null 2>&1 || skip_all "$tool not found"
done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
dest=$tmp/dest

if ! "$meson" install -C "$build" --destdir "$dest" --no-rebuild --quiet >"$tmp/install.log" 2>&1; then
	not_ok "meson install --destdir" "$(tail -5 "$tmp/install.log")"
	echo "1..$n"; exit 1
fi
pc=$(find "$dest" -name memsim.pc)
# (--define-prefix misreads Debian's lib/<triplet>: the sysroot puts the prefix under $dest)
export PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$dest"
ok "meson install --destdir"
# the sources alone (a build in the source tree would leave nothing for make to do)
mkdir "$tmp/ex" && cp "$src/examples/sliding-window/Makefile" \
	"$src/examples/sliding-window/sliding_window.c" "$tmp/ex/" || exit 1
if make -C "$tmp/ex" CFLAGS="-O2 -Werror" >"$tmp/make.log" 2>&1 &&
	[ -f "$tmp/ex/sliding_window.so" ] && [ -f "$tmp/ex/sliding_window-native.so" ] &&
	grep -q -- "-I$dest" "$tmp/make.log"; then
	ok "make builds sliding_window.so and sliding_window-native.so from the installed memsim.pc"
else
	not_ok "make" "$(tail -10 "$tmp/make.log")"
	echo "1..$n"; exit 1
fi
sw=$tmp/ex/sliding_window.so

# The plugin build line of docs/plugins.md (and docs/library.md: the same line), as written,
# and library.md's program line (`--cflags --libs`) applied to a plugin: both load in the
# installed memsim, whose loader path has no $dest (meson test's LD_LIBRARY_PATH, which names
# the build tree, is unset; memsim loads the libmemsim.so.0 installed beside it for the
# second), and count what the Makefile's build counts.
imemsim=$(find "$dest" -path '*/bin/memsim')
doc_line=$(grep '^cc .* -shared my_kernel\.c \$(pkg-config --cflags memsim) .*-o my_kernel\.so$' \
	"$src/docs/plugins.md")
libs_line=$(grep '^cc -std=c11 count\.c \$(pkg-config --cflags --libs memsim) -o count$' "$src/docs/library.md")
if [ -n "$doc_line" ] && grep -qxF "$doc_line   # a plugin" "$src/docs/library.md" && [ -n "$libs_line" ]; then
	ok "docs/plugins.md and docs/library.md give one plugin build line: $doc_line"
else
	not_ok "one plugin build line" "plugins.md: $doc_line" "library.md's program line: $libs_line"
fi
cp "$src/examples/sliding-window/sliding_window.c" "$tmp/ex/my_kernel.c"
"$memsim" run --kernel "$sw" --N 64 --d 16 --param window=8 --json "$tmp/want.json" >/dev/null 2>&1
for line in "$doc_line" "$(echo "$libs_line" | sed 's/count\.c/-fPIC -shared my_kernel.c/; s/-o count$/-lm -o my_kernel.so/')"; do
	rm -f "$tmp/ex/my_kernel.so" "$tmp/got.json"
	if (cd "$tmp/ex" && eval "$line") >"$tmp/cc.log" 2>&1 &&
		env -u LD_LIBRARY_PATH "$imemsim" run --kernel "$tmp/ex/my_kernel.so" --N 64 --d 16 --param window=8 \
			--json "$tmp/got.json" >"$tmp/out" 2>&1 &&
		python3 -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(any(a[k] != b[k] for k in ("levels", "dram", "arrays", "phases")))' "$tmp/want.json" "$tmp/got.json"; then
		ok "built with '$line', it runs in the installed memsim with the Makefile build's counts"
	else
		not_ok "built with '$line'" "$(cat "$tmp/cc.log" "$tmp/out" | head -5)"
	fi
done
# ... and its memsim_* calls bind to the executable, not to the library loaded for it.
binds=$(LD_DEBUG=bindings env -u LD_LIBRARY_PATH "$imemsim" run --kernel "$tmp/ex/my_kernel.so" \
	--N 8 --d 4 --param window=2 2>&1 >/dev/null | grep 'binding file .*my_kernel\.so .*`memsim_')
if [ -n "$binds" ] && ! echo "$binds" | grep -v 'my_kernel.so .0.: normal symbol `memsim_kernel_plugin_v1' |
	grep -qv "to $imemsim "; then
	ok "linked with --libs: its memsim_* calls bind to the memsim executable"
else
	not_ok "linked with --libs: bindings" "$(echo "$binds" | grep -v "to $imemsim " | head -3)"
fi
# Linked with --libs, in a memsim with no libmemsim.so.0 installed beside it: one line that
# names the cause and the fix, exit 2.
mkdir "$tmp/alone" && cp "$imemsim" "$tmp/alone/memsim" || exit 1
env -u LD_LIBRARY_PATH "$tmp/alone/memsim" run --kernel "$tmp/ex/my_kernel.so" --N 8 >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] &&
	grep -q "my_kernel.so needs libmemsim.so.0 (it was linked with \`pkg-config --libs memsim\`).*build it with \`pkg-config --cflags memsim\` alone" "$tmp/err"; then
	ok "linked with --libs, no library beside memsim: $(cat "$tmp/err")"
else
	not_ok "linked with --libs, no library beside memsim" "rc $rc" "$(cat "$tmp/err")"
fi

# run CACHE ARGS...: memsim run of the plugin into $tmp/run.json.
run() {
	cache=$1; shift
	"$memsim" run --kernel "$sw" --cache "$cache" --json "$tmp/run.json" "$@" >"$tmp/out" 2>&1
}
# arrays: "name read write" for Q, K, V, O, lse of $tmp/run.json, one line.
arrays() {
	python3 -c 'import json, sys
a = json.load(open(sys.argv[1]))["arrays"]
print(" ".join("%s %d %d" % (k, a[k]["read_bytes"], a[k]["write_bytes"]) for k in ("Q", "K", "V", "O", "lse")))' "$tmp/run.json"
}

# Hand count 1: N = 4, d = 2, one block (B_r = B_c = 4), W = 2, 64-byte lines, a cache that
# holds everything. Q, K, V are 32 bytes each: one line each, read once (64). O (32 bytes) is
# stored element by element: its line read for ownership once (64) and written by the final
# flush (64); lse (16 bytes) likewise.
want="Q 64 0 K 64 0 V 64 0 O 64 64 lse 64 64"
if run L1=4K:full:64,tiles=scratch --N 4 --d 2 --Br 4 --Bc 4 --param window=2 &&
	[ "$(arrays)" = "$want" ] && grep -q 'byte-equal' "$tmp/out"; then
	ok "hand count: N=4 d=2 one block W=2 (and its formula byte-equal)"
else
	not_ok "hand count N=4 one block" "want $want" "got  $(arrays 2>&1)" "$(head -3 "$tmp/out")"
fi
# Hand count 2: N = 4, d = 2, B_r = B_c = 2, 16-byte lines (a block of 2 rows of 8 bytes is a
# line: Q0 Q1, K0 K1, V0 V1, O0 O1, and lse one line), a fully associative cache of 4 lines.
# Query block 0: Q0 K0 V0 O0 miss (O0 read for ownership); lse misses (read for ownership) and
# evicts Q0; the second row's O0 and lse hit. LRU: K0 V0 O0 lse.
# W = 1 (query block 1 needs keys 2 and 3 only): Q1 evicts K0, K1 evicts V0, V1 evicts O0
# (dirty: written), O1 evicts lse (dirty: written), lse evicts Q1; the flush writes O1 and lse.
#   Q 32, K 32, V 32, O read 32 write 32, lse read 32 write 32.
# W = 4 (>= N: key block 0 again, as flash2 --causal): Q1 evicts K0, K0 evicts V0, V0 evicts
# O0 (written), K1 evicts lse (written), V1 evicts Q1, O1 evicts K0, lse evicts V0; the flush
# writes O1 and lse. K and V read 48 each, the rest as for W = 1.
for case in "1:Q 32 0 K 32 0 V 32 0 O 32 32 lse 32 32" "4:Q 32 0 K 48 0 V 48 0 O 32 32 lse 32 32"; do
	W=${case%%:*} want=${case#*:}
	if run L1=64B:full:16,tiles=scratch --N 4 --d 2 --Br 2 --Bc 2 --param window=$W &&
		[ "$(arrays)" = "$want" ]; then
		ok "hand count: N=4 d=2 two blocks, 4 lines of 16 bytes, W=$W"
	else
		not_ok "hand count two blocks W=$W" "want $want" "got  $(arrays 2>&1)" "$(head -3 "$tmp/out")"
	fi
done

# The formula over a grid: every row it applies to byte-equal, per array; on the cache that
# holds everything every row compared.
grid="--N 1,7,16,33 --d 2,16 --Br 4,8 --Bc 3,8"
caches="--cache L1=256B:full:64,tiles=scratch --cache L1=2K:full:32,tiles=scratch
	--cache L1=8K:full:16,tiles=scratch --cache L1=64K:full:64,tiles=scratch"
# Larger N, where the formula applies below the all-fits capacity (every reuse distance below
# the cache: reuse_bound()); there some rows must be compared.
big="--N 256,500 --d 16 --Br 16 --Bc 16,24 --heads 2 --kv-heads 1,2 --batch 2"
bigc="--cache L1=8K:full:64,tiles=scratch --cache L1=16K:full:64,tiles=scratch
	--cache L1=32K:full:32,tiles=scratch --cache L1=64K:full:64,tiles=scratch
	--cache L1=192K:full:64,tiles=scratch --cache L1=256K:full:64,tiles=scratch"
for case in 1:small 2:small 5:small 100:small 1:big 20:big; do
	W=${case%%:*} what=${case#*:}
	rm -rf "$tmp/sweep"
	if [ "$what" = small ]; then args="$grid $caches" rows=128; else args="$big $bigc" rows=48; fi
	# shellcheck disable=SC2086
	if ! "$memsim" sweep --out "$tmp/sweep" --kernel "$sw" --param window=$W $args \
		--jobs 2 >"$tmp/out" 2>&1; then
		not_ok "sweep W=$W" "$(tail -3 "$tmp/out")"; continue
	fi
	if python3 - "$tmp/sweep/results.json" "$rows" "$what" >"$tmp/cmp" 2>&1 <<'END'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
compared = bad = below = grouped = 0
for r in rows:
    e = r.get("formulas", {}).get("exact")
    c = r["config"]
    line = int(c["cache"].split(":")[2])
    cap = int(c["cache"].split("=")[1].split("K")[0].split("B")[0]) * (1024 if "K:" in c["cache"] else 1)
    lines = lambda b: (b + line - 1) // line
    q, kv = c["batch"] * c["heads"] * c["N"] * c["d"] * 4, c["batch"] * c["kv_heads"] * c["N"] * c["d"] * 4
    fits = 2 * lines(q) + 2 * lines(kv) + lines(q // c["d"]) <= cap // line
    if e is None:
        if fits:
            bad += 1; print("not compared where everything fits:", c)
        continue
    compared += 1
    below += not fits
    grouped += not fits and c["kv_heads"] < c["heads"]
    for a in e["arrays"]:
        if a["read_bytes"] != a["measured_read_bytes"] or a["write_bytes"] != a["measured_write_bytes"]:
            bad += 1; print("differs:", a["name"], a, r["config"])
    if not e["byte_equal"] or e["scope"] != "exact":
        bad += 1
print("%d rows, %d compared, %d of them below the all-fits capacity, %d with kv heads shared"
      % (len(rows), compared, below, grouped))
sys.exit(bad > 0 or len(rows) != int(sys.argv[2]) or compared == 0 or
         (sys.argv[3] == "big" and (below == 0 or grouped == 0)))
END
	then
		ok "sweep W=$W ($what grid): formula byte-equal per array ($(tail -1 "$tmp/cmp"))"
	else
		not_ok "sweep W=$W: formula" "$(head -5 "$tmp/cmp")"
	fi
done

# W >= N: the DRAM counters of flash2 --causal, in all and per array, on fully associative and
# set-associative caches (tiny to large), with heads sharing a kv head and a batch. Per level,
# the accesses (reads, writes, hits) differ by design: flash2 reports its loops element by
# element (TR_ZIP), the plugin its rows as spans; each touches the same lines in the same
# order, which is what the DRAM counters see.
fgrid="--N 5,16,33 --d 2,16 --Br 4,8 --Bc 3,8 --heads 2 --kv-heads 1 --batch 2"
fcaches="--cache L1=256B:full:64,tiles=scratch --cache L1=2K:full:32,tiles=scratch
	--cache L1=1K:4:64,tiles=scratch --cache L1=64K:8:64,tiles=scratch"
# shellcheck disable=SC2086
if "$memsim" sweep --out "$tmp/sw" --kernel "$sw" --param window=40 $fgrid $fcaches --jobs 2 \
	>"$tmp/out" 2>&1 &&
	"$memsim" sweep --out "$tmp/f2" --kernel flash2 --causal=yes $fgrid $fcaches --jobs 2 \
		>>"$tmp/out" 2>&1 &&
	python3 - "$tmp/sw/results.json" "$tmp/f2/results.json" >"$tmp/cmp" 2>&1 <<'END'
import json, sys
def load(p):
    out = {}
    for l in open(p):
        r = json.loads(l)
        c = r["config"]
        out[tuple(c[k] for k in ("N", "d", "Br", "Bc", "cache"))] = r
    return out
sw, f2 = load(sys.argv[1]), load(sys.argv[2])
bad = 0
if sorted(sw) != sorted(f2) or len(sw) != 3 * 2 * 2 * 2 * 4:
    sys.exit("rows differ: %d and %d" % (len(sw), len(f2)))
for k in sw:
    if sw[k]["dram"] != f2[k]["dram"]:
        bad += 1; print("dram differs", k, sw[k]["dram"], f2[k]["dram"])
    for a in ("Q", "K", "V", "O", "lse"):
        if sw[k]["arrays"][a] != f2[k]["arrays"][a]:
            bad += 1; print("array differs", a, k, sw[k]["arrays"][a], f2[k]["arrays"][a])
print("%d configurations" % len(sw))
sys.exit(bad > 0)
END
then
	ok "W >= N: the DRAM counters of flash2 --causal, in all and per array ($(tail -1 "$tmp/cmp"))"
else
	not_ok "W >= N: flash2's counters" "$(head -5 "$tmp/out" "$tmp/cmp")"
fi

# The native build beside it, through memsim native.
if "$memsim" native --kernel "$sw" --N 64 --d 16 --param window=8 --repeat 2 >"$tmp/out" 2>&1 &&
	grep -q "native plugin sliding-window ($tmp/ex/sliding_window-native.so)" "$tmp/out" &&
	grep -q '^median ' "$tmp/out"; then
	ok "memsim native runs sliding_window-native.so"
else
	not_ok "memsim native" "$(head -5 "$tmp/out")"
fi

# A bad window or dtype: one line naming it, exit 2.
for bad in "window=0:window must be a positive integer" "window=abc:window must be a positive integer" \
	"window=-3:window must be a positive integer" "dtype:takes fp32 only"; do
	arg=${bad%%:*} want=${bad#*:}
	if [ "$arg" = dtype ]; then set -- --dtype fp16; else set -- --param "$arg"; fi
	"$memsim" run --kernel "$sw" --N 8 "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
	if [ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "sliding-window: .*$want" "$tmp/err"; then
		ok "$*: $(cat "$tmp/err")"
	else
		not_ok "$*" "rc $rc" "$(cat "$tmp/err")"
	fi
done
echo "1..$n"
exit $failed
