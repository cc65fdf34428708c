"""Random sweep plans for tools/sweep-differential.py, and the commands that run them.

A plan is a dict of the sweep's lists (kernel, N, d, heads, kv_heads, batch, dtype, Br, Bc,
causal), softmax_separate, its caches (the --cache words), cache_sweep, flush, seed,
sample_sets, and what the harness needs to check it: ncaches (the sweep's caches once a
--cache-sweep is expanded), alone (for each of them, the spec to give `memsim run`, or None
where the sweep's own canonical spec is to be used) and rt_seed (the harness's own choices:
workers, kill times, shards).
"""

import itertools

KERNELS = ["naive", "flash1", "flash2", "proj"]
DTYPES = ["fp32", "fp16", "bf16"]
TILES = [1, 2, 3, 5, 7, 8, 16, 17, 32, 64, 100]
# Presets and the geometry of their levels (ways, line): a --cache-sweep keeps a level's ways.
PRESETS = {
    "lab": {},
    "i5-8250u": {"L1": (8, 64), "L2": (4, 64), "L3": (12, 64)},
    "cachegrind": {"L1": (8, 64), "L2": (16, 64)},
    "callgrind": {"L1": (8, 64), "L2": (16, 64)},
    "h100": {"L1": (22, 128)},
}


def draw_n(rng):
    """N = 1 often, tiny, powers of two, and any other size up to 300."""
    r = rng.random()
    if r < 0.15:
        return 1
    if r < 0.35:
        return rng.randint(2, 8)
    if r < 0.55:
        return rng.choice([16, 32, 64, 128, 256])
    return rng.randint(9, 300)


def draw_list(rng, draw, most=2, p_more=0.3):
    """One value mostly, sometimes more (distinct, in the order drawn)."""
    n = 1
    while n < most and rng.random() < p_more:
        n += 1
    out = []
    for _ in range(20 * n):
        v = draw()
        if v not in out:
            out.append(v)
        if len(out) == n:
            break
    return out


def level_spec(name, size, ways, line, opts):
    return "%s=%d:%s:%d:%s" % (name, size, ways, line, ":".join(opts))


def draw_opts(rng, ways, lines, lower, excl_ok):
    """Replacement (PLRU where the ways are a power of two), write and write-miss policies,
    and below the first level inclusion (exclusive only below a write-back level of the same
    line size)."""
    w = lines if ways == "full" else ways
    pow2 = w & (w - 1) == 0
    repl = rng.choice(["lru"] * 5 + ["fifo"] * 2 + ["random"] + (["plru"] * 2 if pow2 else []))
    opts = [repl, rng.choice(["wb"] * 4 + ["wt"]), rng.choice(["wa"] * 4 + ["nwa", "wv"])]
    if lower:
        opts.append(rng.choice(["nine"] * 6 + ["incl"] + (["excl"] if excl_ok else [])))
    return opts


def draw_level(rng, line, lower, excl_ok):
    """(ways, sets or lines, options) of one level; few sets, one set often."""
    ways = rng.choice([1, 2, 3, 4, 4, 8, "full", "full"])
    if ways == "full":
        lines = rng.choice([1, 2, 3, 4, 6, 8, 16, 32, 64])
        return ways, lines, draw_opts(rng, ways, lines, lower, excl_ok)
    sets = rng.choice([1, 1, 2, 4, 8, 16])
    return ways, sets, draw_opts(rng, ways, sets * ways, lower, excl_ok)


def size_of(ways, count, line):
    return count * line if ways == "full" else count * ways * line


def draw_hierarchy(rng, levels, keep=None):
    """A random spec of 1 to 3 levels, as a list of [name, ways, count, line, opts]; keep:
    (level index, ways, line) that a level must have (a --cache-sweep's level)."""
    out, above = [], None
    line = rng.choice([32, 64, 64, 128])
    for i in range(levels):
        if keep and keep[0] == i:
            # the swept level: its size is the sweep's
            ways, lline = keep[1], keep[2]
            count = rng.choice([1, 2, 4])
            opts = draw_opts(rng, ways, 3, i > 0, lline == line and above == "wb")
        else:
            lline = line if rng.random() < 0.8 or i == 0 else min(128, line * 2)
            ways, count, opts = draw_level(rng, lline, i > 0, lline == line and above == "wb")
        out.append(["L%d" % (i + 1), ways, count, lline, opts])
        line, above = lline, opts[1]
    return out


def spec_of(levels, tiles):
    return ",".join(level_spec(n, size_of(w, c, l), w, l, o) for n, w, c, l, o in levels) + \
        ",tiles=" + tiles


