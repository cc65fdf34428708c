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
--quadratic (implies --cluster): the Boolean functions of address bits 8-19 of degree two at
most (linear and pairwise-product terms of the chunk's 12 bits) that are constant within the
groups: over GF(2), each chunk and its group's first chunk must agree, so the functions are the
null space of those equations. The groups hold some misplaced chunks, so the null space is
taken of 300 random subsets of 120 equations (seeded), and each function found is scored by the
share of all equations it breaks; those that break no more than the partition's XOR (a
function of the slice, broken only by misplaced chunks) or 2% are printed, fewest terms first,
with the dimension of their span. Only the 80% of chunks nearest their group's centre count. A slice function of degree two makes every XOR symmetry keep an
affine half (or quarter, ...) of the chunks, which --cluster's pairs showed.
Usage: python3 tools/gpu-l2/slicelat_report.py [--cluster] [--quadratic] FILE.bin.gz..."""

import gzip
import itertools
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
    idx = np.arange(len(x))
    print(f"  chunks 512 bytes apart (address bit 9 flipped) share a group "
          f"{(lab == lab[idx ^ 2]).mean():.1%} of the time; 256 bytes apart (bit 8) "
          f"{(lab == lab[idx ^ 1]).mean():.1%}")
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


PAIRS = list(itertools.combinations(range(12), 2))  # chunk bits i < j: address bits 8 + i, 8 + j


def monomials(chunk):
    """The 78 monomials (12 bits, then the 66 products) of chunk's bits, as one int."""
    b = [(chunk >> i) & 1 for i in range(12)] + [(chunk >> i) & (chunk >> j) & 1 for i, j in PAIRS]
    return sum(v << k for k, v in enumerate(b))


def null_space(rows, width=78):
    """A basis (ints) of the v with an even number of ones in row & v for every row: GF(2)."""
    piv = {}
    for r in rows:
        while r:
            h = r.bit_length() - 1
            if h not in piv:
                piv[h] = r
                break
            r ^= piv[h]
    for h in sorted(piv):
        for h2 in piv:
            if h2 != h and (piv[h2] >> h) & 1:
                piv[h2] ^= piv[h]
    basis = []
    for f in (i for i in range(width) if i not in piv):
        v = 1 << f
        for h, r in piv.items():
            if (r >> f) & 1:
                v |= 1 << h
        basis.append(v)
    return basis


def describe(v):
    """A function's terms as address bits: a9 + a13a14."""
    terms = [f"a{i + 8}" for i in range(12) if (v >> i) & 1]
    terms += [f"a{p + 8}a{q + 8}" for k, (p, q) in enumerate(PAIRS) if (v >> (12 + k)) & 1]
    return " + ".join(terms)


def walsh(a):
    """The Walsh-Hadamard transform of a (length a power of two), over its length."""
    a = a.astype(float).copy()
    h = 1
    while h < len(a):
        a = a.reshape(-1, 2, h)
        a = np.stack([a[:, 0] + a[:, 1], a[:, 0] - a[:, 1]], 1).reshape(-1)
        h *= 2
    return a / len(a)


def half_flips(lab):
    """The flips k of chunk bits that keep 45-55% of the chunks in their group, each with the
    largest |Walsh coefficient| of where it keeps them (1: an affine half, as a function of
    degree two gives)."""
    n = len(lab)
    idx = np.arange(n)
    out = []
    for k in range(1, n):
        same = lab == lab[idx ^ k]
        if 0.45 <= same.mean() <= 0.55:
            w = walsh(1 - 2 * same.astype(int))
            out.append((k, same.mean(), np.abs(w[1:]).max()))
    return out


def report_quadratic(lat, rng):
    x = fingerprints(lat)
    c, lab = groups(x)
    res = np.sqrt(((x - c[lab]) ** 2).mean(1))
    sure = res < np.percentile(res, 80)  # the fifth farthest from their centres left out
    flips = half_flips(lab)
    print(f"  {len(flips)} flips of chunk bits keep 45-55% of the chunks in their group; where "
          f"they keep them is an affine half for "
          f"{sum(1 for _, _, w in flips if w > 0.95)} of them (|Walsh coefficient| > 0.95)")
    mono = [monomials(i) for i in range(len(x))]
    eqs = []
    for g in np.unique(lab):
        m = np.nonzero((lab == g) & sure)[0]
        eqs += [mono[a] ^ mono[m[0]] for a in m[1:]]
    part = sum(1 << (b - 8) for b in (12, 13, 16, 17, 19))
    part_broken = sum(bin(e & part).count("1") & 1 for e in eqs) / len(eqs)
    broken = {}
    for _ in range(300):
        for v in null_space([eqs[i] for i in rng.choice(len(eqs), 120, replace=False)]):
            if v not in broken:
                broken[v] = sum(bin(e & v).count("1") & 1 for e in eqs) / len(eqs)
    # no more broken than the partition's XOR, a function of the slice that the noise breaks
    limit = max(0.02, part_broken)
    keep = sorted((v for v, b in broken.items() if b <= limit),
                  key=lambda v: (bin(v).count("1"), broken[v]))
    span = []
    for v in keep:
        for b in span:
            if (v >> (b.bit_length() - 1)) & 1:
                v ^= b
        if v:
            span.append(v)
            span.sort(key=lambda b: -b.bit_length())
    print(f"  functions of degree <= 2 constant within the groups ({len(eqs)} equations of the "
          f"80% of chunks nearest their centres; the partition's XOR breaks {part_broken:.1%} of "
          f"them, the groups' noise): {len(keep)} break at most {limit:.1%}, spanning "
          f"{len(span)} dimensions")
    for v in keep[:16]:
        print(f"    {broken[v]:.2%} broken: {describe(v)}")


def main():
    rng = np.random.default_rng(1)
    quadratic = "--quadratic" in sys.argv[1:]
    cluster = quadratic or "--cluster" in sys.argv[1:]
    for path in [a for a in sys.argv[1:] if a not in ("--cluster", "--quadratic")]:
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
        if quadratic:
            report_quadratic(lat, np.random.default_rng(2))


if __name__ == "__main__":
    main()
