"""memsim.run, formula, sweep and replay: the command line's reports, key for key and number
for number; plugins; and every bad argument a one-line exception, never a crash."""

import json
import math
import os
import subprocess
import warnings

import pytest

import memsim
from memsim import _cli

# What differs between two runs of the same configuration: the command line, times, memory.
VOLATILE = {"command", "traced_seconds", "peak_rss_bytes", "timing"}


def cli_json(*args):
    p = subprocess.run([_cli.executable()] + list(args) + ["--json", "-"], capture_output=True,
                       text=True, check=True)
    return json.loads(p.stdout)


def same(a, b):
    for k in set(a) | set(b):
        if k not in VOLATILE:
            assert json.dumps(a.get(k), sort_keys=True) == json.dumps(b.get(k), sort_keys=True), k


@pytest.mark.parametrize("kernel, extra", [
    ("naive", {}), ("flash2", {"causal": True}), ("flash1", {"heads": 4, "kv_heads": 2}),
    ("proj", {"dtype": "bf16"}),
])
def test_run_equals_command_line(kernel, extra):
    r = memsim.run(kernel, N=128, d=32, cache="L1=64K:full:64,tiles=scratch", **extra)
    args = ["run", "--kernel", kernel, "--N", "128", "--d", "32",
            "--cache", "L1=64K:full:64,tiles=scratch"]
    if extra.get("causal"):
        args.append("--causal")
    if "heads" in extra:
        args += ["--heads", "4", "--kv-heads", "2"]
    if "dtype" in extra:
        args += ["--dtype", "bf16"]
    same(r.to_dict(), cli_json(*args))
    assert r.dram_bytes == r["dram"]["total_bytes"] > 0
    assert r.formulas["exact"]["bytes"] > 0
    assert set(r.arrays) >= {"Q", "K", "V", "O"}
    assert r.measured and r.text.startswith("memsim run:")


def test_formula_equals_command_line():
    f = memsim.formula("flash2", N=8192, d=128, Br=64, Bc=64)
    same(f.to_dict(), cli_json("formula", "--kernel", "flash2", "--N", "8192", "--d", "128"))
    assert not f.measured
    assert f.dram_bytes == f.formulas["exact"]["bytes"]
    assert math.isclose(f.intensity, f.flops / f.dram_bytes, rel_tol=1e-9)


def test_run_options_reach_the_command_line():
    a = memsim.run("naive", N=64, d=16, cache="L1=4K:4:64", flush=False, seed=3)
    assert a.config["flush"] is False and a.config["seed"] == 3
    b = memsim.run("naive", N=64, d=16, cache="L1=4K:4:64", trace_only=True)
    assert b.dram_bytes == memsim.run("naive", N=64, d=16, cache="L1=4K:4:64").dram_bytes


def test_run_threads():
    """threads reaches the command line: one thread's counters, and how many ran."""
    one = memsim.run("flash2", N=128, d=32, heads=4, cache="h100", threads=1)
    two = memsim.run("flash2", N=128, d=32, heads=4, cache="h100", threads=2)
    a, b = one.to_dict(), two.to_dict()
    assert a["threads"]["used"] == 1 and b["threads"]["used"] == 2
    del a["threads"], b["threads"]
    same(a, b)
    with pytest.raises(TypeError, match="threads: expected an int"):
        memsim.run("flash2", N=64, threads=2.0)
    with pytest.raises(memsim.UsageError, match="--threads"):
        memsim.run("flash2", N=64, threads=65)


