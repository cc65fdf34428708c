"""memsim.Cache: a hierarchy a Python program feeds itself, through the library."""

from __future__ import annotations

import ctypes
import functools
import json
import os
import threading
from array import array
from collections.abc import Mapping, Set
from typing import Any, Sequence, Union

ArrayLike = Union[Sequence[int], Any]  # a sequence of ints, or a numpy integer array

from . import _args
from ._lib import Stats, lib
from .errors import ArgumentTypeError, Error, UsageError

_SPACES = {"dram": 0, "scratch": 1, "tile": 2}
_MAX_SIZE = 1 << 20  # bytes of one access in access(), as memsim_access_batch() takes
_MAX_SPAN = 1 << 32  # bytes of one load() or store()
_U64_END = 1 << 64


def _level_dict(lv):
    d = {f: getattr(lv, f) for f, _ in type(lv)._fields_ if f != "name"}
    d["name"] = lv.name.decode()
    return d


def _stats_dict(s):
    dram = {f: getattr(s.dram, f) for f, _ in type(s.dram)._fields_}
    dram["total_bytes"] = dram["read_bytes"] + dram["write_bytes"]
    return {
        "dram": dram,
        "cpu": {f: getattr(s.cpu, f) for f, _ in type(s.cpu)._fields_},
        "levels": [_level_dict(s.level[i]) for i in range(s.levels)],
    }


def _numpy():
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def _as_buffer(name, values, typecode, np_dtype):
    """values (a numpy array or a sequence) as a contiguous buffer of C type typecode, used in
    place where it already is one: (the object keeping it alive, its address, its length).
    Negative values are refused here (a cast would wrap them); the C call checks the rest."""
    np = _numpy()
    if np is not None and isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise UsageError(f"{name}: expected a 1-D array, got {values.ndim} dimensions")
        kind = values.dtype.kind
        if kind not in "uib" or (kind == "b" and typecode != "B"):
            raise ArgumentTypeError(f"{name}: expected an integer array, got dtype {values.dtype}")
        if kind == "i" and len(values) and values.min() < 0:
            raise UsageError(f"{name}: negative values ({int(values.min())})")
        if values.dtype == np_dtype or (typecode == "B" and kind == "b"):
            buf = np.ascontiguousarray(values)
        elif typecode == "B":
            buf = (values != 0).view(np.uint8)  # 256 is a store, not a wrapped 0
        else:
            if len(values) and int(values.max()) >= 1 << (8 * np.dtype(np_dtype).itemsize):
                raise UsageError(f"{name}: {int(values.max())} is out of range")
            buf = np.ascontiguousarray(values, dtype=np_dtype)
        return buf, buf.ctypes.data, len(buf)
    # a mapping or set has no order of its own (a dict would give its keys)
    if isinstance(values, (str, bytes, Mapping, Set)) or not hasattr(values, "__len__"):
        raise ArgumentTypeError(f"{name}: expected a sequence or numpy array, "
                                f"got {type(values).__name__}")
    items = list(values)
    for v in items:
        is_bool = isinstance(v, bool) or (np is not None and isinstance(v, np.bool_))
        if (not (isinstance(v, int) or (np is not None and isinstance(v, (np.integer, np.bool_))))
                or (is_bool and typecode != "B")):
            raise ArgumentTypeError(f"{name}: expected ints, got {type(v).__name__} {v!r:.40}")
    if typecode == "B":
        items = [1 if v else 0 for v in items]
    elif items and min(items) < 0:
        raise UsageError(f"{name}: negative values ({min(items)})")
    try:
        buf = array(typecode, items)
    except OverflowError:
        raise UsageError(f"{name}: {max(items)} is out of range") from None
    return buf, buf.buffer_info()[0], len(buf)


def _why_refused(addrs, sizes, size):
    """Why memsim_access_batch() refused a batch: the first bad size or wrapping access."""
    for i, a in enumerate(addrs):
        n = int(sizes[i]) if sizes is not None else size
        if not 1 <= n <= _MAX_SIZE:
            return f"sizes: {n} (access {i}) is not 1 to {_MAX_SIZE} bytes"
        if int(a) + n > _U64_END:
            return f"addrs: access {i} at {int(a)} of {n} bytes would run past address 2^64"
    return "memsim_access_batch refused the batch"


def _locked(method):
    """One call at a time on a Cache: ctypes lets other threads run while the library counts,
    and a hierarchy and its trace are single-threaded (two calls at once would lose counts;
    close() under an access would free what it reads)."""

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return call


