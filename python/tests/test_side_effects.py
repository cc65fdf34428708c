"""No surprise side effects (issue 43 item 4): bandwidth="measured" keeps its measurement in
the user's cache, never in the working directory, and says what it does while it measures;
memsim.plot() takes any sweep directory."""

import os

import pytest

import memsim

# Numbers that stand for the measurement (memsim's test knob): nothing is measured here.
CEILINGS = "12.5,25,95,190"


def test_bandwidth_measured_cached_not_in_cwd(tmp_path, monkeypatch, capsys):
    wd = tmp_path / "wd"
    wd.mkdir()
    monkeypatch.chdir(wd)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("MEMSIM_TEST_CEILINGS", CEILINGS)
    r = memsim.formula("flash2", N=1, N_kv=4096, bandwidth="measured")
    pt = r.to_dict()["per_token"]
    assert pt["bandwidth_gbps"] == 25
    assert str(tmp_path / "cache" / "memsim" / "ceilings") in pt["bandwidth_source"]
    assert os.listdir(wd) == []
    (entry,) = os.listdir(tmp_path / "cache" / "memsim" / "ceilings")
    assert os.path.isfile(tmp_path / "cache" / "memsim" / "ceilings" / entry / "ceilings.json")
    # what it said while measuring reached sys.stderr; the text report did not
    err = capsys.readouterr().err
    assert "--bandwidth measured: measuring this machine's bandwidth" in err
    assert "--bandwidth measured: 25.00 GB/s" in err
    assert "memsim formula:" not in err
    # the second time it is read back, quietly
    monkeypatch.setenv("MEMSIM_TEST_CEILINGS", "1,2,3,4")
    r = memsim.run("flash2", N=1, N_kv=256, bandwidth="measured")
    assert r.to_dict()["per_token"]["bandwidth_gbps"] == 25
    assert capsys.readouterr().err == ""
    assert os.listdir(wd) == []


def _fake_gnuplot(tmp_path, monkeypatch):
    """A stand-in for gnuplot that writes a small file per image: no gnuplot needed."""
    fake = tmp_path / "gnuplot"
    fake.write_text('#!/bin/sh\nb="${1%.gp}"; echo png >"$b.png"; echo svg >"$b.svg"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("MEMSIM_GNUPLOT", str(fake))


def test_plot_sweep_dir(tmp_path, monkeypatch):
    """memsim.plot() on memsim.sweep()'s directory: bytes vs N and the intensity ratio."""
    _fake_gnuplot(tmp_path, monkeypatch)
    out = tmp_path / "s"
    memsim.sweep(kernel=["naive", "flash2"], N=[64, 128], d=16, cache="L1=16K:full:64",
                 out=out, frame=False)
    drawn = memsim.plot(out, formats="png")
    names = sorted(os.path.basename(p) for p in drawn)
    assert len(names) == 2 and names[1] == "intensity_ratio.png", names
    assert names[0].startswith("bytes_vs_n_L1_16K")
    assert all(os.path.isfile(p) for p in drawn)


def test_plot_sweep_dir_nothing(tmp_path, monkeypatch):
    """A sweep whose rows allow no plot: an Error, and no plots directory left behind."""
    _fake_gnuplot(tmp_path, monkeypatch)
    out = tmp_path / "s"
    memsim.sweep(kernel="naive", N=64, d=16, out=out, frame=False)
    with pytest.raises(memsim.Error, match="allow none of the plots"):
        memsim.plot(out)
    assert not (out / "plots").exists()
