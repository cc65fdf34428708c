#!/usr/bin/env python3
"""stride_parse.py's CSV as a markdown table: one row a buffer size W, one column a layout
(piece KiB every stride KiB), the re-read's L2 read lookup misses in MiB; a layout run more
than once shows every run. python3 tools/gpu-l2/pieces_report.py docs/gpu-run/l2-pieces/h100/stride.csv"""

import csv
import sys


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    cols, cells = [], {}
    for r in rows:
        col = (int(r["piece_kib"]), int(r["stride_kib"]))
        if col not in cols:
            cols.append(col)
        cell = cells.setdefault((int(r["w_mib"]), col), [])
        miss = int(r["reread_l2_lookup_miss_bytes"]) / (1 << 20)
        split = "*" if int(r.get("reread_kernels", "1")) > 1 else ""
        cell.append(f"{miss:.1f}{split}")
    name = lambda p, s: f"{p} KiB contiguous" if p == s else f"{p} KiB every {s} KiB"
    print("| W MiB | " + " | ".join(name(p, s) for p, s in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for w in sorted({w for w, _ in cells}):
        print(f"| {w} | " + " | ".join(", ".join(cells.get((w, c), ["-"])) for c in cols) + " |")


if __name__ == "__main__":
    main()
