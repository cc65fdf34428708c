"""memsim.Cache against hand counts, against itself one access at a time, and against
`memsim replay` of what it recorded; and every bad input a one-line exception."""

import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import memsim
from memsim import _cli

np = pytest.importorskip("numpy")


def test_hand_count_lru():
    # One set of 2 lines: 0, 64, 128 miss; 0 misses again (LRU evicted it); 64 B each.
    with memsim.Cache("L1=128:2:64") as c:
        for a in (0, 64, 128, 0):
            c.load(a, 4)
        s = c.stats()
    l1 = s["levels"][0]
    assert (l1["misses"], l1["hits"]) == (4, 0)
    assert s["dram"]["read_bytes"] == 256
    assert s["dram"]["write_bytes"] == 0


def test_store_write_back_at_finish():
    # A store misses, fills its line (write-allocate) and dirties it; the final flush writes
    # it back, counted as flush_write_bytes.
    with memsim.Cache("L1=128:2:64") as c:
        c.store(0x1000, 8)
        s = c.stats()
    assert s["dram"]["read_bytes"] == 64
    assert s["dram"]["write_bytes"] == 64
    assert s["dram"]["flush_write_bytes"] == 64


def test_span_touches_every_line():
    with memsim.Cache("L1=4K:full:64") as c:
        c.load(60, 8)  # straddles lines 0 and 1
        c.load(1024, 256)  # 4 lines
        assert c.stats()["levels"][0]["misses"] == 6


def _stream(n, seed=7):
    rng = np.random.default_rng(seed)
    addrs = rng.integers(0, 1 << 20, size=n, dtype=np.uint64)
    sizes = rng.choice(np.array([1, 4, 8, 64, 100], dtype=np.uint32), size=n)
    writes = rng.random(n) < 0.3
    return addrs, sizes, writes


@pytest.mark.parametrize("spec", ["L1=32K:8:64,L2=256K:16:64", "L1=4K:full:64:fifo:wt:nwa",
                                  "none", "lab"])
def test_batch_equals_one_by_one(spec):
    addrs, sizes, writes = _stream(3000)
    with memsim.Cache(spec) as a, memsim.Cache(spec) as b:
        for c in (a, b):
            c.array("X", 0, 1 << 19)
            c.array("Y", 1 << 19, 1 << 19)
            c.phase("one")
        a.access(addrs[:1500], sizes[:1500], writes[:1500])
        a.phase("two")
        a.access(addrs[1500:], sizes[1500:], writes[1500:])
        for i in range(3000):
            if i == 1500:
                b.phase("two")
            (b.store if writes[i] else b.load)(int(addrs[i]), int(sizes[i]))
        assert a.stats() == b.stats()
        assert a.report() == b.report()


def test_batch_dtypes_and_defaults():
    addrs = np.arange(0, 64 * 100, 64, dtype=np.int64)  # signed, non-negative: converted
    with memsim.Cache("L1=1K:full:64") as a, memsim.Cache("L1=1K:full:64") as b:
        a.access(addrs, size=8, write=True)
        b.access(addrs.astype(np.uint64), np.full(100, 8, dtype=np.uint16),
                 np.ones(100, dtype=np.int32))
        sa, sb = a.stats(), b.stats()
    assert sa == sb
    assert sa["cpu"]["stores"] == 100 and sa["cpu"]["store_bytes"] == 800
    with memsim.Cache("L1=1K:full:64") as c:
        c.access([0, 64, 128], [4, 4, 4], [False, True, False])  # plain lists
        s = c.stats()
    assert (s["cpu"]["loads"], s["cpu"]["stores"]) == (2, 1)


def test_writes_nonzero_is_store():
    # 256 as uint16 is a store, not a wrapped 0.
    with memsim.Cache("none") as c:
        c.access(np.array([0, 8], dtype=np.uint64), writes=np.array([256, 0], dtype=np.uint16))
        assert c.stats()["cpu"]["stores"] == 1


