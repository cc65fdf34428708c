#!/bin/sh
# Every source file of sim/ (sim/drive/ too) and traces/ is compiled for the fuzz harnesses (an
# object in the fuzz build directory, named as tests/fuzz/meson.build names it): a file added to
# a layer cannot be left out of them.
#
# check-sources.sh SOURCE_ROOT FUZZ_BUILD_DIR   (TAP on stdout)
src=$1 build=$2
n=0 failed=0
for f in "$src"/sim/*.c "$src"/sim/drive/*.c "$src"/traces/*.c; do
	rel=${f#"$src"/}
	obj=$(printf '%s' "$rel" | tr -c 'A-Za-z0-9_\n' '_').o
	n=$((n + 1))
	if [ -f "$build/$obj" ]; then
		echo "ok $n - $rel compiled for the fuzz harnesses"
	else
		failed=1
		echo "not ok $n - $rel compiled for the fuzz harnesses"
		echo "# no $build/$obj: is it in sim_src or traces_src (sim/meson.build, traces/meson.build)?"
	fi
done
echo "1..$n"
exit $failed
