#!/usr/bin/env python3
"""stride.sh's output as one CSV row a case: python3 tools/gpu-l2/stride_parse.py DIR
Columns: W MiB, piece KiB, stride KiB, then for the second pass (the re-read): DRAM bytes read,
L2 read bytes and lookup misses; and the share of W the re-read fetched from DRAM."""

import csv
import sys


def kernels(path):
    header = None
    for row in csv.reader(l for l in open(path) if l.startswith('"')):
        if row[0] == "ID":
            header = row
        elif header and row[0].isdigit():
            yield dict(zip(header, row))


def main():
    d = sys.argv[1]
    cases = [l.split()[1:] for l in open(f"{d}/run.log") if l.startswith("case ")]
    ks = list(kernels(f"{d}/ncu.csv"))
    if len(ks) != 3 * len(cases):
        sys.exit(f"stride_parse.py: {len(cases)} cases but {len(ks)} kernels")
    num = lambda s: float(s.replace(",", ""))
    print("w_mib,piece_kib,stride_kib,reread_dram_read_bytes,reread_l2_read_bytes,"
          "reread_l2_lookup_miss_bytes,reread_dram_share")
    for i, (w, p, s) in enumerate(cases):
        k = ks[3 * i + 2]
        rd = num(k["dram__bytes_read.sum"])
        l2 = num(k["lts__t_sectors_srcunit_tex_op_read.sum"]) * 32
        miss = num(k["lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum"]) * 32
        print(f"{w},{p},{s},{rd:.0f},{l2:.0f},{miss:.0f},{rd / (int(w) << 20):.4f}")


if __name__ == "__main__":
    main()
