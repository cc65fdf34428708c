#!/bin/sh
# The installed library (docs/library.md): installs this build into a temporary --destdir, builds
# examples/library/count.c (C11) and tests/library-cxx.cpp (C++17) with only
# `pkg-config --cflags --libs memsim`, runs them against the installed libmemsim.so and checks
# their counts against a hand count, memsim's own messages and `memsim replay`'s report.
#
# The Python package is checked too: installed beside the library with a _config.py naming the
# installed library and executable, and importable from there.
#
# test-library.sh BUILD_ROOT SOURCE_ROOT MEMSIM MESON SANITIZE PYTHON   (TAP on stdout; PYTHON
# "none" where the build has no Python package)
build=$1 src=$2 memsim=$3 meson=$4 sanitize=$5 python=${6:-none}
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
skip_all() { echo "1..0 # SKIP $1"; exit 0; }

for tool in cc c++ pkg-config nm readelf python3; do
	command -v "$tool" >/dev/null 2>&1 || skip_all "$tool not found"
done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
dest=$tmp/dest
# A sanitized build's library needs the sanitizers' runtime in the program that loads it.
extra=
[ "$sanitize" != none ] && extra="-fsanitize=$sanitize"

if ! "$meson" install -C "$build" --destdir "$dest" --no-rebuild --quiet >"$tmp/install.log" 2>&1; then
	not_ok "meson install --destdir" "$(tail -5 "$tmp/install.log")"
	echo "1..$n"; exit 1
fi
ok "meson install --destdir"
pc=$(find "$dest" -name memsim.pc)
lib=$(find "$dest" -name 'libmemsim.so.0.*' -type f)
libdir=$(dirname "$lib")
export PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$dest"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
flags=$(pkg-config --cflags --libs memsim) || { not_ok "pkg-config memsim"; echo "1..$n"; exit 1; }
ok "pkg-config --cflags --libs memsim: $flags"
# cJSON and PAPI are the library's own: memsim.pc is read without their .pc files (a search
# path of memsim.pc's directory alone), and names them only for a static link.
mkdir "$tmp/no-pc"
if alone=$(PKG_CONFIG_LIBDIR=$tmp/no-pc pkg-config --cflags --libs memsim 2>&1) &&
	static=$(PKG_CONFIG_LIBDIR=$tmp/no-pc pkg-config --static --libs memsim 2>&1) &&
	case " $static " in *" -lcjson "*) true ;; *) false ;; esac; then
	ok "memsim.pc needs no other .pc file: $alone; --static: $static"
else
	not_ok "memsim.pc without libcjson.pc and papi.pc" "$alone" "$static"
fi

# The soname's major, the symlinks, the static library beside them.
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" = libmemsim.so.0 ] && [ "$(readlink "$libdir/libmemsim.so.0")" = "$(basename "$lib")" ] &&
	[ -e "$libdir/libmemsim.so" ] && [ -f "$libdir/libmemsim.a" ]; then
	ok "libmemsim.so.0 -> $(basename "$lib"), libmemsim.a"
else
	not_ok "soname and links" "soname '$soname'" "$(ls -l "$libdir")"
fi
# Only memsim_* is exported: 0.2's functions under the version script's node MEMSIM_0.2, those
# 0.3 added under MEMSIM_0.3.
others=$(nm -D --defined-only "$lib" | awk '{ print $3 }' | sed 's/@.*//' | grep -v '^memsim_' |
	grep -v '^MEMSIM_0\.[23]$')
v03=
for f in memsim_access_batch memsim_preset_count memsim_preset_name memsim_preset_description; do
	nm -D --defined-only "$lib" | grep -q " $f@@MEMSIM_0.3\$" || v03="$v03 $f"
done
if [ -z "$others" ] && [ -z "$v03" ] && nm -D --defined-only "$lib" | grep -q ' memsim_report_json@@MEMSIM_0.2$'; then
	ok "exports only memsim_* (versions MEMSIM_0.2, and MEMSIM_0.3 for the batch and presets)"
else
	not_ok "exports only memsim_*" "others: $(echo $others | cut -c1-300)" "not in MEMSIM_0.3:$v03"
fi
# The memsim command exports the same memsim_* functions to the plugins it loads, and only them.
lib_syms=$(nm -D --defined-only "$lib" | awk '{ print $3 }' | sed 's/@.*//' | grep '^memsim_' | sort)
exe_syms=$(nm -D --defined-only "$memsim" | awk '{ print $3 }' | grep '^memsim_' | sort)
# (glibc's variables the program copies, stdout and optind, are defined there as well, and a
# sanitized build's runtime names, which start with __: the implementation's own)
exe_others=$(nm -D --defined-only "$memsim" | awk '{ print $3 }' | grep -v '^memsim_' | grep -v '@GLIBC_' |
	grep -v '^__')
