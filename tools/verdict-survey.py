#!/usr/bin/env python3
"""Randomized survey of memsim's verdicts: does every verdict tell the truth?

Usage: tools/verdict-survey.py [--memsim build/memsim] [--count N] [--seed S] [--jobs J]
                               [--max-seconds T] [--show K] [--focus F] [--decode]
                               [--lines L1,L2,...]

Draws N configurations nobody tuned for (odd N from 1 to 4097, d from 1 to 256, B_r != B_c,
grouped-query heads, batches, every dtype, caches from one line to 1.5x the footprint, lines of
32/64/128 bytes (--lines: others, such as write-validate lines of 256 bytes and more), every
replacement and write policy, tiles in scratch or memory, 0 to 4 levels, with and without the
final flush; flash2 (and --decode's flashdecode) with a paged KV cache, --kv-page 1 to 256, a
third of the time; naive and flash2 with N_kv keys of another length than the N queries, a
third of the time), runs each with `memsim run --trace-only --json -`, and checks what the
report claims against what it measured:

  crash       the run died (a signal) or wrote no report
  exact       scope "exact": every array's read and write bytes equal the formula's, to the byte
  interval    scope "interval": the total and every array lie in [low, high] (the bound: no
              tolerance), and the compare entry says within with tolerance 0
  verdict     "within" where the ratio is outside the stated tolerance, or the other way
  report      "please report" in a verdict whose claim held, or outside scope "exact"/"interval"
  regime      "inside the lab's assumptions" while the lab verdict is OUTSIDE its tolerance
  scope       an estimate with no reason, or a scope name not known

--focus interval draws the set-associative bound's edges instead: naive and flash2 (a fifth
flash1 and proj, which must stay estimates) with N_kv != N half the time, causal, grouped-query
heads, B_r past N, N a power of two (rows a way apart), naive with B_r of 1 to 3 (where its
bound exists), one write-back LRU level of 8 to 32 ways (16 sets a third of the time) sized
near a reuse window of the kernel (K and V of a kv head with a query block; naive's K with the
S rows of two query blocks, or S of a head), so that runs fall near a crossover.

A configuration memsim refuses with exit 2 and one line is counted as refused, not failed.
Prints one line per failure (the command that reproduces it) and closes with
"N passed, N failed". Exits 1 if any check failed. The test command runs a small fixed-seed
budget (tests/meson.build); run it at length by hand, e.g. --count 5000.
"""

import argparse
import concurrent.futures
import json
import random
import subprocess
import sys
import time

KERNELS = ["naive", "flash1", "flash2", "proj"]
HEADS = [(1, 1), (12, 3), (4, 2), (2, 1), (3, 3), (8, 1)]
TILES = [1, 2, 3, 5, 7, 16, 40, 50, 64, 100, 128, 200]
DTYPE_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}
LINES = [32, 64, 64, 128]  # the line sizes drawn; --lines replaces them (and FIT_LINES)
FIT_LINES = [32, 64, 128]  # --decode's caches past the footprint


def draw_n(rng):
    """Odd and tiny sizes weighted up: the edges are where formulas go wrong."""
    r = rng.random()
    if r < 0.25:
        return rng.randint(1, 8)
    if r < 0.6:
        return rng.randint(9, 300) | 1
    if r < 0.9:
        return rng.randint(301, 1100)
    return rng.choice([1023, 1025, 2047, 2049, 4095, 4097])


