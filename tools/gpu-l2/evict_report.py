#!/usr/bin/env python3
"""Tables of docs/gpu-run/l2-evict (issue 22), from evict.cu's output files: per target, the
minimal eviction set's size (the associativity; anything else is a target whose reduction
failed: the pool did not evict it, or no group could be dropped, as when the target is not in
the partition evict.cu takes for near), how many lines of the first 64 MiB share its set (of
the 262144 near lines there; 12800 sets a partition of 16 ways make 20.5 on average), how many
of those lie in a few layouts of pieces within the same 64 MiB, and how many of them lie 512
bytes after another.

Usage: python3 tools/gpu-l2/evict_report.py FILE..."""

import sys

import numpy as np

LAYOUTS = ((512, 2048), (512, 8192), (128, 512), (2048, 4096), (4096, 8192))  # KiB


def targets(path):
    out, cur = [], None
    with open(path) as f:
        for line in f:
            t = line.split()
            if not t:
                continue
            if t[0] == "target":
                cur = {"x": int(t[1]), "sm": int(t[3]), "ways": None, "c": None}
                out.append(cur)
            elif t[0] == "ways":
                cur["ways"] = int(t[1])
            elif t[0] == "congruent":
                cur["c"] = [int(v) for v in t[1:]]
    return out


def main():
    rows = [t for p in sys.argv[1:] for t in targets(p)]
    print("| target (MiB) | SM | eviction set | lines of 64 MiB in its set | "
          + " | ".join(f"in {p} KiB every {s} KiB" for p, s in LAYOUTS) + " | 512 B after another |")
    print("|---" * (5 + len(LAYOUTS)) + "|")
    good = [t for t in rows if t["ways"] == 16 and t["c"] is not None]
    for t in rows:
        cells = [f"{t['x'] / (1 << 20):.3f}", str(t["sm"]), str(t["ways"])]
        if t["c"] is None:
            cells += ["-"] * (2 + len(LAYOUTS))
        else:
            c = sorted(t["c"])
            cells.append(str(len(c)))
            cells += [str(sum(1 for a in c if a % (s << 10) < (p << 10))) for p, s in LAYOUTS]
            cells.append(str(sum(1 for i in range(1, len(c)) if c[i] - c[i - 1] == 512)))
        print("| " + " | ".join(cells) + " |")
    n = np.array([len(t["c"]) for t in good])
    print(f"\n{len(good)} of {len(rows)} targets with an eviction set of 16 lines; lines of 64 MiB in "
          f"the set: mean {n.mean():.1f}, standard deviation {n.std():.1f} (lines hashed at random: "
          f"{np.sqrt(262144 / 12800):.1f}), values {sorted(set(n.tolist()))}")
    for p, s in LAYOUTS:
        m = np.array([sum(1 for a in t["c"] if a % (s << 10) < (p << 10)) for t in good])
        print(f"{p} KiB every {s} KiB: mean {m.mean():.1f}, standard deviation {m.std():.1f} "
              f"(at random: {np.sqrt(m.mean()):.1f})")


if __name__ == "__main__":
    main()
