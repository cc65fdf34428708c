#!/usr/bin/env python3
"""placement.sh's rows (a locals_parse.py CSV) per shape: ncu's DRAM reads behind each pad,
their spread, the same call's two runs apart, and the model's reads (memsim sdpa, the default)
over ncu's least and most:

    python3 tools/gpu-sdpa/placement_report.py --memsim build/memsim \\
        [--csv docs/gpu-run/sdpa-placement/placement.csv]
"""

import argparse
import collections
import csv
import os

from heads_report import model

HERE = os.path.dirname(os.path.abspath(__file__))
CSV = os.path.join(HERE, "..", "..", "docs", "gpu-run", "sdpa-placement", "placement.csv")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--memsim", default="build/memsim")
    ap.add_argument("--csv", default=CSV)
    a = ap.parse_args()
    shapes = collections.OrderedDict()
    for r in csv.DictReader(open(a.csv)):
        key = tuple(r[c] for c in ("batch", "heads", "kv_heads", "N", "N_kv", "d", "causal",
                                   "dtype"))
        shapes.setdefault(key, (r, []))[1].append((r["layout"], float(r["dram_read_bytes"])))
    pads = list(dict.fromkeys(p for _, runs in shapes.values() for p, _ in runs))
    cols = ["batch", "heads", "kv heads", "N", "d", "causal"]
    cols += [f"ncu MB read, {p}" for p in pads]
    cols += ["most / least", "pad0 twice", "model MB read", "model / ncu (least, most)"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for key, (r, runs) in shapes.items():
        reads = [x for _, x in runs]
        again = [x for p, x in runs if p == "pad0"]
        m = model(a.memsim, r)["dram"]["read_bytes"]
        by_pad = collections.defaultdict(list)
        for p, x in runs:
            by_pad[p].append(f"{x / 1e6:.1f}")
        cells = [r["batch"], r["heads"], r["kv_heads"], r["N"], r["d"],
                 "yes" if r["causal"] == "1" else "no"]
        cells += [", ".join(by_pad[p]) for p in pads]
        cells += [f"{max(reads) / min(reads):.3f}",
                  f"{max(again) / min(again):.3f}" if len(again) > 1 else "-",
                  f"{m / 1e6:.1f}", f"{m / max(reads):.2f} to {m / min(reads):.2f}"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
