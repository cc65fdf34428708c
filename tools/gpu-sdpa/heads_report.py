#!/usr/bin/env python3
"""The model's DRAM reads and L2 read lookup misses against ncu's on the rows of a
locals_parse.py CSV (docs/gpu-run/sdpa-heads/heads.csv by default), per row and per head:

    python3 tools/gpu-sdpa/heads_report.py --memsim build/memsim [--csv FILE] [--markdown]
"""

import argparse
import csv
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
CSV = os.path.join(HERE, "..", "..", "docs", "gpu-run", "sdpa-heads", "heads.csv")


def model(memsim, r):
    q = f"{r['batch']},{r['heads']},{r['N']},{r['d']}"
    k = f"{r['batch']},{r['kv_heads']},{r['N_kv']},{r['d']}"
    args = [memsim, "sdpa", "--q", q, "--k", k, "--dtype", r["dtype"], "--json", "-"]
    if r["causal"] == "1":
        args.append("--causal")
    return json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--memsim", default="build/memsim")
    ap.add_argument("--csv", default=CSV)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    cols = ["layout", "batch", "heads", "kv heads", "N", "d", "causal", "ncu MB read",
            "ncu lookup misses MB", "per head", "model MB read", "model lookup misses MB",
            "per head", "model / ncu, read", "model / ncu, lookup misses"]
    if a.markdown:
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
    for r in csv.DictReader(open(a.csv)):
        j = model(a.memsim, r)
        heads = int(r["batch"]) * int(r["heads"])
        rd, miss = float(r["dram_read_bytes"]), float(r["l2_read_lookup_miss_bytes"])
        mrd, mmiss = j["dram"]["read_bytes"], j["l2_read_lookup_miss_bytes"]
        vals = [r.get("layout", "bh"), r["batch"], r["heads"], r["kv_heads"], r["N"], r["d"],
                "yes" if r["causal"] == "1" else "no", f"{rd / 1e6:.1f}", f"{miss / 1e6:.1f}",
                f"{miss / 1e6 / heads:.1f}", f"{mrd / 1e6:.1f}", f"{mmiss / 1e6:.1f}",
                f"{mmiss / 1e6 / heads:.1f}", f"{mrd / rd:.3f}", f"{mmiss / miss:.3f}"]
        print("| " + " | ".join(vals) + " |" if a.markdown else "  ".join(vals))


if __name__ == "__main__":
    main()