def draw_sweep_sizes(rng, ways, line):
    """2 to 4 distinct sizes of a level of these ways and line, in random order; one set (or
    one line) often, and often first."""
    counts = [1, 2, 4, 8, 16, 32] if ways != "full" else [1, 2, 3, 4, 5, 8, 16, 32]
    n = rng.randint(2, 4)
    pick = rng.sample(counts, n)
    if rng.random() < 0.5 and 1 not in pick:
        pick[rng.randrange(n)] = 1
    rng.shuffle(pick)
    if rng.random() < 0.3 and 1 in pick:
        pick.remove(1)
        pick.insert(0, 1)
    sizes = [size_of(ways, c, line) for c in pick]
    if rng.random() < 0.2 and ways != "full":
        lo = min(sizes)
        return sizes, "%d:%d:x%d" % (lo, lo * rng.choice([4, 8, 16]), rng.choice([2, 4]))
    return sizes, ",".join(str(s) if rng.random() < 0.5 or s % 1024 else "%dK" % (s // 1024)
                           for s in sizes)


def draw_caches(rng, plan):
    """plan["caches"] (the --cache words), plan["cache_sweep"] and plan["alone"]: for each
    cache of the sweep in its order, the spec to give `memsim run` (None: the sweep's own
    canonical spec, for a preset whose level is swept)."""
    plan["cache_sweep"] = None
    r = rng.random()
    if r < 0.35:
        # Without a --cache-sweep: 1 or 2 caches, presets and random specs.
        caches = []
        for _ in range(rng.choice([1, 1, 2])):
            if rng.random() < 0.4:
                c = rng.choice(list(PRESETS))
            else:
                c = spec_of(draw_hierarchy(rng, rng.randint(1, 3)),
                            rng.choice(["dram", "dram", "scratch"]))
            if c not in caches:
                caches.append(c)
        plan["caches"], plan["alone"] = caches, list(caches)
        plan["ncaches"] = len(caches)
        return
    if r < 0.5:
        # A preset's level swept.
        preset = rng.choice([p for p in PRESETS if PRESETS[p]])
        level = rng.choice(sorted(PRESETS[preset]))
        ways, line = PRESETS[preset][level]
        sizes, text = draw_sweep_sizes(rng, ways, line)
        plan["caches"] = [preset]
        plan["cache_sweep"] = "%s=%s" % (level, text)
        plan["alone"] = None
        plan["ncaches"] = len(sizes_in_sweep_order(sizes, text))
        return
    # Random specs, 1 or 2 sharing the swept level's ways and line.
    nlev = rng.randint(1, 3)
    at = rng.randrange(nlev)
    first = draw_hierarchy(rng, nlev)
    ways, line = first[at][1], first[at][3]
    if ways == "full":
        # the swept sizes have any number of lines: no PLRU
        first[at][4] = ["lru" if o == "plru" else o for o in first[at][4]]
    hiers = [first]
    if rng.random() < 0.3:
        hiers.append(draw_hierarchy(rng, nlev, (at, ways, line)))
    tiles = rng.choice(["dram", "dram", "scratch"])
    sizes, text = draw_sweep_sizes(rng, ways, line)
    caches, alone = [], []
    for h in hiers:
        specs = []
        for s in sizes_in_sweep_order(sizes, text):
            h2 = [list(x) for x in h]
            h2[at][2] = s // line if ways == "full" else s // (ways * line)
            specs.append(spec_of(h2, tiles))
        # two caches that differ only in the swept level's size are one plan twice (issue
        # 18 item 12: duplicates accepted), left out here
        if not set(specs) & set(alone):
            caches.append(spec_of(h, tiles))
            alone += specs
    plan["caches"] = caches
    plan["cache_sweep"] = "L%d=%s" % (at + 1, text)
    plan["alone"] = alone
    plan["ncaches"] = len(alone)


def fewest_sets(spec):
    """The fewest sets of any level of spec (a preset has many)."""
    if "=" not in spec:
        return 1 if spec == "lab" else 1 << 20
    sets = []
    for level in spec.split(",")[:-1]:
        size, ways, line = level.split("=")[1].split(":")[:3]
        sets.append(1 if ways == "full" else int(size) // (int(ways) * int(line)))
    return min(sets)


def sizes_in_sweep_order(sizes, text):
    """The sizes a --cache-sweep's text gives, in its order (a range expanded)."""
    if ":" not in text:
        return sizes
    lo, hi, f = text.split(":")
    out, v = [], int(lo)
    while v <= int(hi):
        out.append(v)
        v *= int(f[1:])
    return out


def work(cfg):
    """Roughly the accesses a traced run makes: keeps each plan near a second."""
    n, d, b, h = cfg["N"], cfg["d"], cfg["batch"], cfg["heads"]
    if cfg["kernel"] == "proj":
        return b * n * (h * d) ** 2 * 4 + 1000
    return b * h * n * n * (d + 4) * (2 if cfg["kernel"] == "naive" else 1) + 1000


def configurations(plan):
    """The plan's configurations in the sweep's order (caches outermost, N innermost), each
    a dict naming its cache by its index in the sweep's caches."""
    out = []
    dims = itertools.product(range(plan["ncaches"]), plan["kernel"], plan["dtype"],
                             plan["causal"], plan["heads"], plan["kv_heads"] or [None],
                             plan["batch"], plan["d"], plan["Br"], plan["Bc"], plan["N"])
    for ci, k, t, c, h, kv, b, d, br, bc, n in dims:
        kv = h if kv is None else kv
        if h % kv == 0 and not (k == "proj" and c == "yes"):
            out.append({"kernel": k, "N": n, "d": d, "heads": h, "kv_heads": kv, "batch": b,
                        "dtype": t, "Br": br, "Bc": bc, "causal": c == "yes",
                        "softmax_separate": plan["softmax_separate"], "cache": ci})
    return out


def draw_plan(rng, max_configs=12, max_work=2e6):
    """A plan of 1 to max_configs configurations, about a second of work in all."""
    while True:
        plan = {
            "kernel": draw_list(rng, lambda: rng.choice(KERNELS)),
            "N": draw_list(rng, lambda: draw_n(rng), 3, 0.4),
            "d": draw_list(rng, lambda: rng.choice([1, 2, 3, 4, 5, 8, 16, 24, 32, 64])),
            "heads": draw_list(rng, lambda: rng.choice([1, 1, 2, 3, 4])),
            "batch": draw_list(rng, lambda: rng.choice([1, 1, 2])),
            "dtype": draw_list(rng, lambda: rng.choice(DTYPES)),
            "Br": draw_list(rng, lambda: rng.choice(TILES)),
            "Bc": draw_list(rng, lambda: rng.choice(TILES)),
            "causal": rng.choice([["no"], ["no"], ["yes"], ["no", "yes"]]),
        }
        plan["kv_heads"] = None
        if rng.random() < 0.3:
            plan["kv_heads"] = draw_list(rng, lambda: rng.choice([1, 2]))
        plan["softmax_separate"] = "naive" in plan["kernel"] and rng.random() < 0.15
        draw_caches(rng, plan)
        plan["flush"] = rng.random() < 0.8
        plan["seed"] = rng.choice([1, 1, rng.randint(2, 10 ** 6)])
        plan["sample_sets"] = 0
        fewest = min(fewest_sets(c) for c in plan["caches"] + (plan["alone"] or ["lab"]))
        if fewest >= 8 and rng.random() < 0.4:
            # set sampling needs 4 K sets or more in every level
            plan["sample_sets"] = rng.choice([k for k in [2, 4] if 4 * k <= fewest])
        plan["rt_seed"] = rng.getrandbits(32)
        cfgs = configurations(plan)
        total = sum(work(c) for c in cfgs)
        if 0 < len(cfgs) <= max_configs and total <= max_work:
            return plan


def sweep_args(plan):
    """The plan as `memsim sweep` options (without --out, --jobs and the mode)."""
    a = ["--kernel", ",".join(plan["kernel"])]
    for k in ["N", "d", "heads", "kv_heads", "batch", "Br", "Bc"]:
        if plan.get(k):
            a += ["--" + k.replace("_", "-"), ",".join(str(v) for v in plan[k])]
    a += ["--dtype", ",".join(plan["dtype"]), "--causal=" + ",".join(plan["causal"])]
    if plan["softmax_separate"]:
        a.append("--softmax-separate")
    for c in plan["caches"]:
        a += ["--cache", c]
    if plan["cache_sweep"]:
        a += ["--cache-sweep", plan["cache_sweep"]]
    if not plan["flush"]:
        a.append("--no-flush")
    a += ["--seed", str(plan["seed"])]
    if plan["sample_sets"]:
        a += ["--sample-sets", str(plan["sample_sets"])]
    return a


def run_args(plan, cfg, cache):
    """`memsim run` of one configuration of the plan on cache, its report on stdout."""
    a = ["run"]
    for k in ["kernel", "N", "d", "heads", "kv_heads", "batch", "dtype", "Br", "Bc"]:
        a += ["--" + k.replace("_", "-"), str(cfg[k])]
    if cfg["causal"]:
        a.append("--causal")
    if cfg["softmax_separate"]:
        a.append("--softmax-separate")
    a += ["--cache", cache]
    if not plan["flush"]:
        a.append("--no-flush")
    a += ["--seed", str(plan["seed"])]
    if plan["sample_sets"]:
        a += ["--sample-sets", str(plan["sample_sets"])]
    return a + ["--json", "-"]
