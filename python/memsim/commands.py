"""memsim's commands from Python: run, formula, sweep, replay, sdpa (through the memsim
executable, see _cli.py) and presets (through the library)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings
from typing import Any, Mapping, Sequence, Union

from . import _args, _cli, _show
from ._lib import lib
from .errors import ArgumentTypeError, Error, RowsFailedWarning, UsageError
from .result import Result

PathLike = Union[str, "os.PathLike[str]"]
Params = Mapping[str, Union[str, int, float]]
SweepParams = Mapping[str, Union[str, int, float, Sequence[Union[str, int, float]]]]
SweepList = Union[int, str, Sequence[Union[int, str]], None]


def run(kernel: PathLike, *, N: int = 1024, d: int = 64, heads: int = 1,
        kv_heads: int | None = None, batch: int = 1, dtype: str = "fp32", Br: int = 64,
        Bc: int = 64, causal: bool = False, softmax_separate: bool = False, cache: str = "lab",
        trace_only: bool = False, flush: bool = True, seed: int = 1,
        sample_sets: int | None = None, params: Params | None = None,
        record: PathLike | None = None, N_kv: int | None = None,
        kv_page: int | None = None, splits: int | None = None,
        bandwidth: float | str | None = None, threads: int | None = None) -> Result:
    """Simulates a kernel through a cache model: `memsim run --json`'s report as a Result.

    kernel is a built-in kernel ("naive", "flash1", "flash2", "proj") or a plugin's path
    ("./my_kernel.so", with its own params={"window": 256}); cache a spec or a preset's name.
    N_kv is the keys' length (None: N); kv_page=P pages flash2's K and V (vLLM's paged KV
    cache, the block table drawn from seed; None: unpaged); splits is flashdecode's S (None:
    FlashAttention's heuristic on a GPU preset, else 1); bandwidth the GB/s of the tokens/s
    bound in r["per_token"], or "measured" (this machine's, memsim ceilings; None: the
    preset's). threads=T runs on T threads (`run --threads`: a computing run's values on T
    while one simulates, trace_only's sets split between T), the same counters, with
    r["threads"] saying how many ran; None lets memsim choose (every core for a computing run
    of 10^8 FLOPs or more, else one).
    Raises UsageError (a ValueError) for what memsim refuses, Error when the run fails.
    """
    args = ["run", "--kernel", _args.kernel(kernel)]
    args += _args.size_options(N, d, heads, kv_heads, batch, dtype, Br, Bc, causal,
                               softmax_separate, seed)
    args += _args.kv_options(N_kv, kv_page)
    args += _args.decode_options(splits, bandwidth)
    args += ["--cache", _args.text("cache", cache)]
    if _args.flag("trace_only", trace_only):
        args.append("--trace-only")
    if not _args.flag("flush", flush):
        args.append("--no-flush")
    if sample_sets is not None:
        args += ["--sample-sets", str(_args.integer("sample_sets", sample_sets))]
    if record is not None:
        args += ["--record", _args.path("record", record)]
    if threads is not None:
        args += ["--threads", str(_args.integer("threads", threads))]
    args += _args.params(params)
    return Result(*_cli.call_json(args))


def formula(kernel: PathLike, *, N: int = 1024, d: int = 64, heads: int = 1,
            kv_heads: int | None = None, batch: int = 1, dtype: str = "fp32", Br: int = 64,
            Bc: int = 64, causal: bool = False, softmax_separate: bool = False,
            cache: str | None = None, flush: bool = True, N_kv: int | None = None,
            kv_page: int | None = None, splits: int | None = None,
            bandwidth: float | str | None = None) -> Result:
    """The lab and exact formulas alone (instant, any size): `memsim formula --json`'s
    report as a Result. cache None is memsim's default (the lab preset); N_kv, kv_page,
    splits and bandwidth as for run()."""
    args = ["formula", "--kernel", _args.kernel(kernel)]
    args += _args.size_options(N, d, heads, kv_heads, batch, dtype, Br, Bc, causal,
                               softmax_separate, 1)
    args += _args.kv_options(N_kv, kv_page)
    args += _args.decode_options(splits, bandwidth)
    if cache is not None:
        args += ["--cache", _args.text("cache", cache)]
    if not _args.flag("flush", flush):
        args.append("--no-flush")
    return Result(*_cli.call_json(args))


def replay(path: PathLike, *, cache: str, format: str | None = None, flush: bool = True,
           seed: int = 1, sample_sets: int | None = None,
           record: PathLike | None = None) -> dict[str, Any]:
    """Replays a trace file (din, dinbin, lackey or memsim's own) through a cache model:
    `memsim replay --json`'s report as a dict. record=PATH also writes the trace there in
    memsim's own format."""
    args = ["replay", _args.path("path", path), "--cache", _args.text("cache", cache)]
    if format is not None:
        args += ["--format", _args.text("format", format)]
    if not _args.flag("flush", flush):
        args.append("--no-flush")
    args += ["--seed", str(_args.integer("seed", seed))]
    if sample_sets is not None:
        args += ["--sample-sets", str(_args.integer("sample_sets", sample_sets))]
    if record is not None:
        args += ["--record", _args.path("record", record)]
    return _cli.call_json(args)[0]


_SWEEP_LISTS = (("kernel", "--kernel"), ("N", "--N"), ("N_kv", "--N-kv"),
                ("kv_page", "--kv-page"), ("d", "--d"), ("heads", "--heads"),
                ("kv_heads", "--kv-heads"), ("batch", "--batch"), ("dtype", "--dtype"),
                ("Br", "--Br"), ("Bc", "--Bc"))


def _sweep_args(lists, causal, cache, cache_sweep, flush, seed, jobs, trace_only, formula_only,
                separate_runs, sample_sets, params):
    args = []
    for name, opt in _SWEEP_LISTS:
        if lists[name] is not None:
            v = lists[name]
            if name == "kernel" and isinstance(v, os.PathLike):
                v = os.fspath(v)
            args += [opt, _args.sweep_list(name, v)]
    if causal is not None:
        if isinstance(causal, (list, tuple)):
            args.append("--causal=" + ",".join("yes" if _args.flag("causal", c) else "no"
                                                for c in causal))
        elif _args.flag("causal", causal):
            args.append("--causal")
    if isinstance(cache, str):
        cache = [cache]
    elif cache is None:
        cache = []
    elif not isinstance(cache, (list, tuple)):
        raise ArgumentTypeError(f"cache: expected a spec or a list of specs, got "
                                f"{type(cache).__name__} {cache!r:.40}")
    for spec in cache:
        args += ["--cache", _args.text("cache", spec)]
    if cache_sweep is not None:
        args += ["--cache-sweep", _args.text("cache_sweep", cache_sweep)]
    if not _args.flag("flush", flush):
        args.append("--no-flush")
    args += ["--seed", str(_args.integer("seed", seed))]
    if jobs is not None:
        args += ["--jobs", str(_args.integer("jobs", jobs))]
    for name, value, opt in (("trace_only", trace_only, "--trace-only"),
                             ("formula_only", formula_only, "--formula-only"),
                             ("separate_runs", separate_runs, "--separate-runs")):
        if _args.flag(name, value):
            args.append(opt)
    if sample_sets is not None:
        args += ["--sample-sets", str(_args.integer("sample_sets", sample_sets))]
    return args + _args.params(params, lists=True)


def _read_rows(out):
    rows = []
    try:
        with open(os.path.join(out, "results.json"), encoding="utf-8",
                  errors="surrogateescape") as f:
            for line in f:
                if line.strip():
                    rows.append(json.loads(line))
    except FileNotFoundError:
        pass
    except OSError as e:
        raise Error(f"{out}/results.json: {e.strerror}") from None
    except ValueError as e:
        raise Error(f"{out}/results.json: a row does not parse: {e}") from None
    return rows


def _frame(out):
    """results.csv as a DataFrame, or None without pandas."""
    try:
        import pandas
    except ImportError:
        return None
    try:
        return _show.sweep_frame(pandas.read_csv(os.path.join(out, "results.csv")))
    except UnicodeDecodeError as e:  # memsim writes UTF-8: a file of another writer
        raise Error(f"{out}/results.csv: {e}") from None


def sweep(*, kernel: SweepList | PathLike = "naive", N: SweepList = None, d: SweepList = None,
          heads: SweepList = None, kv_heads: SweepList = None, batch: SweepList = None,
          dtype: SweepList = None, Br: SweepList = None, Bc: SweepList = None,
          causal: bool | Sequence[bool] | None = None, cache: str | Sequence[str] = "lab",
          cache_sweep: str | None = None, flush: bool = True, seed: int = 1,
          jobs: int | None = None, trace_only: bool = False, formula_only: bool = False,
          separate_runs: bool = False, sample_sets: int | None = None,
          params: SweepParams | None = None, out: PathLike | None = None,
          resume: bool = False, frame: bool | None = None, N_kv: SweepList = None,
          kv_page: SweepList = None) -> "list[dict[str, Any]] | Any":
    """Every combination of the lists, as `memsim sweep` runs them (on `jobs` cores; a
    cache_sweep such as "L2=32K:64M:x2" in one pass where exact).

    A list is one value, a list of values, or memsim's range text ("256:16384:x2"); None is
    memsim's default. cache is one spec or a list. A plugin's params are lists too
    (params={"window": [64, 128]}: --param window=64,128, a column param_window in the
    frame); a value cannot hold a comma. Returns the rows of results.json (each a
    run's report with its "key") as a list of dicts; with frame=True, or frame=None and
    pandas importable, results.csv as a pandas DataFrame. out keeps the directory (resume
    continues it); without it a temporary one is removed. Rows that failed are returned with
    their "error" and a RowsFailedWarning; a sweep with no row raises Error.
    """
    lists = dict(kernel=kernel, N=N, N_kv=N_kv, kv_page=kv_page, d=d, heads=heads,
                 kv_heads=kv_heads, batch=batch, dtype=dtype, Br=Br, Bc=Bc)
    args = _sweep_args(lists, causal, cache, cache_sweep, flush, seed, jobs, trace_only,
                       formula_only, separate_runs, sample_sets, params)
    if frame is not None:
        _args.flag("frame", frame)
    tmp = None
    if out is None:
        tmp = out = tempfile.mkdtemp(prefix="memsim-sweep-")
    else:
        out = _args.path("out", out)
        if os.path.exists(out) and not os.path.isdir(out):
            raise UsageError(f"out: {out} is not a directory")
    try:
        rc, _, err = _cli.call(["sweep", "--out", out] + args
                               + (["--resume"] if _args.flag("resume", resume) else []),
                               ok=(0, 1))
        rows = _read_rows(out)
        if rc == 1:
            if not any("error" in r for r in rows):
                raise Error(_cli._message(err, rc))
            failed = sum(1 for r in rows if "error" in r)
            warnings.warn(f"{failed} of {len(rows)} rows failed: {_cli._message(err, rc)}",
                          RowsFailedWarning, stacklevel=2)
        if frame or frame is None:
            df = _frame(out)
            if df is not None:
                return df
            if frame:
                raise Error("frame=True needs pandas, which is not importable")
        return _show.SweepRows(rows, _show.read_csv(os.path.join(out, "results.csv")))
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


Shape = Sequence[int]


def _shape(name: str, v: Any) -> list[int]:
    """A PyTorch [batch, heads, seq, d] shape: a sequence of four ints (a torch.Size too)."""
    if isinstance(v, (str, bytes)) or not isinstance(v, Sequence):
        raise ArgumentTypeError(f"{name}: expected a shape of four ints, got {type(v).__name__}"
                                f" {v!r:.40}")
    out = [_args.integer(name, x) for x in v]
    if len(out) != 4:
        raise UsageError(f"{name}: expected [batch, heads, seq, d], got {len(out)} dimensions")
    if any(x < 1 for x in out):
        raise UsageError(f"{name}: every dimension must be at least 1, got {out}")
    return out


def sdpa(q_shape: Shape, k_shape: Shape, v_shape: Shape | None = None, is_causal: bool = False,
         enable_gqa: bool = False, dtype: str = "fp16", gpu: str = "h100") -> dict[str, Any]:
    """What F.scaled_dot_product_attention(q, k, v, is_causal=..., enable_gqa=...) with
    PyTorch's flash backend moves to and from the GPU's HBM: `memsim sdpa --json`'s report.

    Shapes are PyTorch's [batch, heads, seq, d]. The dict says which kernel memsim modelled
    (r["kernel"]: "prefill" flash_fwd_kernel or "split-kv" decode with its splits, the tiles
    FlashAttention picks for that d, the grid), r["dram"]["read_bytes"] and ["write_bytes"]
    as Nsight Compute counts them, r["time_bound_s"] at the GPU's HBM bandwidth and
    r["tokens_per_s_bound"] (batch x seq new tokens a call). Raises ValueError (UsageError)
    for what PyTorch or the flash backend refuses: k with fewer heads than q without
    enable_gqa, mismatched batch or d, d above 256, dtype fp32.
    """
    q = _shape("q_shape", q_shape)
    k = _shape("k_shape", k_shape)
    v = _shape("v_shape", v_shape) if v_shape is not None else list(k)
    if not _args.flag("enable_gqa", enable_gqa) and k[1] != q[1]:
        raise UsageError(f"k_shape has {k[1]} heads and q_shape {q[1]}: grouped-query "
                         "attention needs enable_gqa=True (as PyTorch does)")
    args = ["sdpa", "--q", ",".join(map(str, q)), "--k", ",".join(map(str, k)),
            "--v", ",".join(map(str, v)), "--dtype", _args.text("dtype", dtype),
            "--gpu", _args.text("gpu", gpu)]
    if _args.flag("is_causal", is_causal):
        args.append("--causal")
    return _cli.call_json(args)[0]


def presets() -> list[dict[str, Any]]:
    """The cache presets: a list of {"name", "spec", "description"}, spec the canonical form
    (every word explicit) of the hierarchy the name gives. A preset this machine cannot give
    (host, where neither sysfs nor sysconf knows the caches) has spec None and "unavailable",
    the reason, as `memsim presets` says "unavailable here"."""
    from .cache import Cache

    out = []
    for i in range(lib().memsim_preset_count()):
        name = lib().memsim_preset_name(i).decode()
        entry: dict[str, Any] = {"name": name, "spec": None,
                                 "description": lib().memsim_preset_description(i).decode()}
        try:
            with Cache(name) as c:
                entry["spec"] = c.spec
        except UsageError as e:
            entry["unavailable"] = str(e)
        out.append(entry)
    return out


def plot(directory: PathLike, *, formats: Sequence[str] = ("png", "svg")) -> list[str]:
    """`memsim plot DIR`: every plot the results in DIR allow, into DIR/plots. Returns the
    paths of the files drawn.

    DIR is a study's directory (`memsim study`: DIR/lab, DIR/exact, DIR/profile, DIR/decode)
    or a sweep's (sweep(out=DIR), or `memsim sweep --out DIR`): naive and flash2 rows over N
    give bytes vs N per cache and the intensity ratio, a cache_sweep gives DRAM bytes vs cache
    size, decode rows (N below N_kv) over N_kv the decode plots. A plot the rows do not allow
    is skipped, and memsim says what it needs; when none is drawn, raises Error and leaves no
    DIR/plots behind. Without gnuplot raises Error (the data and gnuplot scripts are written
    all the same)."""
    directory = _args.path("directory", directory)
    if isinstance(formats, str):
        formats = [formats]
    _cli.call(["plot", directory, "--format",
               ",".join(_args.text("formats", f) for f in formats)])
    try:
        with open(os.path.join(directory, "plots", "index.json"), encoding="utf-8") as f:
            index = json.load(f)
    except (OSError, ValueError) as e:
        raise Error(f"{directory}/plots/index.json: {e}") from None
    return [os.path.join(directory, "plots", p[fmt]) for p in index.get("plots", [])
            for fmt in formats if fmt in p]
