#!/usr/bin/env python3
"""slicelat.cu's windows pooled (issue 22): the chunks of several 1 MiB windows labelled by one
clustering, then the Boolean functions of degree two at most of their address bits that are
constant within the labels.

  label [--threshold T] OUT.npz FILE.bin.gz...   the windows' fingerprints
      (slicelat_report.fingerprints()), grouped as slicelat_report --cluster groups the first
      window (leader clustering within T cycles RMS, 2 unless given), every chunk of every window
      then given to its nearest group and the groups' centres moved (8 rounds of k-means), each
      group then split by address bit 9 (constant within every group of one window:
      slicelat_report --quadratic). Writes the labels, the chunk numbers (address >> 8) and each
      chunk's distance from its group's centre; prints how many labels each value of the
      partition function and bit 9 holds.
  fit LABELS.npz [BITS]   the functions of address bits 8 .. 8 + BITS - 1 (17: 32 MiB) of degree
      two at most that are constant within the labels: over GF(2) each chunk and its label's
      first chunk must agree (the 80% of chunks nearest their centres), and the null space of
      200 random subsets of those equations (seeded) holds the candidates, each scored by the
      share of 20000 sampled equations it breaks; the 12 least broken are printed.

  evict EVICT.txt...   docs/gpu-run/l2-evict's eviction sets against what the fit found: for
      each target, its congruent lines below 32 MiB, and the values there of address bit 9, of
      the partition function and of F, the least broken quadratic function of
      windows32/README.md, over all and within each value of bit 9.

  sets EVICT.txt[.gz]   the eviction sets' own functions: the sets whose lines below 32 MiB
      keep S1 and S2 (F's part without and with bit 9's factor) one value, then the null space
      of every equation between lines of one such set over the monomials of degree two at
      most of address bits 7-24, less the multiples of the partition function (zero on every
      near line, as every scanned line is); each function printed with the share of all sets
      (those left out included) on which it keeps one value.

Usage: python3 tools/gpu-l2/slicelat_joint.py label [--threshold T] OUT.npz FILES... |
       fit LABELS.npz [BITS] | evict EVICT.txt... | sets EVICT.txt[.gz]"""

import itertools
import re
import sys

import numpy as np

from slicelat_report import fingerprints, groups, load, null_space


