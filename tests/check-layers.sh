#!/bin/sh
# The dependency rule of docs/architecture.md: includes only point downward,
#   bench -> cli -> run -> api -> analysis, measure, gpu -> kernels -> traces -> trace
#     -> drive -> sim -> base,
# where drive is sim/drive/ (the run modes that wrap a model) and trace the tracing layer
# (sim/trace.[ch], sim/trace_types.h); analysis, measure and gpu do not include each other.
# Prints every include that breaks it and fails. Output is TAP (one case).
# Usage: check-layers.sh [SOURCE_ROOT]
set -u
cd "${1:-$(dirname "$0")/..}" || exit 2
# The layer of a path from the root (a file, or what an include names) into $layer: its folder,
# but for sim/drive/ and the tracing layer's files in sim/. No subshell: one fork an include
# made the check slow.
set_layer() {
	case "$1" in
	sim/drive/*) layer=drive ;;
	sim/trace.[ch] | sim/trace_types.h) layer=trace ;;
	*/*) layer=${1%%/*} ;;
	*) layer=- ;;
	esac
}
# The rank of layer $1 into $rank (-: not a layer of the product).
set_rank() {
	case "$1" in
	base) rank=0 ;; sim) rank=1 ;; drive) rank=2 ;; trace) rank=3 ;; traces) rank=4 ;;
	kernels) rank=5 ;; analysis | measure | gpu) rank=6 ;; api) rank=7 ;; run) rank=8 ;;
	cli) rank=9 ;; bench) rank=10 ;; *) rank=- ;;
	esac
}
echo "1..1"
bad=0
for f in $(find base sim traces kernels analysis measure gpu api run cli bench -name '*.[ch]' -o -name '*.cu' | LC_ALL=C sort); do
	set_layer "$f"
	from=$layer
	set_rank "$from"
	rf=$rank
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		set_layer "$inc"
		to=$layer
		[ "$to" = - ] && continue
		set_rank "$to"
		rt=$rank
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