class Cache:
    """A cache hierarchy from a spec ("L1=32K:8:64,L2=1M:16:64") or a preset ("lab",
    "h100"), fed by this program: declared arrays and phases, loads and stores one at a time
    or many in one call (numpy arrays, no Python call per access).

    Counters are final once the trace is finished: stats() and report() finish it (dirty
    lines written back, counted as flush_write_bytes), after which accesses raise until
    reset(). Calls from several threads take turns, each whole (a lock per Cache): every
    access is counted, in the order the calls got the lock.
    """

    def __init__(self, spec: str = "lab", *, record: str | os.PathLike[str] | None = None) -> None:
        self._lock = threading.RLock()
        self._h = self._t = None
        self._finished = True
        err = ctypes.create_string_buffer(512)
        spec = _args.text("spec", spec)
        self._h = lib().memsim_hierarchy_create(spec.encode(), err, len(err))
        if not self._h:
            raise UsageError(err.value.decode(errors="replace"))
        self._record = None if record is None else _args.path("record", record)
        self._t = None
        self._open_trace()

    def _open_trace(self):
        err = ctypes.create_string_buffer(512)
        path = os.fsencode(self._record) if self._record else None
        self._t = lib().memsim_trace_create(self._h, path, err, len(err))
        if not self._t:
            raise Error(err.value.decode(errors="replace"))
        self._finished = False
        self._arrays = set()  # the names this trace declared: a name once a trace

    def _live(self):
        if self._h is None:
            raise Error("this Cache is closed")
        if self._finished or self._t is None:
            raise Error("the trace is finished (stats() or report() ended it): reset() first")

    # The hierarchy.

    @property
    @_locked
    def spec(self) -> str:
        """The canonical spec, every word explicit (what `memsim presets` prints)."""
        if self._h is None:
            raise Error("this Cache is closed")
        buf = ctypes.create_string_buffer(4096)
        return lib().memsim_hierarchy_spec(self._h, buf, len(buf)).decode()

    @property
    @_locked
    def levels(self) -> int:
        if self._h is None:
            raise Error("this Cache is closed")
        return lib().memsim_hierarchy_levels(self._h)

    # What the program reports.

    @_locked
    def array(self, name: str, start: int, nbytes: int, space: str = "dram") -> None:
        """Declares an array: its DRAM bytes are counted apart. space: "dram", "scratch"
        (never through the caches) or "tile" (as the spec's tiles= says)."""
        self._live()
        name = _args.text("name", name)
        start, nbytes = _args.integer("start", start), _args.integer("nbytes", nbytes)
        if space not in _SPACES:
            raise UsageError(f"space: '{space}' is not dram, scratch or tile")
        if len(name.encode()) > 31 or not name:
            raise UsageError(f"name: '{name}' is not 1 to 31 bytes")
        if start < 0 or nbytes < 1 or start + nbytes > _U64_END:
            raise UsageError(f"array {name}: [{start}, {start + nbytes}) is not a range of "
                             "addresses")
        if name in self._arrays:
            raise UsageError(f"array {name}: declared already (its counts would be split in "
                             "two; reset() forgets the arrays)")
        rc = lib().memsim_array(self._t, name.encode(), ctypes.c_void_p(start), nbytes,
                                _SPACES[space])
        if rc:
            raise Error(f"array {name}: memsim_array failed ({rc}: at most 64 arrays)")
        self._arrays.add(name)

    @_locked
    def phase(self, name: str) -> None:
        """Starts the phase called name: what follows is counted under it."""
        self._live()
        name = _args.text("name", name)
        if lib().memsim_phase(self._t, name.encode()):
            raise Error(f"phase {name}: too many phases (at most 1024)")

    def _one(self, addr, size):
        self._live()
        addr, size = _args.integer("addr", addr), _args.integer("size", size)
        if size < 1 or size > _MAX_SPAN:
            raise UsageError(f"size: {size} is not 1 to {_MAX_SPAN} bytes")
        if addr < 0 or addr + size > _U64_END:
            raise UsageError(f"addr: [{addr}, {addr + size}) is not a range of addresses")
        return ctypes.c_void_p(addr), size

    @_locked
    def load(self, addr: int, size: int = 1) -> None:
        """One load of size bytes at addr (a span: every line it touches)."""
        lib().memsim_load(self._t, *self._one(addr, size))

    @_locked
    def store(self, addr: int, size: int = 1) -> None:
        """One store of size bytes at addr."""
        lib().memsim_store(self._t, *self._one(addr, size))

    @_locked
    def access(self, addrs: ArrayLike, sizes: ArrayLike | None = None,
               writes: ArrayLike | None = None, *, size: int = 1, write: bool = False) -> None:
        """Many accesses in one call, in order, counted as load()/store() one by one would:
        addrs[i] with sizes[i] bytes (sizes None: `size` each, 1 to 1 MiB), a store where
        writes[i] is true (writes None: `write` for all). numpy arrays are used in place
        where they are already contiguous uint64/uint32/uint8; any integer or bool arrays and
        plain sequences are converted."""
        self._live()
        np = _numpy()
        size = _args.integer("size", size)
        write = _args.flag("write", write)
        if not 1 <= size <= _MAX_SIZE:
            raise UsageError(f"size: {size} is not 1 to {_MAX_SIZE} bytes")

        keep_a, pa, n = _as_buffer("addrs", addrs, "Q", np and np.uint64)
        ps = pw = None
        if sizes is not None:
            keep_s, ps, ns = _as_buffer("sizes", sizes, "I", np and np.uint32)
            if ns != n:
                raise UsageError(f"sizes: {ns} values for {n} addresses")
        if writes is not None:
            keep_w, pw, nw = _as_buffer("writes", writes, "B", np and np.uint8)
            if nw != n:
                raise UsageError(f"writes: {nw} values for {n} addresses")
        if n == 0:
            return
        if lib().memsim_access_batch(self._t, n, pa, ps, pw, size, int(write)):
            raise UsageError(_why_refused(keep_a, keep_s if sizes is not None else None, size))

    # Counters.

    @_locked
    def finish(self) -> None:
        """Ends the trace: dirty lines are written back (flush_write_bytes) and the
        recording, if any, closed. stats() and report() call it."""
        if self._h is None:
            raise Error("this Cache is closed")
        if self._finished:
            return
        err = ctypes.create_string_buffer(512)
        self._finished = True
        if lib().memsim_trace_finish(self._t, err, len(err)):
            raise Error(err.value.decode(errors="replace"))

    @_locked
    def stats(self) -> dict[str, Any]:
        """Everything counted: {"dram", "cpu", "levels", "arrays": {name: ...},
        "phases": {name: ...}} (arrays and phases without levels: the model counts levels
        per phase, not per array). Finishes the trace."""
        self.finish()
        out = self._stats(lib().memsim_stats_total, None)
        L = lib()
        out["arrays"] = {L.memsim_stats_array_name(self._h, i).decode():
                         self._stats(L.memsim_stats_array, i)
                         for i in range(L.memsim_stats_arrays(self._h))}
        out["phases"] = {L.memsim_stats_phase_name(self._h, i).decode():
                         self._stats(L.memsim_stats_phase, i)
                         for i in range(L.memsim_stats_phases(self._h))}
        return out

    def _stats(self, fn, i):
        s = Stats()
        rc = fn(self._h, ctypes.byref(s)) if i is None else fn(self._h, i, ctypes.byref(s))
        if rc:
            raise Error("memsim_stats: out of range")
        return _stats_dict(s)

    @_locked
    def report(self) -> dict[str, Any]:
        """The report as `memsim run --json` writes its "levels", "dram", "scratch", "arrays"
        and "phases" (and config.cache), as a dict. Finishes the trace."""
        self.finish()
        p = lib().memsim_report_json(self._h)
        if not p:
            raise Error("memsim_report_json: out of memory")
        try:
            return json.loads(ctypes.string_at(p).decode())
        finally:
            lib().memsim_free(p)

    @_locked
    def reset(self) -> None:
        """Empties every level and zeroes every counter; arrays and phases are forgotten
        and a new trace starts (recording again over the file, if any). Where the fresh model
        cannot be allocated it raises Error and the Cache stays as finish() leaves it: its
        counters readable, accesses refused until a reset() that succeeds."""
        if self._h is None:
            raise Error("this Cache is closed")
        if not self._finished:  # the library resets a hierarchy only between traces
            self._finished = True
            err = ctypes.create_string_buffer(512)
            lib().memsim_trace_finish(self._t, err, len(err))  # what it counted is dropped
        if lib().memsim_hierarchy_reset(self._h):
            raise Error("reset: cannot allocate the fresh model (the counters so far are kept)")
        lib().memsim_trace_destroy(self._t)
        self._t = None
        self._open_trace()

    @_locked
    def close(self) -> None:
        """Frees the hierarchy (a trace not finished is finished first)."""
        if self._h is not None:
            lib().memsim_trace_destroy(self._t)
            lib().memsim_hierarchy_destroy(self._h)
            self._h = self._t = None
            self._finished = True

    def __enter__(self) -> "Cache":
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    @_locked
    def __repr__(self):
        return f"<memsim.Cache {self.spec!r}>" if self._h is not None else "<memsim.Cache closed>"