def footprint(cfg):
    s = DTYPE_BYTES[cfg["dtype"]]
    n, d, b, h, hkv = cfg["N"], cfg["d"], cfg["batch"], cfg["heads"], cfg["kv_heads"]
    rows = b * n * d * s
    if cfg["kernel"] == "flashdecode":
        # Q, O; K, V of N_kv rows; lse; the partial O and logsumexp (fp32) of S splits
        sp = cfg["splits"] if cfg["splits"] > 1 else 0
        table = b * -(-cfg["N_kv"] // cfg["kv_page"]) * 4 if cfg.get("kv_page") else 0
        return (rows * 2 * h + b * hkv * cfg["N_kv"] * d * s * 2 + b * h * n * 4 +
                b * h * sp * n * (d + 1) * 4 + table)
    if cfg["kernel"] == "proj":
        dm, dkv = h * d, hkv * d
        return rows * (3 * h + 2 * hkv) + 2 * (dm * dm + dm * dkv) * s
    nk = cfg.get("N_kv", n)
    qkvo = rows * 2 * h + b * nk * d * s * 2 * hkv
    if cfg["kernel"] == "naive":
        return qkvo + b * h * n * nk * s * (2 if cfg.get("softmax_separate") else 1)
    return qkvo + b * h * n * 4 * 3


def work(cfg):
    """Accesses the trace-only run makes, roughly: keeps the survey's runs short."""
    n, d, bh = cfg["N"], cfg["d"], cfg["batch"] * cfg["heads"]
    if cfg["kernel"] == "proj":
        return cfg["batch"] * n * (cfg["heads"] * d) ** 2 * 4
    return bh * n * cfg.get("N_kv", n) * (d + 4)


def pow2_floor(x):
    p = 1
    while p * 2 <= x:
        p *= 2
    return p


def draw_level(rng, name, line, lines_max, lower, plain):
    """One level; plain: LRU, write-back, write-allocate or -validate, full or 8+ ways (the
    formulas' scope, drawn often so that the claims are tried often)."""
    lines = max(1, int(round(2 ** rng.uniform(0, max(0.0, lines_max.bit_length())))))
    lines = min(lines, lines_max)
    if plain == "interval":
        assoc = rng.choice([8, 16, 32])
    else:
        assoc = rng.choice(["full", "full", 8, 16] if plain else ["full", 1, 2, 4, 8, 16])
    if assoc != "full":
        ways = min(assoc, lines)
        sets = pow2_floor(max(1, lines // ways))
        lines = sets * ways
        assoc = ways
    if plain:
        opts = ["lru", "wb", rng.choice(["wa", "wa", "wv"])]
    else:
        pow2 = assoc != "full" and assoc == pow2_floor(assoc)
        opts = [rng.choice(["lru"] * 6 + ["fifo", "random"] + (["plru"] if pow2 else []))]
        opts.append(rng.choice(["wb"] * 5 + ["wt"]))
        opts.append(rng.choice(["wa"] * 4 + ["nwa", "wv", "wv"]))
    spec = "%s=%d:%s:%d:%s" % (name, lines * line, assoc, line, ":".join(opts))
    if lower and not plain and rng.random() < 0.1:
        spec += ":incl"
    return spec, lines


def draw_cache(rng, cfg, focus):
    plain = focus if focus != "all" else rng.random() < 0.5
    levels = 1 if plain else rng.choice([0, 1, 1, 2, 2, 3, 4])
    tiles = rng.choice(["scratch", "scratch", "dram"] if not plain else ["scratch"] * 4 + ["dram"])
    if levels == 0:
        return "none,tiles=%s" % tiles
    line = rng.choice(LINES)
    top = max(2, int(1.5 * footprint(cfg) / line) + 1)
    specs, lines = [], 1
    for i in range(levels):
        # each level at least as large as the one above, as real hierarchies are
        spec, n = draw_level(rng, "L%d" % (i + 1), line, top, i > 0, plain)
        while n < lines:
            spec, n = draw_level(rng, "L%d" % (i + 1), line, top, i > 0, plain)
        specs.append(spec)
        lines = n
    return ",".join(specs) + ",tiles=" + tiles


def draw(rng, focus, page_rng, nkv_rng):
    # paged K/V from a stream of its own: the other draws stay those of a seed before it
    paged, page = page_rng.random() < 0.35, page_rng.choice([1, 3, 16, 64, 256])
    while True:
        h, hkv = rng.choice(HEADS)
        cfg = {
            "kernel": rng.choice(KERNELS),
            "N": draw_n(rng),
            "d": rng.choice([1, 2, 3, 5, 8, 24, 40, 64, 72, 128, 256]),
            "heads": h,
            "kv_heads": hkv,
            "batch": rng.choice([1, 1, 1, 2, 3]),
            "dtype": rng.choice(list(DTYPE_BYTES)),
            "Br": rng.choice(TILES),
            "Bc": rng.choice(TILES),
        }
        if cfg["kernel"] != "proj" and rng.random() < 0.3:
            cfg["causal"] = True
        if cfg["kernel"] == "naive" and rng.random() < 0.2:
            cfg["softmax_separate"] = True
        if work(cfg) <= 3e7:
            break
    if paged and cfg["kernel"] == "flash2":
        cfg["kv_page"] = page
    # keys of another length than the queries (decode, chunked prefill; naive and flash2
    # take them), from a stream of its own as the pages'
    if cfg["kernel"] in ("naive", "flash2") and nkv_rng.random() < 0.35:
        n_kv = nkv_rng.choice([1, 2, 7, 64, 300, 1000, 4096])
        if cfg.get("causal"):
            n_kv = max(n_kv, cfg["N"] + nkv_rng.randint(0, 300))
        if work(dict(cfg, N=max(cfg["N"], n_kv))) <= 3e7:
            cfg["N_kv"] = n_kv
    cfg["cache"] = draw_cache(rng, cfg, focus)
    cfg["flush"] = rng.random() < 0.85
    return cfg


def lines_of(nbytes, line):
    return -(-nbytes // line)


def reuse_window(rng, cfg, line):
    """Lines between two touches of a line in one of the kernel's reuse windows, roughly: a
    cache of about this size sits at a crossover."""
    s = DTYPE_BYTES[cfg["dtype"]]
    n, nkv, d, nr = cfg["N"], cfg.get("N_kv", cfg["N"]), cfg["d"], min(cfg["Br"], cfg["N"])
    kv = lines_of(nkv * d * s, line)
    rows = lines_of(nr * d * s, line)
    if cfg["kernel"] == "naive":
        srow = lines_of(nkv * s, line)
        return rng.choice([kv + 2 * nr * srow + rows, 2 * nr * srow + kv,
                           n * srow * (2 if cfg.get("softmax_separate") else 1)])
    return 2 * kv + 2 * rows + 1


def draw_interval(rng):
    """A configuration at the set-associative bound's edges (see --focus interval above)."""
    while True:
        h, hkv = rng.choice(HEADS)
        kernel = rng.choice(["naive", "naive", "flash2", "flash2", "flash1", "proj"])
        cfg = {
            "kernel": kernel,
            "N": draw_n(rng) if rng.random() < 0.8 else rng.choice([16, 64, 128, 256, 512, 1024]),
            "d": rng.choice([8, 16, 24, 40, 64, 72, 128, 160, 256]),
            "heads": h,
            "kv_heads": hkv,
            "batch": rng.choice([1, 1, 2, 3]),
            "dtype": rng.choice(list(DTYPE_BYTES)),
            "Br": rng.choice([1, 2, 3]) if kernel == "naive" and rng.random() < 0.5
            else rng.choice(TILES),
            "Bc": rng.choice(TILES),
        }
        if kernel in ("naive", "flash2") and rng.random() < 0.5:
            cfg["N_kv"] = rng.choice([draw_n(rng), cfg["N"] * 2, 2 ** rng.randint(4, 11)])
        if kernel != "proj" and rng.random() < 0.4:
            cfg["causal"] = True
            if cfg.get("N_kv", cfg["N"]) < cfg["N"]:
                cfg["N"], cfg["N_kv"] = cfg["N_kv"], cfg["N"]
        if kernel == "naive" and rng.random() < 0.2:
            cfg["softmax_separate"] = True
        line = rng.choice(LINES)
        if cfg["d"] * DTYPE_BYTES[cfg["dtype"]] >= line and work(cfg) <= 3e7:
            break
    target = reuse_window(rng, cfg, line) * rng.uniform(0.8, 1.25)
    ways = rng.randint(8, 32)
    sets = 16 if rng.random() < 0.33 else max(16, pow2_floor(int(target / ways)))
    ways = max(8, int(round(target / sets)))
    cfg["cache"] = "L1=%dB:%d:%d:lru:wb:%s,tiles=scratch" % (
        sets * ways * line, ways, line, rng.choice(["wa", "wa", "wv"]))
    cfg["flush"] = rng.random() < 0.85
    return cfg


def draw_decode(rng, focus, page_rng):
    """flashdecode's decode step: N = 1 to 16 queries (N = 1 with grouped heads runs packed)
    over N_kv keys, rarely a multiple of B_c; S from 1 to past the key blocks; caches from one
    line to 1.5x the footprint, and a third of them at least the footprint (where S > 1 is
    exact: nothing is evicted)."""
    while True:
        h, hkv = rng.choice(HEADS)
        cfg = {
            "kernel": "flashdecode",
            "N": rng.choice([1, 1, 1, 2, 4, 7, 16]),
            "N_kv": rng.randint(16, 5000),
            "d": rng.choice([3, 8, 24, 40, 64, 72, 128]),
            "heads": h,
            "kv_heads": hkv,
            "batch": rng.choice([1, 1, 2, 3]),
            "dtype": rng.choice(list(DTYPE_BYTES)),
            "Br": rng.choice([1, 2, 5, 8, 16, 64]),
            "Bc": rng.choice(TILES),
            "splits": rng.choice([1, 2, 3, 4, 7, 16, 1000]),
        }
        if cfg["N"] <= cfg["N_kv"] and rng.random() < 0.5:
            cfg["causal"] = True
        if work(cfg) <= 3e7:
            break
    cfg["splits"] = min(cfg["splits"], -(-cfg["N_kv"] // cfg["Bc"]))
    # paged K/V from a stream of its own, as draw()'s
    paged, page = page_rng.random() < 0.35, page_rng.choice([1, 3, 16, 64, 256])
    if paged:
        cfg["kv_page"] = page
    cfg["cache"] = draw_cache(rng, cfg, focus)
    if rng.random() < 0.35:
        line = rng.choice(FIT_LINES)
        lines = int(footprint(cfg) / line) + rng.randint(8, 400)
        cfg["cache"] = "L1=%d:full:%d:lru:wb:%s,tiles=scratch" % (
            lines * line, line, rng.choice(["wa", "wv"]))
    cfg["flush"] = rng.random() < 0.85
    return cfg


def argv_of(memsim, cfg):
    a = [memsim, "run", "--trace-only", "--json", "-"]
    keys = ["kernel", "N", "d", "heads", "kv_heads", "batch", "dtype", "Br", "Bc", "cache"]
    if cfg["kernel"] == "flashdecode":
        keys += ["N_kv", "splits"]
    elif "N_kv" in cfg:
        keys.append("N_kv")
    for k in keys:
        a += ["--" + k.replace("_", "-"), str(cfg[k])]
    if cfg.get("causal"):
        a.append("--causal")
    if cfg.get("softmax_separate"):
        a.append("--softmax-separate")
    if cfg.get("kv_page"):
        a += ["--kv-page", str(cfg["kv_page"])]
    if not cfg["flush"]:
        a.append("--no-flush")
    return a


def check(rep):
    """The failed checks of one report: a list of (kind, detail)."""
    bad = []
    ex = rep["formulas"]["exact"]
    scope = ex.get("scope")
    cmp = {c["formula"]: c for c in rep["compare"]}
    e = cmp["exact"]
    if scope not in ("exact", "interval", "estimate"):
        return [("scope", "scope %r" % scope)]
    if scope == "estimate" and not ex.get("scope_why"):
        bad.append(("scope", "an estimate with no reason"))
    if scope == "exact":
        off = [n for n, a in ex["per_array"].items()
               if a["measured_read_bytes"] != a["exact_read_bytes"]
               or a["measured_write_bytes"] != a["exact_write_bytes"]]
        if off or not e["within"]:
            bad.append(("exact", "ratio %.4f, arrays off: %s" % (e["ratio"], ",".join(off))))
    if scope == "interval":
        low, high, m = e.get("low_bytes", -1), e.get("high_bytes", -1), e["measured_bytes"]
        off = [n for n, a in ex["per_array"].items()
               if not a.get("exact_low_bytes", 0) <= a["measured_read_bytes"] +
               a["measured_write_bytes"] <= a.get("exact_high_bytes", -1)]
        if not low <= m <= high or off or not e["within"] or e["tolerance"] != 0:
            bad.append(("interval", "%.0f in [%.0f, %.0f]: %s, tolerance %g, arrays outside: %s"
                        % (m, low, high, e["within"], e["tolerance"], ",".join(off))))
    for c in rep["compare"]:
        if c.get("low_bytes") is None and c["ratio"] >= 0:
            inside = 1 - c["tolerance"] <= c["ratio"] <= 1 + c["tolerance"]
            if inside != c["within"] and abs(c["ratio"] - 1) - c["tolerance"] > 1e-9:
                bad.append(("verdict", "%s: ratio %.4f, tolerance %g, within %s" %
                            (c["formula"], c["ratio"], c["tolerance"], c["within"])))
    for c in rep["compare"]:
        claim_held = c["within"] or scope == "estimate"
        if "please report" in c["why_not"] and claim_held:
            bad.append(("report", "%s: %s" % (c["formula"], c["why_not"])))
    lab = cmp.get("lab")
    if lab and rep["regime"]["within_lab_assumptions"] and not lab["within"]:
        bad.append(("regime", "in regime, lab ratio %.3f: %s" % (lab["ratio"],
                                                              rep["regime"]["text"])))
    return bad


def run_one(memsim, cfg):
    argv = argv_of(memsim, cfg)
    p = subprocess.run(argv, capture_output=True, text=True, errors="replace")
    if p.returncode == 2 and p.stderr.count("\n") <= 2:
        return cfg, argv, "refused", [], p.stderr.strip()
    if p.returncode != 0:
        return cfg, argv, None, [("crash", "exit %d: %s" % (p.returncode,
                                                          p.stderr.strip()[-200:]))], ""
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        return cfg, argv, None, [("crash", "no JSON report")], ""
    return cfg, argv, rep["formulas"]["exact"].get("scope"), check(rep), ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memsim", default="build/memsim")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--max-seconds", type=float, default=0,
                    help="stop drawing after this long (0: no limit)")
    ap.add_argument("--show", type=int, default=40, help="failures printed at most")
    ap.add_argument("--tap", action="store_true",
                    help="print TAP for meson: one test line for the whole survey")
    ap.add_argument("--focus", choices=["all", "exact", "interval"], default="all",
                    help="draw only single LRU write-back levels, fully associative or of"
                         " 8+ ways (exact), or the set-associative bound's edges (interval)")
    ap.add_argument("--decode", action="store_true",
                    help="draw flashdecode decode steps (N 1 to 16 over N_kv keys, S splits,"
                         " grouped-query heads packed at N = 1) instead")
    ap.add_argument("--lines", help="the line sizes to draw, comma-separated bytes (powers"
                    " of two) [32,64,64,128]")
    args = ap.parse_args()
    if args.lines:
        LINES[:] = FIT_LINES[:] = [int(x) for x in args.lines.split(",")]

    if args.tap:
        print("1..1", flush=True)
    rng = random.Random(args.seed)
    page_rng = random.Random(args.seed + 1)
    if args.decode:
        cfgs = [draw_decode(rng, args.focus, page_rng) for _ in range(args.count)]
    elif args.focus == "interval":
        cfgs = [draw_interval(rng) for _ in range(args.count)]
    else:
        nkv_rng = random.Random(args.seed + 2)
        cfgs = [draw(rng, args.focus, page_rng, nkv_rng) for _ in range(args.count)]
    start = time.time()
    scopes, kinds, refused, failures, done = {}, {}, 0, [], 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futs = [pool.submit(run_one, args.memsim, c) for c in cfgs]
        for f in futs:
            if args.max_seconds and time.time() - start > args.max_seconds:
                for g in futs:
                    g.cancel()
            if f.cancelled():
                continue
            cfg, argv, scope, bad, msg = f.result()
            done += 1
            if scope == "refused":
                refused += 1
                continue
            if scope:
                scopes[scope] = scopes.get(scope, 0) + 1
            for kind, _ in bad:
                kinds[kind] = kinds.get(kind, 0) + 1
            if bad:
                failures.append((argv, bad))
    pre = "# " if args.tap else ""
    for argv, bad in failures[:args.show]:
        print("%sFAIL %s: %s" % (pre, "; ".join("%s %s" % b for b in bad),
                                 " ".join(a if " " not in a else repr(a) for a in argv[1:])))
    print(pre + "configurations: %d run (%d refused with a usage error) in %.0f s, seed %d" %
          (done, refused, time.time() - start, args.seed))
    print(pre + "scopes: " + ", ".join("%s %d" % kv for kv in sorted(scopes.items())))
    if kinds:
        print(pre + "failed checks: " + ", ".join("%s %d" % kv for kv in sorted(kinds.items())))
    summary = "%d passed, %d failed" % (done - refused - len(failures), len(failures))
    if args.tap:
        print("%s 1 - verdict survey: %s" % ("not ok" if failures else "ok", summary))
    else:
        print(summary)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
