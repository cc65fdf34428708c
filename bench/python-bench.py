#!/usr/bin/env python3
"""memsim.Cache.access() from numpy against a pure-C replay of the same accesses, in one run.

    PYTHONPATH=build/python python3 bench/python-bench.py [--accesses 20000000] [--repeat 3]

Writes one access stream (numpy) to a file, times `bench-replay FILE SPEC` (C calling
memsim_load/memsim_store once per access, and once more with one memsim_access_batch call)
and Cache(SPEC).access(addrs, sizes, writes) on the same arrays, checks that all three count
the same, and prints each rate (best of --repeat) and the ratio of Python's time to C's. The
goals (issue 20): at least 1e8 accesses/s from Python, at most 1.5x C's time.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import memsim

SPEC = "L1=32K:8:64,L2=1M:16:64"


def stream(n, seed=1):
    """A saxpy-like stream over fp32 arrays X and Y (load X[i], load Y[i], store Y[i]) with a
    strided gather over a table G every 16th step: a miss about every 8 accesses in L1."""
    m = n // 3
    i = np.arange(m, dtype=np.uint64)
    x, y, g = np.uint64(1 << 30), np.uint64(2 << 30), np.uint64(3 << 30)
    addrs = np.empty(3 * m, dtype=np.uint64)
    addrs[0::3] = x + 4 * i
    addrs[1::3] = y + 4 * i
    addrs[2::3] = y + 4 * i
    gather = np.random.default_rng(seed).integers(0, 1 << 22, size=m // 16, dtype=np.uint64)
    addrs[0::48][: len(gather)] = g + 64 * gather
    writes = np.zeros(3 * m, dtype=np.uint8)
    writes[2::3] = 1
    sizes = np.full(3 * m, 4, dtype=np.uint32)
    return addrs, sizes, writes


def replay_c(tool, path, batch):
    args = [tool, path, SPEC] + (["--batch"] if batch else [])
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"bench: {' '.join(args)}: {p.stderr.strip()}")
    out = json.loads(p.stdout)
    return out["seconds"], json.loads(out["report"]) if isinstance(out["report"], str) \
        else out["report"]


def replay_py(addrs, sizes, writes):
    with memsim.Cache(SPEC) as c:
        t0 = time.perf_counter()
        c.access(addrs, sizes, writes)
        seconds = time.perf_counter() - t0
        return seconds, c.report()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--accesses", type=int, default=20_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--replay", default=os.environ.get(
                        "MEMSIM_BENCH_REPLAY", os.path.join(here, "..", "build", "bench",
                                                            "bench-replay")),
                    help="the bench-replay program (build/bench/bench-replay)")
    a = ap.parse_args()
    if not os.access(a.replay, os.X_OK):
        sys.exit(f"bench: {a.replay} not found: build with -Dbench=true (meson configure build -Dbench=true && ninja -C build), or --replay")
    addrs, sizes, writes = stream(a.accesses)
    n = len(addrs)
    with tempfile.TemporaryDirectory(prefix="memsim-pybench-") as d:
        path = os.path.join(d, "stream.bin")
        with open(path, "wb") as f:
            np.array([n], dtype="<u8").tofile(f)
            addrs.tofile(f)
            sizes.tofile(f)
            writes.tofile(f)
        runs = {"C, one call per access": [], "C, one batch call": [], "Python, Cache.access": []}
        reports = {}
        for _ in range(a.repeat):
            for name, fn in (("C, one call per access", lambda: replay_c(a.replay, path, False)),
                             ("C, one batch call", lambda: replay_c(a.replay, path, True)),
                             ("Python, Cache.access", lambda: replay_py(addrs, sizes, writes))):
                s, rep = fn()
                runs[name].append(s)
                reports[name] = rep
    keys = ("dram", "levels")
    first = reports["C, one call per access"]
    same = all(json.dumps(r[k], sort_keys=True) == json.dumps(first[k], sort_keys=True)
               for r in reports.values() for k in keys)
    l1 = first["levels"][0] if isinstance(first["levels"], list) else None
    print(f"memsim {memsim.version()}: {n} accesses on {SPEC}, best of {a.repeat}")
    if l1 and "misses" in l1:
        print(f"L1 misses {l1['misses'] / n:.1%} of accesses")
    best = {k: min(v) for k, v in runs.items()}
    for k, s in best.items():
        print(f"  {k:26} {s:8.3f} s  {n / s:10.3g} accesses/s")
    ratio = best["Python, Cache.access"] / best["C, one call per access"]
    print(f"Python / C (one call per access) time: {ratio:.2f}x "
          f"(goal <= 1.5x: {'met' if ratio <= 1.5 else 'NOT met'})")
    rate = n / best["Python, Cache.access"]
    print(f"Python rate {rate:.3g} accesses/s (goal >= 1e8: {'met' if rate >= 1e8 else 'NOT met'})")
    print(f"counters equal in all three: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
