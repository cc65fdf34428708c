#!/usr/bin/env python3
"""Does the H100's L2 keep less of a buffer whose pieces lie far apart? For each case, three
reductions (torch.sum) under `ncu --cache-control none`: a 256 MiB buffer (to empty the L2),
then the same W MiB twice, stored as pieces of P KiB every S KiB (S = P: contiguous); the second
pass's DRAM reads are what the L2 lost. Run by stride.sh; prints one "case W P S" line a case
to stdout, in launch order. --ws, --pieces and --strides (MiB, KiB, KiB; a stride of 0 is the
piece: contiguous; strides under the piece are skipped) replace the default cases."""

import argparse

import torch

CASES = [(w, 512, s) for w in (16, 20, 24, 28, 32, 40) for s in (512, 2048, 8192)]


def cases():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ws")
    ap.add_argument("--pieces", default="512")
    ap.add_argument("--strides", default="0")
    a = ap.parse_args()
    if not a.ws:
        return CASES
    ints = lambda t: [int(x) for x in t.split(",")]
    return [(w, p, s or p) for p in ints(a.pieces) for s in ints(a.strides)
            for w in ints(a.ws) if s == 0 or s >= p]


def main():
    todo = cases()
    props = torch.cuda.get_device_properties(0)
    print("device", props.name.replace(" ", "_"), getattr(props, "L2_cache_size", 0), flush=True)
    flush = torch.ones(64 << 20, device="cuda")  # 256 MiB of float32
    for w, p, s in todo:
        pieces = (w << 10) // p
        buf = torch.ones(pieces * (s << 8), device="cuda")  # s KiB a piece = s * 256 floats
        view = buf.view(pieces, s << 8)[:, : p << 8]
        torch.cuda.synchronize()
        print("case", w, p, s, flush=True)
        flush.sum()
        view.sum()
        view.sum()
        torch.cuda.synchronize()
        del buf, view


if __name__ == "__main__":
    main()
