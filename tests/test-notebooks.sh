#!/bin/sh
# The notebooks (examples/*.ipynb), executed headless as a student runs them: nbconvert with
# the ipykernel of the interpreter the package was built for, against the built package. A cell
# that raises fails the notebook; so does a notebook without a table (text/html) and a plot
# (image/png) among its outputs, which is what they are there to show.
#
# test-notebooks.sh SOURCE_ROOT BUILD_ROOT PYTHON   (TAP on stdout)
src=$1 build=$2 py=$3
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
skip_all() { echo "1..0 # SKIP $1"; exit 0; }

for m in nbconvert ipykernel matplotlib; do
	"$py" -c "import $m" 2>/dev/null || skip_all "$py cannot import $m (the test command installs it)"
done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
# The kernel inherits the environment: the built package, and no display.
export PYTHONPATH="$build/python" HOME="$tmp" XDG_CACHE_HOME="$tmp/cache" MPLCONFIGDIR="$tmp/mpl"
unset MPLBACKEND DISPLAY
for nb in "$src"/examples/*.ipynb; do
	name=$(basename "$nb" .ipynb)
	if ! "$py" -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=300 \
		--ExecutePreprocessor.kernel_name=python3 --output-dir "$tmp/out" "$nb" \
		>"$tmp/$name.log" 2>&1; then
		not_ok "$name runs" "$(sed 's/\x1b\[[0-9;]*m//g' "$tmp/$name.log" | grep -v '^0.00s' | tail -6)"
		continue
	fi
	ok "$name runs"
	if "$py" - "$tmp/out/$name.ipynb" >"$tmp/$name.check" 2>&1 <<'PY'
import json, sys
nb = json.load(open(sys.argv[1], encoding="utf-8"))
kinds = {k for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]
         for k in o.get("data", {})}
missing = {"text/html", "image/png"} - kinds
if missing:
    sys.exit(f"no output of kind {', '.join(sorted(missing))}")
PY
	then
		ok "$name shows a table and a plot"
	else
		not_ok "$name shows a table and a plot" "$(cat "$tmp/$name.check")"
	fi
done
echo "1..$n"
exit $failed
