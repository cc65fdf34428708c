#!/usr/bin/env python3
"""Which address strides make the H100's L2 put lines in the same set? For each case, three
reductions (torch.sum) under `ncu --cache-control none`: a 256 MiB buffer (to empty the L2),
then n float32 words 2^b bytes apart, twice (each word in a line of its own); the second
pass's L2 lookup misses say how many of the n lines the first pass's could not keep. Lines
the L2 spreads over its sets never miss at these n; n lines of one 32-way set miss from
n = 33 on (fewer ways seen from one side). Run by conflict.sh; prints one "case B N" line a
case to stdout, in launch order."""

import argparse

import torch

NS = (16, 32, 48, 64, 96, 128, 256)
BITS = range(7, 28)
LIMIT = 16 << 30  # bytes of one buffer at most


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ns", default=",".join(map(str, NS)))
    ap.add_argument("--bits", default=f"{BITS.start}-{BITS.stop - 1}")
    a = ap.parse_args()
    ns = [int(x) for x in a.ns.split(",")]
    lo, _, hi = a.bits.partition("-")
    bits = range(int(lo), int(hi or lo) + 1) if "," not in a.bits else [
        int(x) for x in a.bits.split(",")]
    flush = torch.ones(64 << 20, device="cuda")  # 256 MiB of float32
    big = torch.ones(LIMIT // 4, device="cuda")
    for b in bits:
        for n in ns:
            if n << b > LIMIT:
                continue
            view = big.as_strided((n,), ((1 << b) // 4,))
            torch.cuda.synchronize()
            print("case", b, n, flush=True)
            flush.sum()
            view.sum()
            view.sum()
            torch.cuda.synchronize()


if __name__ == "__main__":
    main()
