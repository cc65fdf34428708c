"""examples/lab01_bytes.py on small sizes: its numbers are memsim's and the lab's closed
forms, its 30% verdicts are the reports', its plots are drawn."""

import os
import re
import shutil
import subprocess
import sys

import memsim

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "lab01_bytes.py")


def _run_example(out, env):
    p = subprocess.run([sys.executable, EXAMPLE, "--max-N", "512", "--out", str(out)],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _check_plots(text, out):
    """The plots the example says it drew exist: matplotlib's (one "plot: PATH" line each) or
    memsim's own through gnuplot ("plots (memsim plot): ..."), or it says why there are none."""
    drawn = re.findall(r"^plot: (.+)$", text, re.M)
    if drawn:
        assert sorted(os.path.basename(d) for d in drawn) == ["bytes_vs_n.png",
                                                             "intensity_ratio.png"]
        for d in drawn:
            assert os.path.getsize(d) > 0
    elif shutil.which("gnuplot") or os.environ.get("MEMSIM_GNUPLOT"):
        assert "plots (memsim plot):" in text
        assert (out / "plots" / "bytes_vs_n_lab.png").exists()
        assert (out / "plots" / "intensity_ratio.png").exists()
    else:
        assert "plots:" in text


def test_lab01_small(tmp_path):
    out = tmp_path / "lab01"
    text = _run_example(out, os.environ.copy())
    # Block A: the lab's closed forms equal memsim's lab formulas, at every size.
    rows = re.findall(r"^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s", text, re.M)
    assert len(rows) == 6
    for N, d, nv, m_nv, fl, m_fl in rows:
        assert nv == m_nv and fl == m_fl
        assert int(nv) == 12 * int(N) * int(d) + 16 * int(N) ** 2
    # Block C: each verdict is the run's own.
    for kernel, N in (("naive", 256), ("flash2", 512)):
        r = memsim.run(kernel, N=N, d=64, cache="lab", trace_only=True)
        lab = next(c for c in r["compare"] if c["formula"] == "lab")
        line = next(x for x in text.splitlines() if x.strip().startswith(f"{kernel} ")
                    and f"N={N} " in x)
        assert f"simulated {lab['measured_bytes']:>10}" in line
        assert ("within 30%" in line) == lab["within"]
    # Block D: bytes vs N for both kernels, and the plots (matplotlib's where importable).
    assert len(re.findall(r"^  N=\d+ +naive", text, re.M)) == 2
    assert (out / "lab" / "results.json").exists()
    _check_plots(text, out)


def test_lab01_without_matplotlib(tmp_path):
    """The same with matplotlib hidden (a stand-in package that fails to import), as on a
    machine without python3-matplotlib: memsim's own plots."""
    hide = tmp_path / "hide"
    (hide / "matplotlib").mkdir(parents=True)
    (hide / "matplotlib" / "__init__.py").write_text(
        'raise ImportError("matplotlib hidden by the test")\n')
    env = os.environ.copy()
    env["PYTHONPATH"] = os.pathsep.join([str(hide)] + [p for p in [env.get("PYTHONPATH")]
                                                          if p])
    out = tmp_path / "lab01"
    text = _run_example(out, env)
    assert not re.findall(r"^plot: ", text, re.M)
    _check_plots(text, out)