@pytest.mark.parametrize("call, exc, words", [
    (lambda c: c.access(np.array([-1, 0])), ValueError, "negative"),
    (lambda c: c.access(np.array([0.5, 1.0])), TypeError, "dtype float64"),
    (lambda c: c.access(np.array([float("nan")])), TypeError, "dtype float64"),
    (lambda c: c.access(np.zeros((2, 2), dtype=np.uint64)), ValueError, "1-D"),
    (lambda c: c.access(np.zeros(3, dtype=np.uint64), np.ones(2, dtype=np.uint32)),
     ValueError, "2 values for 3 addresses"),
    (lambda c: c.access(np.zeros(2, dtype=np.uint64), np.array([0, 1])), ValueError,
     "is not 1 to"),
    (lambda c: c.access(np.zeros(1, dtype=np.uint64), np.array([1 << 21])), ValueError,
     "is not 1 to"),
    (lambda c: c.access(np.array([(1 << 64) - 4], dtype=np.uint64), size=8), ValueError,
     "past address 2^64"),
    (lambda c: c.access("0 64"), TypeError, "sequence or numpy array"),
    (lambda c: c.access([0, "64"]), TypeError, "expected ints"),
    (lambda c: c.access([0, -5]), ValueError, "negative"),
    (lambda c: c.access([0], size=0), ValueError, "size: 0"),
    (lambda c: c.load(-1), ValueError, "not a range of addresses"),
    (lambda c: c.load(0, 0), ValueError, "size: 0"),
    (lambda c: c.load(1.5), TypeError, "expected an int"),
    (lambda c: c.load((1 << 64) - 1, 2), ValueError, "not a range of addresses"),
    (lambda c: c.array("A" * 40, 0, 64), ValueError, "1 to 31 bytes"),
    (lambda c: c.array("A", 0, 64, space="hbm"), ValueError, "not dram, scratch or tile"),
    (lambda c: c.array("A", 0, 0), ValueError, "not a range"),
    (lambda c: c.phase(3), TypeError, "expected a str"),
    (lambda c: c.phase("\udcff"), ValueError, "name: '\\udcff' is not UTF-8 text"),
    (lambda c: c.array("A\udcff", 0, 64), ValueError, "name: 'A\\udcff' is not UTF-8 text"),
    (lambda c: c.access([True]), TypeError, "addrs: expected ints, got bool"),
    (lambda c: c.access(np.array([1, 0], dtype=bool)), TypeError, "dtype bool"),
    (lambda c: c.access({4096: "x"}), TypeError, "expected a sequence or numpy array, got dict"),
    (lambda c: c.access({0, 64}), TypeError, "expected a sequence or numpy array, got set"),
    (lambda c: c.access([0], sizes=[True]), TypeError, "sizes: expected ints, got bool"),
    (lambda c: (c.array("A", 4096, 64), c.array("A", 8192, 64)), ValueError,
     "array A: declared already"),
])
def test_bad_input_raises_one_line(call, exc, words):
    with memsim.Cache("L1=1K:full:64") as c:
        with pytest.raises(exc) as e:
            call(c)
        assert isinstance(e.value, memsim.Error)
        assert words in str(e.value) and "\n" not in str(e.value)
        c.load(0)  # still usable
        assert c.stats()["cpu"]["loads"] == 1


@pytest.mark.parametrize("spec, words", [
    ("L1=3K:7:64", "ways do not divide"),
    ("nonsense", "nonsense"),
    ("", ""),
    ("L1=32K:8:64,L2=1M:16:64,L3=8M:16:64,L4=64M:16:64,L5=1G:16:64", ""),
])
def test_bad_spec(spec, words):
    with pytest.raises(memsim.UsageError) as e:
        memsim.Cache(spec)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_bad_spec_same_message_as_command_line():
    p = subprocess.run([_cli.executable(), "run", "--kernel", "naive", "--cache",
                        "L1=3K:7:64"], capture_output=True, text=True)
    with pytest.raises(memsim.UsageError) as e:
        memsim.Cache("L1=3K:7:64")
    assert str(e.value) in p.stderr


def test_wrong_types_never_crash():
    for bad in (None, 3, b"lab", ["lab"], float("nan")):
        with pytest.raises(TypeError):
            memsim.Cache(bad)


def test_text_that_is_not_utf8():
    # A lone surrogate cannot reach the library as UTF-8: refused, naming the argument.
    with pytest.raises(memsim.UsageError) as e:
        memsim.Cache("\udcff")
    assert str(e.value) == ("spec: '\\udcff' is not UTF-8 text (character 0: surrogates "
                            "not allowed)")
    with pytest.raises(memsim.UsageError) as e:
        memsim.Cache("lab", record="r\ud800.mtr")
    assert str(e.value).startswith("record: 'r\\ud800.mtr' is not a file name")


