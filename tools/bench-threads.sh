#!/bin/sh
# memsim bench --threads T for each T in THREADS at each N in NS (#24's goal: speedup per core
# >= 0.7 for naive and flash2 at H100 size): one table and one JSON per (N, T), in $OUT (or
# out/bench-threads), then a CSV of every run. Usage: MEMSIM=path [THREADS="2 4 8 15"]
# [NS="2048 4096"] [HEADS=16] [CACHE=h100] [REPEAT=1] sh tools/bench-threads.sh
set -eu
MEMSIM=${MEMSIM:-build/memsim}
THREADS=${THREADS:-2 4 8 15}
NS=${NS:-2048 4096}
HEADS=${HEADS:-16}
CACHE=${CACHE:-h100}
REPEAT=${REPEAT:-1}
OUT=${OUT:-out/bench-threads}
mkdir -p "$OUT"
for n in $NS; do
	for t in $THREADS; do
		"$MEMSIM" bench --threads "$t" --N "$n" --heads "$HEADS" --cache "$CACHE" \
			--repeat "$REPEAT" --json "$OUT/N$n-T$t.json" | tee "$OUT/N$n-T$t.txt"
	done
done
python3 - "$OUT" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
rows = []
for path in sorted(glob.glob(os.path.join(out, "N*-T*.json"))):
    j = json.load(open(path))
    for r in j["runs"]:
        rows.append([j["N"], j["heads"], j["cache"], j["threads"], j["cores_online"],
                     r["kernel"] + (" --trace-only" if r["trace_only"] else ""),
                     r["one_thread_wall_seconds"], r["wall_seconds"], r["cpu_seconds"],
                     r["threads_used"], r["speedup"], r["cores"], r["speedup_per_core"],
                     r["counters_equal"]])
with open(os.path.join(out, "threads.csv"), "w") as f:
    f.write("N,heads,cache,threads,cores_online,run,one_thread_wall_s,wall_s,cpu_s,"
            "threads_used,speedup,cores,speedup_per_core,counters_equal\n")
    for r in sorted(rows, key=lambda r: (r[0], r[5], r[3])):
        f.write(",".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in r) + "\n")
print(open(os.path.join(out, "threads.csv")).read())
PY
