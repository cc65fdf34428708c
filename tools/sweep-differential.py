#!/usr/bin/env python3
"""Differential test of memsim's sweeps: does every way of running one give the same rows?

Usage: tools/sweep-differential.py [--memsim build/memsim] [--count N] [--seed S] [--jobs J]
                                   [--plan K] [--max-seconds T] [--show L] [--vm-limit KB]
                                   [--tap]

Draws N small sweep plans nobody tuned for (tools/sweepdiff_plans.py: kernels naive, flash1,
flash2, proj; N from 1 to 300, powers of two and not; d, heads and grouped kv_heads, batch,
B_r and B_c, dtypes, causal; presets and random hierarchies of 1 to 3 levels with few sets,
one set included, 1 to 8 ways or full, 32 to 128-byte lines, LRU/FIFO/PLRU/random, wb/wt,
wa/nwa/wv, inclusion; a --cache-sweep of one level over sizes in random order, one-set sizes
often and first; --no-flush, --seed, now and then --sample-sets), runs each plan every way
memsim offers, and checks, configuration by configuration (rows matched by key):

  sweep       a sweep exits 0 with one row per configuration of the plan: none lost, none
              duplicated, none failed, none that is not of the plan
  onepass     (a) the one-pass sweep's rows equal `memsim run --json -` of each configuration
              alone: every counter (DRAM, per level, per array, per phase), formula, verdict
  separate    (a) so do the --separate-runs sweep's rows
  trace-only  (b) the --trace-only sweep's rows equal the one-pass rows, their key aside
  resume      (c) a sweep killed (SIGKILL or SIGINT) at random times, rerun with --resume
              (and killed again, up to three times) until it ends, holds exactly the rows of
              the uninterrupted sweep; every whole row written before a kill is still there
  worker      (c) a sweep one of whose workers is killed (SIGKILL) still writes a row for
              every configuration (failed, for what the dead worker ran); --resume then ends
              with exactly the rows of the uninterrupted sweep, none failed
  retry       (c) a sweep whose runs fail (a memory limit: "cannot map") writes a failed row
              for each; --resume without the limit retries them: the rows of the sweep
  summary     (c) manifest.json's results_summary counts what results.json holds: runs_done,
              runs_failed, exact_within_5pct, lab_runs_in_regime, lab_in_regime_within_30pct
  shards      (d) --shard i/n for a random n (empty shards too), then `memsim merge` in a
              random order, gives exactly the rows of the whole sweep; each shard holds only
              its own indexes; merge's manifest is complete (the whole sweep_command, its
              runs, no duplicates)
  csv         (e) results.csv has one row per results.json row, in order, each field what
              its JSON row says

Fields that may differ between two runs of one configuration are left out: traced_seconds,
peak_rss_bytes, onepass, command, key and index (tools/sweepdiff_compare.py). Where the
uninterrupted sweep's row already differs from the run alone (reported under onepass or
separate), the resumed, sharded and retried rows are not compared with it field by field.
A run alone that refuses an empty set sample (exit 2) agrees with a row that says
estimate.sample_empty.

A plan memsim refuses with exit 2 and one line is counted as refused, not failed. Prints a
line per failure: the plan, the check, the configuration, the first field that differs, and
the bash commands that reproduce it in an empty directory; then "N passed, N failed" (plans).
--tap prints a TAP line per plan. Exits 1 if any check failed. The test command runs a small
fixed-seed budget (tests/meson.build); run it at length by hand, e.g. --count 500 --seed N;
--plan K checks plan K of a seed alone.
"""

import argparse
import concurrent.futures
import json
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from sweepdiff_compare import (RUN_DEPENDENT, check_csv, check_summary, describe, diffs, get,
                               read_dir, read_manifest, strip_out)
from sweepdiff_plans import configurations, draw_plan, run_args, sweep_args

TIMEOUT = 300  # seconds for any one memsim command: past it, it hangs
VM_LIMIT_KB = 500000  # under this address-space limit every run fails to map its arrays
PLAN = object()  # in a command: the plan's own options
STATS = ["sweeps", "runs", "kills", "worker_kills", "retried"]


