"""The memsim executable: run(), formula(), sweep() and replay() run it as the command line
does, so their reports are its reports, key for key and number for number, and a kernel
plugin that crashes or a run that exhausts memory ends that process, never the caller's.

It is found at $MEMSIM_BIN, where meson's _config.py says, then on PATH.

Bytes that are not UTF-8 (a path made with os.fsdecode(), a --param value): memsim writes
them in its JSON as \\udcXX escapes, which json.loads() reads as the str os.fsdecode() gives
(os.fsencode() gives the bytes back). Standard output is read the same way (surrogateescape);
standard error, which is for people, with such bytes as \\xNN.
"""

import json
import os
import shutil
import subprocess

from .errors import Error, UsageError


def executable():
    """The memsim executable's path."""
    env = os.environ.get("MEMSIM_BIN")
    if env:
        return env
    try:
        from . import _config

        if os.access(_config.EXECUTABLE, os.X_OK):
            return _config.EXECUTABLE
    except ImportError:
        pass
    found = shutil.which("memsim")
    if not found:
        raise Error("memsim executable not found (install memsim, or set MEMSIM_BIN)")
    return found


def _message(stderr, rc):
    """The last non-empty stderr line, without the program's prefix."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    line = lines[-1] if lines else f"memsim exited with status {rc} and no message"
    return line[len("memsim: "):] if line.startswith("memsim: ") else line


def call(args, ok=(0,)):
    """Runs `memsim ARGS`; returns (exit status, stdout, stderr). An exit status outside ok
    raises: UsageError for 2, Error otherwise."""
    try:
        p = subprocess.run([executable()] + list(args), stdin=subprocess.DEVNULL,
                           capture_output=True, check=False)
    except OSError as e:
        raise Error(f"cannot run memsim: {e}") from None
    out = p.stdout.decode("utf-8", "surrogateescape")
    err = p.stderr.decode("utf-8", "backslashreplace")
    if p.returncode in ok:
        return p.returncode, out, err
    if p.returncode < 0:
        raise Error(f"memsim {args[0]} was killed by signal {-p.returncode}")
    cls = UsageError if p.returncode == 2 else Error
    raise cls(_message(err, p.returncode))


def call_json(args):
    """Runs `memsim ARGS --json -` and returns (the report as a dict, the text report)."""
    _, out, err = call(list(args) + ["--json", "-"])
    try:
        return json.loads(out), err
    except ValueError as e:
        raise Error(f"memsim {args[0]}: its JSON report does not parse: {e}") from None
