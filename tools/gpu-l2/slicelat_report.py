#!/usr/bin/env python3
"""What docs/gpu-run/l2-slicelat holds (issue 22): per file, the range of the L2 hit latencies
(cycles) from every SM, how far the two 128-byte lines of each 256-byte chunk differ against
two lines drawn at random (the same slice serves a whole chunk when they agree), and how alike
two SMs of one pair (2k, 2k + 1) see the lines against two SMs at random.

--cluster also groups the 256-byte chunks by fingerprint (the mean of each chunk's two lines
and each SM pair's two SMs: 66 latencies a chunk): a chunk joins the first group whose
fingerprint lies within 2 cycles (RMS over the 66), else starts one; then 30 rounds of
k-means from those groups. It prints the groups' sizes, how far apart they lie, and how many
of each partition's chunks (docs/gpu-run/l2-reread's function, within 2 MiB) each holds.
With --cluster, also the XOR of the chunk numbers of every two chunks in one group: the most
frequent ones, and the rank of those seen in 600 pairs or more (an XOR hash of the address
bits to slices would make every such XOR a vector of its kernel).
Usage: python3 tools/gpu-l2/slicelat_report.py [--cluster] FILE.bin.gz..."""

import gzip
import sys

import numpy as np


def load(path):
    """[SM asked, line] latencies of a slicelat.cu output file."""
    d = gzip.open(path).read()
    head = d[: d.index(b"\n")].split()
    n = int(head[1])
    p, rows = d.index(b"\n") + 1, []
    while p < len(d):
        p = d.index(b"\n", p) + 1
        rows.append(np.frombuffer(d[p : p + 2 * n], dtype=np.uint16))
        p += 2 * n
    return np.array(rows).astype(float)


def fingerprints(lat):
    """[chunk, SM pair] mean latencies."""
    chunk = (lat[:, 0::2] + lat[:, 1::2]) / 2
    return ((chunk[0::2] + chunk[1::2]) / 2).T


def groups(x, thr=2.0, rounds=30):
    """Leader clustering within thr cycles RMS, refined by k-means: (centres, label a chunk)."""
    lead, lab = [], np.empty(len(x), int)
    for i, v in enumerate(x):
        if lead:
            d = np.sqrt(((np.array(lead) - v) ** 2).mean(1))
            if d.min() < thr:
                lab[i] = d.argmin()
                continue
        lead.append(v.copy())
        lab[i] = len(lead) - 1
    c = np.array(lead)
    for _ in range(rounds):
        lab = ((x[:, None] - c[None]) ** 2).mean(2).argmin(1)
        c = np.array([x[lab == j].mean(0) for j in range(len(c)) if (lab == j).any()])
    return c, ((x[:, None] - c[None]) ** 2).mean(2).argmin(1)


def report_groups(path, lat):
    x = fingerprints(lat)
    c, lab = groups(x)
    res = np.sqrt(((x - c[lab]) ** 2).mean(1))
    sep = np.sqrt(((c[:, None] - c[None]) ** 2).mean(2))
    np.fill_diagonal(sep, np.inf)
    a = np.arange(len(x)) * 256
    part = np.zeros(len(x), int)
    for b in (12, 13, 16, 17, 19):
        part ^= (a >> b) & 1
    share = np.array([part[lab == j].mean() for j in range(len(c))])
    sizes = np.bincount(lab, minlength=len(c))
    print(f"  {len(c)} groups of chunks: a chunk {np.median(res):.2f} cycles RMS from its "
          f"group's centre (95% under {np.percentile(res, 95):.2f}), groups at least "
          f"{sep.min():.2f} apart; groups of one partition's chunks only: "
          f"{int(((share == 0) | (share == 1)).sum())} of {len(c)}; "
          f"{int((share < 0.5).sum())} and {int((share > 0.5).sum())} groups in the two")
    for side in (0, 1):
        print(f"  partition {side}: group sizes {sorted(sizes[(share > 0.5) == side].tolist())}")
    top, rank, inspan = xor_kernel(lab)
    print("  most frequent XORs of two chunk numbers in one group (address bits = chunk bits + 8): "
          + ", ".join(f"{bin(v)} ({k})" for v, k in top)
          + f"; those in 600 pairs or more span {rank} dimensions, holding {inspan:.0%} of the pairs")


def xor_kernel(lab):
    """The XORs of chunk numbers within groups: (the 6 most frequent, with their counts;
    rank of those in 600 pairs or more; share of all pairs in their span)."""
    count = {}
    for g in np.unique(lab):
        m = np.nonzero(lab == g)[0]
        x = (m[:, None] ^ m[None, :])[np.triu_indices(len(m), 1)]
        for v, k in zip(*np.unique(x, return_counts=True)):
            count[int(v)] = count.get(int(v), 0) + int(k)
    ranked = sorted(count.items(), key=lambda t: -t[1])
    basis = []
    for v, k in ranked:
        if k < 600:
            break
        for b in basis:
            v = min(v, v ^ b)
        if v:
            basis.append(v)
    span = {0}
    for b in basis:
        span |= {s ^ b for s in span}
    share = sum(k for v, k in count.items() if v in span) / max(1, sum(count.values()))
    return ranked[:6], len(basis), share


def main():
    rng = np.random.default_rng(1)
    cluster = "--cluster" in sys.argv[1:]
    for path in [a for a in sys.argv[1:] if a != "--cluster"]:
        lat = load(path)
        sms, n = lat.shape
        pair = np.abs(lat[:, 0::2] - lat[:, 1::2]).mean()
        other = np.abs(lat[:, 0::2] - lat[:, rng.permutation(n // 2) * 2]).mean()
        twins = np.abs(lat[0::2] - lat[1::2]).mean()
        rand = np.abs(lat - lat[rng.permutation(sms)]).mean()
        print(f"{path}: {sms} SMs x {n} lines, latencies {lat.min():.0f} to {lat.max():.0f} "
              f"cycles (median {np.median(lat):.0f}); the lines of a 256-byte chunk differ by "
              f"{pair:.1f} cycles on average, two lines at random by {other:.1f}; SMs 2k and "
              f"2k + 1 by {twins:.1f}, two SMs at random by {rand:.1f}")
        if cluster:
            report_groups(path, lat)


if __name__ == "__main__":
    main()
