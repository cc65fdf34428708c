#!/usr/bin/env python3
"""Markdown tables of l2-policy.csv (parse.py's output): for each experiment, the fraction of
the re-read bytes that came from DRAM.

    python3 tools/gpu-l2/summary.py docs/gpu-run/l2-policy/l2-policy.csv
"""

import csv
import sys
from collections import defaultdict


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    by = defaultdict(list)
    for r in rows:
        by[(r["exp"], int(r["x_mib"]), int(r["b_mib"]))].append(r)

    def miss(r, size):
        return float(r["dram_read_mib"]) / size

    print("Cyclic: X MiB read three times after a flush; DRAM bytes of passes 2 and 3 over X.\n")
    print("| X MiB | pass 2 from DRAM | pass 3 from DRAM |")
    print("|---|---|---|")
    for (e, x, _), rs in sorted(by.items()):
        if e == "cyclic":
            print(f"| {x} | {miss(rs[2], x):.3f} | {miss(rs[3], x):.3f} |")
    print("\nScan: A MiB read, B MiB streamed once, A read again; DRAM bytes of A's second read "
          "over A.\n")
    bs = sorted({b for (e, _, b) in by if e == "scan"})
    print("| A MiB | " + " | ".join(f"B = {b}" for b in bs) + " |")
    print("|---" * (len(bs) + 1) + "|")
    for a in sorted({x for (e, x, _) in by if e == "scan"}):
        cells = [f"{miss(by[('scan', a, b)][3], a):.3f}" for b in bs]
        print(f"| {a} | " + " | ".join(cells) + " |")
    print("\nWrite: X MiB filled (written, not read), then read; MiB written to DRAM by the fill "
          "and by the read, and the read's DRAM bytes over X.\n")
    print("| X MiB | fill: DRAM written | read: DRAM written | read from DRAM |")
    print("|---|---|---|---|")
    for (e, x, _), rs in sorted(by.items()):
        if e == "write":
            print(f"| {x} | {float(rs[1]['dram_write_mib']):.1f} | "
                  f"{float(rs[2]['dram_write_mib']):.1f} | {miss(rs[2], x):.3f} |")


if __name__ == "__main__":
    main()
