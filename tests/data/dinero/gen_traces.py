#!/usr/bin/env python3
"""Deterministic generator for the din traces in this folder.

Writes t1_hand.din, t2_random.din, t3_stream.din, t4_mixed.din next to this
script.  Format: traditional Dinero "din": one reference per line,
"<label> <hex address>", label 0 = data read, 1 = data write, lowercase hex,
no 0x prefix.  Re-running this script reproduces the files byte for byte.
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def write(name, refs):
    with open(os.path.join(HERE, name), "w") as f:
        for lab, addr in refs:
            f.write("%d %x\n" % (lab, addr))


def t1_hand():
    # Designed around c1 (1 KiB, 2-way, 32 B -> 16 sets, set stride 512 B),
    # c5's L1 (2 KiB DM, 64 B -> set stride 2 KiB) and the L2s.
    R, W = 0, 1
    refs = [
        (R, 0x0000), (R, 0x0004),            # miss then hit, same block
        (W, 0x0008),                          # write hit -> block 0 dirty
        (R, 0x0200), (R, 0x0400),             # set 0 conflicts: evicts dirty 0x0000 (c1)
        (R, 0x0000),                          # re-reference after eviction -> miss
        (W, 0x0600),                          # write miss (write-allocate, fetch), dirty
        (W, 0x0800),                          # write miss, evicts...
        (R, 0x0204), (R, 0x0604), (R, 0x0a00),
        (W, 0x0020), (W, 0x0220), (W, 0x0420),  # set 1 dirty thrash
        (R, 0x0020), (R, 0x0024), (W, 0x0620),
        (R, 0x0220),
        (W, 0x1000), (W, 0x1800), (W, 0x2000),  # DM-64B (c5) conflicts at 2 KiB stride
        (R, 0x1004), (R, 0x2804), (W, 0x3000),
        (R, 0x1000), (R, 0x0800),
        (R, 0x7fe), (W, 0x101f), (R, 0x0403),  # unaligned: din masks addr & ~3
        (W, 0x0040), (W, 0x0044), (W, 0x0048), (W, 0x004c),  # same 32 B block
        (W, 0x0050), (W, 0x0054), (W, 0x0058), (W, 0x005c),  # other half of 64 B block
        (R, 0x0240), (R, 0x0440), (R, 0x0640), (R, 0x0840),  # evict them
        (R, 0x0040), (R, 0x0060),
        (W, 0x8000), (W, 0x8200), (W, 0x8400), (W, 0x8600),  # dirty stream, set 0
        (R, 0x10000), (R, 0x10200), (R, 0x10400), (R, 0x10600),
        (R, 0x8000), (W, 0x8204), (R, 0x0000), (R, 0x0004),
        (W, 0xfffc), (R, 0xffe0), (W, 0x0000), (R, 0x2000),
        (W, 0x4000), (R, 0x4020), (W, 0x4040),
    ]
    return refs


def t2_random():
    rng = random.Random(20240502)
    refs = []
    base = 0x4000
    for _ in range(20000):
        addr = base + 4 * rng.randrange(16384 // 4)
        lab = 1 if rng.random() < 0.30 else 0
        refs.append((lab, addr))
    return refs


def t3_stream():
    # Blocked matrix-product shape, all addresses < 0x10000 (keeps file small).
    # A and B: read sequentially (4-byte elements), interleaved; each 1 KiB
    # tile is read twice (re-read of a block); C: strided writes, stride 256 B.
    # Working set = 4 KiB A + 4 KiB B + 4 KiB C = 12 KiB = 3 x the 4 KiB L1 (c3).
    A, B, C = 0x1000, 0x5100, 0x9040
    refs = []
    cidx = 0
    rep = 0
    while len(refs) < 40000:
        for kb in range(0, 4096, 1024):
            for _pass in range(2):
                for e in range(0, 1024, 4):
                    refs.append((0, A + kb + e))
                    refs.append((0, B + ((kb + 4 * e + 4 * rep) % 4096)))
                    if e % 16 == 12:
                        off = (cidx * 256) % 4096 + 4 * ((cidx // 16) % 64)
                        refs.append((1, C + off))
                        cidx += 1
        rep += 1
    return refs[:40000]


def t4_mixed():
    rng = random.Random(777)
    hot, cold = 0x8000, 0x100000
    refs = []
    for _ in range(20000):
        if rng.random() < 0.60:
            addr = hot + 4 * rng.randrange(2048 // 4)
        else:
            addr = cold + 4 * rng.randrange((256 * 1024) // 4)
        lab = 1 if rng.random() < 0.40 else 0
        refs.append((lab, addr))
    return refs


if __name__ == "__main__":
    write("t1_hand.din", t1_hand())
    write("t2_random.din", t2_random())
    write("t3_stream.din", t3_stream())
    write("t4_mixed.din", t4_mixed())
