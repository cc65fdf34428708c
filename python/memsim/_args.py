"""Checking Python arguments before they become command-line options: a wrong type is an
ArgumentTypeError naming the argument; ranges are left to memsim, whose messages say what
it takes."""

import math
import numbers
import os

from .errors import ArgumentTypeError, UsageError


def integer(name, v):
    """v as an int: ints and numpy integers; not bool, float (NaN, 1.0) or str."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise ArgumentTypeError(f"{name}: expected an int, got {type(v).__name__} {v!r:.40}")
    return int(v)


def text(name, v):
    """A str that memsim can take as UTF-8 (no lone surrogates) and without NUL."""
    if not isinstance(v, str):
        raise ArgumentTypeError(f"{name}: expected a str, got {type(v).__name__} {v!r:.40}")
    if "\0" in v:
        raise UsageError(f"{name}: contains a NUL byte")
    try:
        v.encode()
    except UnicodeEncodeError as e:
        raise UsageError(f"{name}: {v!r:.40} is not UTF-8 text (character {e.start}: "
                         f"{e.reason})") from None
    return v


def argv_bytes(name, v, what):
    """v (a str) as bytes os.fsencode() can give the command line: no NUL, and lone surrogates
    only where os.fsdecode() made them from bytes that are not UTF-8; else a UsageError saying
    v is not `what`."""
    if "\0" in v:
        raise UsageError(f"{name}: contains a NUL byte")
    try:
        os.fsencode(v)
    except UnicodeEncodeError as e:
        raise UsageError(f"{name}: {v!r:.40} is not {what} (character {e.start}: "
                         f"{e.reason})") from None
    return v


def argv_text(name, v):
    """A str for the command line that may stand for bytes that are not UTF-8, as os.fsdecode()
    escapes them (a --param value: memsim's JSON writes each such byte back as \\udcXX); other
    lone surrogates are not text."""
    if not isinstance(v, str):
        raise ArgumentTypeError(f"{name}: expected a str, got {type(v).__name__} {v!r:.40}")
    return argv_bytes(name, v, "UTF-8 text or bytes os.fsdecode() escaped")


def flag(name, v):
    if not isinstance(v, bool):
        raise ArgumentTypeError(f"{name}: expected True or False, got {type(v).__name__} {v!r:.40}")
    return v


def number(name, v):
    """A finite real number."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
        raise ArgumentTypeError(f"{name}: expected a finite number, got {v!r:.40}")
    return v


def path(name, v):
    """A file name as a str: undecodable bytes os.fsdecode() escaped are taken (os.fsencode()
    gives them back), other text that is no file name is not."""
    if not isinstance(v, (str, os.PathLike)) or not isinstance(os.fspath(v), str):
        raise ArgumentTypeError(f"{name}: expected a path, got {type(v).__name__} {v!r:.40}")
    return argv_bytes(name, os.fspath(v), "a file name")


def kernel(v):
    """A built-in kernel's name or a plugin's path (str or os.PathLike)."""
    if isinstance(v, os.PathLike):
        v = os.fspath(v)
    if isinstance(v, str) and ("/" in v or v.endswith(".so")):
        return path("kernel", v)
    return text("kernel", v)


def _param_value(name, value):
    """One --param value as text: a str (no comma with lists: a comma separates them) or a
    finite number."""
    if isinstance(value, bool) or not isinstance(value, (str, numbers.Integral, numbers.Real)):
        raise ArgumentTypeError(f"{name}: expected a str or number, got {value!r:.40}")
    if isinstance(value, str):
        return argv_text(name, value)
    if not isinstance(value, numbers.Integral):
        number(name, value)
    return str(value)


def params(v, lists=False):
    """--param KEY=VALUE options from a mapping of str to str, int or float; with lists (a
    sweep) a value may also be a list or tuple of them, --param KEY=V1,V2,..., every one a
    configuration."""
    if v is None:
        return []
    if not hasattr(v, "items"):
        raise ArgumentTypeError(f"params: expected a dict, got {type(v).__name__}")
    out = []
    for key, value in v.items():
        text("params key", key)
        if "=" in key:  # --param KEY=VALUE: the key ends at the first '='
            raise UsageError(f"params key {key!r:.40}: contains '=', which ends a key")
        name = f"params[{key!r}]"
        if isinstance(value, (list, tuple)) and not lists:
            raise ArgumentTypeError(f"{name}: one value here, got the list {value!r:.40}: "
                                    "sweep() runs a list, each value a configuration")
        if isinstance(value, (list, tuple)):
            if not value:
                raise UsageError(f"{name}: an empty list")
            items = [_param_value(name, x) for x in value]
            for x in items:
                if "," in x:
                    raise UsageError(f"{name}: {x!r:.40} contains a comma, which separates "
                                     "a sweep's values")
            value = ",".join(items)
        else:
            value = _param_value(name, value)
        out += ["--param", f"{key}={value}"]
    return out


def size_options(N, d, heads, kv_heads, batch, dtype, Br, Bc, causal, softmax_separate, seed):
    """The size options run and formula share."""
    out = []
    for opt, name, v in (("--N", "N", N), ("--d", "d", d), ("--heads", "heads", heads),
                         ("--batch", "batch", batch), ("--Br", "Br", Br), ("--Bc", "Bc", Bc),
                         ("--seed", "seed", seed)):
        out += [opt, str(integer(name, v))]
    if kv_heads is not None:
        out += ["--kv-heads", str(integer("kv_heads", kv_heads))]
    out += ["--dtype", text("dtype", dtype)]
    if flag("causal", causal):
        out.append("--causal")
    if flag("softmax_separate", softmax_separate):
        out.append("--softmax-separate")
    return out


def kv_options(N_kv, kv_page):
    """--N-kv (the keys' length, None: = N) and --kv-page (flash2's paged KV cache, None:
    unpaged)."""
    out = []
    if N_kv is not None:
        out += ["--N-kv", str(integer("N_kv", N_kv))]
    if kv_page is not None:
        out += ["--kv-page", str(integer("kv_page", kv_page))]
    return out


def decode_options(splits, bandwidth):
    """--splits (flashdecode's S, None: FlashAttention's heuristic on a GPU preset, else 1) and
    --bandwidth (GB/s for the tokens/s bound, or "measured": this machine's, by memsim
    ceilings; None: the preset's)."""
    out = []
    if splits is not None:
        out += ["--splits", str(integer("splits", splits))]
    if bandwidth is not None:
        if isinstance(bandwidth, str):
            if bandwidth != "measured":
                raise UsageError(f"bandwidth: a number of GB/s or \"measured\", not "
                                 f"{bandwidth!r:.40}")
            out += ["--bandwidth", "measured"]
        else:
            out += ["--bandwidth", repr(float(number("bandwidth", bandwidth)))]
    return out


def sweep_list(name, v):
    """A sweep list: one value, a sequence of them, or memsim's own "lo:hi:xF" text."""
    if isinstance(v, str):
        return text(name, v)
    if isinstance(v, (list, tuple, range)):
        if not v:
            raise UsageError(f"{name}: an empty list")
        return ",".join(str(integer(name, x)) if not isinstance(x, str) else text(name, x)
                        for x in v)
    return str(integer(name, v))
