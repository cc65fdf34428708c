"""Reading a sweep's directory and comparing reports, for tools/sweep-differential.py.

What two runs of one configuration may differ in is RUN_DEPENDENT: time and memory
(traced_seconds, peak_rss_bytes), which pass made the counters (onepass), the command line
(`memsim run` only), the row's key, index and model_revision (sweep rows only; compared
between sweeps) and config.trace_only. Every other field of a report is compared exactly.
"""

import csv
import io
import json
import os
import shlex

RUN_DEPENDENT = {"traced_seconds", "peak_rss_bytes", "onepass", "command", "key", "index",
                 "model_revision", "config.trace_only"}
SUMMARY = ["runs_done", "runs_failed", "exact_within_5pct", "lab_runs_in_regime",
           "lab_in_regime_within_30pct"]


def read_dir(d):
    """(rows, problems, lines) of d/results.json: its rows, what is wrong with the file (a line
    that is not JSON, a last line with no newline), and each row's line as written."""
    rows, problems, lines = [], [], []
    try:
        with open(os.path.join(d, "results.json"), "rb") as f:
            data = f.read().decode("utf-8", "replace")
    except OSError:
        return rows, problems, lines
    split = data.split("\n")
    for i, line in enumerate(split):
        if not line:
            continue
        if i == len(split) - 1:
            problems.append("results.json's last line has no newline (a torn row)")
            continue
        try:
            rows.append(json.loads(line))
            lines.append(line)
        except ValueError:
            problems.append("results.json line %d is not JSON" % (i + 1))
    return rows, problems, lines


