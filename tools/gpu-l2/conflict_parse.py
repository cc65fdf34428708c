#!/usr/bin/env python3
"""conflict.sh's output as one CSV row a case: python3 tools/gpu-l2/conflict_parse.py DIR
Columns: the stride's bit b (2^b bytes), the lines n, then the second pass's L2 read sectors
and lookup-miss sectors, and the lines it missed (lookup-miss sectors; one sector a line)."""

import sys

from stride_parse import kernels


def main():
    d = sys.argv[1]
    cases = [l.split()[1:] for l in open(f"{d}/run.log") if l.startswith("case ")]
    ks = list(kernels(f"{d}/ncu.csv"))
    if len(ks) != 3 * len(cases):
        sys.exit(f"conflict_parse.py: {len(cases)} cases but {len(ks)} kernels")
    num = lambda s: float(s.replace(",", ""))
    print("bit,lines,reread_l2_read_sectors,reread_lookup_miss_sectors")
    for i, (b, n) in enumerate(cases):
        k = ks[3 * i + 2]
        print(f"{b},{n},{num(k['lts__t_sectors_srcunit_tex_op_read.sum']):.0f},"
              f"{num(k['lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum']):.0f}")


if __name__ == "__main__":
    main()
