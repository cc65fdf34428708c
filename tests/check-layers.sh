#!/bin/sh
# The dependency rule of docs/architecture.md: includes only point downward,
#   bench -> cli -> run -> api -> analysis, measure, gpu -> kernels -> traces -> sim -> base,
# and analysis, measure and gpu do not include each other. Prints every include that breaks it and
# fails. Output is TAP (one case). Usage: check-layers.sh [SOURCE_ROOT]
set -u
cd "${1:-$(dirname "$0")/..}" || exit 2
rank() {
	case "$1" in
	base) echo 0 ;; sim) echo 1 ;; traces) echo 2 ;; kernels) echo 3 ;;
	analysis | measure | gpu) echo 4 ;; api) echo 5 ;; run) echo 6 ;; cli) echo 7 ;;
	bench) echo 8 ;; *) echo - ;;
	esac
}
echo "1..1"
bad=0
for f in $(find base sim traces kernels analysis measure gpu api run cli bench -name '*.[ch]' -o -name '*.cu' | LC_ALL=C sort); do
	from=${f%%/*}
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		case "$inc" in */*) to=${inc%%/*} ;; *) continue ;; esac
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
