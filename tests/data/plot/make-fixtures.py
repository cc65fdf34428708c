#!/usr/bin/env python3
"""Writes the fixtures of tests/test-plot.c into study/ beside this script.

lab/results.json and exact/results.json are rows of a real `memsim study` (memsim 0.1.0,
2026-11-22) cut down to the keys `memsim plot` reads: the lab sweep at N = 256 .. 4096
(fp32 on both presets, fp16 on the lab preset, which the plots leave out), the exactness
sweep at N = 1024 and 2048 for naive, flash1 and flash2 and one proj row (left out too).
profile/results.json and ceilings.json are made up: a layer of d_model 64 (4 heads of 16),
T = 64 .. 2048, timed on a pretend 4-core AVX2 machine whose roofline they follow.
decode/results.json: rows of the study's decode step (N_kv = 1024 .. 4096, MHA, GQA, MQA).

Usage: [DECODE_DIR=DIR] python3 make-fixtures.py [STUDY_DIR]   (default /work/main/out/study)
"""
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
study = sys.argv[1] if len(sys.argv) > 1 else "/work/main/out/study"
out = os.path.join(here, "study")


def trim(r):
    c = r["config"]
    return {
        "memsim_version": r["memsim_version"],
        "config": {k: c[k] for k in ("kernel", "N", "d", "heads", "kv_heads", "batch", "dtype",
                                      "Br", "Bc", "causal", "cache", "preset")},
        "levels": [{k: lv[k] for k in ("name", "size_bytes", "assoc", "line_bytes")}
                   for lv in r["levels"]],
        "dram": {k: r["dram"][k] for k in ("read_bytes", "write_bytes", "rfo_bytes",
                                            "flush_write_bytes", "total_bytes")},
        "formulas": {"lab": r["formulas"]["lab"],
                     "exact": {"bytes": r["formulas"]["exact"]["bytes"]}},
        "flops": r["flops"],
        "intensity": r["intensity"],
    }


