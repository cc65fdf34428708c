#!/usr/bin/env python3
"""excess.sh's ncu.csv and run.log as one CSV row a shape:
python3 tools/gpu-sdpa/excess_parse.py docs/gpu-run/sdpa-excess > excess.csv

Columns: the shape (batch, heads, kv heads, N, N_kv, d, causal, dtype), the grid's blocks,
DRAM bytes read and written, and the bytes the SMs stored to and loaded from local memory and
stored to global memory (ncu's L1 sectors, 32 bytes each)."""

import csv
import sys

METRICS = ["dram__bytes_read.sum", "dram__bytes_write.sum",
           "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
           "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
           "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]


def kernels(path):
    header = None
    for row in csv.reader(l for l in open(path) if l.startswith('"')):
        if row[0] == "ID":
            header = row
        elif header and row[0].isdigit() and "flash" in dict(zip(header, row))["Kernel Name"]:
            yield dict(zip(header, row))


def main():
    d = sys.argv[1]
    shapes = [l.split()[1:] for l in open(f"{d}/run.log") if l.startswith("shape ")]
    rows = list(kernels(f"{d}/ncu.csv"))
    if len(rows) != len(shapes):
        sys.exit(f"excess_parse.py: {len(shapes)} shapes but {len(rows)} kernels in {d}/ncu.csv")
    num = lambda s: float(s.replace(",", ""))
    print("batch,heads,kv_heads,N,N_kv,d,causal,dtype,blocks,dram_read_bytes,dram_write_bytes,"
          "local_store_bytes,local_load_bytes,global_store_bytes")
    for s, r in zip(shapes, rows):
        b, h, hk, n, dd, causal, dtype, nkv = s
        vals = [num(r[m]) for m in METRICS]
        blocks = int(num(r["launch__grid_size"]))
        print(f"{b},{h},{hk},{n},{nkv},{dd},{causal},{dtype},{blocks},{vals[0]:.0f},{vals[1]:.0f},"
              f"{vals[2] * 32:.0f},{vals[3] * 32:.0f},{vals[4] * 32:.0f}")


if __name__ == "__main__":
    main()