def test_run_paged_kv():
    """kv_page (and N_kv) reach the command line; the per-array report has block_table."""
    r = memsim.run("flash2", N=4, N_kv=300, d=32, heads=4, kv_heads=2, kv_page=16, seed=7,
                   cache="L1=16K:4:64,tiles=scratch")
    same(r.to_dict(), cli_json("run", "--kernel", "flash2", "--N", "4", "--N-kv", "300",
                               "--d", "32", "--heads", "4", "--kv-heads", "2", "--kv-page",
                               "16", "--seed", "7", "--cache", "L1=16K:4:64,tiles=scratch"))
    assert r.config["kv_page"] == 16 and r.config["kv_seed"] == 7
    assert r.arrays["block_table"]["read_bytes"] > 0
    f = memsim.formula("flash2", N=1, N_kv=4096, kv_page=256, cache="L1=64K:full:64")
    assert f.config["kv_page"] == 256
    rows = memsim.sweep(kernel="flash2", N=1, N_kv=512, kv_page=[16, 64], d=32,
                        formula_only=True, frame=False)
    assert sorted(r["config"]["kv_page"] for r in rows) == [16, 64]
    with pytest.raises(memsim.UsageError, match="--kv-page is for --kernel flash2"):
        memsim.run("naive", N=64, kv_page=16)
    with pytest.raises(TypeError, match="kv_page: expected an int"):
        memsim.run("flash2", N=64, kv_page="16")


def test_run_decode_splits_bandwidth():
    """splits and bandwidth reach the command line: flashdecode's S, the tokens/s bound."""
    r = memsim.run("flashdecode", N=1, N_kv=1024, d=32, heads=4, kv_heads=1, splits=4,
                   bandwidth=100, cache="L1=16K:full:64")
    same(r.to_dict(), cli_json("run", "--kernel", "flashdecode", "--N", "1", "--N-kv", "1024",
                               "--d", "32", "--heads", "4", "--kv-heads", "1", "--splits", "4",
                               "--bandwidth", "100.0", "--cache", "L1=16K:full:64"))
    assert r.config["splits"] == 4
    pt = r.to_dict()["per_token"]
    assert pt["bandwidth_gbps"] == 100 and pt["bandwidth_source"] == "--bandwidth"
    f = memsim.formula("flashdecode", N=1, N_kv=4096, d=64, heads=8, kv_heads=2, splits=2,
                       bandwidth=2.5)
    assert f.config["splits"] == 2
    assert f.to_dict()["per_token"]["bandwidth_gbps"] == 2.5
    with pytest.raises(memsim.UsageError, match='bandwidth: a number of GB/s or "measured"'):
        memsim.formula("flash2", N=1, N_kv=64, bandwidth="fast")
    with pytest.raises(TypeError, match="bandwidth: expected a finite number"):
        memsim.formula("flash2", N=1, N_kv=64, bandwidth=True)
    with pytest.raises(TypeError, match="splits: expected an int"):
        memsim.run("flashdecode", N=1, N_kv=64, splits=2.0)


def test_plugin(plugin_dir):
    path = os.path.join(plugin_dir, "plugin-copy.so")
    r = memsim.run(path, N=64, d=16, params={"passes": 2}, cache="L1=64K:full:64,tiles=scratch")
    same(r.to_dict(), cli_json("run", "--kernel", path, "--N", "64", "--d", "16", "--param",
                               "passes=2", "--cache", "L1=64K:full:64,tiles=scratch"))
    assert r.config["kernel"] == "copy"
    assert r.formulas["exact"]["byte_equal"] is True
    with pytest.raises(memsim.UsageError, match="copy takes no 'window'"):
        memsim.run(path, N=64, params={"window": 3})
    with pytest.raises(memsim.UsageError, match="not a memsim plugin|cannot load"):
        memsim.run(os.path.join(plugin_dir, "plugin-noentry.so"))


def test_record_and_replay(tmp_path):
    path = tmp_path / "r.mtrace"
    memsim.run("flash2", N=128, d=32, cache="L1=8K:4:64", record=path)
    b = memsim.replay(path, cache="L1=16K:8:64")
    c = memsim.run("flash2", N=128, d=32, cache="L1=16K:8:64")
    assert b["dram"] == c["dram"]


def test_replay_records(tmp_path):
    """replay(record=) converts a din trace to memsim's format, which replays alike."""
    din = tmp_path / "t.din"
    din.write_text("".join(f"{i % 3} {0x1000 + 52 * i:x}\n" for i in range(2000)))
    a = memsim.replay(din, cache="L1=1K:2:64", record=tmp_path / "t.mt")
    b = memsim.replay(tmp_path / "t.mt", cache="L1=1K:2:64")
    assert b["trace"]["format"] == "memsim"
    for k in ("levels", "dram", "cpu"):
        assert a[k] == b[k], k


