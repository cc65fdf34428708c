#!/usr/bin/env python3
"""User CPU seconds of whole commands, several binaries alternated (a shared machine's wall
times move too much to compare).

    tools/user-time.py N ARGS... -- BIN...

runs `BIN ARGS...` for each BIN in turn, N rounds, and prints each binary's mean, minimum and
standard deviation of user seconds (getrusage of the finished child), e.g.
    tools/user-time.py 6 replay t.mtr --cache L1=32K:8:64,L2=1M:16:64 -- /tmp/base build/memsim
"""

import resource
import statistics
import subprocess
import sys


def main():
    if len(sys.argv) < 4 or "--" not in sys.argv:
        sys.exit("usage: user-time.py N ARGS... -- BIN...")
    rounds = int(sys.argv[1])
    cut = sys.argv.index("--")
    args, bins = sys.argv[2:cut], sys.argv[cut + 1:]
    if rounds < 1 or not bins:
        sys.exit("usage: user-time.py N ARGS... -- BIN...")
    times = {b: [] for b in bins}
    for _ in range(rounds):
        for b in bins:
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
            subprocess.run([b] + args, stdout=subprocess.DEVNULL, check=True)
            times[b].append(resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before)
    for b in bins:
        t = times[b]
        sd = statistics.stdev(t) if len(t) > 1 else 0.0
        print(f"{b}: user mean {statistics.mean(t):.4f} s, min {min(t):.4f}, sd {sd:.4f}, "
              f"n {len(t)}")


if __name__ == "__main__":
    main()
