"""examples/lab01_bytes.py on small sizes: its numbers are memsim's and the lab's closed
forms, its 30% verdicts are the reports', its plots are drawn."""

import os
import re
import shutil
import subprocess
import sys

import memsim

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "lab01_bytes.py")


def test_lab01_small(tmp_path):
    out = tmp_path / "lab01"
    p = subprocess.run([sys.executable, EXAMPLE, "--max-N", "512", "--out", str(out)],
                       capture_output=True, text=True, env=os.environ.copy())
    assert p.returncode == 0, p.stderr
    text = p.stdout
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
    # Block D: bytes vs N for both kernels, and the plots.
    assert len(re.findall(r"^  N=\d+ +naive", text, re.M)) == 2
    assert (out / "lab" / "results.json").exists()
    if shutil.which("gnuplot") or os.environ.get("MEMSIM_GNUPLOT"):
        assert (out / "plots" / "bytes_vs_n_lab.png").exists()
        assert (out / "plots" / "intensity_ratio.png").exists()
    else:
        assert "plots:" in text
