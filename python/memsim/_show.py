"""Results that show themselves in a notebook: HTML tables (_repr_html_) and plots.

Plots use matplotlib, imported when a plot is asked for (the package works without it);
tables are plain HTML, escaped. A sweep's rows are read flat, as results.csv has them, so the
same code serves the list of rows and the pandas DataFrame.
"""

from __future__ import annotations

import csv
import html
import math
import os
from typing import Any, Iterable, Mapping, Sequence

from .errors import Error

# The axes a sweep varies, in the order a plot prefers one for x.
_X_AXES = ("N", "N_kv", "d", "heads", "kv_heads", "batch", "Br", "Bc")
# The columns that name a series when they vary (x excepted).
_SERIES = ("kernel", "cache", "dtype", "causal", "N", "N_kv", "d", "heads", "kv_heads", "batch",
           "Br", "Bc", "kv_page", "flush", "mode")


def pyplot():
    """matplotlib.pyplot, or Error naming what is missing."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise Error("plot() needs matplotlib, which is not importable "
                    "(Debian: apt-get install python3-matplotlib)") from None
    return plt


def axes(ax):
    """ax, or a new figure's axes."""
    return ax if ax is not None else pyplot().subplots(figsize=(7, 4.5))[1]


def loglog(ax, xlabel: str, ylabel: str, legend: bool) -> None:
    """The axes of a size against a size: log2 x, log y, labels, a light grid."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if legend:
        ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)


def mib(n: float | None) -> str:
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return ""
    return f"{n:,.0f} B ({n / 1048576:.3f} MiB)"


def table(head: Sequence[str], rows: Iterable[Sequence[Any]], caption: str = "") -> str:
    """An HTML table; every cell escaped."""
    cap = f"<caption style='text-align:left'>{html.escape(caption)}</caption>" if caption else ""
    th = "".join(f"<th>{html.escape(str(h))}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>"
                   for r in rows)
    return f"<table>{cap}<thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


# ---- one report (Result) ----

def _title(report: Mapping[str, Any]) -> str:
    c = report.get("config", {})
    words = [str(c.get("kernel")), f"N={c.get('N')}"]
    if c.get("N_kv") not in (None, c.get("N")):
        words.append(f"N_kv={c.get('N_kv')}")
    words += [f"d={c.get('d')}", f"heads={c.get('heads')}"]
    if c.get("kv_heads") not in (None, c.get("heads")):
        words.append(f"kv_heads={c.get('kv_heads')}")
    words += [str(c.get("dtype")), f"cache={c.get('preset') or c.get('cache')}"]
    return " ".join(words)


def _arrays(report: Mapping[str, Any]) -> list[tuple[str, Any, Any, Any]]:
    """(name, read, written, total) of each DRAM array: a run's, else the exact formula's
    (which gives per array the total alone: read and written are None)."""
    if "dram" in report:
        return [(n, a["read_bytes"], a["write_bytes"], a["total_bytes"])
                for n, a in report.get("arrays", {}).items() if a.get("space") != "scratch"]
    exact = report.get("formulas", {}).get("exact", {})
    return [(n, None, None, b) for n, b in exact.get("arrays", {}).items()
            if isinstance(b, (int, float))]


def report_html(report: Mapping[str, Any]) -> str:
    """A run's or a formula's report: DRAM bytes, per array, the formulas' verdicts."""
    measured = "dram" in report
    parts = [f"<p><b>memsim {'run' if measured else 'formula'}</b> "
             f"{html.escape(_title(report))}</p>"]
    if measured:
        d = report["dram"]
        parts.append(table(("DRAM", "read", "written", "total"),
                           [("bytes", mib(d["read_bytes"]), mib(d["write_bytes"]),
                             mib(d["total_bytes"]))]))
    arrays = _arrays(report)
    if arrays:
        parts.append(table(("array", "DRAM read", "DRAM written", "total"),
                           [(n, mib(r), mib(w), mib(b)) for n, r, w, b in arrays],
                           "per array" + ("" if measured else " (exact formula)")))
    compare = report.get("compare")
    if compare:
        parts.append(table(("formula", "predicted", "simulated", "ratio", "verdict"),
                           [(c["formula"], mib(c["predicted_bytes"]), mib(c["measured_bytes"]),
                             f"{c['ratio']:.3f}",
                             "within" if c["within"] else "outside: " + c.get("why_not", ""))
                            for c in compare]))
    else:
        f = report.get("formulas", {})
        parts.append(table(("formula", "bytes"),
                           [(k, mib(v.get("bytes"))) for k, v in f.items()
                            if isinstance(v, Mapping) and "bytes" in v]))
    per_token = report.get("per_token") or {}
    if per_token.get("tokens_per_s_bound"):
        parts.append(f"<p>per generated token: {html.escape(mib(per_token['bytes']))}, at most "
                     f"{per_token['tokens_per_s_bound']:,.0f} tokens/s at "
                     f"{per_token['bandwidth_gbps']} GB/s</p>")
    return "".join(parts)


