#!/usr/bin/env python3
"""What a machine's cores give a run split by set, against what they give independent runs.

#24's goal is a speedup per core of 0.7 for `memsim run --trace-only --threads T`. Where the
cores share caches, memory bandwidth or a clock that drops as more of them run, T independent
one-thread runs at once are slower each than one alone, and no split can beat that. For each
kernel and each T this measures, in rounds that interleave so that a noisy host's drift
falls on all three alike:

  alone    one `memsim run ... --threads 1`
  threads  the same run with --threads T (T cores busy: tiles in scratch, the caller simulates
           a slice)
  copies   T copies of the one-thread run at once

and prints, from the best of the rounds: the split's speedup per core (alone / threads / T),
the copies' per core (alone / the slowest copy: the throughput T cores give independent work,
over T), and the first over the second. CPU seconds are each process's user + system time
(os.wait4). Every run's counters (its JSON's levels, dram and phases) must equal the first
alone run's; the script fails if they do not.

Usage: tools/bench-ceiling.py [--memsim PATH] [--threads 2,4,8] [--rounds 3]
           [--kernels naive,flash2] [--out DIR] -- RUN ARGS...
  e.g. tools/bench-ceiling.py --memsim dev/memsim -- --N 8192 --heads 16 --cache h100
       --trace-only
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

COUNTERS = ("levels", "dram", "phases", "arrays")


def start(memsim, kernel, args, threads, json_path):
    cmd = [memsim, "run", "--kernel", kernel, *args, "--threads", str(threads),
           "--json", json_path]
    # stderr to a file: a pipe nobody reads would stop a chatty run.
    with open(json_path + ".err", "wb") as err:
        return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err), cmd


def finish(procs):
    """Waits for every (proc, cmd, t0); returns [(wall, cpu)] in procs' order."""
    left = {p.pid: i for i, (p, _, _) in enumerate(procs)}
    out = [None] * len(procs)
    while left:
        pid, status, ru = os.wait4(-1, 0)
        if pid not in left:
            continue
        i = left.pop(pid)
        p, cmd, t0 = procs[i]
        out[i] = (time.monotonic() - t0, ru.ru_utime + ru.ru_stime)
        code = os.waitstatus_to_exitcode(status)
        p.returncode = code
        if code != 0:
            with open(cmd[-1] + ".err", errors="replace") as err:
                sys.exit(f"bench-ceiling: {' '.join(cmd)} exited {code}: {err.read().strip()}")
    return out


def run_at_once(memsim, kernel, args, threads, copies, tmp, tag):
    procs, paths = [], []
    for c in range(copies):
        path = os.path.join(tmp, f"{kernel}-{tag}-{c}.json")
        p, cmd = start(memsim, kernel, args, threads, path)
        procs.append((p, cmd, time.monotonic()))
        paths.append(path)
    return finish(procs), paths


def counters(path):
    with open(path) as f:
        j = json.load(f)
    return {k: j.get(k) for k in COUNTERS}


def measure(memsim, kernel, args, t, rounds, tmp, reference):
    best = {"alone": None, "threads": None, "copies": None}
    for r in range(rounds):
        (alone,), p1 = run_at_once(memsim, kernel, args, 1, 1, tmp, f"a{t}r{r}")
        (split,), pt = run_at_once(memsim, kernel, args, t, 1, tmp, f"t{t}r{r}")
        copies, pc = run_at_once(memsim, kernel, args, 1, t, tmp, f"c{t}r{r}")
        for path in p1 + pt + pc:
            if counters(path) != reference:
                sys.exit(f"bench-ceiling: {kernel}: {path}'s counters differ from one thread's")
        slowest = max(copies, key=lambda x: x[0])
        cpu_copies = sum(c for _, c in copies)
        for key, val in (("alone", alone), ("threads", split), ("copies", (slowest[0], cpu_copies))):
            if best[key] is None or val[0] < best[key][0]:
                best[key] = val
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memsim", default="build/memsim")
    ap.add_argument("--threads", default="2,4,8")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--kernels", default="naive,flash2")
    ap.add_argument("--out", default="out/bench-ceiling")
    ap.add_argument("args", nargs="*", help="memsim run's options, after --")
    a = ap.parse_args()
    try:
        threads = [int(t) for t in a.threads.split(",")]
    except ValueError:
        sys.exit(f"bench-ceiling: --threads {a.threads!r}: expected numbers like 2,4,8")
    if a.rounds < 1 or any(t < 2 for t in threads):
        sys.exit("bench-ceiling: --rounds must be at least 1 and every --threads at least 2")
    if not os.access(a.memsim, os.X_OK):
        sys.exit(f"bench-ceiling: {a.memsim}: not an executable memsim")
    os.makedirs(a.out, exist_ok=True)
    rows = []
    print(f"bench-ceiling: memsim run {' '.join(a.args)}; best of {a.rounds} interleaved "
          f"rounds; {os.cpu_count()} CPUs")
    print(f"{'kernel':8} {'T':>3} {'alone s':>8} {'T thr s':>8} {'copies s':>9} "
          f"{'split/core':>10} {'copies/core':>11} {'split/copies':>12} {'CPU thr/alone':>13}")
    with tempfile.TemporaryDirectory() as tmp:
        for kernel in a.kernels.split(","):
            ref_path = os.path.join(tmp, f"{kernel}-ref.json")
            run_at_once(a.memsim, kernel, a.args, 1, 1, tmp, "ref")
            os.replace(os.path.join(tmp, f"{kernel}-ref-0.json"), ref_path)
            reference = counters(ref_path)
            for t in threads:
                b = measure(a.memsim, kernel, a.args, t, a.rounds, tmp, reference)
                split_core = b["alone"][0] / b["threads"][0] / t
                copies_core = b["alone"][0] / b["copies"][0]
                row = {"kernel": kernel, "threads": t, "alone_wall_s": b["alone"][0],
                       "alone_cpu_s": b["alone"][1], "threads_wall_s": b["threads"][0],
                       "threads_cpu_s": b["threads"][1], "copies_wall_s": b["copies"][0],
                       "copies_cpu_s": b["copies"][1], "split_per_core": split_core,
                       "copies_per_core": copies_core,
                       "split_over_copies": split_core / copies_core}
                rows.append(row)
                print(f"{kernel:8} {t:3} {b['alone'][0]:8.3f} {b['threads'][0]:8.3f} "
                      f"{b['copies'][0]:9.3f} {split_core:10.2f} {copies_core:11.2f} "
                      f"{split_core / copies_core:12.2f} "
                      f"{b['threads'][1] / b['alone'][1]:13.2f}", flush=True)
    with open(os.path.join(a.out, "ceiling.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: f"{v:.4f}" if isinstance(v, float) else v for k, v in r.items()})
    print("split/core: one thread's wall over T threads', over T. copies/core: one alone over "
          "the slowest of T at once: what T cores give independent work, a core. "
          "split/copies: how much of that the split gets.")


if __name__ == "__main__":
    main()
