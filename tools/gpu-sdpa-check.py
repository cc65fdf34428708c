#!/usr/bin/env python3
"""PyTorch's flash SDPA under Nsight Compute against `memsim sdpa`: the validation table of
docs/gpu.md.

On a machine with an NVIDIA GPU, PyTorch and ncu (as root):

    python3 tools/gpu-sdpa-check.py measure OUTDIR      # ncu over the shapes below

runs each shape once, cold (ncu flushes the caches before each kernel), after a one-element
fill whose value is the shape's index (a marker: the kernels between two markers are one
shape's), and writes OUTDIR/ncu.csv (ncu's raw page) and OUTDIR/shapes.json (the shapes, the
device, PyTorch's version). Then, anywhere:

    python3 tools/gpu-sdpa-check.py report OUTDIR --memsim build/memsim [--gpu h200]

joins them into one row a shape (DRAM bytes read and written by all its flash kernels, as ncu
counts them) beside `memsim sdpa --json`'s, and prints the table in Markdown with its summary.
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

# (batch, heads, kv_heads, N, N_kv, d, causal, dtype): prefill, chunked prefill, decode.
SHAPES = [
    (1, 16, 16, 2048, 2048, 64, 0, "fp16"),
    (1, 16, 16, 2048, 2048, 128, 1, "fp16"),
    (4, 16, 4, 2048, 2048, 128, 1, "bf16"),
    (2, 32, 8, 4096, 4096, 128, 0, "bf16"),
    (1, 16, 16, 4096, 4096, 96, 0, "fp16"),
    (1, 16, 16, 4096, 4096, 96, 1, "fp16"),
    (4, 12, 4, 2048, 2048, 96, 1, "bf16"),
    (1, 8, 8, 4096, 4096, 256, 0, "fp16"),
    (1, 8, 8, 4096, 4096, 256, 1, "bf16"),
    (4, 8, 2, 2048, 2048, 256, 1, "fp16"),
    (4, 12, 12, 1024, 1024, 64, 1, "fp16"),
    (1, 32, 4, 8192, 8192, 128, 1, "bf16"),
    (1, 16, 16, 16384, 16384, 64, 1, "fp16"),
    (1, 32, 8, 512, 4096, 128, 0, "fp16"),
    (1, 32, 32, 1, 16384, 128, 0, "fp16"),
    (1, 32, 8, 1, 65536, 128, 0, "bf16"),
    (4, 32, 8, 1, 16384, 128, 0, "fp16"),
    (2, 32, 1, 1, 32768, 128, 0, "fp16"),
    (1, 16, 16, 1, 8192, 64, 0, "fp16"),
    (1, 32, 8, 2, 16384, 128, 0, "fp16"),
    (12, 32, 8, 1, 4096, 128, 0, "fp16"),
    (1, 40, 8, 1, 32768, 128, 0, "bf16"),
]

METRICS = ("dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,"
           "launch__grid_size,launch__registers_per_thread,"
           "lts__t_sectors_srcunit_tex_op_write.sum,"
           "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum")


def shapes_run(path):
    """Under ncu: each shape's marker, then its SDPA call (flash backend only)."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    dev = torch.device("cuda")
    marker = torch.empty(1, device=dev, dtype=torch.float32)
    props = torch.cuda.get_device_properties(dev)
    meta = {"device": props.name, "sms": props.multi_processor_count,
            "l2_bytes": getattr(props, "L2_cache_size", None), "torch": torch.__version__,
            "cuda": torch.version.cuda, "shapes": []}
    gen = torch.Generator(device=dev)
    for i, (b, h, hk, n, nkv, d, causal, dt) in enumerate(SHAPES):
        gen.manual_seed(2000 + i)
        t = torch.float16 if dt == "fp16" else torch.bfloat16
        q = torch.randn(b, h, n, d, device=dev, dtype=t, generator=gen)
        k = torch.randn(b, hk, nkv, d, device=dev, dtype=t, generator=gen)
        v = torch.randn_like(k)
        torch.cuda.synchronize()
        marker.fill_(float(i))
        s = dict(batch=b, heads=h, kv_heads=hk, N=n, N_kv=nkv, d=d, causal=causal, dtype=dt)
        try:
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                o = F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal),
                                                   enable_gqa=hk < h)
            torch.cuda.synchronize()
            s["ok"] = bool(torch.isfinite(o).all().item())
        except RuntimeError as e:
            s["ok"], s["error"] = False, str(e).splitlines()[0][:200]
        meta["shapes"].append(s)
        del q, k, v
        print(i, s, flush=True)
    with open(path, "w") as f:
        json.dump(meta, f, indent=1)


def measure(out):
    os.makedirs(out, exist_ok=True)
    cmd = ["ncu", "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none",
           "--cache-control", "all", "--kernel-name-base", "demangled", "--kernel-name",
           "regex:flash|FillFunctor|fill_kernel", "--metrics", METRICS,
           "--log-file", os.path.join(out, "ncu.csv"), sys.executable, os.path.abspath(__file__),
           "shapes", os.path.join(out, "shapes.json")]
    with open(os.path.join(out, "run.log"), "w") as log:
        rc = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT)
    if rc:
        sys.exit(f"ncu failed ({rc}): see {out}/run.log")


def num(text):
    return float(str(text).replace(",", ""))


