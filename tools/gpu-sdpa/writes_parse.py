#!/usr/bin/env python3
"""writes.sh's ncu.csv (or ncu.csv.gz) as a markdown table: per shape, DRAM MB read and written,
and the L2 write sectors (x 32 bytes, MB) by source, with the SMs' local and global stores.

    python3 tools/gpu-sdpa/writes_parse.py docs/gpu-run/sdpa-writes
"""

import csv
import gzip
import os
import sys

SHAPES = ["8,16,16,16384,64 causal", "8,16,16,16384,64", "1,16,16,16384,128", "8,16,4,4096,64"]
COLS = [("DRAM read", "dram__bytes_read.sum", 1), ("DRAM written", "dram__bytes_write.sum", 1),
        ("L2 writes", "lts__t_sectors_op_write.sum", 32),
        ("from the SMs", "lts__t_sectors_srcunit_tex_op_write.sum", 32),
        ("over the fabric", "lts__t_sectors_srcunit_ltcfabric_op_write.sum", 32),
        ("SM local stores", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", 32),
        ("SM global stores", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 32)]


def rows(d):
    path = os.path.join(d, "ncu.csv")
    f = open(path) if os.path.exists(path) else gzip.open(path + ".gz", "rt")
    header = None
    for r in csv.reader(line for line in f if not line.startswith("==")):
        if r and r[0] == "ID":
            header = r
            continue
        if header and len(r) == len(header):
            x = dict(zip(header, r))
            if "flash" in x["Kernel Name"]:
                yield x


def main():
    print("| shape (batch, heads, kv heads, N, d) | " + " | ".join(c[0] + " MB" for c in COLS) + " |")
    print("|---" * (len(COLS) + 1) + "|")
    for shape, r in zip(SHAPES, rows(sys.argv[1])):
        vals = [float(r[k].replace(",", "")) * m / 1e6 for _, k, m in COLS]
        print(f"| {shape} | " + " | ".join(f"{v:.1f}" for v in vals) + " |")


if __name__ == "__main__":
    main()
