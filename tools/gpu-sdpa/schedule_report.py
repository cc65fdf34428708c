#!/usr/bin/env python3
"""schedule.sh's output as one CSV row a case: python3 tools/gpu-sdpa/schedule_report.py DIR
Columns: the case (batch, heads, gap, layout, cycles), DRAM MB read in all and per (batch,
head), L2 read lookup misses MB, kernel ms; and from the plain run's blocks: the kernel's
length (ms, first start to last end), the blocks that started before a block earlier in grid
order (of all), and the largest distance in grid order between a block's place and its start's
rank (empty where the blocks' file, or its .gz, is not kept)."""

import csv
import gzip
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu-l2"))
from stride_parse import kernels  # noqa: E402


def blocks(path):
    if not os.path.exists(path) and not os.path.exists(path + ".gz"):
        return None
    with open(path) if os.path.exists(path) else gzip.open(path + ".gz", "rt") as f:
        rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
    start = [int(r["start_ns"]) for r in rows]
    end = [int(r["end_ns"]) for r in rows]
    order = sorted(range(len(rows)), key=lambda i: start[i])
    inversions = sum(1 for a, b in zip(order, order[1:]) if b < a)
    displaced = max(abs(rank - i) for rank, i in enumerate(order))
    return max(end) / 1e6, inversions, len(rows), displaced


def main():
    d = sys.argv[1]
    cases = [l.split()[1] for l in open(os.path.join(d, "run.log")) if l.startswith("case ")]
    num = lambda s: float(s.replace(",", ""))
    print("batch,heads,gap,layout,cycles,dram_read_mb,mb_per_head,lookup_miss_mb,kernel_ms,"
          "plain_ms,out_of_order,blocks,max_displacement")
    for c in cases:
        b, h, gap, layout, cycles = c.split("-")
        k = list(kernels(os.path.join(d, f"ncu-{c}.csv")))[0]
        rd = num(k["dram__bytes_read.sum"]) / 1e6
        miss = num(k["lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum"]) * 32 / 1e6
        ms = num(k["gpu__time_duration.sum"]) / 1e6
        got = blocks(os.path.join(d, f"blocks-{c}.csv"))
        heads = int(b) * int(h)
        tail = "{:.3f},{},{},{}".format(*got) if got else ",,,"
        print(f"{b},{h},{gap},{layout},{cycles},{rd:.1f},{rd / heads:.2f},{miss:.1f},{ms:.3f},"
              + tail)


if __name__ == "__main__":
    main()
