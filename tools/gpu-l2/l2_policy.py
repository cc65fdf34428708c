#!/usr/bin/env python3
"""Microbenchmarks of the H100's L2 replacement, for Nsight Compute to count (issue 22, item 5).

Run under ncu --cache-control none by measure.sh: ncu then neither flushes nor invalidates the
caches between kernels, so a kernel's DRAM bytes show what the L2 kept from the kernels before
it. Every step is one torch reduction (x.sum(): each thread block strides through the whole
buffer, so the buffer is read once, front to back, by all SMs at once) or one fill, preceded by
a one-element fill whose value is the step's index (the marker parse.py splits at). A "flush"
step reads a 256 MiB buffer, more than five times the L2, so what follows starts cold.

Experiments (each a list of steps; sizes in MiB, float32):
  cyclic  X: flush, read X three times. LRU keeps all of X when X fits and nothing once it does
          not (each pass evicts the lines the next pass needs first); a policy that protects
          part of the cache keeps a part.
  scan    A, B: flush, read A, stream B once, read A again. Under LRU A survives only if
          A + B fits; a scan-resistant policy keeps A.
  write   X: flush, fill X (every line written, none read), read X. What the L2 keeps of lines
          a kernel wrote.
  write2  X: flush, read X, fill X, read X. Lines read, then rewritten.
"""

import json
import sys

import torch

MIB = 1 << 20
CYCLIC = (4, 8, 12, 16, 18, 20, 21, 22, 23, 24, 25, 26, 28, 30, 32, 36, 40, 44, 48, 56, 64,
          80, 96)
SCAN_A = (4, 8, 12, 16)
SCAN_B = (8, 16, 24, 32, 48, 96)
WRITE = (8, 16, 20, 22, 24, 26, 28, 32, 40, 48, 64)


def plan():
    cases = []
    for x in CYCLIC:
        cases.append(dict(exp="cyclic", x=x, b=0,
                          steps=["flush", "read x", "read x", "read x"]))
    for a in SCAN_A:
        for b in SCAN_B:
            cases.append(dict(exp="scan", x=a, b=b,
                              steps=["flush", "read x", "read b", "read x"]))
    for x in WRITE:
        cases.append(dict(exp="write", x=x, b=0, steps=["flush", "fill x", "read x"]))
        cases.append(dict(exp="write2", x=x, b=0,
                          steps=["flush", "read x", "fill x", "read x"]))
    return cases


def main():
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    gen = torch.Generator(device=dev)
    gen.manual_seed(7)
    big = max(max(CYCLIC), max(SCAN_A), max(WRITE))
    pool = torch.rand(big * MIB // 4, device=dev, generator=gen)
    other = torch.rand(max(SCAN_B) * MIB // 4, device=dev, generator=gen)
    junk = torch.rand(256 * MIB // 4, device=dev, generator=gen)
    marker = torch.empty(1, device=dev, dtype=torch.float32)
    sink = torch.zeros(1, device=dev)
    cases = plan()
    index = 0
    torch.cuda.synchronize()
    for c in cases:
        x = pool[: c["x"] * MIB // 4]
        b = other[: c["b"] * MIB // 4]
        for s in c["steps"]:
            marker.fill_(float(index))
            if s == "flush":
                sink += junk.sum()
            elif s == "read x":
                sink += x.sum()
            elif s == "read b":
                sink += b.sum()
            elif s == "fill x":
                x.fill_(0.5)
            index += 1
        torch.cuda.synchronize()
    meta = {"device": props.name, "sms": props.multi_processor_count,
            "l2_bytes": getattr(props, "L2_cache_size", None), "torch": torch.__version__,
            "cuda": torch.version.cuda, "steps": index, "cases": cases}
    json.dump(meta, open(sys.argv[1], "w"), indent=1)
    print("steps", index, "sink", float(sink))


if __name__ == "__main__":
    main()
