#!/usr/bin/env python3
"""L2 models against the H100's L2 microbenchmarks (docs/gpu-run/l2-policy/).

    python3 tools/gpu-sdpa/l2fit.py --memsim build/memsim [--markdown] [-- l2probe options]
    python3 tools/gpu-sdpa/l2fit.py --memsim build/memsim --models

Replays every measured case (cyclic re-reads, scans, fills), in the order the GPU ran them, on
one `memsim l2probe` cache, and compares each step's DRAM bytes with ncu's. A step's error is
(|read - ncu read| + |written - ncu written|) / the bytes the step touches; the score of a model
is the root mean square of that over all steps but the flushes, and over each experiment.
Without --models it prints the steps of one model (the l2probe options after --); with
--models one summary row per model docs/gpu.md compares.
"""

import argparse
import csv
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.path.join(HERE, "..", "..", "docs", "gpu-run", "l2-policy")
MIB = 1 << 20

# (name, l2probe options): the models docs/gpu.md compares (l2probe simulates 1 set in 8)
MODELS = [
    ("LRU, 22 MiB, 64 ways (about the SDPA tile model's fully associative LRU)",
     ["--l2", "22M", "--ways", "64"]),
    ("LRU, 38 MiB, 32 ways, 20 dirty ways (the best of one partition)",
     ["--l2", "38M", "--ways", "32", "--dirty-ways", "20"]),
    ("LRU, 2 partitions of 25 MiB, 32 ways, no dirty cap",
     ["--l2", "50M", "--partitions", "2", "--ways", "32"]),
    ("LRU, 2 partitions of 25 MiB, 32 ways, 16 dirty ways (--l2-model hashed)",
     ["--l2", "50M", "--partitions", "2", "--ways", "32", "--dirty-ways", "16"]),
    ("LRU, 2 partitions of 25 MiB, 16 ways, 8 dirty ways",
     ["--l2", "50M", "--partitions", "2", "--ways", "16", "--dirty-ways", "8"]),
    ("SRRIP, 2 partitions of 25 MiB, 32 ways, 16 dirty ways",
     ["--l2", "50M", "--partitions", "2", "--ways", "32", "--dirty-ways", "16",
      "--policy", "srrip"]),
    ("random, 2 partitions of 25 MiB, 32 ways, 16 dirty ways",
     ["--l2", "50M", "--partitions", "2", "--ways", "32", "--dirty-ways", "16",
      "--policy", "random"]),
]


def load(d):
    with open(os.path.join(d, "cases.json"), encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    with open(os.path.join(d, "l2-policy.csv"), encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return cases, rows


def probe_steps(cases):
    """The l2probe steps of all cases in order."""
    steps = []
    for c in cases:
        for s in c["steps"]:
            if s == "flush":
                steps.append("flush")
                continue
            op, buf = s.split()
            size = c["x"] if buf == "x" else c["b"]
            steps.append(f"{'fill' if op == 'fill' else 'read'}:{buf}:{size}M")
    return steps


def run_model(memsim, cases, opts):
    args = [memsim, "l2probe", "--sample", "8"] + opts + ["--json", "-"] + probe_steps(cases)
    p = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(p.stdout)["steps"]


def compare(cases, rows, steps):
    """[(exp, x, b, step name, ncu read, ncu written, model read, model written, error)] in
    MiB, flushes left out."""
    out = []
    for r, s in zip(rows, steps):
        if r["name"] == "flush":
            continue
        size = float(r["x_mib"]) if r["name"].endswith("x") else float(r["b_mib"])
        mr, mw = s["dram_read_bytes"] / MIB, s["dram_write_bytes"] / MIB
        nr, nw = float(r["dram_read_mib"]), float(r["dram_write_mib"])
        out.append((r["exp"], r["x_mib"], r["b_mib"], r["name"], nr, nw, mr, mw,
                    (abs(mr - nr) + abs(mw - nw)) / size))
    return out


def rms(errs):
    return math.sqrt(sum(e * e for e in errs) / len(errs)) if errs else 0.0


def scores(cmp):
    by = {}
    for c in cmp:
        by.setdefault(c[0], []).append(c[8])
    return rms([c[8] for c in cmp]), {k: rms(v) for k, v in by.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--memsim", default="build/memsim")
    ap.add_argument("--dir", default=DIR)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--models", action="store_true")
    ap.add_argument("extra", nargs="*")
    a = ap.parse_args()
    cases, rows = load(a.dir)
    if len(rows) != len(probe_steps(cases)):
        sys.exit("l2fit: cases.json and l2-policy.csv disagree on the steps")
    if a.models:
        print("| L2 model (`memsim l2probe` options) | RMS error, all steps | cyclic | scan "
              "| write | write2 |")
        print("|---|---|---|---|---|---|")
        for name, opts in MODELS:
            total, by = scores(compare(cases, rows, run_model(a.memsim, cases, opts)))
            print(f"| {name} (`{' '.join(opts)}`) | {total:.3f} | {by['cyclic']:.3f} "
                  f"| {by['scan']:.3f} | {by['write']:.3f} | {by['write2']:.3f} |")
        return 0
    cmp = compare(cases, rows, run_model(a.memsim, cases, a.extra))
    if a.markdown:
        print("| experiment | X MiB | B MiB | step | ncu MiB read | ncu MiB written "
              "| model MiB read | model MiB written |")
        print("|---|---|---|---|---|---|---|---|")
    for c in cmp:
        if a.markdown:
            print(f"| {c[0]} | {c[1]} | {c[2]} | {c[3]} | {c[4]:.1f} | {c[5]:.1f} "
                  f"| {c[6]:.1f} | {c[7]:.1f} |")
        else:
            print(f"{c[0]:7} x {c[1]:>3} b {c[2]:>3} {c[3]:7} ncu {c[4]:7.2f} {c[5]:6.2f}  "
                  f"model {c[6]:7.2f} {c[7]:6.2f}  err {c[8]:.3f}")
    total, by = scores(cmp)
    print(f"\nRMS error {total:.3f}; " + ", ".join(f"{k} {v:.3f}" for k, v in by.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
