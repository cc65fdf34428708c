#!/usr/bin/env python3
"""slices.sh's output as one CSV row a case: python3 tools/gpu-l2/slices_parse.py DIR
Columns: the case (kind and its numbers, as slices.py prints them), the L2 read sectors in all,
of the busiest and of the idlest LTS slice, the mean over the slices, and max / mean."""

import sys

from stride_parse import kernels


def main():
    d = sys.argv[1]
    cases = [l.split()[1:] for l in open(f"{d}/run.log") if l.startswith("case ")]
    ks = list(kernels(f"{d}/ncu.csv"))
    # a view past 32-bit indexing runs as several kernels: only the lines cases at 2^24 B and
    # more; their slices cannot be added up from max and min, so they are left out
    if len(ks) < len(cases):
        sys.exit(f"slices_parse.py: {len(cases)} cases but {len(ks)} kernels")
    num = lambda s: float(s.replace(",", ""))
    m = "lts__t_sectors_srcunit_tex_op_read"
    print("case,a,b,c,sectors,slice_max,slice_min,slice_mean,max_over_mean")
    for c, k in zip(cases, ks):
        if c[0] == "lines" and int(c[1]) >= 24:
            break
        vals = [num(k[f"{m}.{x}"]) for x in ("sum", "max", "min", "avg")]
        c = c + [""] * (4 - len(c))
        print(",".join(c) + f",{vals[0]:.0f},{vals[1]:.0f},{vals[2]:.0f},{vals[3]:.2f},"
              f"{vals[1] / vals[3]:.3f}")


if __name__ == "__main__":
    main()