def read_manifest(d):
    """d/manifest.json, or None."""
    try:
        with open(os.path.join(d, "manifest.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def get(obj, path):
    """results_get()'s paths: "a.b", "compare[formula=lab].ratio"."""
    for part in path.split("."):
        if obj is None:
            return None
        if "[" in part:
            name, sel = part[:-1].split("[")
            k, v = sel.split("=")
            lst = obj.get(name) if isinstance(obj, dict) else None
            obj = next((x for x in lst or [] if isinstance(x, dict) and x.get(k) == v), None)
        else:
            obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def diffs(x, y, ignore=RUN_DEPENDENT, path=""):
    """Every (path, x value, y value) where two reports differ, run-dependent fields aside."""
    if isinstance(x, dict) and isinstance(y, dict):
        out = []
        for k in list(x) + [k for k in y if k not in x]:
            p = path + "." + k if path else k
            if p in ignore:
                continue
            if k not in x or k not in y:
                out.append((p, x.get(k, "(missing)"), y.get(k, "(missing)")))
            else:
                out += diffs(x[k], y[k], ignore, p)
        return out
    if isinstance(x, list) and isinstance(y, list):
        if len(x) != len(y):
            return [(path, "%d items" % len(x), "%d items" % len(y))]
        out = []
        for i, (u, v) in enumerate(zip(x, y)):
            out += diffs(u, v, ignore, "%s[%d]" % (path, i))
        return out
    if x != y or (type(x) is bool) != (type(y) is bool):
        return [(path, x, y)]
    return []


def show(v):
    """A value, short, for a line of output."""
    s = json.dumps(v) if not isinstance(v, str) or v == "(missing)" else repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def describe(ds, xname, yname):
    """The first difference of diffs(), named, and how many more there are."""
    path, a, b = ds[0]
    more = " (and %d more fields)" % (len(ds) - 1) if len(ds) > 1 else ""
    return "%s: %s (%s) != %s (%s)%s" % (path, show(a), xname, show(b), yname, more)


def fmt_g(v, digits=6):
    """C's %.6g."""
    return "%.*g" % (digits, v)


def csv_expected(r):
    """The CSV row analysis/results.c writes for JSON row r, as strings by column: a value the
    row does not hold is an empty field, never 0."""
    def number(path, alt=None):
        v = get(r, path)
        v = get(r, alt) if v is None and alt else v
        return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    def count(path, alt=None):
        v = number(path, alt)
        return "" if v is None else "%.0f" % v

    def real(path, alt=None, digits=6):
        v = number(path, alt)
        return "" if v is None else fmt_g(v, digits)

    def true(path):
        v = get(r, path)
        return ("1" if v else "0") if isinstance(v, bool) else ""

    def string(path):
        v = get(r, path)
        return v if isinstance(v, str) else ""

    sets = get(r, "estimate.sample_sets")
    sampled = isinstance(sets, (int, float)) and sets > 1
    counted = isinstance(r.get("dram"), dict)
    row = {"N_kv": count("config.N_kv", "config.N")}  # rows from before N_kv have N keys
    for col, path in [("index", "index"), ("N", "config.N"), ("d", "config.d"),
                      ("heads", "config.heads"), ("kv_heads", "config.kv_heads"),
                      ("batch", "config.batch"), ("Br", "config.Br"), ("Bc", "config.Bc"),
                      ("dram_read_bytes", "dram.read_bytes"),
                      ("dram_write_bytes", "dram.write_bytes"), ("rfo_bytes", "dram.rfo_bytes"),
                      ("flush_write_bytes", "dram.flush_write_bytes"),
                      ("splits", "config.splits"), ("kv_page", "config.kv_page")]:
        row[col] = count(path)
    row.update({
        "kernel": string("config.kernel"), "dtype": string("config.dtype"),
        "causal": true("config.causal"), "cache": string("config.cache"),
        "flush": true("config.flush"), "mode": string("mode"),
        # a plugin's row keeps its formula's total and ratio in formulas.exact
        "exact_bytes": count("formulas.exact.bytes", "formulas.exact.predicted_bytes"),
        "exact_ratio": real("compare[formula=exact].ratio", "formulas.exact.ratio"),
        "exact_within": true("compare[formula=exact].within"),
        "arrays_within": true("formulas.exact.arrays_within"),
        "lab_bytes": "" if get(r, "formulas.lab.applicable") is False
        else count("formulas.lab.bytes"),
        "lab_measured_bytes": count("compare[formula=lab].measured_bytes"),
        "lab_ratio": real("compare[formula=lab].ratio"),
        "lab_within": true("compare[formula=lab].within"),
        "in_lab_regime": true("regime.within_lab_assumptions"), "regime": string("regime.text"),
        "flops": real("flops"), "intensity": real("intensity"),
        "traced_seconds": real("traced_seconds", "timing.traced_seconds"),
        "error": string("error"),
        "estimate": "sampled 1/%.0f" % sets if sampled else "exact" if counted else "",
        "estimated_error": real("estimate.estimated_error", digits=4) if sampled
        else "0" if counted else "",
        "sample_too_small": true("estimate.sample_too_small") if sampled
        else "0" if counted else "",
    })
    return row


def check_csv(d, rows):
    """(e): results.csv against results.json, row by row. A list of problems."""
    try:
        with open(os.path.join(d, "results.csv"), newline="") as f:
            table = list(csv.reader(io.StringIO(f.read())))
    except OSError as e:
        return ["no results.csv: %s" % e.strerror]
    if not table:
        return ["results.csv is empty (no header)"]
    head, body = table[0], table[1:]
    want = csv_expected({})
    missing = [c for c in want if c not in head]
    if missing:
        return ["results.csv has no column %s" % ",".join(missing)]
    if len(body) != len(rows):
        return ["results.csv has %d rows, results.json %d" % (len(body), len(rows))]
    for i, (line, r) in enumerate(zip(body, rows)):
        if len(line) != len(head):
            return ["results.csv row %d has %d fields, the header %d" % (i + 1, len(line),
                                                                         len(head))]
        exp = csv_expected(r)
        for c, v in exp.items():
            got = line[head.index(c)]
            if got != v:
                return ["results.csv row %d (%s): %s is %r, results.json says %r" %
                        (i + 1, r.get("key", "?"), c, got, v)]
    return []


def summary_of(rows):
    """What a manifest's results_summary should say of these rows (sweep_writer.c)."""
    s = dict.fromkeys(SUMMARY, 0)
    for r in rows:
        s["runs_done"] += 1
        s["runs_failed"] += "error" in r
        s["exact_within_5pct"] += get(r, "compare[formula=exact].within") is True
        lab = get(r, "compare[formula=lab]")
        if lab is not None and get(r, "regime.within_lab_assumptions") is True:
            s["lab_runs_in_regime"] += 1
            s["lab_in_regime_within_30pct"] += lab.get("within") is True
    return s


def check_summary(d, rows):
    """(c): d/manifest.json's results_summary against the rows of d/results.json."""
    m = read_manifest(d)
    if m is None:
        return ["no readable manifest.json"]
    got, want = m.get("results_summary") or {}, summary_of(rows)
    bad = ["%s %s" % (k, got.get(k)) for k in SUMMARY if got.get(k) != want[k]]
    if bad:
        return ["manifest results_summary says %s; results.json's %d rows give %s" %
                (", ".join(bad), len(rows),
                 ", ".join("%s %d" % (k, want[k]) for k in SUMMARY if got.get(k) != want[k]))]
    return []


def strip_out(cmd):
    """A sweep_command without its --out word."""
    w = shlex.split(cmd or "")
    out = []
    skip = False
    for x in w:
        if skip:
            skip = False
        elif x == "--out":
            skip = True
        else:
            out.append(x)
    return out
