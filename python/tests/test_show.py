"""Results in a notebook: HTML tables, .plot(), the decode curve (memsim/_show.py, decode.py)."""

import sys

import pytest

import memsim
from memsim import _show


@pytest.fixture
def no_matplotlib(monkeypatch):
    """matplotlib not importable, whether or not this machine has it."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)


@pytest.fixture
def plt():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as pyplot

    yield pyplot
    pyplot.close("all")


@pytest.fixture(scope="module")
def sweep_rows():
    return memsim.sweep(kernel=["naive", "flash2"], N=[128, 256, 512], d=32, trace_only=True,
                        frame=False)


def test_run_html_has_dram_arrays_and_verdicts():
    r = memsim.run("naive", N=1024, d=64, trace_only=True)
    h = r._repr_html_()
    assert h.count("<table>") == 3
    for name in ("Q", "K", "V", "O"):
        assert f"<td>{name}</td>" in h
    assert f"{r.dram_bytes:,} B" in h
    assert "<td>lab</td>" in h and "<td>exact</td>" in h
    # naive on the lab preset: the lab formula's verdict with its reason
    assert "outside: K/V fit in cache fails" in h


def test_formula_html_gives_exact_arrays():
    f = memsim.formula("flash2", N=4096)
    h = f._repr_html_()
    assert "memsim formula" in h and "(exact formula)" in h
    assert f"{f.arrays['K']:,} B" in h


def test_html_escapes_text():
    h = _show.table(("a<b",), [("<script>",)], "x & y")
    assert "<script>" not in h and "&lt;script&gt;" in h and "x &amp; y" in h


def test_run_plot_bars(plt):
    r = memsim.run("naive", N=256, d=32, trace_only=True)
    ax = r.plot()
    dram = [n for n, a in r.arrays.items() if a["space"] == "dram"]  # tiles are on chip
    assert dram == ["Q", "K", "V", "O", "S"]
    assert [t.get_text() for t in ax.get_xticklabels()] == dram
    assert len(ax.patches) == 2 * len(dram)  # read and written


def test_formula_plot_bars(plt):
    f = memsim.formula("flash2", N=1024)
    ax = f.plot()
    assert len(ax.patches) == len(f.arrays)


def test_plot_without_matplotlib_says_so(no_matplotlib):
    r = memsim.formula("naive", N=256)
    with pytest.raises(memsim.Error, match="needs matplotlib"):
        r.plot()
    r._repr_html_()  # tables need nothing


def test_sweep_rows_are_a_list_with_html(sweep_rows):
    assert isinstance(sweep_rows, list) and len(sweep_rows) == 6
    assert all("config" in r for r in sweep_rows)
    h = sweep_rows._repr_html_()
    assert "memsim sweep: 6 rows" in h
    assert h.count("<tr>") == 7
    # the columns that vary; N_kv moves with N and is shown, d does not vary
    assert "<th>kernel</th>" in h and "<th>N</th>" in h and "<th>d</th>" not in h


def test_sweep_plot_a_line_per_kernel(plt, sweep_rows):
    ax = sweep_rows.plot()
    assert ax.get_xlabel() == "N"
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == {"kernel=naive", "kernel=flash2"}
    by = {(r["config"]["kernel"], r["config"]["N"]): r["dram"]["total_bytes"] for r in sweep_rows}
    assert list(lines["kernel=naive"].get_xdata()) == [128, 256, 512]
    assert list(lines["kernel=naive"].get_ydata()) == [by["naive", n] for n in (128, 256, 512)]


def test_sweep_plot_without_a_numeric_axis(plt):
    rows = memsim.sweep(kernel=["naive", "flash2"], N=256, d=32, formula_only=True, frame=False)
    with pytest.raises(memsim.Error, match="no numeric axis varies"):
        rows.plot()
    ax = rows.plot(x="d")  # named: one point a kernel
    assert len(ax.get_lines()) == 2


def test_sweep_frame_plot(plt):
    pytest.importorskip("pandas")
    df = memsim.sweep(kernel=["naive", "flash2"], N=[128, 256], d=32, formula_only=True)
    assert df._repr_html_()  # pandas' own table
    ax = df.plot()
    assert {line.get_label() for line in ax.get_lines()} == {"kernel=naive", "kernel=flash2"}
    sub = df[df.kernel == "naive"]
    assert type(sub) is type(df)
    # with pandas' arguments it is pandas' plot
    ax = df.plot(x="N", y="exact_bytes", kind="scatter")
    assert ax.get_xlabel() == "N"


def test_decode_curve_points_and_layouts():
    c = memsim.decode_curve(N_kv=[1024, 4096], heads=8, kv_heads=[8, 2, 1], d=64)
    assert len(c) == 6
    assert [p["layout"] for p in c][::2] == ["MHA (8 kv heads)", "GQA (2 kv heads)",
                                             "MQA (1 kv head)"]
    for p in c:
        # each token reads K and V of its context once, and a little more
        kv = 2 * p["kv_heads"] * p["N_kv"] * 64 * 2
        assert kv < p["bytes_per_token"] < 1.6 * kv
        assert p["tokens_per_s_bound"] == pytest.approx(p["bandwidth_gbps"] * 1e9
                                                        / p["bytes_per_token"])
    one = memsim.formula("flashdecode", N=1, N_kv=4096, heads=8, kv_heads=2, d=64,
                         dtype="fp16", cache="h100")
    p = next(p for p in c if p["kv_heads"] == 2 and p["N_kv"] == 4096)
    assert p["bytes_per_token"] == one["per_token"]["bytes"]
    assert "GQA (2 kv heads)" in c._repr_html_()


def test_decode_curve_plot(plt):
    c = memsim.decode_curve(N_kv=[1024, 2048], heads=4, kv_heads=[4, 1], d=64)
    left, right = c.plot()
    assert len(left.get_lines()) == 2 and len(right.get_lines()) == 2


def test_decode_curve_bad_arguments():
    with pytest.raises(memsim.ArgumentTypeError):
        memsim.decode_curve(kv_heads=["x"])
    with pytest.raises(memsim.UsageError):
        memsim.decode_curve(N_kv=[1024], heads=8, kv_heads=[3])


def test_sweep_param_axis(plt, plugin_dir):
    """A plugin's swept parameter is a column of the table and the plot's x."""
    import os

    path = os.path.join(plugin_dir, "plugin-copy.so")
    rows = memsim.sweep(kernel=path, N=[32, 64], d=16, Br=8, params={"passes": [1, 2, 3]},
                        cache="L1=1K:full:64,tiles=scratch", frame=False)
    assert "<th>param_passes</th>" in rows._repr_html_()
    ax = rows.plot()  # N varies first: a line for each number of passes
    assert {line.get_label() for line in ax.get_lines()} == {f"param_passes={p}"
                                                            for p in (1, 2, 3)}
    # the rows of one N: the parameter is the axis
    ax = _show.sweep_plot([f for f in rows.flat if f["N"] == 32])
    assert ax.get_xlabel() == "param_passes"
    assert list(ax.get_lines()[0].get_xdata()) == [1, 2, 3]