def test_record_path_not_utf8(tmp_path):
    # A file name of bytes that are not UTF-8 (as os.fsdecode() gives it) is a file name.
    path = os.path.join(tmp_path, os.fsdecode(b"r\xff.mtr"))
    with memsim.Cache("lab", record=path) as c:
        c.load(0, 8)
        c.finish()
    assert os.listdir(os.fsencode(tmp_path)) == [b"r\xff.mtr"]


def test_finished_closed_reset():
    c = memsim.Cache("L1=1K:full:64")
    c.array("A", 0, 4096)
    c.load(0, 64)
    first = c.stats()
    with pytest.raises(memsim.Error, match="finished"):
        c.load(0)
    assert c.stats() == first  # idempotent
    c.reset()
    assert c.stats()["cpu"]["loads"] == 0
    assert list(c.stats()["arrays"]) == ["other"]
    c.close()
    with pytest.raises(memsim.Error, match="closed"):
        c.load(0)
    c.close()  # twice is fine


def _python(code):
    """code run by a fresh interpreter of this environment: a crash there fails the test
    instead of ending pytest."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)


def test_reset_without_memory():
    """A reset whose fresh model cannot be allocated (an address-space limit leaves room for
    one model, not two) raises; the Cache keeps its counters, refuses accesses, and resets
    once there is room."""
    if os.environ.get("MEMSIM_SANITIZED") == "1":
        pytest.skip("an address-space limit in a sanitized build")
    p = _python("""
        import resource, memsim
        c = memsim.Cache("L1=128M:16:64")  # a model of 16 MiB
        c.load(0, 64)
        vm = int([l for l in open("/proc/self/status") if l.startswith("VmSize")][0].split()[1])
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (vm * 1024 + (8 << 20), hard))
        try:
            c.reset()
        except memsim.Error as e:
            print(type(e).__name__, e)
        finally:
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        print("loads", c.stats()["cpu"]["loads"])
        try:
            c.load(0)
        except memsim.Error as e:
            print(e)
        c.reset()
        c.load(0, 64)
        print("loads", c.stats()["cpu"]["loads"])
        c.close()
    """)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.splitlines() == [
        "Error reset: cannot allocate the fresh model (the counters so far are kept)",
        "loads 1",
        "the trace is finished (stats() or report() ended it): reset() first",
        "loads 1",
    ]


def _watch_batches(monkeypatch, before_call):
    """Wraps the library's memsim_access_batch: before_call() runs first (True: the call is
    left out), then a pause that lets other threads run (the C call itself lets them too),
    then the call. Returns a dict whose "most" is the most calls that were inside at once."""
    L = memsim._lib.lib()
    real = L.memsim_access_batch
    state = {"inside": 0, "most": 0}

    def batch(*args):
        state["inside"] += 1
        state["most"] = max(state["most"], state["inside"])
        try:
            if before_call():
                return -1
            time.sleep(0.02)
            return real(*args)
        finally:
            state["inside"] -= 1

    monkeypatch.setattr(L, "memsim_access_batch", batch)
    return state


def test_threads_take_turns(monkeypatch):
    # Two threads feeding one Cache: their calls never overlap, and every access is counted.
    state = _watch_batches(monkeypatch, lambda: False)
    a = np.arange(0, 64 * 1000, 64, dtype=np.uint64)
    with memsim.Cache("L1=32K:8:64,L2=1M:16:64") as c:
        def worker():
            for _ in range(3):
                c.access(a, size=8)
        ts = [threading.Thread(target=worker) for _ in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert state["most"] == 1
        assert c.stats()["cpu"]["loads"] == 6 * len(a)


def test_close_during_access(monkeypatch):
    # close() from another thread waits for the access under way; the next access raises.
    inside = threading.Event()
    c = memsim.Cache("L1=32K:8:64")
    closed_under_it = []

    def before_call():
        inside.set()
        time.sleep(0.05)
        if c._h is None:  # closed while this call was on its way: do not touch the library
            closed_under_it.append(True)
            return True
        return False

    _watch_batches(monkeypatch, before_call)
    errors = []

    def worker():
        try:
            for _ in range(100):
                c.access([0, 64, 128], size=8)
        except memsim.Error as e:
            errors.append(str(e))

    t = threading.Thread(target=worker)
    t.start()
    inside.wait()
    c.close()
    t.join()
    assert closed_under_it == []
    assert errors == ["this Cache is closed"]


def test_per_array_and_phase():
    with memsim.Cache("L1=1K:full:64") as c:
        c.array("A", 0, 4096)
        c.array("T", 8192, 256, space="scratch")
        c.phase("p1")
        c.access(np.arange(0, 4096, 64, dtype=np.uint64), size=4)
        c.phase("p2")
        c.store(8192, 16)
        s = c.stats()
    assert s["arrays"]["A"]["dram"]["read_bytes"] == 4096
    assert s["arrays"]["T"]["cpu"]["scratch_write_bytes"] == 16
    assert s["phases"]["p1"]["dram"]["read_bytes"] == 4096
    assert s["phases"]["p2"]["dram"]["read_bytes"] == 0


def test_record_then_replay_equals(tmp_path):
    path = tmp_path / "t.mtrace"
    addrs, sizes, writes = _stream(5000, seed=3)
    with memsim.Cache("L1=32K:8:64,L2=256K:16:64", record=path) as c:
        c.array("X", 0, 1 << 20)
        c.access(addrs, sizes, writes)
        mine = c.report()
    other = memsim.replay(path, cache="L1=32K:8:64,L2=256K:16:64")
    for key in ("dram", "levels"):
        assert json.dumps(mine[key], sort_keys=True) == json.dumps(other[key], sort_keys=True)


def test_presets_all_build():
    names = [p["name"] for p in memsim.presets()]
    out = subprocess.run([_cli.executable(), "presets"], capture_output=True, text=True).stdout
    for n in names:
        assert n in out
    assert "lab" in names and "h100" in names
    for p in memsim.presets():
        if p["spec"] is None:
            # only host may be missing, and then the command line says so too
            assert p["name"] == "host" and "unknown here" in p["unavailable"]
            assert "spec:   unavailable here: host:" in out
            continue
        with memsim.Cache(p["spec"]) as c:
            assert c.spec == p["spec"]


def test_presets_host_unknown(tmp_path, monkeypatch):
    """Where neither sysfs nor sysconf knows the caches (the test knobs say so), presets()
    lists every preset, host with spec None and the reason; Cache("host") raises it."""
    monkeypatch.setenv("MEMSIM_SYSFS_ROOT", str(tmp_path))
    monkeypatch.setenv("MEMSIM_HOST_SOURCES", "sysfs")
    ps = memsim.presets()
    host = next(p for p in ps if p["name"] == "host")
    assert host["spec"] is None
    assert host["unavailable"].startswith("host: this machine's caches are unknown here: sysfs: "
                                          f"cannot read {tmp_path}/devices/system/cpu/cpu0/cache")
    others = [p for p in ps if p["name"] != "host"]
    assert len(others) >= 6 and all(p["spec"] and "unavailable" not in p for p in others)
    with pytest.raises(memsim.UsageError, match="this machine's caches are unknown here"):
        memsim.Cache("host")


def test_version_matches_executable():
    out = subprocess.run([_cli.executable(), "version"], capture_output=True, text=True).stdout
    assert memsim.version() in out


def test_random_inputs_never_crash():
    # Arrays of every dtype, shape and range, and odd objects: each call either counts or
    # raises memsim.Error (a ValueError or TypeError), and the Cache stays usable.
    rng = np.random.default_rng(11)
    dtypes = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
              np.float32, np.float64, np.bool_, np.complex64, object]
    with memsim.Cache("L1=1K:2:64,L2=4K:4:64") as c:
        for _ in range(300):
            n = int(rng.integers(0, 6))
            pick = [rng.choice(dtypes) for _ in range(3)]
            vals = [rng.integers(-3, 1 << 20, size=n).astype(t) if t is not object
                    else np.array([None] * n, dtype=object) for t in pick]
            if rng.random() < 0.2:
                vals[0] = vals[0].reshape(-1, 1) if n else vals[0]
            args = [vals[0], vals[1] if rng.random() < 0.5 else None,
                    vals[2] if rng.random() < 0.5 else None]
            try:
                c.access(*args, size=int(rng.integers(1, 9)))
            except memsim.Error:
                pass
        for bad in (None, 1.5, {"a": 1}, object(), b"\x00\x01", [[1, 2]], [1 << 70]):
            with pytest.raises(memsim.Error):
                c.access(bad)
        c.load(0)
        assert c.stats()["cpu"]["loads"] >= 1


def test_array_name_again_after_reset():
    """A name is declared once a trace; reset() starts a trace that may declare it again."""
    with memsim.Cache("L1=1K:full:64") as c:
        c.array("A", 4096, 64)
        c.reset()
        c.array("A", 8192, 64)
        c.load(8192)
        assert c.stats()["arrays"]["A"]["dram"]["read_bytes"] == 64