def test_paths_not_utf8(tmp_path, monkeypatch):
    """A path of bytes that are not UTF-8, as os.fsdecode() gives it: the run works and its
    report names the path as the same str (memsim's JSON escapes the byte as \\udcff); a
    failure is memsim.Error, the byte shown as \\xff."""
    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"r\xff.mt")
    r = memsim.run("naive", N=64, d=16, record=name)
    assert r["command"].endswith(f"--record '{name}' --json -")
    assert os.path.exists(os.fsencode(name))
    with pytest.raises(memsim.Error) as e:
        memsim.run("naive", N=64, d=16, record=os.fsdecode(b"no\xfe/r.mt"))
    assert "no\\xfe/r.mt" in str(e.value) and "\n" not in str(e.value)


def test_sweep_params_not_utf8(plugin_dir, tmp_path):
    """A --param value that is not UTF-8: the rows read back with the str given, and resume
    finds them."""
    path = os.path.join(plugin_dir, "plugin-copy.so")
    out = tmp_path / os.fsdecode(b"s\xfe")
    rows = memsim.sweep(kernel=path, N=[16, 32], d=16, params={"crash": "\udcff"}, out=out,
                        frame=False)
    assert [r["config"]["params"] for r in rows] == [{"crash": "\udcff"}] * 2
    again = memsim.sweep(kernel=path, N=[16, 32, 48], d=16, params={"crash": "\udcff"},
                         out=out, resume=True, frame=False)
    assert len(again) == 3 and again[:2] == rows


@pytest.mark.parametrize("call, exc, words", [
    (lambda: memsim.run("naive", N=0), ValueError, "--N must be at least 1"),
    (lambda: memsim.run("naive", N=-5), ValueError, "--N"),
    (lambda: memsim.run("naive", N=1.5), TypeError, "N: expected an int"),
    (lambda: memsim.run("naive", N=float("nan")), TypeError, "N: expected an int"),
    (lambda: memsim.run("naive", N="64"), TypeError, "N: expected an int"),
    (lambda: memsim.run("naive", N=True), TypeError, "N: expected an int"),
    (lambda: memsim.run("naive", N=1 << 40), ValueError, "more than"),
    (lambda: memsim.run("naive", N=1 << 70), ValueError, "N"),
    (lambda: memsim.run("naive", cache="L1=3K:7:64"), ValueError, "ways do not divide"),
    (lambda: memsim.run("nokernel"), ValueError, "nokernel"),
    (lambda: memsim.run(None), TypeError, "kernel: expected a str"),
    (lambda: memsim.run("naive", dtype="fp8"), ValueError, "fp8"),
    (lambda: memsim.run("naive", causal="yes"), TypeError, "causal"),
    (lambda: memsim.run("naive", params={"a": 1}), ValueError, "--param is for plugins"),
    (lambda: memsim.run("naive", cache="lab\0x"), ValueError, "NUL"),
    (lambda: memsim.formula("naive", N=0), ValueError, "--N"),
    (lambda: memsim.replay("/nonexistent/trace", cache="lab"), memsim.Error, "nonexistent"),
    (lambda: memsim.sweep(N=[]), ValueError, "empty list"),
    (lambda: memsim.sweep(N=[64, 1.5]), TypeError, "N: expected an int"),
    (lambda: memsim.sweep(N=64, cache=5), TypeError, "cache: expected a spec or a list of specs"),
    (lambda: memsim.sweep(N=64, out="/dev/null"), ValueError, "out: /dev/null is not a directory"),
    (lambda: memsim.run("naive", cache="\udcff"), ValueError, "cache: '\\udcff' is not UTF-8"),
    (lambda: memsim.run("./k\ud800.so"), ValueError, "kernel: './k\\ud800.so' is not a file name"),
    (lambda: memsim.run("./x.so", params={"window=64": 1}), ValueError,
     "params key 'window=64': contains '='"),
    (lambda: memsim.run("./x.so", params={"w": "\ud800"}), ValueError,
     "params['w']: '\\ud800' is not UTF-8 text or bytes os.fsdecode() escaped"),
    (lambda: memsim.run("./x.so", params={"w": [64, 128]}), TypeError,
     "params['w']: one value here, got the list [64, 128]: sweep() runs a list"),
    (lambda: memsim.sweep(kernel="./x.so", params={"w": []}), ValueError,
     "params['w']: an empty list"),
    (lambda: memsim.sweep(kernel="./x.so", params={"w": ["1,2"]}), ValueError,
     "params['w']: '1,2' contains a comma, which separates a sweep's values"),
    (lambda: memsim.sweep(kernel="./x.so", params={"w": [1, None]}), TypeError,
     "params['w']: expected a str or number, got None"),
])
def test_bad_arguments(call, exc, words):
    with pytest.raises(exc) as e:
        call()
    assert isinstance(e.value, memsim.Error)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_sweep_rows_equal_runs():
    rows = memsim.sweep(kernel=["naive", "flash2"], N=[64, 128], d=16, jobs=2,
                        cache="L1=8K:4:64", frame=False)
    assert len(rows) == 4
    for row in rows:
        c = row["config"]
        r = memsim.run(c["kernel"], N=c["N"], d=16, cache="L1=8K:4:64")
        assert row["dram"] == r["dram"]


