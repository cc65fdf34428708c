#!/usr/bin/env python3
"""Joins measure.sh's cases.json and ncu.csv (or ncu.csv.gz) into one row per step
(l2-policy.csv on stdout): experiment, sizes, step, DRAM MiB read and written, L2 read sectors
and their hit fraction, and what a cold read of the same bytes would cost.

    python3 tools/gpu-l2/parse.py docs/gpu-run/l2-policy > docs/gpu-run/l2-policy/l2-policy.csv

Kernels come in launch order; each step's marker (a one-element fill, grid size 1) comes right
before the step's kernels, so the kernels between two markers are one step's.
"""

import csv
import gzip
import json
import os
import sys

MIB = 1 << 20


def kernels(d):
    path = os.path.join(d, "ncu.csv")
    f = open(path) if os.path.exists(path) else gzip.open(path + ".gz", "rt")
    rows = csv.DictReader(line for line in f if not line.startswith("=="))
    for r in rows:
        if r["Kernel Name"]:  # not the units row
            yield r


def num(text):
    """ncu's numbers, with thousands separators; a metric not collected reads 0."""
    return float(text.replace(",", "")) if text else 0.0


def steps(d):
    """Per step, the summed metrics of its kernels."""
    out = []
    for r in kernels(d):
        if "Fill" in r["Kernel Name"] and num(r["launch__grid_size"]) == 1:
            out.append({"dram_read": 0.0, "dram_write": 0.0, "l2_read": 0.0, "l2_hit": 0.0})
            continue
        if not out:
            continue  # the inputs' initialisation
        s = out[-1]
        s["dram_read"] += num(r.get("dram__bytes_read.sum"))
        s["dram_write"] += num(r.get("dram__bytes_write.sum"))
        s["l2_read"] += num(r.get("lts__t_sectors_srcunit_tex_op_read.sum"))
        s["l2_hit"] += num(r.get("lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum"))
    return out


def main():
    d = sys.argv[1]
    meta = json.load(open(os.path.join(d, "cases.json")))
    got = steps(d)
    # the zero fill of l2_policy.py's sink (grid size 1, no kernel after it) reads as a marker
    while len(got) > meta["steps"] and not any(got[0].values()):
        got.pop(0)
    if len(got) != meta["steps"]:
        sys.exit(f"parse.py: {len(got)} markers in ncu.csv, {meta['steps']} steps in cases.json")
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["exp", "x_mib", "b_mib", "step", "name", "dram_read_mib", "dram_write_mib",
                "l2_read_sectors", "l2_read_hit_frac", "read_mib", "dram_over_read"])
    i = 0
    for c in meta["cases"]:
        for k, name in enumerate(c["steps"]):
            s = got[i]
            i += 1
            size = {"read x": c["x"], "read b": c["b"], "flush": 256}.get(name, 0)
            hit = s["l2_hit"] / s["l2_read"] if s["l2_read"] else 0
            ratio = s["dram_read"] / (size * MIB) if size else 0
            w.writerow([c["exp"], c["x"], c["b"], k, name, f"{s['dram_read'] / MIB:.3f}",
                        f"{s['dram_write'] / MIB:.3f}", int(s["l2_read"]), f"{hit:.4f}",
                        size, f"{ratio:.4f}"])


if __name__ == "__main__":
    main()