def report_plot(report: Mapping[str, Any], ax=None):
    """Bars of each array's DRAM bytes: read and written for a run, the total for a formula.
    Returns the axes."""
    arrays = _arrays(report)
    if not arrays:
        raise Error("plot(): this report has no per-array DRAM bytes")
    ax = axes(ax)
    x = list(range(len(arrays)))
    if "dram" in report:
        ax.bar([i - 0.2 for i in x], [a[1] / 1048576 for a in arrays], 0.4, label="read")
        ax.bar([i + 0.2 for i in x], [a[2] / 1048576 for a in arrays], 0.4, label="written")
        ax.legend()
    else:
        ax.bar(x, [a[3] / 1048576 for a in arrays], 0.6, label="exact formula")
    ax.set_xticks(x, [a[0] for a in arrays])
    ax.set_ylabel("DRAM MiB")
    ax.set_title(_title(report) + ("" if "dram" in report else " (exact formula)"), fontsize=9)
    return ax


# ---- a sweep's rows, flat ----

def read_csv(path: str) -> list[dict[str, Any]]:
    """results.csv as dicts, numbers as numbers and empty cells as None."""
    def value(s):
        if s == "":
            return None
        try:
            return int(s)
        except ValueError:
            try:
                return float(s)
            except ValueError:
                return s

    try:
        with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
            return [{k: value(v) for k, v in r.items()} for r in csv.DictReader(f)]
    except FileNotFoundError:
        return []
    except OSError as e:
        raise Error(f"{path}: {e.strerror}") from None


def _present(v) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def dram_bytes(r: Mapping[str, Any]) -> float | None:
    """A flat row's DRAM bytes: simulated (read + written), else the exact formula's."""
    if _present(r.get("dram_read_bytes")):
        return r["dram_read_bytes"] + (r.get("dram_write_bytes") or 0)
    if _present(r.get("exact_bytes")):
        return r["exact_bytes"]
    return None


def _varying(rows: Sequence[Mapping[str, Any]], col: str) -> bool:
    return len({str(r.get(col)) for r in rows}) > 1


