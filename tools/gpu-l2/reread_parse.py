#!/usr/bin/env python3
"""reread.sh's latencies as classes (issue 22). Reads DIR/run.log and DIR/lat-I.bin; writes
DIR/hist.csv (every case's first- and second-pass latencies in 25-cycle bins, to check the
bounds below against the valleys) and DIR/classes.txt.gz: per case a line "I W P S MODE OFF"
and then one letter a line of the second pass, in the layout's order:

  A  under 425 cycles   a hit in the reading SM's own L2 partition
  B  425 to 559         a hit in the other partition
  C  560 to 699         a DRAM read through the own partition
  D  700 and more       a DRAM read through the other partition

(the H100's second-pass latencies fall in four groups with empty bins between them; which
group is which follows from the first pass, all DRAM, and from a 4 MiB buffer, all hits).
Usage: python3 tools/gpu-l2/reread_parse.py DIR"""

import gzip
import os
import sys

import numpy as np

BOUNDS = (425, 560, 700)
BIN, TOP = 25, 1500


def cases(d):
    """(index, w, p, s, mode, off) of each case of DIR/run.log."""
    out = []
    with open(os.path.join(d, "run.log")) as f:
        for line in f:
            t = line.split()
            if t and t[0] == "case":
                out.append((int(t[1]), int(t[2]), int(t[3]), int(t[4]), t[5], int(t[6])))
    return out


def main():
    d = sys.argv[1]
    edges = np.arange(0, TOP + BIN, BIN)
    with open(os.path.join(d, "hist.csv"), "w") as hist, \
            gzip.open(os.path.join(d, "classes.txt.gz"), "wt") as out:
        hist.write("case,pass," + ",".join(str(e) for e in edges[:-1]) + f",{TOP}+\n")
        for c in cases(d):
            lat = np.fromfile(os.path.join(d, f"lat-{c[0]}.bin"), dtype=np.uint16)
            n = len(lat) // 2
            for p, part in ((1, lat[:n]), (2, lat[n:])):
                h, _ = np.histogram(np.minimum(part, TOP), bins=np.append(edges, TOP + 1))
                hist.write(f"{c[0]},{p}," + ",".join(str(x) for x in h) + "\n")
            k = np.searchsorted(BOUNDS, lat[n:], side="right")
            out.write(" ".join(str(x) for x in c) + "\n")
            out.write("".join("ABCD"[x] for x in k) + "\n")


if __name__ == "__main__":
    main()