def rows(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def write_lines(path, objs):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for o in objs:
            f.write(json.dumps(o, separators=(",", ":")) + "\n")


lab = [trim(r) for r in rows(os.path.join(study, "lab", "results.json"))
       if r["config"]["N"] <= 4096
       and (r["config"]["dtype"] == "fp32" or r["config"]["preset"] == "lab")]
write_lines(os.path.join(out, "lab", "results.json"), lab)

exact = []
for r in rows(os.path.join(study, "exact", "results.json")):
    c = r["config"]
    if c["causal"] or c["N"] not in (1024, 2048):
        continue
    if c["kernel"] == "proj" and not (c["N"] == 2048 and r["levels"][0]["size_bytes"] == 32768):
        continue
    exact.append(trim(r))
write_lines(os.path.join(out, "exact", "results.json"), exact)

# The pretend machine: 4 cores; one core streams 14 GB/s and does 2 x 8-wide fp32 FMA at
# 3.2 GHz (102 GFLOP/s); all cores 24 GB/s and 3.4x the FLOPs.
BW1, BW4, PK1, PK4 = 14.0e9, 24.0e9, 102.4e9, 348.0e9
ceilings = {
    "memsim_version": "0.1.0", "date": "2026-11-23T10:00:00Z",
    "cpu": "Pretend CPU @ 3.20GHz (test fixture)", "cores": 4, "quick": True,
    "bandwidth": {"method": "stream triad, best of repetitions", "array_bytes": 268435456,
                  "repetitions": 5, "one_core_bytes_per_s": BW1, "all_cores_bytes_per_s": BW4,
                  "threads": 4},
    "peak_flops": {"method": "independent FMA chains", "isa": "avx2+fma",
                   "one_core_flops_per_s": PK1, "all_cores_flops_per_s": PK4, "threads": 4},
}
with open(os.path.join(out, "ceilings.json"), "w") as f:
    json.dump(ceilings, f, indent=2)
    f.write("\n")

D, H, DH, S = 64, 4, 16, 4


def op_cost(kernel, op, T):
    """FLOPs and simulated DRAM bytes of one operation of the layer."""
    if op == "qkv_proj":
        return 6 * T * D * D, S * (T * D + 3 * D * D + 3 * T * D)
    if op == "out_proj":
        return 2 * T * D * D, S * (2 * T * D + D * D)
    if op == "scores":
        return 2 * T * T * DH * H, S * (2 * T * D + H * T * T)
    if op == "softmax":
        return 5 * H * T * T, S * 2 * H * T * T
    if op == "av":
        return 2 * T * T * DH * H, S * (H * T * T + 2 * T * D)
    # A flash kernel: K and V read once per query block (flash1 also re-reads O, m, l).
    blocks = max(1, T // 64)
    extra = 2 * T * D * (blocks - 1) if kernel == "flash1" else 0
    return 4 * T * T * DH * H + 5 * H * T * T, S * (4 * T * D + extra) + T * H * 8


def row(kernel, op, T, p50, flops, nbytes):
    return {"T": T, "d_model": D, "heads": H, "d_head": DH, "dtype": "fp32", "kernel": kernel,
            "op": op, "seconds": {"p50": p50, "p95": p50 * 1.12, "p99": p50 * 1.31,
                                  "mean": p50 * 1.04},
            "repetitions": 50, "calls_per_repetition": 1, "flops": flops, "dram_bytes": nbytes,
            "intensity": flops / nbytes, "gflops": flops / p50 / 1e9,
            "tokens_per_s": T / p50, "cache": "L1=32K:8:64,L2=256K:4:64,L3=6M:12:64:incl",
            "preset": "i5-8250u"}


# Efficiency of each op against the one-core roofline: softmax (exp, a max and a sum per
# score) runs far from the compute peak; small T pays a fixed call overhead.
EFF = {"qkv_proj": 0.55, "out_proj": 0.5, "scores": 0.45, "softmax": 0.06, "av": 0.4,
       "attention": 0.3}
prof = []
for T in (64, 128, 256, 512, 1024, 2048):
    layer = {}
    for kernel, op in (("proj", "qkv_proj"), ("naive", "scores"), ("naive", "softmax"),
                       ("naive", "av"), ("flash1", "attention"), ("flash2", "attention"),
                       ("proj", "out_proj")):
        flops, nbytes = op_cost(kernel, op, T)
        p50 = 2e-6 + max(flops / (PK1 * EFF[op]), nbytes / (BW1 * 0.8))
        prof.append(row(kernel, op, T, p50, flops, nbytes))
        for lk in ("naive", "flash1", "flash2"):
            if kernel in ("proj", lk):
                acc = layer.setdefault(lk, [0.0, 0, 0])
                acc[0] += p50
                acc[1] += flops
                acc[2] += nbytes
    for lk, (p50, flops, nbytes) in sorted(layer.items()):
        prof.append(row(lk, "layer", T, p50, flops, nbytes))
write_lines(os.path.join(out, "profile", "results.json"), prof)


def trim_decode(r):
    c = r["config"]
    return {
        "memsim_version": r["memsim_version"],
        "config": {k: c[k] for k in ("kernel", "N", "N_kv", "d", "heads", "kv_heads", "batch",
                                      "dtype", "cache", "preset", "trace_only")},
        "mode": r["mode"],
        "formulas": {"exact": {"bytes": r["formulas"]["exact"]["bytes"]}},
        "per_token": r["per_token"],
    }


# decode/results.json: the study's decode step (memsim 0.3.0, 2026-11-26) at N_kv = 1024 ..
# 4096, from DECODE_DIR (default STUDY_DIR/decode).
decode_dir = os.environ.get("DECODE_DIR", os.path.join(study, "decode"))
decode = [trim_decode(r) for r in rows(os.path.join(decode_dir, "results.json"))
          if r["config"]["N_kv"] <= 4096]
decode.sort(key=lambda r: (r["config"]["N_kv"], -r["config"]["kv_heads"]))
write_lines(os.path.join(out, "decode", "results.json"), decode)
