#!/bin/sh
# memsim's two set-up commands, for a fresh Debian 12 machine as root:
#   ./setup.sh main   installs what is missing, builds, and runs the main job
#   ./setup.sh test   installs what is missing, builds, and runs every test: the suite, the
#                     suite again built with ASan+UBSan (build-asan), and the fuzz harnesses
set -eu
cd "$(dirname "$0")"

# What each package is for: meson/ninja/pkg-config build; cJSON reports; cmocka unit tests;
# PAPI hardware counters; valgrind (Cachegrind, Callgrind, lackey) cross-checks; gnuplot plots;
# python3 and numpy the Python package (python/memsim).
PKGS="build-essential meson ninja-build pkg-config libcjson-dev libcmocka-dev libpapi-dev
papi-tools valgrind gnuplot-nox python3 python3-numpy"

# The test command also opens the HTML report in a headless browser, and builds the fuzz
# harnesses with clang (libclang-rt-14-dev holds libFuzzer and clang's sanitizer runtimes);
# procps gives the tests pgrep; pytest runs the Python package's tests, pandas its DataFrames;
# slurm-wlm and munge give tests/test-slurm.sh a private one-node Slurm on localhost (munged,
# slurmctld, slurmd started by hand, no systemd) for `memsim sweep --slurm`; nbconvert, ipykernel
# and matplotlib run the notebooks of examples/ headless, with their tables and plots.
TEST_PKGS="chromium clang libclang-rt-14-dev procps python3-pytest python3-pandas slurm-wlm munge
jupyter-nbconvert python3-ipykernel python3-matplotlib"

# The Python package is built for and tested with Debian's interpreter, whatever python3 comes
# first on PATH.
PY=-Dpython=python3
[ -x /usr/bin/python3 ] && PY=-Dpython=/usr/bin/python3

install_missing() {
	missing=""
	for p in $PKGS $1; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
			missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		echo "setup: installing$missing"
		apt-get update -q
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
	fi
}

# $1: -Dbench=true for the tests (memsim-bench, the speed harness; never installed).
build() {
	[ -f build/build.ninja ] || meson setup build -Dwerror=true "$PY"
	[ -z "${1:-}" ] || meson configure build "$1" >/dev/null
	ninja -C build
}

# The suite again with ASan and UBSan (tests/meson.build says how it runs there). gcc's
# -Wformat-truncation misfires on the sanitizers' instrumentation, so -Werror stays with the
# main build; meson wants b_lundef off with sanitizers; the fuzz harnesses run from build.
build_asan() {
	[ -f build-asan/build.ninja ] ||
		meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dfuzz=disabled \
			-Dbench=true "$PY"
	# a build-asan made before bench/ existed gets it too, as build does
	meson configure build-asan -Dbench=true >/dev/null
	ninja -C build-asan
}

case "${1:-}" in
main)
	install_missing ""
	build
	exec sh tools/main-job.sh
	;;
test)
	install_missing "$TEST_PKGS"
	build -Dbench=true
	build_asan
	exec sh tests/run.sh build build-asan
	;;
*)
	echo "usage: ./setup.sh main|test" >&2
	exit 2
	;;
esac