def test_sweep_cache_sweep_one_pass():
    rows = memsim.sweep(kernel="flash2", N=128, d=32, cache="L1=4K:4:64,L2=64K:16:64",
                        cache_sweep="L2=32K:128K:x2", frame=False)
    assert len(rows) == 3
    for row in rows:
        r = memsim.run("flash2", N=128, d=32, cache=row["config"]["cache"])
        assert row["dram"] == r["dram"]


def test_sweep_param_lists(plugin_dir, tmp_path):
    """A plugin's params as lists: one row per combination, each as run() with its values,
    keyed apart, with a column param_KEY in the frame; resume keeps the rows it has. run()
    takes one value: a comma in it is refused, not handed to the plugin."""
    pytest.importorskip("pandas")
    path = os.path.join(plugin_dir, "plugin-copy.so")
    out = tmp_path / "s"
    cache = "L1=1K:full:64,tiles=scratch"
    rows = memsim.sweep(kernel=path, N=32, d=16, Br=8, params={"passes": [1, 3], "fail": 99},
                        cache=cache, out=out, frame=False)
    rows.sort(key=lambda r: r["config"]["params"]["passes"])  # in the order they finished
    assert [r["config"]["params"] for r in rows] == [{"passes": "1", "fail": "99"},
                                                     {"passes": "3", "fail": "99"}]
    assert len({r["key"] for r in rows}) == 2
    for r in rows:
        one = memsim.run(path, N=32, d=16, Br=8, params=r["config"]["params"], cache=cache)
        assert r["dram"] == one["dram"]
        assert r["formulas"]["exact"]["bytes"] == one.formulas["exact"]["bytes"]
    df = memsim.sweep(kernel=path, N=32, d=16, Br=8, params={"passes": (1, 2, 3), "fail": 99},
                      cache=cache, out=out, resume=True)
    df = df.sort_values("param_passes")
    assert list(df["param_passes"]) == [1, 2, 3] and list(df["param_fail"]) == [99] * 3
    assert [df["dram_read_bytes"].iloc[k] for k in (0, 2)] == [r["dram"]["read_bytes"]
                                                               for r in rows]
    with pytest.raises(memsim.UsageError, match="--param passes=1,2: one value per key here"):
        memsim.run(path, N=32, params={"passes": "1,2"})


def test_sweep_out_and_resume(tmp_path):
    out = tmp_path / "s"
    first = memsim.sweep(N=[64, 128], d=16, out=out, frame=False)
    again = memsim.sweep(N=[64, 128, 256], d=16, out=out, resume=True, frame=False)
    assert len(first) == 2 and len(again) == 3
    assert (out / "results.csv").exists()


def test_sweep_failed_rows_kept(plugin_dir):
    path = os.path.join(plugin_dir, "plugin-copy.so")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        rows = memsim.sweep(kernel=path, N=[32, 64], d=16, params={"crash": 64}, frame=False)
    assert len(rows) == 2
    assert sum("error" in r for r in rows) == 1
    assert any(issubclass(x.category, memsim.RowsFailedWarning) for x in w)