def measured(out):
    """Per shape: ncu's DRAM bytes read and written over its flash kernels, and their names."""
    meta = json.load(open(os.path.join(out, "shapes.json")))
    rows = csv.DictReader(line for line in open(os.path.join(out, "ncu.csv"))
                          if not line.startswith("=="))
    per, i = [[] for _ in meta["shapes"]], -1
    for r in rows:
        if not r["Kernel Name"]:
            continue  # the units row
        if "FillFunctor" in r["Kernel Name"] or "fill_kernel" in r["Kernel Name"]:
            i += 1
        elif i >= 0:
            per[i].append(r)
    if i != len(meta["shapes"]) - 1:
        sys.exit(f"report: {i + 1} markers for {len(meta['shapes'])} shapes")
    out_rows = []
    for s, ks in zip(meta["shapes"], per):
        if not s.get("ok") or not ks:
            continue
        s = dict(s)
        s["read"] = sum(num(k["dram__bytes_read.sum"]) for k in ks)
        s["write"] = sum(num(k["dram__bytes_write.sum"]) for k in ks)
        s["local_st"] = sum(num(k["l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"]) for k in ks)
        s["l2_write"] = 32 * sum(num(k["lts__t_sectors_srcunit_tex_op_write.sum"]) for k in ks)
        s["per_kernel"] = [(k["Kernel Name"].split("<")[0].split()[-1],
                            num(k["dram__bytes_read.sum"]), num(k["dram__bytes_write.sum"]),
                            32 * num(k["lts__t_sectors_srcunit_tex_op_write.sum"]),
                            num(k["gpu__time_duration.sum"])) for k in ks]
        s["kernels"] = "+".join(k["Kernel Name"].split("<")[0].split()[-1] for k in ks)
        s["grid"] = "+".join(k["Grid Size"] for k in ks)
        s["block"] = "+".join(k["Block Size"] for k in ks)
        s["time_ns"] = sum(num(k["gpu__time_duration.sum"]) for k in ks)
        out_rows.append(s)
    return meta, out_rows


def model(memsim, gpu, s):
    q = f"{s['batch']},{s['heads']},{s['N']},{s['d']}"
    k = f"{s['batch']},{s['kv_heads']},{s['N_kv']},{s['d']}"
    args = [memsim, "sdpa", "--q", q, "--k", k, "--dtype", s["dtype"], "--gpu", gpu,
            "--json", "-", "--quiet"] + (["--causal"] if s["causal"] else [])
    r = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    return r["dram"]["read_bytes"], r["dram"]["write_bytes"]


def write_csv(rows, path):
    """The measured rows in tests/data/gpu/sdpa.csv's columns (test-sdpa reads them)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["batch", "heads", "kv_heads", "N", "N_kv", "d", "causal", "dtype",
                    "kernels", "dram_read_bytes", "dram_write_bytes", "time_ns", "grid",
                    "block", "waves"])
        for s in rows:
            w.writerow([s["batch"], s["heads"], s["kv_heads"], s["N"], s["N_kv"], s["d"],
                        s["causal"], s["dtype"], s["kernels"].replace("pytorch_flash::", ""),
                        int(s["read"]), int(s["write"]), int(s["time_ns"]), s["grid"],
                        s["block"], ""])


def report(out, memsim, gpu, csv_path=None):
    meta, rows = measured(out)
    if csv_path:
        write_csv(rows, csv_path)
    print(f"{meta['device']}, {meta['sms']} SMs, L2 {meta['l2_bytes']} bytes, "
          f"PyTorch {meta['torch']}; model: memsim sdpa --gpu {gpu}\n")
    print("| batch | heads | kv heads | N | N_kv | d | causal | dtype | ncu MB read | "
          "ncu MB written | model MB read | model MB written | **model / ncu** |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for s in rows:
        mr, mw = model(memsim, gpu, s)
        ratio = (mr + mw) / (s["read"] + s["write"])
        ratios.append(ratio)
        print(f"| {s['batch']} | {s['heads']} | {s['kv_heads']} | {s['N']} | {s['N_kv']} | "
              f"{s['d']} | {'yes' if s['causal'] else 'no'} | {s['dtype']} | "
              f"{s['read'] / 1e6:.1f} | {s['write'] / 1e6:.2f} | {mr / 1e6:.1f} | "
              f"{mw / 1e6:.2f} | **{ratio:.3f}** |")
    dev = [abs(r - 1) for r in ratios]
    print(f"\n{len(ratios)} rows: median |model / ncu - 1| {100 * statistics.median(dev):.2f}%, "
          f"worst {100 * max(dev):.2f}%, {sum(d <= 0.10 for d in dev)} within 10%")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("shapes").add_argument("path")
    sub.add_parser("measure").add_argument("out")
    r = sub.add_parser("report")
    r.add_argument("out")
    r.add_argument("--memsim", default="build/memsim")
    r.add_argument("--gpu", default="h200")
    r.add_argument("--csv", help="also write the measured rows in tests/data/gpu/sdpa.csv's "
                                 "columns to this file")
    a = ap.parse_args()
    if a.cmd == "shapes":
        shapes_run(a.path)
    elif a.cmd == "measure":
        measure(a.out)
    else:
        report(a.out, a.memsim, a.gpu, a.csv)


if __name__ == "__main__":
    main()
