#!/usr/bin/env python3
"""memsim's GPU SDPA model against Nsight Compute on every row of docs/gpu-run/sdpa/sdpa.csv.

    python3 tools/gpu-sdpa/report.py --memsim build/memsim [--markdown] [-- extra memsim args]
    python3 tools/gpu-sdpa/report.py --memsim build/memsim --alternatives

Runs `memsim sdpa --json -` for each measured shape and prints, per row, ncu's DRAM bytes
(read + written), the model's, and their ratio; then the median and worst |ratio - 1|. With
--markdown the table is docs/gpu.md's. Extra arguments after -- go to every memsim call (for
trying the model's knobs: --l2 50M, --slots 132). --alternatives prints one summary row per
L2 model docs/gpu.md compares, with the even and odd rows (data rows 0, 2, 4, ... and 1, 3,
5, ... of sdpa.csv) apart, for models fitted to one half.
"""

import argparse
import csv
import json
import math
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


ALTERNATIVES = [
    ("hashed lines, the microbenchmarks' model: 2 partitions of 25 MiB, 32-way LRU, 16 dirty "
     "ways, spill frames (the default)", []),
    ("as the default, no spills", ["--no-spill"]),
    ("lines by address, hashed by 2 MiB page (pages coloured at random), 16 ways",
     ["--l2-hash", "pages"]),
    ("as the default with SRRIP", ["--l2-policy", "srrip"]),
    ("as the default without the dirty cap", ["--l2-dirty-ways", "0"]),
    ("hashed lines, one partition of 38 MiB, 32 ways, 20 dirty ways",
     ["--l2-partitions", "1", "--l2", "38M", "--l2-dirty-ways", "20"]),
    ("one LRU of 22 MiB (whole tiles)", ["--l2-model", "lru"]),
    ("one LRU of 22 MiB, no spills", ["--l2-model", "lru", "--no-spill"]),
    ("one LRU of 25 MiB (one partition)", ["--l2-model", "lru", "--l2", "25M"]),
    ("one LRU of 50 MiB (the whole L2)", ["--l2-model", "lru", "--l2", "50M"]),
    ("two partitions of 25 MiB", ["--l2-model", "partitions", "--l2", "50M"]),
    ("22 MiB, random replacement", ["--l2-model", "random"]),
    ("22 MiB, 22 ways, tiles hashed to sets", ["--l2-model", "lru", "--l2-ways", "22"]),
]


def summary(ratios):
    """The median |model / ncu - 1|, the worst model / ncu, the rows within 10%, the root mean
    square of log(model / ncu)."""
    errs = [abs(x - 1) for x in ratios]
    worst = max(ratios, key=lambda x: abs(x - 1))
    rms = math.sqrt(sum(math.log(x) ** 2 for x in ratios) / len(ratios))
    return statistics.median(errs), worst, sum(1 for e in errs if e <= 0.10), rms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--memsim", default="build/memsim")
    ap.add_argument("--csv", default=CSV)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--alternatives", action="store_true")
    ap.add_argument("extra", nargs="*")
    a = ap.parse_args()
    with open(a.csv, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if a.alternatives:
        print("| L2 model (`memsim sdpa` options) | median \\|model/ncu - 1\\| | worst model/ncu "
              "| rows within 10% | RMS of log(model/ncu) | even rows: median, within 10% "
              "| odd rows: median, within 10% |")
        print("|---|---|---|---|---|---|---|")
        for name, extra in ALTERNATIVES:
            ratios = [model(a.memsim, r, extra)["dram"]["bytes"]
                      / (int(r["dram_read_bytes"]) + int(r["dram_write_bytes"])) for r in rows]
            med, worst, within, rms = summary(ratios)
            even, odd = summary(ratios[0::2]), summary(ratios[1::2])
            opts = " ".join(extra) or "(none)"
            print(f"| {name} (`{opts}`) | {med:.2%} | {worst:.2f} | {within} of {len(rows)} "
                  f"| {rms:.3f} | {even[0]:.2%}, {even[2]} of {len(ratios[0::2])} "
                  f"| {odd[0]:.2%}, {odd[2]} of {len(ratios[1::2])} |")
        return 0
    errs, ratios, reads, with_ncu_writes = [], [], [], []
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
        ratios.append(ratio)
        reads.append(j["dram"]["read_bytes"] / int(r["dram_read_bytes"]))
        with_ncu_writes.append((j["dram"]["read_bytes"] + int(r["dram_write_bytes"])) / ncu)
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
    worst = max(ratios, key=lambda x: abs(x - 1))
    within = sum(1 for e in errs if e <= 0.10)
    r_med, r_worst, r_within, _ = summary(reads)
    w_med, w_worst, w_within, _ = summary(with_ncu_writes)
    if a.markdown:
        print(f"\n{len(errs)} rows: median \\|model / ncu - 1\\| {med:.2%}, worst model / ncu "
              f"{worst:.2f}, {within} within 10%.")
        print(f"DRAM reads alone: median {r_med:.2%}, worst {r_worst:.2f}, {r_within} within "
              f"10%. The model's reads with ncu's writes: median {w_med:.2%}, worst "
              f"{w_worst:.2f}, {w_within} within 10%.")
    else:
        print(f"\n{len(errs)} rows: median |model/ncu - 1| {med:.4f}, worst {worst:.4f}, "
              f"{within} within 10%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
