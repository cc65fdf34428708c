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
import sys
import threading

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


def _measures(args):
    """Whether memsim ARGS may measure this machine first (--bandwidth measured: a minute or
    so the first time on a machine), so that what it says should be seen while it runs."""
    return any(a == "--bandwidth" and b == "measured" for a, b in zip(args, args[1:]))


_MEASURING = b"memsim: --bandwidth measured: "


def _run_echoing(argv):
    """subprocess.run(argv) capturing both streams; what memsim says while it measures (from
    its "measuring" line to the line giving the bandwidth) and its warnings about the
    measurement are also written to sys.stderr as they come, so that a notebook shows them
    while it waits. The text report that stderr holds under --json - is not."""
    chunks = []

    def pump(stream):
        echo = False
        for line in iter(stream.readline, b""):
            chunks.append(line)
            start = line.startswith(_MEASURING + b"measuring ")
            echo = echo or start
            if echo or line.startswith(b"memsim: warning: --bandwidth measured:"):
                sys.stderr.write(line.decode("utf-8", "backslashreplace"))
                sys.stderr.flush()
            if echo and not start and line.startswith(_MEASURING):
                echo = False

    with subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as p:
        t = threading.Thread(target=pump, args=(p.stderr,), daemon=True)
        t.start()
        try:
            out = p.stdout.read()
            p.wait()
        except BaseException:  # an interrupted notebook cell: no measurement left running
            p.kill()
            raise
        t.join()
    return subprocess.CompletedProcess(argv, p.returncode, out, b"".join(chunks))


def call(args, ok=(0,)):
    """Runs `memsim ARGS`; returns (exit status, stdout, stderr). An exit status outside ok
    raises: UsageError for 2, Error otherwise. Where it may measure the machine first
    (--bandwidth measured), its stderr is also echoed to sys.stderr as it runs."""
    args = list(args)
    try:
        if _measures(args):
            p = _run_echoing([executable()] + args)
        else:
            p = subprocess.run([executable()] + args, stdin=subprocess.DEVNULL,
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
