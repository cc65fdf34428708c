#!/usr/bin/env python3
"""conflict.sh's output as one CSV row a case: python3 tools/gpu-l2/conflict_parse.py DIR
Columns: the stride's bit b (2^b bytes), the lines n, then the second pass's L2 read sectors
and lookup-miss sectors (one sector a line: the lines it missed)."""

import sys

from stride_parse import NUM, rereads


def main():
    cases, seconds = rereads(sys.argv[1], "conflict_parse.py")
    num = NUM
    print("bit,lines,reread_l2_read_sectors,reread_lookup_miss_sectors")
    for (b, n), second in zip(cases, seconds):
        rd = sum(num(k["lts__t_sectors_srcunit_tex_op_read.sum"]) for k in second)
        miss = sum(num(k["lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum"]) for k in second)
        print(f"{b},{n},{rd:.0f},{miss:.0f}")


if __name__ == "__main__":
    main()