def label(out, paths, threshold=2.0):
    x, chunks = [], []
    for p in paths:
        off_kib = int(re.search(r"lat-(\d+)\.bin", p).group(1))
        f = fingerprints(load(p))
        x.append(f)
        chunks.append((off_kib << 2) + np.arange(len(f)))  # 256-byte chunks
    x, chunk = np.concatenate(x), np.concatenate(chunks)
    c, _ = groups(x[: len(x) // len(paths)], thr=threshold)
    for _ in range(8):
        lab = np.concatenate([((x[i:i + 8192, None] - c[None]) ** 2).mean(2).argmin(1)
                              for i in range(0, len(x), 8192)])
        c = np.array([x[lab == j].mean(0) for j in range(len(c)) if (lab == j).any()])
    lab = np.concatenate([((x[i:i + 8192, None] - c[None]) ** 2).mean(2).argmin(1)
                          for i in range(0, len(x), 8192)])
    res = np.sqrt(((x - c[lab]) ** 2).mean(1))
    lab = lab * 2 + ((chunk >> 1) & 1)
    sizes = np.bincount(lab)
    print(f"{len(x)} chunks of {len(paths)} windows: {len(c)} groups, {int((sizes > 0).sum())} "
          f"labels once split by bit 9 (median {int(np.median(sizes[sizes > 0]))} chunks); "
          f"a chunk {np.median(res):.2f} cycles RMS from its centre")
    part = np.array([partition_of(int(a) << 8) for a in chunk])
    print("labels a value of the partition function and bit 9 holds: " + ", ".join(
        f"{p}/{b}: {len(np.unique(lab[(part == p) & (((chunk >> 1) & 1) == b)]))}"
        for p in (0, 1) for b in (0, 1)))
    np.savez_compressed(out, label=lab.astype(np.int32), chunk=chunk.astype(np.int64),
                        residual=res.astype(np.float32))


def fit(path, nb):
    z = np.load(path)
    lab, chunk, res = z["label"], z["chunk"], z["residual"]
    pairs = list(itertools.combinations(range(nb), 2))
    bits = ((chunk[:, None] >> np.arange(nb)) & 1).astype(np.uint8)
    mono = np.concatenate([bits] + [(bits[:, i] & bits[:, j])[:, None] for i, j in pairs], 1)
    nm = mono.shape[1]
    sure = res < np.percentile(res, 80)
    a, b = [], []
    for g in np.unique(lab):
        m = np.nonzero((lab == g) & sure)[0]
        if len(m) > 1:
            a.append(m[1:])
            b.append(np.full(len(m) - 1, m[0]))
    eqs = mono[np.concatenate(a)] ^ mono[np.concatenate(b)]
    rng = np.random.default_rng(3)
    sample = eqs[rng.choice(len(eqs), min(20000, len(eqs)), replace=False)].astype(np.int32)
    weights = 1 << np.arange(nm, dtype=object)

    def as_int(row):
        return int(np.dot(row.astype(object), weights))

    def broken(v):
        vec = np.array([(v >> i) & 1 for i in range(nm)], np.int32)
        return float(((sample @ vec) & 1).mean())

    def describe(v):
        t = [f"a{i + 8}" for i in range(nb) if (v >> i) & 1]
        t += [f"a{p + 8}a{q + 8}" for k, (p, q) in enumerate(pairs) if (v >> (nb + k)) & 1]
        return " + ".join(t)

    found = {}
    for _ in range(200):
        rows = [as_int(eqs[i]) for i in rng.choice(len(eqs), nm + 40, replace=False)]
        for v in null_space(rows, nm):
            found.setdefault(v, broken(v))
    print(f"{len(eqs)} equations over {nm} monomials of address bits 8-{nb + 7}; "
          f"{len(found)} candidate functions, the least broken:")
    for v, share in sorted(found.items(), key=lambda t: t[1])[:12]:
        print(f"  {share:.2%} broken: {describe(v)}")


# F of docs/gpu-run/l2-slicelat/windows32/README.md: linear terms, those times a9, and the
# quadratic form Q, over address bits 8-24.
F_LINEAR = (13, 15, 20, 21)
F_TIMES_A9 = (13, 15, 19, 20, 21, 22)
F_Q = ((13, 14), (13, 18), (13, 19), (13, 22), (13, 23), (13, 24), (14, 15), (14, 19), (14, 20),
       (14, 21), (14, 22), (15, 18), (15, 19), (15, 22), (15, 23), (15, 24), (18, 19), (18, 20),
       (18, 21), (18, 22), (19, 20), (19, 21), (19, 23), (19, 24), (20, 22), (20, 23), (20, 24),
       (21, 22), (21, 23), (21, 24), (22, 23), (22, 24))


def bit(a, i):
    return (a >> i) & 1


def f_of(a):
    v = 0
    for i in F_LINEAR:
        v ^= bit(a, i)
    for i in F_TIMES_A9:
        v ^= bit(a, 9) & bit(a, i)
    for i, j in F_Q:
        v ^= bit(a, i) & bit(a, j)
    return v


def partition_of(a):
    return bit(a, 12) ^ bit(a, 13) ^ bit(a, 16) ^ bit(a, 17) ^ bit(a, 19) ^ bit(a, 23)


def s1_of(a):
    """F without its products with bit 9."""
    v = 0
    for i in F_LINEAR:
        v ^= bit(a, i)
    for i, j in F_Q:
        v ^= bit(a, i) & bit(a, j)
    return v


def s2_of(a):
    """What F's products with bit 9 multiply it by."""
    v = 0
    for i in F_TIMES_A9:
        v ^= bit(a, i)
    return v


def read_sets(path):
    import gzip
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return [[int(x) for x in line.split()[1:]] for line in f
                if line.startswith("congruent") and len(line.split()) > 3]


def sets(path, lo=7, hi=25):
    whole = read_sets(path)
    near = [[a for a in s if a + 512 in set(s)] for s in whole]
    mib = sorted({a >> 20 for n in near for a in n})
    print(f"{sum(1 for n in near if n)} of {len(whole)} sets hold lines 512 bytes apart, "
          f"{sum(1 for n in near for a in n if a >= 32 << 20)} of {sum(map(len, near))} such "
          f"lines above 32 MiB (MiB {mib[0] if mib else '-'} to {mib[-1] if mib else '-'})")
    every = [[a for a in s if a < 1 << 25] for s in whole]
    one_value = lambda fn, s: len({fn(a) for a in s}) == 1  # noqa: E731
    clean = [s for s in every if one_value(s1_of, s) and one_value(s2_of, s)]
    print(f"{len(every)} sets; S1 one value on {sum(one_value(s1_of, s) for s in every)}, S2 on "
          f"{sum(one_value(s2_of, s) for s in every)}; both on {len(clean)}")
    nb = hi - lo
    pairs = list(itertools.combinations(range(nb), 2))

    def mono(a):
        x = [(a >> (lo + i)) & 1 for i in range(nb)]
        return x + [x[i] & x[j] for i, j in pairs]

    def value(v, a):
        return sum(m for k, m in enumerate(mono(a)) if (v >> k) & 1) & 1

    weights = 1 << np.arange(nb + len(pairs), dtype=object)
    rows = []
    for s in clean:
        m0 = np.array(mono(s[0]), np.uint8)
        rows += [int(np.dot((np.array(mono(a), np.uint8) ^ m0).astype(object), weights))
                 for a in s[1:]]
    space = null_space(rows, nb + len(pairs))
    # the partition's multiples vanish on near lines: keep what does not
    rng = np.random.default_rng(9)
    near = [a for a in (int(x) << 7 for x in rng.integers(0, 1 << 18, 4000))
            if partition_of(a) == 0][:1500]
    basis = []
    for v in space:
        col = tuple(value(v, a) for a in near)
        if any(col):
            basis.append((v, col))
    # reduce the columns over GF(2) to count independent functions on near lines
    rank, rows_ = 0, []
    for _, col in basis:
        c = int("".join(map(str, col)), 2)
        for r in rows_:
            c = min(c, c ^ r)
        if c:
            rows_.append(c)
            rank += 1
    print(f"{len(rows)} equations over bits {lo}-{hi - 1}: exact null space {len(space)} "
          f"dimensions, {rank} of them not multiples of the partition function:")
    for v, _ in basis:
        terms = [f"a{i + lo}" for i in range(nb) if (v >> i) & 1]
        terms += [f"a{p + lo}a{q + lo}" for k, (p, q) in enumerate(pairs) if (v >> (nb + k)) & 1]
        held = sum(one_value(lambda a, v=v: value(v, a), s) for s in every)
        print(f"  one value on {held} of {len(every)} sets: {' + '.join(terms)}")


def evict(paths):
    held = total = 0
    for path in paths:
        target = None
        for line in open(path):
            w = line.split()
            if w and w[0] == "target":
                target = int(w[1])
            if not w or w[0] != "congruent":
                continue
            lines = [int(x) for x in w[1:] if int(x) < 1 << 25]
            if len(lines) < 2:
                continue
            values = {name: sorted({fn(a) for a in lines})
                      for name, fn in (("a9", lambda a: bit(a, 9)), ("partition", partition_of),
                                       ("F", f_of))}
            halves = [sorted({f_of(a) for a in lines if bit(a, 9) == h}) for h in (0, 1)]
            total += 1
            held += all(len(v) == 1 for v in halves)
            print(f"target {target / 2**20:.3f} MiB: {len(lines)} congruent lines below 32 MiB; "
                  + ", ".join(f"{k} {v}" for k, v in values.items())
                  + f"; F where a9 = 0: {halves[0]}, where a9 = 1: {halves[1]}")
    print(f"F one value within each half of bit 9 for {held} of {total} sets")


def main():
    if len(sys.argv) >= 6 and sys.argv[1:3] == ["label", "--threshold"]:
        label(sys.argv[4], sys.argv[5:], float(sys.argv[3]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "label":
        label(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 3 and sys.argv[1] == "sets":
        sets(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "evict":
        evict(sys.argv[2:])
    elif len(sys.argv) in (3, 4) and sys.argv[1] == "fit":
        fit(sys.argv[2], int(sys.argv[3]) if len(sys.argv) == 4 else 17)
    else:
        sys.exit(__doc__.split("Usage: ")[1])


if __name__ == "__main__":
    main()
