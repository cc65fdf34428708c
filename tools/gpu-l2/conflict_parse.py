#!/usr/bin/env python3
"""conflict.sh's output as one CSV row a case: python3 tools/gpu-l2/conflict_parse.py DIR
Columns: the stride's bit b (2^b bytes), the lines n, then the second pass's L2 read sectors
and lookup-miss sectors (one sector a line: the lines it missed)."""

import sys

from stride_parse import kernels


def main():
    d = sys.argv[1]
    cases = [l.split()[1:] for l in open(f"{d}/run.log") if l.startswith("case ")]
    ks = list(kernels(f"{d}/ncu.csv"))
    # each case: the flush (grid (1, 528, 1)), then the two passes, each one kernel, or several
    # where the view passes 32-bit indexing and PyTorch splits it: the second half is the re-read
    groups = []
    for k in ks:
        if k["Grid Size"] == "(1, 528, 1)":
            groups.append([])
        elif groups:
            groups[-1].append(k)
    if len(groups) != len(cases) or any(len(g) % 2 or not g for g in groups):
        sys.exit(f"conflict_parse.py: {len(cases)} cases but {len(groups)} flushes, or a case "
                 "whose passes are not two halves")
    num = lambda s: float(s.replace(",", ""))
    print("bit,lines,reread_l2_read_sectors,reread_lookup_miss_sectors")
    for (b, n), g in zip(cases, groups):
        second = g[len(g) // 2:]
        rd = sum(num(k["lts__t_sectors_srcunit_tex_op_read.sum"]) for k in second)
        miss = sum(num(k["lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum"]) for k in second)
        print(f"{b},{n},{rd:.0f},{miss:.0f}")


if __name__ == "__main__":
    main()
