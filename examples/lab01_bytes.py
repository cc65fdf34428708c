#!/usr/bin/env python3
"""Lab 01, the bytes-moved delta of Flash vs naive, with memsim from Python.

Blocks A to D of the course's lab 01, "The Bytes-Moved Delta of Flash vs Naive": the lab's
closed forms next to memsim's formulas at the lab's sizes, the intensities, the simulated
bytes with the lab's 30% check, and bytes vs N with the intensity ratio plotted. Run:

    PYTHONPATH=build/python python3 examples/lab01_bytes.py --max-N 4096 --out lab01

(an installed memsim needs no PYTHONPATH; it installs this file as
PREFIX/share/memsim/examples/lab01_bytes.py). Plots: matplotlib where it is installed, else
memsim's own (gnuplot) from the sweep directory.
"""

import argparse
import os

import memsim


# Block A: the lab's closed forms (theory 02), bytes of HBM traffic, O's write left out.
def bytes_naive(N, d, dtype_bytes=2):
    return (12 * N * d + 16 * N**2) * (dtype_bytes / 4)


def bytes_flash(N, d, B_r, B_c, dtype_bytes=2):
    return 8 * N * d * (1 + N / B_r) * (dtype_bytes / 4)


def block_a_b():
    print("Block A/B: closed forms, memsim's lab formula, FLOPs = 4 N^2 d, intensity (fp32)")
    print(f"{'N':>6} {'d':>4} {'naive B':>14} {'memsim':>14} {'flash B':>14} {'memsim':>14}"
          f" {'I naive':>8} {'I flash':>8} {'ratio':>6}")
    for N, d in ((64, 64), (1024, 64), (2048, 64), (4096, 64), (8192, 128), (32768, 128)):
        nv, fl = bytes_naive(N, d, 4), bytes_flash(N, d, 64, 64, 4)
        m_nv = memsim.formula("naive", N=N, d=d).formulas["lab"]["bytes"]
        m_fl = memsim.formula("flash2", N=N, d=d).formulas["lab"]["bytes"]
        flops = 4 * N * N * d
        print(f"{N:>6} {d:>4} {nv:>14.0f} {m_nv:>14} {fl:>14.0f} {m_fl:>14}"
              f" {flops / nv:>8.2f} {flops / fl:>8.2f} {nv / fl:>6.2f}")
    print("At N=64 the naive N x N scores (16 KiB at fp32) fit in L1: Flash buys nothing.\n")


def block_c(sizes, cache):
    print(f"Block C: simulated bytes on the '{cache}' cache against the lab formula (30%)")
    for kernel in ("naive", "flash2"):
        for N in sizes:
            r = memsim.run(kernel, N=N, d=64, cache=cache, trace_only=True)
            lab = next(c for c in r["compare"] if c["formula"] == "lab")
            verdict = "within 30%" if lab["within"] else "outside 30%: " + lab["why_not"]
            print(f"  {kernel:6} N={N:<5} simulated {lab['measured_bytes']:>10} formula "
                  f"{lab['predicted_bytes']:>10} ratio {lab['ratio']:.3f} {verdict}")
    print()


def block_d(max_n, out):
    print(f"Block D: bytes vs N, N = 256 .. {max_n}, naive and flash2 (B_r = B_c = 64)")
    rows = memsim.sweep(kernel=["naive", "flash2"], N=f"256:{max_n}:x2", d=64, cache="lab",
                        trace_only=True, out=os.path.join(out, "lab"), frame=False)
    by = {(r["config"]["kernel"], r["config"]["N"]): r for r in rows}
    Ns = sorted({n for _, n in by})
    for N in Ns:
        nv, fl = by[("naive", N)], by[("flash2", N)]
        ratio = fl["intensity"] / nv["intensity"]
        print(f"  N={N:<6} naive {nv['dram']['total_bytes']:>12} flash2 "
              f"{fl['dram']['total_bytes']:>12} intensity ratio flash/naive {ratio:.2f}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        try:
            files = memsim.plot(out)
            print("plots (memsim plot):", ", ".join(sorted(files)))
        except memsim.Error as e:
            print(f"plots: {e}")
        return
    for name, ys, label in (
        ("bytes_vs_n", {k: [by[(k, n)]["dram"]["total_bytes"] for n in Ns]
                        for k in ("naive", "flash2")}, "DRAM bytes"),
        ("intensity_ratio", {"flash2 / naive": [by[("flash2", n)]["intensity"]
                                                / by[("naive", n)]["intensity"] for n in Ns]},
         "intensity ratio"),
    ):
        plt.figure()
        for k, y in ys.items():
            plt.loglog(Ns, y, marker="o", label=k)
        plt.xlabel("N")
        plt.ylabel(label)
        plt.legend()
        plt.savefig(os.path.join(out, name + ".png"))
        print(f"plot: {os.path.join(out, name + '.png')}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-N", type=int, default=4096)
    ap.add_argument("--out", default="lab01")
    ap.add_argument("--cache", default="lab")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    block_a_b()
    block_c([n for n in (256, 512, 1024) if n <= a.max_N], a.cache)
    block_d(a.max_N, a.out)


if __name__ == "__main__":
    main()
