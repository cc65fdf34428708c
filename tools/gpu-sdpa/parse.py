#!/usr/bin/env python3
"""Joins measure.sh's shapes.json and ncu.csv into one row per shape (sdpa.csv on stdout):
the shape, the flash kernels it launched (split-KV and combine for decode), their DRAM bytes
read and written, time, grid, block and waves per SM.

    python3 tools/gpu-sdpa/parse.py docs/gpu-run/sdpa > docs/gpu-run/sdpa/sdpa.csv

ncu.csv lists the profiled kernels in launch order; each shape's marker (a one-element fill)
comes right before its SDPA kernels, so the kernels between two markers are one shape's.
"""

import csv
import json
import os
import sys


def kernels(path):
    rows = csv.DictReader(line for line in open(path) if not line.startswith("=="))
    for r in rows:
        if not r["Kernel Name"]:  # the units row
            continue
        yield r


def num(text):
    """ncu's numbers, with thousands separators."""
    return float(text.replace(",", ""))


def short(name):
    for k in ("flash_fwd_splitkv_combine_kernel", "flash_fwd_splitkv_kernel", "flash_fwd_kernel"):
        if k in name:
            return k
    return name.split("<")[0].split()[-1]


def main():
    d = sys.argv[1]
    meta = json.load(open(os.path.join(d, "shapes.json")))
    shapes = meta["shapes"]
    per = [[] for _ in shapes]
    i = -1
    for r in kernels(os.path.join(d, "ncu.csv")):
        if "FillFunctor" in r["Kernel Name"]:
            i += 1
            continue
        if i < 0:
            sys.exit("parse: a flash kernel before the first marker")
        per[i].append(r)
    if i != len(shapes) - 1:
        sys.exit(f"parse: {i + 1} markers for {len(shapes)} shapes")
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["batch", "heads", "kv_heads", "N", "N_kv", "d", "causal", "dtype", "kernels",
                "dram_read_bytes", "dram_write_bytes", "time_ns", "grid", "block", "waves"])
    for s, ks in zip(shapes, per):
        if not s.get("ok"):
            continue
        rd = sum(num(k["dram__bytes_read.sum"]) for k in ks)
        wr = sum(num(k["dram__bytes_write.sum"]) for k in ks)
        t = sum(num(k["gpu__time_duration.sum"]) for k in ks)
        w.writerow([s["batch"], s["heads"], s["kv_heads"], s["N"], s["N_kv"], s["d"],
                    int(s["causal"]), s["dtype"], "+".join(short(k["Kernel Name"]) for k in ks),
                    int(rd), int(wr), int(t), "+".join(k["Grid Size"] for k in ks),
                    "+".join(k["Block Size"] for k in ks),
                    "+".join(k["launch__waves_per_multiprocessor"] for k in ks)])


if __name__ == "__main__":
    main()