if [ "$lib_syms" = "$exe_syms" ] && [ -z "$exe_others" ]; then
	ok "memsim exports the library's memsim_* functions to plugins, and nothing else"
else
	not_ok "memsim's exports for plugins" "library: $(echo $lib_syms | cut -c1-300)" \
		"memsim: $(echo $exe_syms $exe_others | cut -c1-300)"
fi
# Only the public headers, under include/memsim/.
headers=$(cd "$dest" && find . -name '*.h' | sort | sed 's|.*/include/||' | tr '\n' ' ')
if [ "$headers" = "memsim/hierarchy.h memsim/memsim.h memsim/plugin.h memsim/trace.h " ]; then
	ok "installs the public headers only"
else
	not_ok "installs the public headers only" "found: $headers"
fi
# bench/ (memsim-bench, bench-replay) measures the source tree: nothing of it is installed, and
# the installed memsim has no bench command.
found=$(find "$dest" -name 'bench-replay*' -o -name 'memsim-bench*')
if [ -z "$found" ] && [ -n "$(find "$dest" -path '*/bin/memsim')" ] &&
	! "$(find "$dest" -path '*/bin/memsim' | head -1)" help 2>&1 | grep -q '^  *bench '; then
	ok "installs nothing of bench/"
else
	not_ok "installs nothing of bench/" "found: $found"
fi
# The Python package: every module, and a _config.py naming the installed files (under the
# prefix, not the destdir); imported from the destdir with those files given by hand, it runs.
if [ "$python" != none ]; then
	pkg=$(find "$dest" -type d -name memsim -path '*-packages/memsim')
	conf=$pkg/_config.py
	if [ -n "$pkg" ] && [ -f "$pkg/__init__.py" ] && [ -f "$pkg/cache.py" ] && [ -f "$pkg/py.typed" ] &&
		grep -q "^LIBRARY = \"$("$meson" introspect "$build" --buildoptions |
			"$python" -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')/" "$conf" &&
		grep -q '^EXECUTABLE = ".*/bin/memsim"$' "$conf"; then
		ok "installs the Python package into ${pkg#$dest} with the installed paths"
	else
		not_ok "installs the Python package" "package: '$pkg'" "$(cat "$conf" 2>/dev/null)"
	fi
	if [ "$sanitize" = none ]; then
		got=$(PYTHONPATH=$(dirname "$pkg") MEMSIM_LIB=$lib MEMSIM_BIN=$(find "$dest" -path '*/bin/memsim') \
			"$python" -c 'import memsim; c = memsim.Cache("L1=128:2:64"); c.access([0, 64, 128, 0]); print(memsim.version(), c.stats()["levels"][0]["misses"])' 2>&1)
		if [ "$got" = "$("$memsim" version | awk '{ print $NF }') 4" ]; then
			ok "the installed package imports and counts: $got"
		else
			not_ok "the installed package imports and counts" "got: $got"
		fi
	fi
fi
# A --prefix whose site-packages the interpreter does not search: the install says where the
# package went and what PYTHONPATH to set (python/install_note.py, meson's install script);
# nothing where it searches it.
if [ "$python" != none ]; then
	site=$tmp/P/lib/python3.11/site-packages
	mkdir -p "$site"
	got=$("$python" "$src/python/install_note.py" "$site" 2>&1)
	quiet=$(PYTHONPATH=$site "$python" "$src/python/install_note.py" "$site" 2>&1)
	exe=$("$python" -c 'import sys; print(sys.executable)')
	if [ "$got" = "memsim: meson install puts the Python package in $site, which $exe does not search: set PYTHONPATH=$site to import memsim" ] &&
		[ -z "$quiet" ]; then
		ok "a --prefix install names the package's directory and PYTHONPATH"
	else
		not_ok "the install's PYTHONPATH note" "got: $got" "searched: $quiet"
	fi
	# meson setup says it too: Debian 12's meson hides what an install script prints
	if "$meson" setup "$tmp/cfg" "$src" --prefix "$tmp/P" -Dpython="$python" >"$tmp/cfg.log" 2>&1 &&
		grep -q "memsim: meson install puts the Python package in $tmp/P/.*set PYTHONPATH=$tmp/P/" "$tmp/cfg.log"; then
		ok "meson setup --prefix names the package's directory and PYTHONPATH"
	else
		not_ok "meson setup's PYTHONPATH note" "$(grep -i -e python -e error "$tmp/cfg.log" | tail -5)"
	fi
