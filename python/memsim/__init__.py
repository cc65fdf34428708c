"""memsim from Python: how many bytes a kernel moves to and from DRAM.

    import memsim
    r = memsim.run("flash2", N=4096, d=64, cache="lab")
    r.dram_bytes, r.arrays["K"], r.formulas["lab"]
    memsim.formula("naive", N=8192, d=128).dram_bytes
    memsim.sdpa([1, 32, 1, 128], [1, 8, 131072, 128], enable_gqa=True)["tokens_per_s_bound"]
    rows = memsim.sweep(kernel=["naive", "flash2"], N="256:16384:x2"); rows.plot()
    memsim.decode_curve(N_kv="1024:131072:x2", kv_heads=[32, 8, 1]).plot()
    c = memsim.Cache("L1=32K:8:64,L2=1M:16:64"); c.access(addrs, sizes, writes); c.stats()

docs/python.md is the guide. run(), formula(), sweep(), replay() and sdpa() run the memsim
executable (their reports are its reports); Cache and presets() use libmemsim.so through
ctypes. Errors are one-line memsim.Error; bad arguments a memsim.UsageError, also a
ValueError (and a TypeError for a wrong type).
"""

from ._lib import version
from .cache import Cache
from .commands import formula, plot, presets, replay, run, sdpa, sweep
from .decode import DecodeCurve, decode_curve
from .errors import ArgumentTypeError, Error, RowsFailedWarning, UsageError
from .result import Result

__all__ = [
    "ArgumentTypeError", "Cache", "DecodeCurve", "Error", "Result", "RowsFailedWarning",
    "UsageError", "decode_curve", "formula", "plot", "presets", "replay", "run", "sdpa", "sweep", "version",
]
