#!/usr/bin/env python3
"""Whether two memsim JSON reports hold the same counters: prints "yes" or "NO", ignoring the
command line, the threads asked and used, and every timing. Then the second report's threads
used. Usage: python3 tools/same-report.py A.json B.json (replay-threads.sh, run-threads.sh)."""

import json
import sys

SKIP = ("command", "threads", "traced_seconds", "replay_seconds", "peak_rss_bytes", "seconds",
        "accesses_per_second", "elapsed_seconds")


def counters(path):
    with open(path) as f:
        j = json.load(f)
    return {k: v for k, v in j.items() if k not in SKIP}, j.get("threads", {}).get("used", 1)


def main():
    (a, _), (b, used) = counters(sys.argv[1]), counters(sys.argv[2])
    print("yes" if a == b else "NO", used)


if __name__ == "__main__":
    main()