class Stopped(Exception):
    """The harness is being interrupted: stop at the next command."""


class Runner:
    """Runs memsim commands; every live process is known, so an interrupt can end them."""

    def __init__(self, memsim):
        self.memsim = memsim
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.live = set()

    def start(self, args, vm_limit=0):
        if self.stop.is_set():
            raise Stopped()
        argv = [self.memsim] + args
        if vm_limit:
            argv = ["sh", "-c", 'ulimit -v %d && exec "$0" "$@"' % vm_limit] + argv
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        with self.lock:
            self.live.add(p)
        return p

    def finish(self, p, timeout=TIMEOUT):
        """(exit status, stdout, stderr); the status is None when it hung past timeout."""
        try:
            out, err = p.communicate(timeout=timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            rc = None
        with self.lock:
            self.live.discard(p)
        if self.stop.is_set():
            raise Stopped()
        return rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")

    def run(self, args, vm_limit=0):
        return self.finish(self.start(args, vm_limit))

    def kill_all(self):
        with self.lock:
            for p in self.live:
                try:
                    p.kill()
                except OSError:
                    pass


def children(pid):
    """The pids of pid's children: a sweep's workers."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        pass
    out = []
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % d) as f:
                if d.isdigit() and int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(d))
        except (OSError, ValueError, IndexError):
            pass
    return out


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_gone(pids, seconds=5.0):
    """Waits until none of pids lives: a killed sweep's workers hold its lock until they die."""
    end = time.time() + seconds
    while any(alive(p) for p in pids) and time.time() < end:
        time.sleep(0.01)


def last_line(text):
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return lines[-1][:200] if lines else ""


def trace_key(key):
    """The --trace-only key of a configuration's key: " trace-only" after its mode."""
    head, _, tail = key.rpartition(" simulated")
    return head + " simulated trace-only" + tail


class PlanCheck:
    """Runs one plan every way, in a directory of its own, and records what disagrees."""

    def __init__(self, runner, root, k, plan, vm_limit):
        self.r, self.root, self.k, self.plan = runner, root, k, plan
        self.vm_limit = vm_limit
        self.rng = random.Random(plan["rt_seed"])
        self.args = sweep_args(plan)
        self.cfgs = configurations(plan)
        self.fails = []  # (check, text)
        self.stats = dict.fromkeys(STATS, 0)

    # Commands: built with PLAN standing for the plan's options, printed with "${P[@]}".

    def q(self, args):
        words = ['"${P[@]}"' if a is PLAN else shlex.quote(a.replace(self.root + os.sep, ""))
                 for a in args]
        return " ".join([shlex.quote(self.r.memsim)] + words)

    def expand(self, args):
        out = []
        for a in args:
            out += self.args if a is PLAN else [a]
        return out

    def fail(self, check, text, repro):
        if '"${P[@]}"' in repro:
            repro = "P=(%s); %s" % (" ".join(shlex.quote(a) for a in self.args), repro)
        self.fails.append((check, "%s; reproduce (bash, in an empty directory): %s" %
                           (text.replace("\n", " "), repro)))

    def path(self, name):
        return os.path.join(self.root, name)

    def sweep_cmd(self, name, mode=(), more=(), jobs=None):
        jobs = jobs or self.rng.randint(1, 3)
        return ["sweep", "--out", self.path(name), PLAN] + list(mode) + ["--jobs", str(jobs)] + \
            list(more)

    def sweep(self, name, mode=(), more=(), vm_limit=0):
        """A sweep into name, to its end: (exit status, stderr, seconds, its command)."""
        args = self.sweep_cmd(name, mode, more)
        t = time.time()
        rc, _, err = self.r.run(self.expand(args), vm_limit)
        self.stats["sweeps"] += 1
        return rc, err, time.time() - t, self.q(args)

    def resume(self, name, mode=()):
        """A --resume to its end; a killed sweep's workers may hold the lock a moment longer."""
        args = self.sweep_cmd(name, mode, ["--resume"])
        for _ in range(50):
            rc, _, err = self.r.run(self.expand(args))
            self.stats["sweeps"] += 1
            if not (rc == 1 and "in use by another memsim" in err):
                break
            time.sleep(0.1)
        return rc, err, self.q(args)

    # Checks shared by every directory.

    def whole(self, check, label, name, rc, err, repro):
        """A finished sweep's directory: exit 0, whole rows, one per key, none failed; its
        summary and CSV. Returns its rows by key."""
        rows, problems, _ = read_dir(self.path(name))
        if rc != 0:
            self.fail(check, "%s exits %s: %s" % (label, "(hung)" if rc is None else rc,
                                                  last_line(err)), repro)
        for p in problems:
            self.fail(check, "%s: %s" % (label, p), repro)
        by, twice, failed = {}, [], []
        for r in rows:
            key = r.get("key", "")
            if key in by:
                twice.append(key)
            by[key] = r
            if "error" in r:
                failed.append(r)
        if twice:
            self.fail(check, "%s: %d rows twice in results.json, first %r" % (label, len(twice),
                                                                          twice[0]), repro)
        if failed:
            self.fail(check, "%s: %d rows failed, first %r: %s" %
                      (label, len(failed), failed[0].get("key"), failed[0]["error"]), repro)
        for p in check_summary(self.path(name), rows):
            self.fail("summary", "%s: %s" % (label, p), repro)
        for p in check_csv(self.path(name), rows):
            self.fail("csv", "%s: %s" % (label, p), repro)
        return by

    def same_rows(self, check, label, got, ref, refname, repro, skip=()):
        """Rows against the reference's: none lost, none extra, every field equal (except
        rows whose reference is known wrong, in skip)."""
        lost = [k for k in ref if k not in got]
        extra = [k for k in got if k not in ref]
        if lost:
            self.fail(check, "%s: %d of %d rows lost, first %r" % (label, len(lost), len(ref),
                                                                  lost[0]), repro)
        if extra:
            self.fail(check, "%s: %d rows not in the %s, first %r" % (label, len(extra),
                                                                     refname, extra[0]), repro)
        ignore = RUN_DEPENDENT - {"index", "model_revision"}
        bad = [(k, diffs(got[k], ref[k], ignore)) for k in got
               if k in ref and k not in skip and "error" not in got[k]]
        bad = [(k, ds) for k, ds in bad if ds]
        if bad:
            more = " (and %d more rows)" % (len(bad) - 1) if len(bad) > 1 else ""
            self.fail(check, "%s row %r: %s%s" % (label, bad[0][0],
                                                  describe(bad[0][1], label, refname), more),
                      repro)

    # The plan.

    def run(self):
        rc, err, secs, cmd_a = self.sweep("a")
        if rc == 2 and err.strip().count("\n") == 0:
            return "refused"
        self.t_a = max(secs, 0.01)
        a = self.whole("sweep", "the one-pass sweep", "a", rc, err, cmd_a)
        self.caches = ((read_manifest(self.path("a")) or {}).get("config") or {}).get(
            "caches") or []
        self.plan_rows(a, cmd_a)
        rc, err, _, cmd_b = self.sweep("b", ["--separate-runs"])
        b = self.whole("sweep", "the --separate-runs sweep", "b", rc, err, cmd_b)
        rc, err, _, cmd_c = self.sweep("c", ["--trace-only"])
        c = self.whole("sweep", "the --trace-only sweep", "c", rc, err, cmd_c)
        self.same_rows("trace-only", "--trace-only", c, {trace_key(k): r for k, r in a.items()},
                       "one-pass sweep", cmd_c + "; " + cmd_a)
        alone = self.run_alone(a, b)
        wrong = {}
        for mode, rows, check, cmd, of in [((), a, "onepass", cmd_a, lambda k: k),
                                           (("--separate-runs",), b, "separate", cmd_b,
                                            lambda k: k),
                                           (("--trace-only",), c, None, cmd_c,
                                            lambda k: k.replace(" trace-only", ""))]:
            wrong[mode] = self.against_alone(check, rows, alone, cmd, of)
        refs = {(): (a, "a"), ("--separate-runs",): (b, "b"), ("--trace-only",): (c, "c")}
        self.killed_and_resumed(refs, wrong)
        self.worker_killed(a, wrong[()])
        self.retried(a, wrong[()])
        self.sharded(refs, wrong)
        return "ran"

    def key_cache(self, key):
        at, end = key.find(" cache="), key.find(" flush=")
        return key[at + 7:end] if 0 <= at < end else None

    def plan_rows(self, a, cmd_a):
        """The one-pass sweep's rows are the plan's configurations, each once."""
        m = read_manifest(self.path("a")) or {}
        n = (m.get("config") or {}).get("configurations")
        if n != len(self.cfgs):
            self.fail("sweep", "the plan has %d configurations, the manifest says %s" %
                      (len(self.cfgs), n), cmd_a)
        if len(self.caches) != self.plan["ncaches"]:
            self.fail("sweep", "the plan has %d caches, the manifest lists %d" %
                      (self.plan["ncaches"], len(self.caches)), cmd_a)
        fields = ["kernel", "N", "d", "heads", "kv_heads", "batch", "dtype", "Br", "Bc",
                  "causal", "softmax_separate"]
        want = {tuple(c[f] for f in fields + ["cache"]) for c in self.cfgs}
        got = {}
        for k, r in a.items():
            kc = self.key_cache(k)
            sig = tuple((r.get("config") or {}).get(f) for f in fields) + (
                self.caches.index(kc) if kc in self.caches else None,)
            got[sig] = k
        lost = [s for s in want if s not in got]
        extra = [k for s, k in got.items() if s not in want]
        if lost:
            self.fail("sweep", "the one-pass sweep: %d of %d configurations have no row, "
                      "first %s" % (len(lost), len(want), lost[0]), cmd_a)
        if extra:
            self.fail("sweep", "the one-pass sweep: %d rows not of the plan, first %r" %
                      (len(extra), extra[0]), cmd_a)

    def run_alone(self, a, b):
        """`memsim run --json -` of every configuration of the sweeps: {key: (report or None
        where it failed, its command)}. A refusal of an empty sample is "empty"."""
        alone = {}
        for key in sorted(set(a) | set(b)):
            kc = self.key_cache(key)
            if kc not in self.caches:
                self.fail("sweep", "row %r names a cache the manifest does not list" % key,
                          self.q(["sweep", "--out", "a", PLAN]))
                continue
            ci = self.caches.index(kc)
            spec = self.plan["alone"][ci] if self.plan["alone"] is not None else kc
            args = run_args(self.plan, (a.get(key) or b.get(key))["config"], spec)
            rc, out, err = self.r.run(args)
            self.stats["runs"] += 1
            report = None
            if rc == 2 and "no access reached the sampled sets" in err:
                report = "empty"
            elif rc != 0:
                self.fail("onepass", "run alone exits %s: %s" % (rc, last_line(err)),
                          self.q(args))
            else:
                try:
                    report = json.loads(out)
                except ValueError:
                    self.fail("onepass", "run alone wrote no JSON report", self.q(args))
            alone[key] = (report, self.q(args))
        return alone

    def against_alone(self, check, rows, alone, cmd, of):
        """(a): rows against the runs alone; reports the first wrong row under check (None:
        only collects them). Returns the keys of the wrong rows."""
        wrong = []
        for key, r in rows.items():
            report, run_cmd = alone.get(of(key), (None, ""))
            if report == "empty":
                ds = [] if get(r, "estimate.sample_empty") is True else \
                    [("estimate.sample_empty", get(r, "estimate.sample_empty"),
                      "(run alone refuses: an empty sample)")]
            elif report is None:
                continue
            else:
                ds = diffs(r, report)
            if ds:
                if check and not wrong:
                    first = (key, ds, run_cmd)
                wrong.append(key)
        if check and wrong:
            key, ds, run_cmd = first
            more = " (and %d more rows)" % (len(wrong) - 1) if len(wrong) > 1 else ""
            self.fail(check, "%s row %r: %s%s" % (check, key,
                                                  describe(ds, check + " sweep", "run alone"),
                                                  more), cmd + "; " + run_cmd)
        return set(wrong)

    def killed_and_resumed(self, refs, wrong):
        """(c): kills at random times, then --resume, until it ends."""
        mode = self.rng.choice(list(refs))
        steps, kept = [], {}
        for i in range(self.rng.randint(1, 3)):
            sig = self.rng.choice([signal.SIGKILL, signal.SIGINT])
            delay = self.rng.uniform(0, 1.2 * self.t_a)
            args = self.sweep_cmd("d", mode, ["--resume"] if i else [])
            p = self.r.start(self.expand(args))
            self.stats["sweeps"] += 1
            time.sleep(delay)
            workers = children(p.pid)
            if p.poll() is None:
                p.send_signal(sig)
                self.stats["kills"] += 1
            rc, _, err = self.r.finish(p)
            wait_gone(workers)
            steps.append("%s & sleep %.3f; kill -%s $!; wait" %
                         (self.q(args), delay, "KILL" if sig == signal.SIGKILL else "INT"))
            if rc is None:  # a sweep that does not end after a signal is a defect
                self.fail("resume", "the sweep hung after its signal (killed after %d s)"
                          % TIMEOUT, "; ".join(steps))
            rows, _, lines = read_dir(self.path("d"))
            for line, r in zip(lines, rows):
                if "error" not in r:
                    kept.setdefault(r.get("key"), line)
            if rc == 1 and "interrupted" in err:
                for prob in check_summary(self.path("d"), rows):
                    self.fail("summary", "after SIGINT: " + prob, "; ".join(steps))
        rc, err, cmd = self.resume("d", mode)
        repro = "; ".join(steps + [cmd])
        got = self.whole("resume", "the resumed sweep", "d", rc, err, repro)
        self.same_rows("resume", "resumed", got, refs[mode][0], "uninterrupted sweep", repro,
                       wrong[mode])
        now = set(read_dir(self.path("d"))[2])
        changed = [k for k, line in kept.items() if line not in now]
        if changed:
            self.fail("resume", "%d rows written before a kill are gone or changed, first %r"
                      % (len(changed), changed[0]), repro)

    def worker_killed(self, a, wrong):
        """(c): a worker killed at a random time; every configuration still gets a row (failed
        where the dead worker ran it); --resume then gives the uninterrupted rows."""
        args = self.sweep_cmd("w")
        delay = self.rng.uniform(0, 0.8 * self.t_a)
        p = self.r.start(self.expand(args))
        self.stats["sweeps"] += 1
        time.sleep(delay)
        workers = children(p.pid) if p.poll() is None else []
        victim = self.rng.choice(workers) if workers else None
        try:
            if victim:
                os.kill(victim, signal.SIGKILL)
                self.stats["worker_kills"] += 1
        except OSError:
            victim = None
        rc, _, err = self.r.finish(p)
        if not victim:
            return
        first = "%s & sleep %.3f; kill -KILL $(cut -d' ' -f1 /proc/$!/task/$!/children); " \
            "wait" % (self.q(args), delay)
        if rc is None:
            self.fail("worker", "a worker killed: the sweep hung (killed after %d s)" % TIMEOUT,
                      first)
        rows, _, _ = read_dir(self.path("w"))
        have = {r.get("key") for r in rows}
        lost = [k for k in a if k not in have]
        if lost:
            self.fail("worker", "a worker killed: %d of %d configurations have no row, not "
                      "even a failed one (exit %s), first %r" % (len(lost), len(a), rc, lost[0]),
                      first)
        if any("error" in r for r in rows) and rc == 0:
            self.fail("worker", "a worker killed: rows failed, yet exit 0", first)
        for prob in check_summary(self.path("w"), rows):
            self.fail("summary", "a worker killed: " + prob, first)
        rc, err, cmd = self.resume("w")
        repro = first + "; " + cmd
        got = self.whole("worker", "resumed after a worker was killed", "w", rc, err, repro)
        self.same_rows("worker", "resumed", got, a, "uninterrupted sweep", repro, wrong)

    def retried(self, a, wrong):
        """(c): every run failing under a memory limit, then --resume without it."""
        rc, err, _, cmd = self.sweep("v", vm_limit=self.vm_limit)
        first = "(ulimit -v %d; %s)" % (self.vm_limit, cmd)
        rows, _, _ = read_dir(self.path("v"))
        failed = sum("error" in r for r in rows)
        if not failed:
            return  # nothing failed: nothing to retry
        self.stats["retried"] += 1
        lost = [k for k in a if k not in {r.get("key") for r in rows}]
        if lost and rc is not None and rc >= 0:
            self.fail("retry", "under a memory limit: %d of %d configurations have no row, "
                      "first %r" % (len(lost), len(a), lost[0]), first)
        if rc == 0:
            self.fail("retry", "under a memory limit: %d rows failed, yet exit 0" % failed,
                      first)
        for prob in check_summary(self.path("v"), rows):
            self.fail("summary", "under a memory limit: " + prob, first)
        rc, err, cmd = self.resume("v")
        repro = first + "; " + cmd
        got = self.whole("retry", "resumed without the limit", "v", rc, err, repro)
        self.same_rows("retry", "resumed", got, a, "uninterrupted sweep", repro, wrong)

    def sharded(self, refs, wrong):
        """(d): --shard i/n for every i, then merge in a random order."""
        mode = self.rng.choice(list(refs))
        ref, refdir = refs[mode]
        n = self.rng.randint(2, 5)
        cmds, dirs = [], []
        for i in range(n):
            name = "s%d" % i
            rc, err, _, cmd = self.sweep(name, mode, ["--shard", "%d/%d" % (i, n)])
            cmds.append(cmd)
            dirs.append(self.path(name))
            got = self.whole("shards", "shard %d/%d" % (i, n), name, rc, err, cmd)
            off = [k for k, r in got.items() if r.get("index", -1) % n != i]
            if off:
                self.fail("shards", "shard %d/%d holds %d rows of other shards, first %r" %
                          (i, n, len(off), off[0]), cmd)
        self.rng.shuffle(dirs)
        args = ["merge", "--out", self.path("m")] + dirs
        rc, _, err = self.r.run(args)
        repro = "; ".join(cmds + [self.q(args)])
        if rc != 0:
            self.fail("shards", "merge exits %s: %s" % (rc, last_line(err)), repro)
        rows, probs, _ = read_dir(self.path("m"))
        got = {}
        for p in probs:
            self.fail("shards", "merged: " + p, repro)
        for r in rows:
            if r.get("key") in got:
                self.fail("shards", "merged: row %r twice" % r.get("key"), repro)
            got[r.get("key")] = r
        for p in check_csv(self.path("m"), rows):
            self.fail("csv", "merged: " + p, repro)
        self.same_rows("shards", "merged", got, ref, "whole sweep", repro, wrong[mode])
        m = read_manifest(self.path("m"))
        if m is None:
            self.fail("shards", "merged: no readable manifest.json", repro)
            return
        want = strip_out((read_manifest(self.path(refdir)) or {}).get("sweep_command"))
        if not m.get("sweep_command"):
            self.fail("shards", "merged: the manifest has no sweep_command (a partial merge)",
                      repro)
        elif strip_out(m["sweep_command"]) != want:
            self.fail("shards", "merged: the manifest's sweep_command %r is not the whole "
                      "sweep's %r" % (m["sweep_command"], " ".join(want)), repro)
        if m.get("runs") != len(rows) or m.get("duplicates_dropped") != 0:
            self.fail("shards", "merged: the manifest says runs %s, duplicates_dropped %s; "
                      "results.json has %d rows" % (m.get("runs"), m.get("duplicates_dropped"),
                                                    len(rows)), repro)


def check_one(runner, tmp, k, plan, vm_limit):
    root = tempfile.mkdtemp(prefix="plan%d-" % k, dir=tmp)
    pc = PlanCheck(runner, root, k, plan, vm_limit)
    try:
        state = pc.run()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return state, pc.fails, pc.stats, len(pc.cfgs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memsim", default="build/memsim")
    ap.add_argument("--count", type=int, default=100, help="plans drawn")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1, help="plans checked at once")
    ap.add_argument("--plan", type=int, default=None, help="check only plan K of the seed")
    ap.add_argument("--max-seconds", type=float, default=0,
                    help="start no plan after this long (0: no limit)")
    ap.add_argument("--show", type=int, default=60, help="failure lines printed at most")
    ap.add_argument("--vm-limit", type=int, default=VM_LIMIT_KB,
                    help="address-space limit (KiB) that makes the retry check's runs fail")
    ap.add_argument("--tap", action="store_true", help="print TAP for meson: a line per plan")
    args = ap.parse_args()
    if not os.access(args.memsim, os.X_OK):
        print("sweep-differential: %s is not an executable memsim" % args.memsim,
              file=sys.stderr)
        return 2
    args.memsim = os.path.abspath(args.memsim)
    rng = random.Random(args.seed)
    count = args.count if args.plan is None else max(args.count, args.plan + 1)
    plans = [(k, draw_plan(rng)) for k in range(count)]
    if args.plan is not None:
        plans = [(k, p) for k, p in plans if k == args.plan]
    if args.tap:
        print("1..%d" % len(plans), flush=True)
    pre = "# " if args.tap else ""
    runner = Runner(args.memsim)
    tmp = tempfile.mkdtemp(prefix="memsim-sweep-differential-")
    start = time.time()
    totals = dict.fromkeys(STATS, 0)
    checks, shown, passed, failed, refused, skipped, configs = {}, 0, 0, 0, 0, 0, 0

    def on_term(signum, frame):
        raise KeyboardInterrupt()

    def one(kp):
        if args.max_seconds and time.time() - start > args.max_seconds:
            return "skipped", [], {}, 0
        return check_one(runner, tmp, kp[0], kp[1], args.vm_limit)

    signal.signal(signal.SIGTERM, on_term)
    pool = concurrent.futures.ThreadPoolExecutor(max(1, args.jobs))
    try:
        futs = [pool.submit(one, kp) for kp in plans]
        for t, ((k, _), f) in enumerate(zip(plans, futs), 1):
            state, fails, stats, ncfg = f.result()
            for s in stats:
                totals[s] += stats[s]
            label = "plan %d (%d configurations)" % (k, ncfg)
            if state in ("skipped", "refused"):
                skipped += state == "skipped"
                refused += state == "refused"
                if args.tap:
                    print("ok %d - %s # SKIP %s" % (t, label, "time budget spent"
                                                    if state == "skipped" else
                                                    "refused by memsim (usage error)"),
                          flush=True)
                continue
            configs += ncfg
            names = sorted({c for c, _ in fails})
            for c in names:
                checks[c] = checks.get(c, 0) + 1
            for c, text in fails[:8] if args.tap else fails:
                if shown < args.show:
                    print("%sFAIL plan %d [%s] %s" % (pre, k, c, text), flush=True)
                    shown += 1
            failed += bool(fails)
            passed += not fails
            if args.tap:
                print("%s %d - %s%s" % ("not ok" if fails else "ok", t, label,
                                        ": " + ", ".join(names) + " failed" if fails else ""),
                      flush=True)
    except KeyboardInterrupt:
        runner.stop.set()
        runner.kill_all()
        pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(tmp, ignore_errors=True)
        print("sweep-differential: interrupted", file=sys.stderr)
        return 130
    finally:
        pool.shutdown(wait=True)
        shutil.rmtree(tmp, ignore_errors=True)
    print(pre + "plans: %d checked (%d configurations), %d refused by memsim, %d skipped, in "
          "%.0f s, seed %d: %d sweeps, %d runs alone, %d sweeps killed, %d workers killed, "
          "%d sweeps of failed runs retried" %
          (passed + failed, configs, refused, skipped, time.time() - start, args.seed,
           totals["sweeps"], totals["runs"], totals["kills"], totals["worker_kills"],
           totals["retried"]))
    if checks:
        print(pre + "failed checks (plans): " +
              ", ".join("%s %d" % kv for kv in sorted(checks.items())))
    print(pre + "%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
