#!/bin/sh
# Every function symbol the kernel libraries define is written out in full somewhere under
# kernels/, so grep and ctags find it (no name pasting: issue 23). Output is TAP (one case).
# Usage: check-kernel-names.sh SOURCE_ROOT NM LIBRARY...
set -u
[ $# -ge 3 ] || {
	echo "usage: $0 SOURCE_ROOT NM LIBRARY..." >&2
	exit 2
}
root=$1
nm=$2
shift 2
echo "1..1"
bad=0
n=0
for lib in "$@"; do
	syms=$("$nm" --defined-only -g "$lib") || {
		echo "not ok 1 - kernel names: $nm cannot read $lib"
		exit 1
	}
	for s in $(printf '%s\n' "$syms" | awk '$2 == "T" { print $3 }' | LC_ALL=C sort -u); do
		n=$((n + 1))
		if ! grep -rqw -- "$s" "$root/kernels"; then
			echo "# $s ($lib) is not written out under kernels/"
			bad=$((bad + 1))
		fi
	done
done
if [ "$n" -eq 0 ]; then
	echo "not ok 1 - kernel names: no function symbols found in $*"
	exit 1
fi
if [ "$bad" -ne 0 ]; then
	echo "not ok 1 - kernel names: $bad of $n symbols are not written out"
	exit 1
fi
echo "ok 1 - kernel names: all $n function symbols written out under kernels/"
