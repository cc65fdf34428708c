#!/usr/bin/env python3
"""Does set sampling's estimated_error cover the true error, in every stratum?

Usage: tools/sampling-coverage.py [--memsim build/memsim] [--count N] [--seed S] [--jobs J]
                                  [--out FILE] [--compare OLD] [--commands FILE]

Draws N random configurations [300] (seeded [1]: the same seed draws the same runs on any
machine): every kernel (naive, flash1, flash2, flashdecode, proj), half of them with every
size a power of two (rows a whole number of K chunks), footprints from 1 KiB to 16 MiB, one or
two set-associative levels of 32-, 64- or 128-byte lines, the last from 1/64 of the footprint
to twice it, 1 to 16 ways, LRU, FIFO, tree-PLRU or random replacement, write-back or -through,
write-allocate, no-write-allocate or write-validate, tiles in scratch or in memory. Each runs
exact (`memsim run --trace-only`) and sampled at two factors K drawn from those its cache
allows (2 to 256). The true error is (estimate - exact) / exact of the DRAM bytes; a run is
covered when |true error| <= estimate.estimated_error. Prints the coverage of every stratum
(footprint, K, replacement, write policy, kernel, tiles, levels, shape, the sample's effective
chunks m, the set classes sampled), of all runs and of those not flagged sample_too_small, the
largest error of an unflagged run, and the runs that were not covered. 600 configurations
take about 5 minutes on 2 cores (--jobs 2).

--out FILE keeps one JSON line per sampled run (a rerun with the same FILE reads it instead
of running again); --compare OLD, a FILE of another binary's runs (the same --seed and
--count), prints how the estimated_error changed on the runs OLD already covered.
--commands FILE runs each line of FILE (a `memsim run ... --sample-sets K` command, `memsim`
standing for the binary) exact and sampled instead, and prints each run's errors.
"""

import argparse
import concurrent.futures
import json
import math
import os
import random
import shlex
import subprocess
import sys

KERNELS = ["naive", "flash1", "flash2", "flashdecode", "proj"]
HEADS = [(1, 1), (2, 1), (2, 2), (4, 1), (4, 2), (8, 2), (12, 3), (16, 4)]
TILES = [1, 2, 3, 5, 8, 16, 17, 23, 32, 40, 50, 64, 100, 128, 200]
DS = [1, 2, 3, 4, 7, 8, 16, 24, 32, 40, 64, 72, 128]
DTYPE_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}
POLICIES = ["lru", "fifo", "plru", "random"]
SMALL_FOOTPRINT = 256 << 10  # bytes: the audit's line between small and large footprints
BOUND = 0.10  # sim/drive/sample.h SAMPLE_ERROR_BOUND: flagged above it
MAX_WORK = 6e7  # accesses, roughly: keeps each run under about a second


def footprint(c):
    """Bytes of the arrays in memory, roughly (tiles left out)."""
    s = DTYPE_BYTES[c["dtype"]]
    b, n, nkv, d, h, hkv = c["batch"], c["N"], c["N_kv"], c["d"], c["heads"], c["kv_heads"]
    q = b * h * n * d * s
    kv = b * hkv * nkv * d * s
    if c["kernel"] == "proj":
        dm, dkv = h * d, hkv * d
        return 3 * q + 2 * kv + 2 * (dm * dm + dm * dkv) * s
    extra = b * h * n * 12
    if c["kernel"] == "naive":
        extra = b * h * n * nkv * s
    if c["kernel"] == "flashdecode":
        extra += b * h * c.get("splits", 1) * n * (d + 1) * 4
    return 2 * q + 2 * kv + extra


def work(c):
    n, nkv, d, bh = c["N"], c["N_kv"], c["d"], c["batch"] * c["heads"]
    if c["kernel"] == "proj":
        return c["batch"] * n * (c["heads"] * d) ** 2 * 4
    return bh * n * nkv * (d + 4) * 2