def _params(rows: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """A plugin's parameter columns (param_KEY), which a sweep varies like the others."""
    return tuple(sorted({c for r in rows for c in r if c.startswith("param_")}))


def sweep_html(rows: Sequence[Mapping[str, Any]], limit: int = 60) -> str:
    """The configuration columns that vary, DRAM bytes, the formulas' ratios."""
    if not rows:
        return "<p>memsim sweep: no rows</p>"
    keys = [c for c in _SERIES + _params(rows) if _varying(rows, c)] or ["kernel"]
    rows = sorted(rows, key=lambda r: r.get("index") or 0)
    head = keys + ["DRAM bytes", "exact ratio", "lab ratio", "error"]
    body = []
    for r in rows[:limit]:
        b = dram_bytes(r)
        body.append([r.get(k, "") for k in keys]
                    + [f"{b:,.0f}" if b is not None else "",
                       f"{r['exact_ratio']:.3f}" if _present(r.get("exact_ratio")) else "",
                       f"{r['lab_ratio']:.3f}" if _present(r.get("lab_ratio")) else "",
                       r.get("error") or ""])
    more = f" (the first {limit} of {len(rows)})" if len(rows) > limit else ""
    return table(head, body, f"memsim sweep: {len(rows)} rows{more}")


def sweep_plot(rows: Sequence[Mapping[str, Any]], x: str | None = None, y: str | None = None,
               ax=None):
    """y (DRAM bytes: simulated, else the exact formula's) against x (the first axis that
    varies: N, N_kv, d, ...), a line for each combination of the other columns that vary.
    Returns the axes."""
    rows = [r for r in rows if not r.get("error")]
    if x is None:
        x = next((c for c in _X_AXES + _params(rows) if _varying(rows, c)
                  and all(isinstance(r.get(c), (int, float)) for r in rows)), None)
        if x is None:
            raise Error("plot(): no numeric axis varies in this sweep (give x=)")
    get_y = dram_bytes if y is None else (lambda r: r.get(y))
    # N_kv defaults to N: a column that moves with x names no series.
    series_cols = [c for c in _SERIES + _params(rows) if c != x and _varying(rows, c)
                   and len({(str(r.get(x)), str(r.get(c))) for r in rows})
                   > len({str(r.get(x)) for r in rows})]
    lines: dict[tuple, list] = {}
    for r in rows:
        v = get_y(r)
        if _present(r.get(x)) and _present(v):
            lines.setdefault(tuple(r.get(c) for c in series_cols), []).append((r[x], v))
    if not lines:
        raise Error(f"plot(): no row has both {x} and {y or 'DRAM bytes'}")
    ax = axes(ax)
    for key, pts in sorted(lines.items(), key=lambda kv: [str(k) for k in kv[0]]):
        pts.sort()
        label = " ".join(f"{c}={k}" for c, k in zip(series_cols, key)) or None
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    loglog(ax, x, y or "DRAM bytes", bool(series_cols))
    return ax


class SweepRows(list):
    """memsim.sweep()'s rows without pandas: the list of results.json's rows (dicts), which
    shows itself as a table and plots with .plot()."""

    def __init__(self, rows: Iterable[dict], flat: list[dict[str, Any]]):
        super().__init__(rows)
        self.flat = flat  # results.csv's rows

    def _repr_html_(self) -> str:
        return sweep_html(self.flat)

    def plot(self, x: str | None = None, y: str | None = None, ax=None):
        """DRAM bytes against the swept axis: see memsim.sweep()."""
        return sweep_plot(self.flat, x, y, ax)


_frame_class = None


def sweep_frame(df):
    """df (results.csv read by pandas) as a SweepFrame: a DataFrame whose .plot() with no
    argument draws DRAM bytes against the swept axis; with arguments it is pandas' own."""
    global _frame_class
    if _frame_class is None:
        import pandas

        class SweepFrame(pandas.DataFrame):
            @property
            def _constructor(self):
                return SweepFrame

            def plot(self, *args, **kwargs):
                if args or set(kwargs) - {"x", "y", "ax"}:
                    return pandas.plotting.PlotAccessor(self)(*args, **kwargs)
                records = [{k: (None if isinstance(v, float) and math.isnan(v) else v)
                            for k, v in r.items()} for r in self.to_dict("records")]
                return sweep_plot(records, kwargs.get("x"), kwargs.get("y"), kwargs.get("ax"))

        SweepFrame.__qualname__ = "SweepFrame"
        SweepFrame.__module__ = __name__
        _frame_class = SweepFrame
    return _frame_class(df)


