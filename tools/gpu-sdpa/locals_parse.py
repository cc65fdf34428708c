#!/usr/bin/env python3
"""locals.sh's ncu.csv and run.log as one CSV row a shape:
python3 tools/gpu-sdpa/locals_parse.py docs/gpu-run/sdpa-locals > locals.csv

Columns: the shape (batch, heads, kv heads, N, N_kv, d, causal, dtype), DRAM bytes read and
written, the L2's reads from the SMs and those that missed in the partition looked up
(lts__t_sectors_srcunit_tex_op_read and its lookup_miss, 32-byte sectors), and the SMs' local
loads and those that missed the L1 (l1tex sectors), and how q, k and v were stored (bh:
PyTorch's [b, h, N, d]; hb: head-major, layout.sh). test-sdpa's test_lookup_misses reads it."""

import sys

from excess_parse import kernels

METRICS = ["dram__bytes_read.sum", "dram__bytes_write.sum"]
SECTORS = ["lts__t_sectors_srcunit_tex_op_read.sum",
           "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum",
           "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
           "l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_miss.sum"]


def main():
    d = sys.argv[1]
    shapes, layout = [], "bh"
    for l in open(f"{d}/run.log"):
        if l.startswith("layout "):  # layout.sh: what follows is stored this way
            layout = l.split()[1]
        elif l.startswith("shape "):
            shapes.append(l.split()[1:] + [layout])
    rows = list(kernels(f"{d}/ncu.csv"))
    if len(rows) != len(shapes):
        sys.exit(f"locals_parse.py: {len(shapes)} shapes but {len(rows)} kernels in {d}/ncu.csv")
    num = lambda s: float(s.replace(",", ""))
    print("batch,heads,kv_heads,N,N_kv,d,causal,dtype,dram_read_bytes,dram_write_bytes,"
          "l2_read_bytes,l2_read_lookup_miss_bytes,local_load_bytes,local_load_l1_miss_bytes,"
          "layout")
    for s, r in zip(shapes, rows):
        b, h, hk, n, dd, causal, dtype, nkv, lay = s
        vals = [f"{num(r[m]):.0f}" for m in METRICS] + [f"{num(r[m]) * 32:.0f}" for m in SECTORS]
        print(f"{b},{h},{hk},{n},{nkv},{dd},{causal},{dtype}," + ",".join(vals) + f",{lay}")


if __name__ == "__main__":
    main()