def log_uniform(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def draw_shape(rng):
    """Half the shapes are powers of two throughout (d, heads, N, tiles), as models use: their
    rows are whole multiples of K chunks, the case where the sampled sets all hold the same
    columns."""
    pow2 = rng.random() < 0.5
    while True:
        h, hkv = rng.choice(HEADS)
        c = {
            "kernel": rng.choice(KERNELS),
            "d": rng.choice([16, 32, 64, 128] if pow2 else DS),
            "heads": h,
            "kv_heads": hkv,
            "batch": rng.choice([1, 1, 2, 3]),
            "dtype": rng.choice(list(DTYPE_BYTES)),
            "Br": rng.choice([16, 32, 64, 128] if pow2 else TILES),
            "Bc": rng.choice([16, 32, 64, 128] if pow2 else TILES),
            "shape": "pow2" if pow2 else "any",
        }
        if pow2 and h & (h - 1):
            continue
        if c["kernel"] == "flashdecode":
            c["N"] = rng.choice([1, 1, 2, 4, 8] if pow2 else [1, 1, 2, 3, 4, 8])
            c["N_kv"] = 2 ** rng.randint(5, 13) if pow2 else log_uniform(rng, 16, 8192)
            c["splits"] = rng.choice([1, 2, 4, 8, 16] if pow2 else [1, 2, 3, 4, 7, 16])
        else:
            c["N"] = 2 ** rng.randint(4, 12) if pow2 else log_uniform(rng, 8, 4096)
            c["N_kv"] = c["N"]
            if c["kernel"] in ("naive", "flash2") and rng.random() < 0.3:
                c["N_kv"] = 2 ** rng.randint(4, 12) if pow2 else log_uniform(rng, 4, 2048)
        if c["kernel"] in ("flash2", "flashdecode") and rng.random() < 0.25:
            c["kv_page"] = rng.choice([16, 64, 256] if pow2 else [1, 2, 7, 16, 64, 1000])
        if c["kernel"] != "proj" and c["N"] <= c["N_kv"] and rng.random() < 0.3:
            c["causal"] = True
        if work(c) <= MAX_WORK:
            return c


def draw_level(rng, name, line, sets, policy, write):
    ways = rng.choice([1, 2, 4, 4, 8, 8, 12, 16])
    if policy == "plru" and ways == 12:
        ways = 8
    return "%s=%dB:%d:%d:%s:%s" % (name, sets * ways * line, ways, line, policy, write), ways


def pow2_near(x):
    return 2 ** max(0, int(round(math.log2(max(x, 1)))))


def draw_cache(rng, c):
    """One or two set-associative levels, the last from 1/64 of the footprint to twice it; an
    L2 holds 4 to 64 times the L1's lines."""
    line = rng.choice([32, 64, 64, 128])
    levels = rng.choice([1, 2])
    policy = rng.choice(POLICIES)
    write = rng.choice(["wb:wa"] * 4 + ["wt:wa", "wb:nwa", "wb:wv", "wt:nwa"])
    last = footprint(c) / line * 2 ** rng.uniform(-6, 1)  # lines of the last level
    first = last / 2 ** rng.randint(2, 6) if levels == 2 else last
    sets1 = min(max(pow2_near(first / 8), 16), 2 ** 14)
    l1, ways1 = draw_level(rng, "L1", line, sets1, policy, write)
    specs, sets = [l1], [sets1]
    if levels == 2:
        sets2 = sets1 * 2 ** rng.randint(0, 4)
        l2, ways2 = draw_level(rng, "L2", line, sets2, rng.choice(POLICIES), "wb:wa")
        while sets2 * ways2 < 4 * sets1 * ways1:
            sets2 *= 2
            l2 = "L2=%dB:%s" % (sets2 * ways2 * line, l2.split(":", 1)[1])
        specs.append(l2)
        sets.append(sets2)
    tiles = rng.choice(["scratch", "dram"])
    return {"cache": ",".join(specs) + ",tiles=" + tiles, "policy": policy,
            "write": write, "tiles": tiles, "levels": levels, "max_k": min(min(sets), 256)}


def draw(rng):
    c = draw_shape(rng)
    c.update(draw_cache(rng, c))
    ks = [2 ** i for i in range(1, int(math.log2(c["max_k"])) + 1)]
    c["ks"] = sorted(rng.sample(ks, min(2, len(ks))))
    return c


def command(c):
    args = ["run", "--kernel", c["kernel"], "--N", c["N"], "--d", c["d"], "--heads",
            c["heads"], "--kv-heads", c["kv_heads"], "--batch", c["batch"], "--dtype",
            c["dtype"], "--Br", c["Br"], "--Bc", c["Bc"]]
    if c["N_kv"] != c["N"] or c["kernel"] == "flashdecode":
        args += ["--N-kv", c["N_kv"]]
    if "splits" in c:
        args += ["--splits", c["splits"]]
    if "kv_page" in c:
        args += ["--kv-page", c["kv_page"]]
    if c.get("causal"):
        args.append("--causal")
    return [str(a) for a in args + ["--cache", c["cache"], "--trace-only"]]


def run_json(memsim, args):
    """The report of `memsim ARGS --json -`, or (None, the last line of stderr)."""
    p = subprocess.run([memsim] + args + ["--json", "-", "--threads", "1"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    return json.loads(p.stdout), None


def dram(report):
    return report["dram"]["read_bytes"] + report["dram"]["write_bytes"]


def measure(memsim, args, ks):
    """Exact and sampled runs of args: one row per K (an error row where a run fails)."""
    exact, err = run_json(memsim, args)
    if exact is None:
        return [{"k": k, "refused": err} for k in ks]
    rows = []
    for k in ks:
        est, err = run_json(memsim, args + ["--sample-sets", str(k)])
        if est is None:
            rows.append({"k": k, "refused": err})
            continue
        e = est["estimate"]
        true = (dram(est) - dram(exact)) / dram(exact) if dram(exact) else float(dram(est) > 0)
        rows.append({"k": k, "exact": dram(exact), "estimate": dram(est), "error": true,
                     "estimated_error": e["estimated_error"],
                     "flagged": e["sample_too_small"], "reason": e["reason"],
                     "m": e["sample_events"]["dram_effective_chunks"],
                     "parts": e.get("error_parts")})
    return rows


def one_config(memsim, i, c):
    rows = measure(memsim, command(c), c["ks"])
    for r in rows:
        r.update({"index": i, "config": c, "footprint": footprint(c)})
    return rows


M_STRATA = ((16, "m < 16"), (64, "m 16-63"), (256, "m 64-255"), (1024, "m 256-1023"),
            (float("inf"), "m >= 1024"))
K_STRATA = ((4, "K 2-4"), (16, "K 8-16"), (64, "K 32-64"), (256, "K 128-256"))
CLASS_STRATA = ((1, "set classes 1"), (4, "set classes 2-4"), (16, "set classes 5-16"),
                (float("inf"), "set classes > 16"))
# Every stratum in the order the table prints them.
ORDER = (["all", "footprint < 256 KiB", "footprint >= 256 KiB"] + [n for _, n in K_STRATA] +
         ["policy " + p for p in POLICIES] +
         ["write " + w for w in ("wb:wa", "wt:wa", "wb:nwa", "wt:nwa", "wb:wv")] +
         ["kernel " + k for k in KERNELS] + ["tiles scratch", "tiles dram", "levels 1",
                                             "levels 2", "shape pow2", "shape any"] +
         [n for _, n in M_STRATA] + [n for _, n in CLASS_STRATA])


def set_classes(c, k):
    """The set classes 1 in k samples (cache_sample_classes()): the smallest level's sets
    (every level has the same line here), over k."""
    sets = []
    for level in c["cache"].split(",")[:-1]:
        size, ways, line = level.split("=")[1].split(":")[:3]
        sets.append(int(size.rstrip("B")) // (int(ways) * int(line)))
    return min(sets) // k


def first_below(value, table):
    return next(name for top, name in table if value <= top or top == float("inf"))


def strata(r):
    c = r["config"]
    return [
        "all",
        "footprint < 256 KiB" if r["footprint"] < SMALL_FOOTPRINT else "footprint >= 256 KiB",
        first_below(r["k"], K_STRATA),
        "policy " + c["policy"],
        "write " + c["write"],
        "kernel " + c["kernel"],
        "tiles " + c["tiles"],
        "levels %d" % c["levels"],
        "shape " + c["shape"],
        next(name for top, name in M_STRATA if r["m"] < top),
        first_below(set_classes(c, r["k"]), CLASS_STRATA),
    ]


def covered(r):
    return abs(r["error"]) <= r["estimated_error"]


def report(rows, out):
    done = [r for r in rows if "error" in r]
    refused = len(rows) - len(done)
    table = {}
    for r in done:
        for s in strata(r):
            # runs, covered, unflagged, unflagged covered, flagged
            t = table.setdefault(s, [0, 0, 0, 0, 0])
            t[0] += 1
            t[1] += covered(r)
            if r["flagged"]:
                t[4] += 1
            else:
                t[2] += 1
                t[3] += covered(r)

    def pct(a, b):
        return "%5.1f%%" % (100.0 * a / b) if b else "     -"

    print("| stratum | runs | covered | flagged | unflagged | unflagged covered |", file=out)
    print("|---|---|---|---|---|---|", file=out)
    for s in (s for s in ORDER if s in table):
        t = table[s]
        print("| %s | %d | %s | %d | %d | %s |" % (s, t[0], pct(t[1], t[0]), t[4], t[2],
                                                    pct(t[3], t[2])), file=out)
    unflagged = [r for r in done if not r["flagged"]]
    worst = max(unflagged, key=lambda r: abs(r["error"]), default=None)
    print("\n%d sampled runs (%d refused by memsim); %d unflagged, the largest unflagged "
          "|error| %.2f%%" % (len(done), refused, len(unflagged),
                              100 * abs(worst["error"]) if worst else 0), file=out)
    missed = [r for r in done if not covered(r)]
    if missed:
        print("not covered (error, estimated_error, m, flagged, command):", file=out)
    for r in sorted(missed, key=lambda r: -abs(r["error"]) / max(r["estimated_error"], 1e-9)):
        print("  %+.1f%% %.1f%% m=%.1f %s: memsim %s --sample-sets %d" % (
            100 * r["error"], 100 * r["estimated_error"], r["m"],
            "flagged" if r["flagged"] else "UNFLAGGED",
            " ".join(shlex.quote(a) for a in command(r["config"])[0:]), r["k"]), file=out)


def compare(rows, old_path, out):
    """How much wider the estimated_error is than OLD's on the runs OLD covered."""
    old = {}
    with open(old_path) as f:
        for line in f:
            r = json.loads(line)
            if "error" in r:
                old[(r["index"], r["k"])] = r
    ratios, kept, newly, newly_within = [], [], 0, 0
    for r in rows:
        o = old.get((r["index"], r["k"]))
        if "error" not in r or not o or not covered(o) or o["estimated_error"] <= 0:
            continue
        ratios.append(r["estimated_error"] / o["estimated_error"])
        if not o["flagged"] and not r["flagged"]:
            kept.append(ratios[-1])
        if not o["flagged"] and r["flagged"]:
            newly += 1
            newly_within += abs(r["error"]) <= BOUND
    if not ratios:
        return

    def q(xs, p):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")

    print("\nestimated_error against %s, on the %d runs it covered: x%.2f at the median, "
          "x%.2f at the 75th percentile, x%.2f at the 90th; on the %d unflagged by both: "
          "x%.2f at the median, x%.2f at the 90th. Newly flagged: %d, %d of them within "
          "%.0f%% of the exact bytes." % (
              old_path, len(ratios), q(ratios, 0.5), q(ratios, 0.75), q(ratios, 0.9),
              len(kept), q(kept, 0.5), q(kept, 0.9), newly, newly_within, 100 * BOUND),
          file=out)


def run_commands(memsim, path, jobs):
    """Each line of path, exact and sampled: its true error against its estimated_error."""
    lines = [l.strip() for l in open(path) if l.strip() and not l.startswith("#")]
    jobs_args = []
    for line in lines:
        words = shlex.split(line)[1:]
        i = words.index("--sample-sets")
        k = int(words[i + 1])
        jobs_args.append((words[:i] + words[i + 2:], k))
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        results = list(ex.map(lambda a: measure(memsim, a[0], [a[1]])[0], jobs_args))
    n_cov = 0
    print("| true error | estimated_error | m | flagged | covered | command |")
    print("|---|---|---|---|---|---|")
    for line, r in zip(lines, results):
        if "error" not in r:
            print("| - | - | - | refused: %s | - | `%s` |" % (r["refused"], line))
            continue
        n_cov += covered(r)
        print("| %+.1f%% | %.1f%% | %.2f | %s | %s | `%s` |" % (
            100 * r["error"], 100 * r["estimated_error"], r["m"],
            "yes" if r["flagged"] else "**no**", "yes" if covered(r) else "**no**", line))
    print("\n%d of %d covered" % (n_cov, len(lines)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memsim", default="build/memsim")
    ap.add_argument("--count", type=int, default=300, help="configurations [300]")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", help="JSON lines of the runs (read back where present)")
    ap.add_argument("--compare", help="another --out's runs, to compare estimated_error")
    ap.add_argument("--commands", help="a file of sampled commands to check instead")
    a = ap.parse_args()
    if a.commands:
        run_commands(a.memsim, a.commands, a.jobs)
        return 0
    rng = random.Random(a.seed)
    configs = [draw(rng) for _ in range(a.count)]
    rows = []
    if a.out and os.path.exists(a.out):
        with open(a.out) as f:
            rows = [json.loads(line) for line in f]
    have = {r["index"] for r in rows}
    todo = [(i, c) for i, c in enumerate(configs) if i not in have]
    sink = open(a.out, "a") if a.out else None
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for got in ex.map(lambda t: one_config(a.memsim, *t), todo):
            rows += got
            if sink:
                for r in got:
                    sink.write(json.dumps(r) + "\n")
                sink.flush()
    rows = [r for r in rows if r["index"] < a.count]
    report(rows, sys.stdout)
    if a.compare:
        compare(rows, a.compare, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
