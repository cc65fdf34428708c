#!/bin/sh
# The dependency rule of docs/architecture.md: includes only point downward,
#   cli -> api -> analysis, measure -> kernels -> traces -> trace -> drive -> sim,
# where drive is sim/drive/ (the run modes that wrap a model) and trace the tracing layer
# (sim/trace.[ch], sim/trace_types.h); analysis and measure do not include each other. Prints
# every include that breaks it and fails. Output is TAP (one case).
# Usage: check-layers.sh [SOURCE_ROOT]
set -u
cd "${1:-$(dirname "$0")/..}" || exit 2
# The layer of a path from the root (a file, or what an include names): its folder, but for
# sim/drive/ and the tracing layer's files in sim/.
layer() {
	case "$1" in
	sim/drive/*) echo drive ;;
	sim/trace.[ch] | sim/trace_types.h) echo trace ;;
	*/*) echo "${1%%/*}" ;;
	*) echo - ;;
	esac
}
rank() {
	case "$1" in
	sim) echo 0 ;; drive) echo 1 ;; trace) echo 2 ;; traces) echo 3 ;; kernels) echo 4 ;;
	analysis | measure) echo 5 ;; api) echo 6 ;; cli) echo 7 ;; *) echo - ;;
	esac
}
echo "1..1"
bad=0
for f in $(find sim traces kernels analysis measure api cli -name '*.[ch]' -o -name '*.cu' | LC_ALL=C sort); do
	from=$(layer "$f")
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		to=$(layer "$inc")
		[ "$to" = - ] && continue
		rf=$(rank "$from")
		rt=$(rank "$to")
		[ "$rt" = - ] && continue
		if [ "$rt" -gt "$rf" ] || { [ "$rt" -eq "$rf" ] && [ "$from" != "$to" ]; }; then
			echo "# $f includes $inc: $from may not include $to"
			bad=$((bad + 1))
		fi
	done
done
if [ "$bad" -ne 0 ]; then
	echo "not ok 1 - layers: $bad includes point upward or across (docs/architecture.md)"
	exit 1
fi
echo "ok 1 - layers: every include points downward"
