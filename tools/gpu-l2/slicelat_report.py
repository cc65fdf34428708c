#!/usr/bin/env python3
"""What docs/gpu-run/l2-slicelat holds (issue 22): per file, the range of the L2 hit latencies
(cycles) from every SM, how far the two 128-byte lines of each 256-byte chunk differ against
two lines drawn at random (the same slice serves a whole chunk when they agree), and how alike
two SMs of one pair (2k, 2k + 1) see the lines against two SMs at random.
Usage: python3 tools/gpu-l2/slicelat_report.py FILE.bin.gz..."""

import gzip
import sys

import numpy as np


def load(path):
    """[SM asked, line] latencies of a slicelat.cu output file."""
    d = gzip.open(path).read()
    head = d[: d.index(b"\n")].split()
    n = int(head[1])
    p, rows = d.index(b"\n") + 1, []
    while p < len(d):
        p = d.index(b"\n", p) + 1
        rows.append(np.frombuffer(d[p : p + 2 * n], dtype=np.uint16))
        p += 2 * n
    return np.array(rows).astype(float)


def main():
    rng = np.random.default_rng(1)
    for path in sys.argv[1:]:
        lat = load(path)
        sms, n = lat.shape
        pair = np.abs(lat[:, 0::2] - lat[:, 1::2]).mean()
        other = np.abs(lat[:, 0::2] - lat[:, rng.permutation(n // 2) * 2]).mean()
        twins = np.abs(lat[0::2] - lat[1::2]).mean()
        rand = np.abs(lat - lat[rng.permutation(sms)]).mean()
        print(f"{path}: {sms} SMs x {n} lines, latencies {lat.min():.0f} to {lat.max():.0f} "
              f"cycles (median {np.median(lat):.0f}); the lines of a 256-byte chunk differ by "
              f"{pair:.1f} cycles on average, two lines at random by {other:.1f}; SMs 2k and "
              f"2k + 1 by {twins:.1f}, two SMs at random by {rand:.1f}")


if __name__ == "__main__":
    main()