fi
# The examples the docs name, every file of examples/ (notebooks included), under
# share/memsim/examples.
exdir=$(find "$dest" -type d -path '*/share/memsim/examples')
missing=$(cd "$src/examples" && find . -type f | while read -r f; do
	[ -f "$exdir/$f" ] || echo "$f"; done)
if [ -n "$exdir" ] && [ -z "$missing" ] && [ -f "$exdir/lab01_bytes.py" ] &&
	[ -f "$exdir/library/count.c" ] && [ -f "$exdir/sliding-window/Makefile" ]; then
	ok "installs examples/ under ${exdir#$dest}"
else
	not_ok "installs the examples" "dir: '$exdir'" "missing: $(echo $missing | cut -c1-300)"
fi
docdir=$(find "$dest" -type d -path '*/share/doc/memsim')
if [ -n "$docdir" ] && [ -f "$docdir/README.md" ] && [ -f "$docdir/docs/library.md" ] &&
	[ -f "$docdir/docs/index.md" ] && [ -f "$docdir/docs/img/roofline.png" ]; then
	ok "installs the docs under share/doc/memsim"
else
	not_ok "installs the docs" "found: $(find "$dest" -name '*.md' | head -3)"
fi

# The example, C11 -pedantic, traced and native; the C++17 program, traced and native.
build_ok=1
for def in "" -DMEMSIM_NATIVE; do
	out=$tmp/count$def
	if ! cc -std=c11 -Wall -Wextra -Werror -pedantic $def $extra "$src/examples/library/count.c" \
		$flags -o "$out" >"$tmp/cc.log" 2>&1; then
		not_ok "C11 example builds ($def)" "$(head -10 "$tmp/cc.log")"; build_ok=0
	else
		ok "C11 example builds with -Wall -Wextra -Werror -pedantic $def"
	fi
	out=$tmp/cxx$def
	if ! c++ -std=c++17 -Wall -Wextra -Werror $def $extra "$src/tests/library-cxx.cpp" \
		$flags -o "$out" >"$tmp/cc.log" 2>&1; then
		not_ok "C++17 program builds ($def)" "$(head -10 "$tmp/cc.log")"; build_ok=0
	else
		ok "C++17 program builds with -Wall -Wextra -Werror $def"
	fi
done
[ $build_ok = 1 ] || { echo "1..$n"; exit 1; }

# The hand count (L1: 4 lines of 64 bytes, 2 sets, LRU, write-back, write-allocate; line i of
# a and b in set i % 2). "read": a's 4 lines miss (4 fills). "copy", per line i: a0, a1 hit;
# storing b0 (a whole line: allocated without a fetch) evicts a2, b1 evicts a3; then a2 misses
# and evicts a0, b2 evicts b0 (dirty: written back), a3 evicts a1, b3 evicts b1 (written back).
# The tile is scratch: 4 x 64 bytes each way, never in L1. The flush writes back b2 and b3.
cat >"$tmp/expect" <<'END'
memsim 0.3.0, cache L1=256B:2:64:lru:wb:wa:nine,tiles=dram
loads 9 (768 bytes), stores 8 (512 bytes)
total : dram read 384 write 256 rfo 0 flush 128, scratch read 256 write 256
  L1: reads 8 writes 4 hits 2 misses 10 fills 6 evictions 6 writebacks 4
array other: dram read 0 write 0 rfo 0 flush 0, scratch read 0 write 0
array a: dram read 384 write 0 rfo 0 flush 0, scratch read 0 write 0
array b: dram read 0 write 256 rfo 0 flush 128, scratch read 0 write 0
array tile: dram read 0 write 0 rfo 0 flush 0, scratch read 256 write 256
phase (none): dram read 0 write 0 rfo 0 flush 0, scratch read 0 write 0
  L1: reads 0 writes 0 hits 0 misses 0 fills 0 evictions 0 writebacks 0
phase read: dram read 256 write 0 rfo 0 flush 0, scratch read 0 write 0
  L1: reads 4 writes 0 hits 0 misses 4 fills 4 evictions 0 writebacks 0
phase copy: dram read 128 write 128 rfo 0 flush 0, scratch read 0 write 0
  L1: reads 4 writes 4 hits 2 misses 6 fills 2 evictions 6 writebacks 2
