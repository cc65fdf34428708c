"""libmemsim.so through ctypes: loading it, the functions' signatures, the stats structs.

The library is found, in order, at $MEMSIM_LIB, where meson's _config.py says (the build tree
or the install prefix), then by the dynamic loader's search ("libmemsim.so.0").
"""

import ctypes
import os

from .errors import Error

# memsim/hierarchy.h's structs, field for field.
_U64 = ctypes.c_uint64


class LevelStats(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 8)] + [
        (f, _U64)
        for f in (
            "size_bytes", "line_bytes", "assoc", "reads", "writes", "hits", "misses",
            "read_misses", "write_misses", "fills", "evictions", "writebacks",
        )
    ]


class DramStats(ctypes.Structure):
    _fields_ = [(f, _U64) for f in ("read_bytes", "write_bytes", "rfo_bytes", "flush_write_bytes")]


class CpuStats(ctypes.Structure):
    _fields_ = [
        (f, _U64)
        for f in ("loads", "stores", "load_bytes", "store_bytes", "scratch_read_bytes",
                  "scratch_write_bytes")
    ]


class Stats(ctypes.Structure):
    _fields_ = [("dram", DramStats), ("cpu", CpuStats), ("levels", ctypes.c_uint),
                ("level", LevelStats * 4)]


def _signatures(lib):
    vp, cp, sz, u, i = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int
    sigs = {
        "memsim_version": ([], cp),
        "memsim_hierarchy_create": ([cp, cp, sz], vp),
        "memsim_hierarchy_destroy": ([vp], None),
        "memsim_hierarchy_spec": ([vp, cp, sz], cp),
        "memsim_hierarchy_levels": ([vp], u),
        "memsim_hierarchy_reset": ([vp], i),
        "memsim_stats_total": ([vp, ctypes.POINTER(Stats)], i),
        "memsim_stats_arrays": ([vp], u),
        "memsim_stats_array_name": ([vp, u], cp),
        "memsim_stats_phases": ([vp], u),
        "memsim_stats_phase_name": ([vp, u], cp),
        "memsim_stats_array": ([vp, u, ctypes.POINTER(Stats)], i),
        "memsim_stats_phase": ([vp, u, ctypes.POINTER(Stats)], i),
        "memsim_report_json": ([vp], vp),
        "memsim_free": ([vp], None),
        "memsim_trace_create": ([vp, cp, cp, sz], vp),
        "memsim_trace_finish": ([vp, cp, sz], i),
        "memsim_trace_destroy": ([vp], None),
        "memsim_array": ([vp, cp, vp, sz, i], i),
        "memsim_phase": ([vp, cp], i),
        "memsim_load": ([vp, vp, sz], None),
        "memsim_store": ([vp, vp, sz], None),
        "memsim_access_batch": ([vp, sz, vp, vp, vp, ctypes.c_uint32, i], i),
        "memsim_preset_count": ([], u),
        "memsim_preset_name": ([u], cp),
        "memsim_preset_description": ([u], cp),
    }
    for name, (args, res) in sigs.items():
        try:
            f = getattr(lib, name)
        except AttributeError:
            raise Error(f"{lib._name}: no {name}: a libmemsim older than this package") from None
        f.argtypes = args
        f.restype = res


def _candidates():
    env = os.environ.get("MEMSIM_LIB")
    if env:
        return [env]
    out = []
    try:
        from . import _config

        out.append(_config.LIBRARY)
    except ImportError:
        pass
    out.append("libmemsim.so.0")
    return out


_lib = None


def lib():
    """The loaded library (loaded on first use)."""
    global _lib
    if _lib is not None:
        return _lib
    errors = []
    for path in _candidates():
        try:
            handle = ctypes.CDLL(path)
        except OSError as e:
            errors.append(str(e))
            continue
        _signatures(handle)
        _lib = handle
        return _lib
    raise Error("cannot load libmemsim: " + "; ".join(errors)
                + " (set MEMSIM_LIB to the library's path)")


def version() -> str:
    """The version of the library in use ("0.3.0")."""
    return lib().memsim_version().decode()
