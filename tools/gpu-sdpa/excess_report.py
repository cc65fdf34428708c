#!/usr/bin/env python3
"""The spilled registers, model against Nsight Compute, on excess.sh's shapes (N_kv from 1K to
32K at fixed query blocks, and the other way round): ncu's local store bytes against the model's
(the frame's cold part once a block, its hot part every K/V step), and DRAM bytes written and read.
python3 tools/gpu-sdpa/excess_report.py --memsim build/memsim [-- memsim sdpa options]"""

import argparse
import csv
import json
import os
import subprocess

CSV = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "gpu-run", "sdpa-excess",
                   "excess.csv")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memsim", default="build/memsim")
    ap.add_argument("--csv", default=CSV)
    ap.add_argument("extra", nargs="*", help="memsim sdpa options after --")
    a = ap.parse_args()
    print("| batch, heads, N, N_kv, d | causal | blocks | ncu local stores MB | model's MB "
          "| ncu MB written | model's | O + lse MB | ncu MB read | model's | **model / ncu** |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in csv.DictReader(open(a.csv, encoding="utf-8")):
        b, h, hk, n, nkv, d = (r[k] for k in ("batch", "heads", "kv_heads", "N", "N_kv", "d"))
        args = [a.memsim, "sdpa", "--q", f"{b},{h},{n},{d}", "--k", f"{b},{hk},{nkv},{d}",
                "--json", "-"] + (["--causal"] if r["causal"] == "1" else []) + a.extra
        j = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
        k = j["kernel"]
        local = k["spill_store_bytes"]
        o = int(b) * int(h) * int(n) * (int(d) * 2 + 4)
        rd, wr = int(r["dram_read_bytes"]), int(r["dram_write_bytes"])
        mr, mw = j["dram"]["read_bytes"], j["dram"]["write_bytes"]
        print(f"| {b}, {h}, {n}, {nkv}, {d} | {'yes' if r['causal'] == '1' else 'no'} "
              f"| {k['blocks']} | {int(r['local_store_bytes']) / 1e6:.1f} | {local / 1e6:.1f} "
              f"| {wr / 1e6:.1f} | {mw / 1e6:.1f} | {o / 1e6:.1f} | {rd / 1e6:.1f} "
              f"| {mr / 1e6:.1f} | **{(mr + mw) / (rd + wr):.3f}** |")


if __name__ == "__main__":
    main()