phase flush: dram read 0 write 128 rfo 0 flush 128, scratch read 0 write 0
  L1: reads 0 writes 0 hits 0 misses 0 fills 0 evictions 0 writebacks 2
END
if "$tmp/count" >"$tmp/got" 2>"$tmp/err" && diff "$tmp/expect" "$tmp/got" >"$tmp/diff"; then
	ok "count: the hand count, in all, per level, array and phase"
else
	not_ok "count: the hand count" "$(cat "$tmp/err" "$tmp/diff")"
fi
# No cache ("none"): every access moves its own bytes: a twice (512) read, b (256) written; the
# tile stays scratch.
if "$tmp/count" none >"$tmp/got" 2>"$tmp/err" &&
	grep -qx 'total : dram read 512 write 256 rfo 0 flush 0, scratch read 256 write 256' "$tmp/got"; then
	ok "count none: every access's own bytes"
else
	not_ok "count none" "$(cat "$tmp/err" "$tmp/got" | head -5)"
fi
# Native: the TR_* macros vanish, nothing is counted.
if "$tmp/count-DMEMSIM_NATIVE" >"$tmp/got" 2>"$tmp/err" &&
	grep -qx 'total : dram read 0 write 0 rfo 0 flush 0, scratch read 0 write 0' "$tmp/got"; then
	ok "count -DMEMSIM_NATIVE: nothing traced"
else
	not_ok "count native" "$(cat "$tmp/err" "$tmp/got" | head -5)"
fi
nl='
'
if [ "$("$tmp/cxx" 2>&1)" = "arrays 2 phases 3${nl}sum 256 levels 0 dram read 1024 write 4" ] &&
	[ "$("$tmp/cxx-DMEMSIM_NATIVE" 2>&1)" = "arrays 1 phases 2${nl}sum 256 levels 0 dram read 0 write 0" ]; then
	ok "C++17 program: 256 float loads and one store on no cache, traced and native; -1 past the last array and phase"
else
	not_ok "C++17 program" "$("$tmp/cxx" 2>&1)" "$("$tmp/cxx-DMEMSIM_NATIVE" 2>&1)"
fi

# A bad spec: the message of `memsim run --cache`, in one line, exit 2.
for bad in L1=3K:8:64 bogus 'L1=32K:8:64,L1=64K:8:64'; do
	"$tmp/count" "$bad" >/dev/null 2>"$tmp/err"; rc=$?
	"$memsim" run --kernel naive --cache "$bad" >/dev/null 2>"$tmp/cli"
	want=$(sed -e 's/^memsim: --cache: //' -e "s/ (see 'memsim help run')\$//" "$tmp/cli")
	if [ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && [ "$(cat "$tmp/err")" = "count: $want" ]; then
		ok "bad spec '$bad': $want"
	else
		not_ok "bad spec '$bad'" "rc $rc" "got: $(cat "$tmp/err")" "memsim: $(cat "$tmp/cli")"
	fi
done

# The report against `memsim replay` of the recording the same run made.
spec=L1=256B:2:64
if "$tmp/count" "$spec" "$tmp/rec.mtr" "$tmp/lib.json" >/dev/null 2>"$tmp/err" &&
	"$memsim" replay "$tmp/rec.mtr" --cache "$spec" --json "$tmp/replay.json" >/dev/null 2>>"$tmp/err" &&
	python3 - "$tmp/lib.json" "$tmp/replay.json" >"$tmp/cmp" 2>&1 <<'END'
import json, sys
lib, rep = (json.load(open(p)) for p in sys.argv[1:3])
bad = [k for k in ("levels", "dram", "scratch", "cpu", "arrays", "phases") if lib[k] != rep[k]]
if lib["config"]["cache"] != rep["config"]["cache"]:
    bad.append("config.cache")
if bad or lib["dram"]["read_bytes"] != 384 or sorted(lib["arrays"]) != ["a", "b", "tile"]:
    sys.exit("differ: %s" % bad)
END
then
	ok "memsim_report_json equals memsim replay --json of its recording"
else
	not_ok "report equals replay's" "$(cat "$tmp/err" "$tmp/cmp" | head -5)"
fi

# docs/library.md shows the example as it is.
if python3 -c 'import sys; sys.exit(open(sys.argv[1]).read() not in open(sys.argv[2]).read())' \
	"$src/examples/library/count.c" "$src/docs/library.md"; then
	ok "docs/library.md carries examples/library/count.c whole"
else
	not_ok "docs/library.md carries examples/library/count.c whole"
fi
echo "1..$n"
exit $failed
