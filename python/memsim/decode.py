"""The decode step's curve: DRAM bytes per generated token and the tokens/s bound against the
context length, for several head layouts (MHA, GQA, MQA)."""

from __future__ import annotations

from typing import Any, Sequence

from . import _args, _show
from .errors import Error


def layout_name(heads: int, kv_heads: int) -> str:
    """MHA (every query head its own K and V), MQA (one), GQA (groups) with the count."""
    if kv_heads == heads:
        return f"MHA ({kv_heads} kv heads)"
    if kv_heads == 1:
        return "MQA (1 kv head)"
    return f"GQA ({kv_heads} kv heads)"


class DecodeCurve:
    """decode_curve()'s points: a list of dicts (layout, heads, kv_heads, N_kv, bytes_per_token,
    tokens_per_s_bound, bandwidth_gbps), one per layout and context length, in that order.
    Shows itself as a table; .plot() draws both curves; .frame() is a pandas DataFrame."""

    def __init__(self, points: list[dict[str, Any]], title: str):
        self.points = points
        self.title = title

    def __len__(self):
        return len(self.points)

    def __iter__(self):
        return iter(self.points)

    def __repr__(self):
        return f"<memsim decode curve {self.title}: {len(self.points)} points>"

    def _repr_html_(self) -> str:
        rows = [(p["layout"], p["N_kv"], f"{p['bytes_per_token']:,}",
                 f"{p['tokens_per_s_bound']:,.0f}") for p in self.points]
        return _show.table(("layout", "N_kv", "DRAM bytes per token", "tokens/s bound"), rows,
                           f"memsim decode: {self.title}, at "
                           f"{self.points[0]['bandwidth_gbps']} GB/s" if self.points else "")

    def frame(self):
        """The points as a pandas DataFrame (Error without pandas)."""
        try:
            import pandas
        except ImportError:
            raise Error("frame() needs pandas, which is not importable") from None
        return pandas.DataFrame(self.points)

    def plot(self, axes: Sequence[Any] | None = None):
        """Bytes per token (left) and the tokens/s bound (right) against N_kv, a line per
        layout, log-log. Returns the two axes."""
        if axes is None:
            axes = _show.pyplot().subplots(1, 2, figsize=(11, 4.2))[1]
        left, right = axes
        for name in dict.fromkeys(p["layout"] for p in self.points):
            pts = [p for p in self.points if p["layout"] == name]
            xs = [p["N_kv"] for p in pts]
            left.plot(xs, [p["bytes_per_token"] for p in pts], marker="o", label=name)
            right.plot(xs, [p["tokens_per_s_bound"] for p in pts], marker="o", label=name)
        for ax, what in ((left, "DRAM bytes per token"), (right, "tokens/s bound")):
            _show.loglog(ax, "context length N_kv", what, True)
        left.set_title(self.title, fontsize=9)
        return axes


def decode_curve(*, N_kv: Any = "1024:131072:x2", heads: int = 32,
                 kv_heads: Sequence[int] | int = (32, 8, 1), d: int = 128,
                 dtype: str = "fp16", cache: str = "h100", kernel: str = "flashdecode",
                 batch: int = 1, jobs: int | None = None) -> DecodeCurve:
    """One decode step (N = 1 new token a sequence) against the context length N_kv, from
    the exact formulas (`memsim sweep --formula-only`; instant at any length): the DRAM bytes
    per generated token and the tokens/s bound at the cache preset's bandwidth, for each
    kv_heads (heads: MHA, 1: MQA, between: GQA). kernel is flashdecode (split-KV, with
    FlashAttention's split heuristic on a GPU preset) or flash2. N_kv is a list or memsim's
    range text."""
    from .commands import sweep

    if isinstance(kv_heads, int) and not isinstance(kv_heads, bool):
        kv_heads = [kv_heads]
    kv = [_args.integer("kv_heads", k) for k in kv_heads]
    heads = _args.integer("heads", heads)
    rows = sweep(kernel=kernel, N=1, N_kv=N_kv, heads=heads, kv_heads=kv, d=d, dtype=dtype,
                 batch=batch, cache=cache, formula_only=True, jobs=jobs, frame=False)
    points = []
    for r in rows:
        if "error" in r:
            raise Error(f"decode_curve: {r['config'].get('N_kv')}: {r['error']}")
        c, t = r["config"], r.get("per_token")
        if not t:
            raise Error(f"decode_curve: kernel {kernel} gives no per-token bound")
        points.append({"layout": layout_name(c["heads"], c["kv_heads"]), "heads": c["heads"],
                       "kv_heads": c["kv_heads"], "N_kv": c["N_kv"],
                       "bytes_per_token": t["bytes"],
                       "tokens_per_s_bound": t["tokens_per_s_bound"],
                       "bandwidth_gbps": t["bandwidth_gbps"]})
    points.sort(key=lambda p: (-p["kv_heads"], p["N_kv"]))
    return DecodeCurve(points, f"{kernel} {dtype} d={d} heads={heads} batch={batch} on {cache}")
