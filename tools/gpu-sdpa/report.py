#!/usr/bin/env python3
"""memsim's GPU SDPA model against Nsight Compute on every row of docs/gpu-run/sdpa/sdpa.csv.

    python3 tools/gpu-sdpa/report.py --memsim build/memsim [--markdown] [-- extra memsim args]

Runs `memsim sdpa --json -` for each measured shape and prints, per row, ncu's DRAM bytes
(read + written), the model's, and their ratio; then the median and worst |ratio - 1|. With
--markdown the table is docs/gpu.md's. Extra arguments after -- go to every memsim call (for
trying the model's knobs: --l2 50M, --slots 132).
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CSV = os.path.join(HERE, "..", "..", "docs", "gpu-run", "sdpa", "sdpa.csv")


def model(memsim, row, extra):
    q = f"{row['batch']},{row['heads']},{row['N']},{row['d']}"
    k = f"{row['batch']},{row['kv_heads']},{row['N_kv']},{row['d']}"
    args = [memsim, "sdpa", "--q", q, "--k", k, "--dtype", row["dtype"], "--json", "-"]
    if row["causal"] == "1":
        args.append("--causal")
    p = subprocess.run(args + extra, capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--memsim", default="build/memsim")
    ap.add_argument("--csv", default=CSV)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("extra", nargs="*")
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.csv, encoding="utf-8")))
    errs = []
    if a.markdown:
        print("| batch | heads | kv heads | N | N_kv | d | causal | dtype | kernel (model) "
              "| ncu MB read | ncu MB written | model MB read | model MB written "
              "| **model / ncu** |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        j = model(a.memsim, r, a.extra)
        ncu = int(r["dram_read_bytes"]) + int(r["dram_write_bytes"])
        mine = j["dram"]["bytes"]
        ratio = mine / ncu
        errs.append(abs(ratio - 1))
        k = j["kernel"]
        kern = "fwd" if k["splits"] == 1 else f"split-KV x{k['splits']}"
        if a.markdown:
            print(f"| {r['batch']} | {r['heads']} | {r['kv_heads']} | {r['N']} | {r['N_kv']} "
                  f"| {r['d']} | {'yes' if r['causal'] == '1' else 'no'} | {r['dtype']} "
                  f"| {kern} | {int(r['dram_read_bytes']) / 1e6:.1f} "
                  f"| {int(r['dram_write_bytes']) / 1e6:.1f} "
                  f"| {j['dram']['read_bytes'] / 1e6:.1f} | {j['dram']['write_bytes'] / 1e6:.1f} "
                  f"| **{ratio:.3f}** |")
        else:
            print(f"{r['batch']:>2} {r['heads']:>3} {r['kv_heads']:>3} {r['N']:>6} "
                  f"{r['N_kv']:>7} {r['d']:>4} {r['causal']} {r['dtype']} {kern:>12} "
                  f"ncu {int(r['dram_read_bytes'])/1e6:10.1f} {int(r['dram_write_bytes'])/1e6:8.1f}"
                  f"  model {j['dram']['read_bytes']/1e6:10.1f} {j['dram']['write_bytes']/1e6:8.1f}"
                  f"  ratio {ratio:.3f}")
    med = statistics.median(errs)
    worst = max(errs)
    within = sum(1 for e in errs if e <= 0.10)
    print(f"\n{len(errs)} rows: median |model/ncu - 1| {med:.4f}, worst {worst:.4f}, "
          f"{within} within 10%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
