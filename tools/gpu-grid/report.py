#!/usr/bin/env python3
"""docs/gpu.md's table of memsim's CUDA kernels on the grid (tools/gpu-grid/shapes.txt) from
the gpucheck --json files grid.sh run wrote:

    python3 tools/gpu-grid/report.py docs/gpu-run/grid [--markdown] [--memsim DIR]

With --memsim DIR, memsim's side is read from the gpucheck --no-gpu --json files in DIR (grid.sh
bundle's gpu-grid/, say, under another --model) and ncu's from the results: a model can be
compared with the stored measurements without a GPU.

Per shape: memsim's DRAM MB on the h100 preset (read + written, each launch cold, no final
flush: what ncu counts), ncu's DRAM MB, the idle kernel's MB (the background, docs/gpu.md),
ncu's net MB (ncu less idle) and net / memsim; last, the median and the worst |net/memsim - 1|
and the number of rows within 10%.
"""

import json
import os
import statistics
import sys


def shapes(d):
    here = os.path.dirname(os.path.abspath(__file__))
    for line in open(os.path.join(here, "shapes.txt")):
        if line.strip() and not line.startswith("#"):
            k, n, nk, dd, h, kv, b, t, c = line.split()
            yield (k, n, nk, dd, h, kv, b, t, c), \
                f"{k}-N{n}-K{nk}-d{dd}-h{h}-kv{kv}-b{b}-{t}-c{c}.json"


def row(path, side=None):
    m = json.load(open(path))["memsim"]
    s = json.load(open(side))["memsim"] if side else m
    mem = ncu = idle = 0.0
    for launch in s["launches"]:
        mem += launch["memsim_read_bytes"] + launch["memsim_write_bytes"]
    for launch in m["launches"]:
        ncu += launch["ncu_dram_read_bytes"] + launch["ncu_dram_write_bytes"]
        idle += launch.get("idle_dram_read_bytes", 0) + launch.get("idle_dram_write_bytes", 0)
    return mem / 1e6, ncu / 1e6, idle / 1e6


def main():
    d = sys.argv[1]
    md = "--markdown" in sys.argv
    side = sys.argv[sys.argv.index("--memsim") + 1] if "--memsim" in sys.argv else None
    out, ratios = [], []
    for (k, n, nk, dd, h, kv, b, t, c), f in shapes(d):
        p = os.path.join(d, f)
        if not os.path.exists(p):
            print(f"report.py: no result for {f}", file=sys.stderr)
            continue
        mem, ncu, idle = row(p, os.path.join(side, f) if side else None)
        net = ncu - idle
        ratio = net / mem if mem else float("nan")
        ratios.append(ratio)
        out.append([k, b, h, kv, n, nk, dd, "yes" if c == "1" else "no", t, f"{mem:.1f}",
                    f"{ncu:.1f}", f"{idle:.1f}", f"{net:.1f}", f"**{ratio:.3f}**"])
    head = ["kernel", "batch", "heads", "kv heads", "N", "N_kv", "d", "causal", "dtype",
            "memsim MB", "ncu MB", "idle MB", "net MB", "net / memsim"]
    if md:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in out:
            print("| " + " | ".join(r) + " |")
    else:
        for r in [head] + out:
            print(" ".join(f"{x:>10}" for x in r))
    dev = [abs(r - 1) for r in ratios]
    within = sum(1 for x in dev if x <= 0.10)
    print(f"\n{len(ratios)} rows: median |net/memsim - 1| {100 * statistics.median(dev):.2f}%, "
          f"worst {100 * max(dev):.1f}%, {within} within 10%.")


if __name__ == "__main__":
    main()
