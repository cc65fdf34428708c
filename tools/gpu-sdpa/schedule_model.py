#!/usr/bin/env python3
"""The DRAM reads memsim's L2 model (--l2-model hashed: two 25 MiB partitions of 32-way LRU
sets, lines hashed at random, a far line copied near) gives schedule.cu's kernel, with the
blocks run in one of two orders:

  model     memsim's scheduler (kernels/sdpa_sim.c): 264 slots filled in grid order, a round
            steps every resident block once; consecutive slots on alternate sides;
  measured  the GPU's own: each block's steps spread evenly from its measured start to its
            end (blocks-B-H.csv from schedule.sh), all steps of all blocks in time order; a
            block's side is its SM's parity (which SMs sit on which side is not known).

1 set in SAMPLE simulated. Usage: python3 tools/gpu-sdpa/schedule_model.py DIR [SAMPLE]
prints one row a case of DIR's blocks-B-H-GAP-LAYOUT-CYCLES.csv(.gz): MB read a head under each
order (about a minute a case of 16 heads with SAMPLE 64, eight for 128)."""

import csv
import glob
import gzip
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu-l2"))
from pieces_model import LINE, PER, access, mix  # noqa: E402

TILE_LINES = 64 * 128 * 2 // LINE  # a K or V tile: 128 lines


class L2:
    def __init__(self, sample):
        self.sample, self.sets, self.read = sample, {}, 0

    def _touch(self, part, s, key):
        return access(self.sets, part, s, key)

    def load_tile(self, base, side):
        """A tile's 128 lines from base (a line number), those of the sampled sets."""
        for ln in range(base, base + TILE_LINES):
            h = mix(ln)
            s = h % PER
            if s % self.sample:
                continue
            home = h >> 63
            if home == side:
                self.read += not self._touch(home, s, ln)
            elif not self._touch(side, s, ln):
                self.read += not self._touch(home, s, ln)

    def mb(self):
        return self.read * self.sample * LINE / 1e6


def step_tiles(x, y, z, j, shape):
    """K's and V's first lines at step j of block (x, y, z), as schedule.cu lays them out."""
    batch, heads, kv_tiles, gap, head_major = shape
    head = (z * batch + y if head_major else y * heads + z) * gap
    per_head = kv_tiles * TILE_LINES
    v0 = (1 << 40) // LINE  # V lies far from K
    return head * per_head + j * TILE_LINES, v0 + head * per_head + j * TILE_LINES


def run_model(qb, shape, sample, slots=264):
    l2, (batch, heads) = L2(sample), shape[:2]
    blocks = [(x, y, z) for z in range(heads) for y in range(batch) for x in range(qb)]
    nxt, live = 0, []
    for s in range(min(slots, len(blocks))):
        live.append([blocks[nxt], 2 * (blocks[nxt][0] + 1), 0])
        nxt += 1
    while any(live):
        for s, b in enumerate(live):
            if not b:
                continue
            (x, y, z), n, done = b
            for base in step_tiles(x, y, z, n - 1 - done, shape):
                l2.load_tile(base, s & 1)
            b[2] += 1
            if b[2] == n:
                if nxt < len(blocks):
                    live[s] = [blocks[nxt], 2 * (blocks[nxt][0] + 1), 0]
                    nxt += 1
                else:
                    live[s] = None
    return l2.mb()


def run_measured(path, shape, sample):
    l2, events = L2(sample), []
    with open(path) if path.endswith(".csv") else gzip.open(path, "rt") as f:
        for r in csv.DictReader(l for l in f if not l.startswith("#")):
            x, y, z, n = int(r["x"]), int(r["y"]), int(r["z"]), int(r["steps"])
            t0, t1 = int(r["start_ns"]), int(r["end_ns"])
            for i in range(n):
                events.append((t0 + (t1 - t0) * i / n, x, y, z, n - 1 - i, int(r["sm"]) & 1))
    events.sort()
    for _, x, y, z, j, side in events:
        for base in step_tiles(x, y, z, j, shape):
            l2.load_tile(base, side)
    return l2.mb()


def main():
    d = sys.argv[1]
    sample = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    print("batch,heads,gap,layout,cycles,model_mb_per_head,measured_order_mb_per_head")
    for path in sorted(glob.glob(os.path.join(d, "blocks-*.csv*"))):
        case = os.path.basename(path).split(".")[0][len("blocks-"):]
        b, h, gap, layout, cycles = case.split("-")
        shape = (int(b), int(h), 2 * 128, int(gap), layout == "hb")
        m = run_model(128, shape, sample) / (shape[0] * shape[1])
        g = run_measured(path, shape, sample) / (shape[0] * shape[1])
        print(f"{b},{h},{gap},{layout},{cycles},{m:.2f},{g:.2f}", flush=True)


if __name__ == "__main__":
    main()