def test_sweep_frame():
    pandas = pytest.importorskip("pandas")
    df = memsim.sweep(N=[64, 128], d=16)
    assert isinstance(df, pandas.DataFrame) and len(df) == 2


def _stream_sweep(plugin_dir, out, frame):
    """plugin-stream over fp32 (a run) and fp16 (refused by the plugin: a failed row)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", memsim.RowsFailedWarning)
        return memsim.sweep(kernel=os.path.join(plugin_dir, "plugin-stream.so"), N=64, d=16,
                            dtype=["fp32", "fp16"], cache="L1=4K:full:64", out=out,
                            frame=frame)


def test_sweep_rows_missing_values(plugin_dir, tmp_path):
    """The rows hold what was measured and nothing else: a plugin's formula total under
    formulas.exact.bytes as a kernel's; a failed row no bytes at all."""
    rows = _stream_sweep(plugin_dir, tmp_path / "s", False)
    good = next(r for r in rows if "error" not in r)
    bad = next(r for r in rows if "error" in r)
    exact = good["formulas"]["exact"]
    # X read, Y read and written: N d fp32 elements each
    assert exact["bytes"] == exact["predicted_bytes"] == 3 * 64 * 16 * 4
    assert good["mode"] == "simulated"
    assert "dram" not in bad and "formulas" not in bad and "flops" not in bad


def test_sweep_frame_missing_values(plugin_dir, tmp_path):
    """results.csv as a DataFrame: a plugin's exact bytes, ratio, verdicts and time as its JSON
    says, as a built-in kernel's; NaN, never 0, for what a row does not hold (a failed run's
    bytes, a lab formula the plugin has not, the measurement of a --formula-only row)."""
    pandas = pytest.importorskip("pandas")
    df = _stream_sweep(plugin_dir, tmp_path / "s", True)
    with open(tmp_path / "s" / "results.json", encoding="utf-8") as f:
        rows = {r["config"]["dtype"]: r for r in map(json.loads, f)}
    good = df[df["dtype"] == "fp32"].iloc[0]
    bad = df[df["dtype"] == "fp16"].iloc[0]
    assert good["exact_bytes"] == rows["fp32"]["formulas"]["exact"]["predicted_bytes"] > 0
    assert good["exact_ratio"] == 1
    assert good["traced_seconds"] == pytest.approx(rows["fp32"]["timing"]["traced_seconds"],
                                                   rel=1e-5)
    exact = rows["fp32"]["formulas"]["exact"]
    assert exact["within"] is True and exact["arrays_within"] is True
    assert good["exact_within"] == 1 and good["arrays_within"] == 1
    for col in ("lab_bytes", "lab_ratio"):
        assert math.isnan(good[col]), col
    assert bad["error"] == rows["fp16"]["error"]
    for col in ("dram_read_bytes", "dram_write_bytes", "exact_bytes", "exact_ratio", "flops",
                "traced_seconds", "estimated_error"):
        assert math.isnan(bad[col]), col

    f = memsim.sweep(N=[64, 128], d=16, formula_only=True, frame=True)
    assert list(f["mode"]) == ["formula", "formula"]
    for col in ("dram_read_bytes", "dram_write_bytes", "lab_measured_bytes", "lab_ratio",
                "exact_ratio", "traced_seconds"):
        assert f[col].isna().all(), col
    for N, exact, lab in zip(f["N"], f["exact_bytes"], f["lab_bytes"]):
        form = memsim.formula("naive", N=int(N), d=16)
        assert exact == form.formulas["exact"]["bytes"]
        assert lab == form.formulas["lab"]["bytes"] > 0


def test_sweep_frame_without_pandas(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_pandas(name, *a, **k):
        if name == "pandas":
            raise ImportError("no pandas")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    rows = memsim.sweep(N=64, d=16)
    assert isinstance(rows, list) and len(rows) == 1
    with pytest.raises(memsim.Error, match="needs pandas"):
        memsim.sweep(N=64, d=16, frame=True)
