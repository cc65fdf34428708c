#!/usr/bin/env python3
"""Which L2 slices do the lines of a buffer go to on the H100? One reduction (torch.sum) per
case, under ncu (run by slices.sh): the L2 read sectors of the busiest and idlest LTS slice against
the mean tell how evenly the case's lines spread over the slices. Cases: contiguous buffers,
512 KiB pieces 2 or 8 MiB apart (the stride probe's), and 256 lines 2^b bytes apart. Prints
one "case KIND ..." line a case to stdout, in launch order."""

import torch

LIMIT = 16 << 30


def main():
    big = torch.ones(LIMIT // 4, device="cuda")
    cases = [("pieces", w, 512, s) for w in (4, 20) for s in (512, 2048, 8192)]
    cases += [("piece-at", 512, off) for off in (0, 512, 1024, 2048, 4096)]
    cases += [("lines", b, 256) for b in range(7, 27)]
    for c in cases:
        if c[0] == "pieces":
            _, w, p, s = c
            n = (w << 10) // p
            view = big[: n * (s << 8)].view(n, s << 8)[:, : p << 8]
        elif c[0] == "piece-at":
            _, p, off = c
            view = big[off << 8: (off + p) << 8]
        else:
            _, b, n = c
            view = big.as_strided((n,), ((1 << b) // 4,))
        torch.cuda.synchronize()
        print("case", *c, flush=True)
        view.sum()
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
