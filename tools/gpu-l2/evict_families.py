#!/usr/bin/env python3
"""The eviction sets of docs/gpu-run/l2-evict/sets300/ by 2 MiB page: which pages of the first
64 MiB hold a line of each target's set ("families" of sets with one page pattern), and which
address bits the lines of two sets of one family on one page share. What memsim sdpa's
--l2-hash pages is drawn from (docs/gpu.md).

    python3 tools/gpu-l2/evict_families.py docs/gpu-run/l2-evict/sets300/evict300.txt.gz
"""

import collections
import gzip
import itertools
import sys

PAGE = 21


def read_sets(path):
    """{target MiB: congruent line offsets} of the targets that gave a congruent list."""
    out, target = {}, None
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        for line in f:
            w = line.split()
            if w and w[0] == "target":
                target = int(w[1]) >> 20
            elif w and w[0] == "congruent":
                out[target] = [int(x) for x in w[1:]]
    return out


def one_line_pages(lines):
    """{page: the in-page offset} of the pages holding exactly one of the lines."""
    by = collections.defaultdict(list)
    for a in lines:
        by[a >> PAGE].append(a & ((1 << PAGE) - 1))
    return {p: v[0] for p, v in by.items() if len(v) == 1}


def main():
    sets = read_sets(sys.argv[1])
    fams = collections.defaultdict(list)
    for t, lines in sets.items():
        fams[tuple(sorted({a >> PAGE for a in lines}))].append(t)
    fams = sorted(fams.items(), key=lambda kv: -len(kv[1]))
    print(f"{len(sets)} sets, {len(fams)} page patterns; the largest:")
    print("sets | pages holding a line (of 32) | lines a set (of 64 MiB) | targets (MiB)")
    for pages, ts in fams[:8]:
        sizes = sorted({len(sets[t]) for t in ts})
        print(f"{len(ts)} | {len(pages)} | {sizes} | {ts[:6]}")
    pairs = 0
    same = collections.Counter()
    for _, ts in fams:
        for t1, t2 in itertools.combinations(ts, 2):
            a, b = one_line_pages(sets[t1]), one_line_pages(sets[t2])
            for p in a.keys() & b.keys():
                pairs += 1
                for bit in range(7, PAGE):
                    same[bit] += not ((a[p] ^ b[p]) >> bit & 1)
    print(f"lines of two sets of one family on one page ({pairs} pairs): share of them with "
          "address bit b equal")
    print(" ".join(f"{b}:{same[b] / pairs:.2f}" for b in range(7, PAGE)))


if __name__ == "__main__":
    main()
