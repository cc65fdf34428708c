#!/usr/bin/env python3
"""Tables of docs/gpu-run/l2-reread (issue 22): for every case of DIR/classes.txt.gz (from
reread_parse.py) the share of the second pass's lines in each latency class, the partition
function checked line by line (a B line must be far, a C line near), and the share of the near
and of the far lines the second pass read from DRAM (C or D).

--model adds what memsim's hashed L2 (two 25 MiB partitions of 32-way LRU sets, lines hashed at
random, a line read from the other side copied near; tools/gpu-l2/pieces_model.py's) gives on
the same reads: the first pass's lines from 132 x 32 warps, each block's side drawn from a hash
(which SMs sit on which side is not known), the second from one side.

--ways N gives the model's sets N ways instead of 32 (as many lines a partition).

Usage: python3 tools/gpu-l2/reread_report.py DIR [--model [--ways N]]"""

import gzip
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pieces_model  # noqa: E402
from pieces_model import access, mix  # noqa: E402

# docs/gpu-run/l2-reread/README.md: the partition of a byte offset a into the arena, relative
# to the partition of SM 124 (0: its own): XOR of these bits, and bit 25 unless bit 24 is set.
PARTITION_BITS = (12, 13, 16, 17, 19, 23, 26)


def cases(path):
    """((index, w, p, s, mode, off), classes 0-3 as an array) for each case."""
    out = []
    with gzip.open(path, "rt") as f:
        for head in f:
            i, w, p, s, mode, off = head.split()
            k = np.frombuffer(f.readline().strip().encode(), dtype=np.uint8) - ord("A")
            out.append(((int(i), int(w), int(p), int(s), mode, int(off)), k))
    return out


def offsets(w, p, s, off):
    """Byte offsets into the arena of the case's lines, in the order read."""
    i = np.arange((w << 20) // 128, dtype=np.int64)
    per = p * 8
    return (i // per) * (s << 10) + (i % per) * 128 + (off << 10)


def far_side(a):
    """1 where the partition function puts offset a in the other partition than SM 124's."""
    bit = lambda b: (a >> b) & 1  # noqa: E731
    f = bit(25) & (1 - bit(24))
    for b in PARTITION_BITS:
        f = f ^ bit(b)
    return f


def model_lost(lines, all_sms):
    """Shares of the near and of the far lines the second pass reads from DRAM in the hashed
    model (pieces_model's sets and hash; the second pass from side 0)."""
    sets = {}

    def read(ln, side):
        h = mix(ln)
        home, s = h >> 63, h % (25 * 2**20 // 128 // pieces_model.WAYS)
        if home == side:
            return not access(sets, home, s, ln)
        return not access(sets, side, s, ln) and not access(sets, home, s, ln)

    for i, ln in enumerate(lines):
        read(ln, mix((i % (132 * 32)) // 32 + 7) >> 63 if all_sms else 0)
    lost = np.array([read(ln, 0) for ln in lines])
    far = np.array([mix(ln) >> 63 for ln in lines])
    return lost[far == 0].mean(), lost[far == 1].mean()


def main():
    d = sys.argv[1]
    with_model = "--model" in sys.argv[2:]
    if "--ways" in sys.argv:
        pieces_model.WAYS = int(sys.argv[sys.argv.index("--ways") + 1])
    rows = cases(os.path.join(d, "classes.txt.gz"))
    print("| case | W MiB | piece KiB | every KiB | first pass | offset KiB | A | B | C | D "
          "| B and C lines the partition function misplaces | near lines to DRAM | far lines to DRAM |"
          + (" model: near to DRAM | model: far to DRAM |" if with_model else ""))
    print("|---" * (13 + 2 * with_model) + "|")
    for c, k in rows:
        a = offsets(*c[1:4], c[5])
        share = [float((k == x).mean()) for x in range(4)]
        far = far_side(a)
        wrong = int(((k == 1) & (far == 0)).sum() + ((k == 2) & (far == 1)).sum())
        cells = [str(v) for v in c] + [f"{x:.3f}" for x in share]
        dram = k >= 2
        cells += [f"{wrong} of {int(((k == 1) | (k == 2)).sum())}",
                  f"{dram[far == 0].mean():.3f}", f"{dram[far == 1].mean():.3f}"]
        if with_model:
            cells += [f"{x:.3f}" for x in model_lost([int(x) // 128 for x in a], c[4] == "all")]
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
