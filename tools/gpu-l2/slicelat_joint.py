#!/usr/bin/env python3
"""slicelat.cu's windows pooled (issue 22): the chunks of several 1 MiB windows labelled by one
clustering, then the Boolean functions of degree two at most of their address bits that are
constant within the labels.

  label OUT.npz FILE.bin.gz...   the windows' fingerprints (slicelat_report.fingerprints()),
      grouped as slicelat_report --cluster groups the first window, every chunk of every window
      then given to its nearest group and the groups' centres moved (8 rounds of k-means), each
      group then split by address bit 9 (constant within every group of one window:
      slicelat_report --quadratic). Writes the labels, the chunk numbers (address >> 8) and each
      chunk's distance from its group's centre.
  fit LABELS.npz [BITS]   the functions of address bits 8 .. 8 + BITS - 1 (17: 32 MiB) of degree
      two at most that are constant within the labels: over GF(2) each chunk and its label's
      first chunk must agree (the 80% of chunks nearest their centres), and the null space of
      200 random subsets of those equations (seeded) holds the candidates, each scored by the
      share of 20000 sampled equations it breaks; the 12 least broken are printed.

Usage: python3 tools/gpu-l2/slicelat_joint.py label OUT.npz FILES... | fit LABELS.npz [BITS]"""

import itertools
import re
import sys

import numpy as np

from slicelat_report import fingerprints, groups, load, null_space


def label(out, paths):
    x, chunks = [], []
    for p in paths:
        off_kib = int(re.search(r"lat-(\d+)\.bin", p).group(1))
        f = fingerprints(load(p))
        x.append(f)
        chunks.append((off_kib << 2) + np.arange(len(f)))  # 256-byte chunks
    x, chunk = np.concatenate(x), np.concatenate(chunks)
    c, _ = groups(x[: len(x) // len(paths)])
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


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "label":
        label(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) in (3, 4) and sys.argv[1] == "fit":
        fit(sys.argv[2], int(sys.argv[3]) if len(sys.argv) == 4 else 17)
    else:
        sys.exit(__doc__.split("Usage: ")[1])


if __name__ == "__main__":
    main()
