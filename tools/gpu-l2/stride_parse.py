#!/usr/bin/env python3
"""stride.sh's output as one CSV row a case: python3 tools/gpu-l2/stride_parse.py DIR
Columns: W MiB, piece KiB, stride KiB, then for the second pass (the re-read): DRAM bytes read,
L2 read bytes and lookup misses; the share of W the re-read fetched from DRAM, and the
kernels the re-read took (more than 1 where PyTorch split the view)."""

import csv
import gzip
import os
import sys


def kernels(path):
    """ncu's raw CSV page at path (or path.gz) as one dict a kernel."""
    f = open(path) if os.path.exists(path) else gzip.open(path + ".gz", "rt")
    header = None
    for row in csv.reader(l for l in f if l.startswith('"')):
        if row[0] == "ID":
            header = row
        elif header and row[0].isdigit():
            yield dict(zip(header, row))


NUM = lambda s: float(s.replace(",", ""))


def rereads(d, who):
    """DIR's cases (run.log's "case" lines, split) and each case's re-read: the kernels of its
    second pass. Each case is the flush (a 256 MiB sum: 2^23 sectors read), then two passes,
    each one kernel or several where the view passes 32-bit indexing and PyTorch splits it."""
    cases = [l.split()[1:] for l in open(f"{d}/run.log") if l.startswith("case ")]
    groups = []
    for k in kernels(f"{d}/ncu.csv"):
        if NUM(k["lts__t_sectors_srcunit_tex_op_read.sum"]) >= 1 << 23:
            groups.append([])
        elif groups:
            groups[-1].append(k)
    if len(groups) != len(cases) or any(len(g) % 2 or not g for g in groups):
        sys.exit(f"{who}: {len(cases)} cases but {len(groups)} flushes, or a case whose passes "
                 "are not two halves")
    return cases, [g[len(g) // 2:] for g in groups]


def main():
    cases, seconds = rereads(sys.argv[1], "stride_parse.py")
    num = NUM
    print("w_mib,piece_kib,stride_kib,reread_dram_read_bytes,reread_l2_read_bytes,"
          "reread_l2_lookup_miss_bytes,reread_dram_share,reread_kernels")
    for (w, p, s), second in zip(cases, seconds):
        rd = sum(num(k["dram__bytes_read.sum"]) for k in second)
        l2 = sum(num(k["lts__t_sectors_srcunit_tex_op_read.sum"]) for k in second) * 32
        miss = sum(num(k["lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum"])
                   for k in second) * 32
        print(f"{w},{p},{s},{rd:.0f},{l2:.0f},{miss:.0f},{rd / (int(w) << 20):.4f},"
              f"{len(second)}")

if __name__ == "__main__":
    main()
