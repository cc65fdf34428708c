"""pytest set-up for memsim's Python tests.

With MEMSIM_PYTEST_TAP=1 (tests/meson.build sets it, and runs pytest without its terminal
output) each test's outcome is written as a TAP line ("ok N - test", "not ok N - test" with its
traceback as comments, "# SKIP") and the plan at the end, which tests/run.sh counts like the C
tests' cases.
"""

import os
import sys

import pytest

_tap = {"n": 0}


def pytest_runtest_logreport(report):
    if os.environ.get("MEMSIM_PYTEST_TAP") != "1":
        return
    # One line per test: its call, or the phase that failed or skipped it.
    if report.when == "call" or (report.when == "setup" and not report.passed):
        _tap["n"] += 1
        n, name = _tap["n"], report.nodeid
        if report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
            print(f"\nok {n} - {name} # SKIP {reason}", file=sys.stdout)
        elif report.passed:
            print(f"\nok {n} - {name}", file=sys.stdout)
        else:
            print(f"\nnot ok {n} - {name}", file=sys.stdout)
            for line in str(report.longrepr).splitlines()[-40:]:
                print(f"# {line}", file=sys.stdout)


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("MEMSIM_PYTEST_TAP") == "1":
        print(f"\n1..{_tap['n']}", file=sys.stdout)
        r = session.testsfailed
        print(f"# pytest: {session.testscollected - r} passed or skipped, {r} failed",
              file=sys.stdout)


@pytest.fixture
def plugin_dir():
    """The build's test plugins (tests/plugin-*.c), where the tests were given them."""
    d = os.environ.get("MEMSIM_TEST_PLUGIN_DIR")
    if not d:
        pytest.skip("MEMSIM_TEST_PLUGIN_DIR not set")
    return d
