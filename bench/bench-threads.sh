#!/bin/sh
# memsim bench --threads at the sizes #24's goal names (speedup per core >= 0.7 for naive and
# flash2 at H100 size): computing and trace-only at N (2048), then trace-only alone at
# N_TRACE (16384; computing there takes hours on one thread), 16 heads on h100, each at the
# thread counts THREADS; tables and JSON in $OUT (or out/bench-threads), then one CSV of every
# row (with what as many one-thread runs at once got a core: bench's copies); each timing the
# best of REPEAT runs (1). Usage: MEMSIM=path [THREADS=2,4,8,15] [N=2048]
# [N_TRACE=16384] [HEADS=16] [CACHE=h100] [REPEAT=1] sh bench/bench-threads.sh
set -eu
MEMSIM=${MEMSIM:-build/bench/memsim-bench}
THREADS=${THREADS:-2,4,8,15}
N=${N:-2048}
N_TRACE=${N_TRACE:-16384}
HEADS=${HEADS:-16}
CACHE=${CACHE:-h100}
REPEAT=${REPEAT:-1}
OUT=${OUT:-out/bench-threads}
mkdir -p "$OUT"
"$MEMSIM" bench --threads "$THREADS" --N "$N" --heads "$HEADS" --cache "$CACHE" \
	--repeat "$REPEAT" --json "$OUT/N$N.json" | tee "$OUT/N$N.txt"
"$MEMSIM" bench --threads "$THREADS" --N "$N_TRACE" --heads "$HEADS" --cache "$CACHE" \
	--repeat "$REPEAT" --trace-only --json "$OUT/N$N_TRACE-trace-only.json" | tee "$OUT/N$N_TRACE-trace-only.txt"
python3 - "$OUT" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
rows = []
for path in sorted(glob.glob(os.path.join(out, "N*.json"))):
    j = json.load(open(path))
    for r in j["runs"]:
        rows.append([j["N"], j["heads"], j["cache"], j["cores_online"],
                     r["kernel"] + (" --trace-only" if r["trace_only"] else ""), r["threads"],
                     r["one_thread_wall_seconds"], r["wall_seconds"], r["cpu_seconds"],
                     r["threads_used"], r["speedup"], r["cores"], r["speedup_per_core"],
                     r.get("copies_speedup_per_core", ""), r.get("per_core_of_copies", ""),
                     r["counters_equal"]])
with open(os.path.join(out, "threads.csv"), "w") as f:
    f.write("N,heads,cache,cores_online,run,threads,one_thread_wall_s,wall_s,cpu_s,"
            "threads_used,speedup,cores,speedup_per_core,copies_per_core,per_core_of_copies,"
            "counters_equal\n")
    for r in rows:
        f.write(",".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in r) + "\n")
print(open(os.path.join(out, "threads.csv")).read())
PY
