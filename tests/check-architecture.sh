#!/bin/sh
# docs/architecture.md names every source file of the product: each *.c, *.h and *.cu under
# the layers' folders, and each module of the Python package, must appear in it by name (a
# file of its folder's list, `name.c`, or a pair written `name.c/h`). A file added without a
# line there fails this test, so the layout cannot fall behind the tree again. TAP, one case.
# Usage: check-architecture.sh [SOURCE_ROOT]
set -u
cd "${1:-$(dirname "$0")/..}" || exit 2
doc=docs/architecture.md
echo "1..1"
missing=""
for f in $(find base sim traces kernels gpu analysis measure api run cli bench include \
	python/memsim -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.py' \) |
	LC_ALL=C sort); do
	name=${f##*/}
	stem=${name%.*}
	# name.c, name.h, name.cu or name.py as a word; or name.c/h for the pair
	if ! grep -Eq "(^|[^A-Za-z0-9_.-])($stem\.c/h|$(printf '%s' "$name" | sed 's/\./\\./g'))([^A-Za-z0-9_]|$)" "$doc"; then
		missing="$missing $f"
	fi
done
if [ -n "$missing" ]; then
	for f in $missing; do
		echo "# $f is not named in $doc"
	done
	echo "not ok 1 - architecture: $(echo $missing | wc -w) source files not named in $doc"
	exit 1
fi
echo "ok 1 - architecture: $doc names every source file"
