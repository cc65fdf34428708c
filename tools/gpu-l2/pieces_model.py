#!/usr/bin/env python3
"""What an L2 of two 25 MiB partitions of 32-way LRU sets (memsim's --l2-model hashed, copies of
far lines kept near) would count as re-read lookup misses on the layouts of
docs/gpu-run/l2-pieces, for a hash of lines to sets that is random per line ("rand", as
sim/l2sets.c) or that keeps the lines of each aligned region of 2^K lines consecutive, the
regions placed at random (K). 1 set in 8 simulated. Not memsim's code: a check of whether a
more even hash of contiguous lines could make pieces miss more than a contiguous buffer.
Usage: python3 tools/gpu-l2/pieces_model.py rand|K"""

import sys
from collections import OrderedDict

MIB = 1 << 20
LINE = 128
WAYS = 32
PER = 25 * MIB // LINE // WAYS  # 6400 sets a partition
SAMPLE = 8
M64 = (1 << 64) - 1
LAYOUTS = ((512, 512), (512, 2048), (512, 768), (512, 8192), (4096, 65536))  # KiB


def mix(z):
    """splitmix64's finalizer, as sim/l2sets.c hashes."""
    z = (z + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def place(line, k):
    """(home partition, set in it) of a line; k None: random per line."""
    if k is None:
        h = mix(line)
        return h >> 63, h % PER
    return mix(line) >> 63, (line + mix(line >> k)) % PER


def access(sets, part, s, key):
    """LRU lookup of key in set (part, s); fills it on a miss. True on a hit."""
    d = sets.setdefault((part, s), OrderedDict())
    if key in d:
        d.move_to_end(key)
        return True
    if len(d) >= WAYS:
        d.popitem(last=False)
    d[key] = 1
    return False


def reread_lookup_misses(lines, k):
    """MiB the second of two passes over lines missed in the reading SM's partition; each
    32 KiB chunk is read from one side (as memsim l2probe assigns them)."""
    sets, miss = {}, 0
    for p in range(2):
        for ln in lines:
            home, s = place(ln, k)
            if s % SAMPLE:
                continue
            side = mix(ln // 256) >> 63
            if home == side:
                if not access(sets, home, s, ln) and p:
                    miss += 1
            elif not access(sets, side, s, ln):
                miss += p
                access(sets, home, s, ln)
    return miss * SAMPLE * LINE / MIB


def layout(w, piece, stride):
    """The lines of w MiB stored as pieces of piece KiB every stride KiB."""
    out = []
    for i in range(w * 1024 // piece):
        base = i * stride * 1024 // LINE
        out.extend(range(base, base + piece * 1024 // LINE))
    return out


def main():
    k = None if sys.argv[1] == "rand" else int(sys.argv[1])
    print("W MiB | " + " | ".join(f"{p} KiB every {s} KiB" for p, s in LAYOUTS))
    for w in (20, 24, 28, 32, 40):
        cells = (f"{reread_lookup_misses(layout(w, p, s), k):.1f}" for p, s in LAYOUTS)
        print(f"{w} | " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
