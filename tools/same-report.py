#!/usr/bin/env python3
"""Whether two memsim JSON reports hold the same counters: prints "yes" or "NO", ignoring the
command line, the threads asked and used, and every timing. Then the second report's threads
used (of a sweep's results.json, one row a line: every row compared, the fewest threads any
row used). Usage: python3 tools/same-report.py A.json B.json (replay-threads.sh,
run-threads.sh, onepass-threads.sh)."""

import json
import sys

SKIP = ("command", "threads", "traced_seconds", "replay_seconds", "peak_rss_bytes", "seconds",
        "accesses_per_second", "elapsed_seconds")


def rows(path):
    with open(path) as f:
        text = f.read()
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def counters(path):
    rs = rows(path)
    return ([{k: v for k, v in j.items() if k not in SKIP} for j in rs],
            min(j.get("threads", {}).get("used", 1) for j in rs))


def main():
    (a, _), (b, used) = counters(sys.argv[1]), counters(sys.argv[2])
    print("yes" if a == b else "NO", used)


if __name__ == "__main__":
    main()
