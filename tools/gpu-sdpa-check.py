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

The L2's own microbenchmarks, which the SDPA model's L2 geometry is chosen by (docs/gpu.md):

    python3 tools/gpu-sdpa-check.py measure-l2 OUTDIR   # on the GPU, about a minute
    python3 tools/gpu-sdpa-check.py report-l2 OUTDIR > tests/data/gpu/l2-policy-h200.csv

runs the steps of l2_cases() (each one PyTorch kernel: x.sum() reads a buffer front to back with
all SMs, x.fill_() writes every line of it and reads none, a sleep only waits) under ncu with
the caches kept between kernels, and writes one row a step: DRAM MiB read and written while
the step ran. OUTDIR/cases.json lists the steps; test-sdpa replays them through the model.

The spilled registers of PyTorch's flash_fwd_kernel, read off its SASS (tests/data/gpu/frames.csv):

    python3 tools/gpu-sdpa-check.py frames RAW          # with PyTorch and cuobjdump, ~10 min
    python3 tools/gpu-sdpa-check.py frames-report RAW > tests/data/gpu/frames.csv

frames writes, a kernel a line as cuobjdump reaches it, the frame's size (STACK), the bytes a
thread stores to it inside the K/V loop (hot: a backward branch spanning over 8 KB of code)
and only outside it (cold). frames-report demangles the names (c++filt) and keeps the kernels
memsim models: no dropout, local, ALiBi, softcap or returned softmax, whole head dims, the
tiles it runs with on Hopper.
"""

import argparse
import csv
import gzip
import json
import os
import re
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
    (1, 16, 16, 3000, 3000, 96, 1, "fp16"),
    (2, 16, 16, 3000, 3000, 96, 0, "bf16"),
    (1, 8, 8, 3000, 3000, 256, 0, "fp16"),
    (2, 8, 4, 3000, 3000, 256, 1, "bf16"),
    (1, 16, 16, 4096, 4096, 192, 1, "fp16"),
    (1, 32, 8, 1000, 8192, 128, 0, "fp16"),
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


MIB = 1 << 20
FLUSH_MIB = 512  # a flush reads this much, over eight times the L2, so what follows is cold
SLEEP_CLOCKS = 1980  # a microsecond at the H200's 1980 MHz


def l2_cases():
    """The experiments (sizes in MiB of float32; sleeps in microseconds):
    cyclic X     flush, read X three times: what a re-read finds (LRU: all or nothing).
    scan A B     flush, read A, stream B, read A: does a stream evict older lines like an LRU?
    write X      flush, fill X, read X: dirty lines a kernel writes, and what stays of them.
    write2 X     flush, read X, fill X, read X: lines read, then rewritten.
    wscan X B    flush, fill X, stream B, read X: dirty lines while reads stream past.
    wsleep X T   flush, fill X, sleep T, read X: dirty lines while the GPU only waits."""
    cases = []
    for x in (8, 16, 24, 26, 28, 30, 32, 34, 36, 40, 44, 48, 56, 64, 80, 96, 128):
        cases.append(dict(exp="cyclic", x=x, b=0, steps=["flush"] + ["read x"] * 3))
    for a in (8, 16, 24):
        for b in (8, 16, 32, 48, 64, 128):
            cases.append(dict(exp="scan", x=a, b=b,
                              steps=["flush", "read x", "read b", "read x"]))
    for x in (8, 16, 24, 28, 32, 36, 40, 48, 64, 80):
        cases.append(dict(exp="write", x=x, b=0, steps=["flush", "fill x", "read x"]))
        cases.append(dict(exp="write2", x=x, b=0,
                          steps=["flush", "read x", "fill x", "read x"]))
    for x in (1, 4, 8, 16, 24):
        for b in (4, 16, 32, 64):
            cases.append(dict(exp="wscan", x=x, b=b,
                              steps=["flush", "fill x", "read b", "read x"]))
    for x in (1, 8):
        for t in (10, 100, 1000):
            cases.append(dict(exp="wsleep", x=x, b=0, us=t,
                              steps=["flush", "fill x", "sleep", "read x"]))
    return cases


def l2_steps(path):
    """Under ncu: each step a marker (a one-element fill whose grid is 1), then its kernel."""
    import torch

    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    gen = torch.Generator(device=dev)
    gen.manual_seed(7)
    cases = l2_cases()
    pool = torch.rand(128 * MIB // 4, device=dev, generator=gen)
    other = torch.rand(128 * MIB // 4, device=dev, generator=gen)
    junk = torch.rand(FLUSH_MIB * MIB // 4, device=dev, generator=gen)
    marker = torch.empty(1, device=dev, dtype=torch.float32)
    sink = torch.zeros(1, device=dev)
    index = 0
    torch.cuda.synchronize()
    for c in cases:
        x, b = pool[: c["x"] * MIB // 4], other[: c["b"] * MIB // 4]
        for s in c["steps"]:
            marker.fill_(float(index))
            if s == "flush":
                sink += junk.sum()
            elif s == "read x":
                sink += x.sum()
            elif s == "read b":
                sink += b.sum()
            elif s == "fill x":
                x.fill_(0.5)
            elif s == "sleep":
                torch.cuda._sleep(c["us"] * SLEEP_CLOCKS)
            index += 1
        torch.cuda.synchronize()
    meta = {"device": props.name, "sms": props.multi_processor_count,
            "l2_bytes": getattr(props, "L2_cache_size", None), "torch": torch.__version__,
            "cuda": torch.version.cuda, "flush_mib": FLUSH_MIB, "steps": index, "cases": cases}
    with open(path, "w") as f:
        json.dump(meta, f, indent=1)
    print("steps", index, "sink", float(sink))


def run_ncu(out, ncu_args, step_args):
    """This script's step_args (a subcommand and its argument) under ncu, which writes its raw
    page to OUT/ncu.csv; the run's output to OUT/run.log."""
    os.makedirs(out, exist_ok=True)
    cmd = (["ncu", "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none",
            "--kernel-name-base", "demangled"] + ncu_args +
           ["--log-file", os.path.join(out, "ncu.csv"), sys.executable,
            os.path.abspath(__file__)] + step_args)
    with open(os.path.join(out, "run.log"), "w") as log:
        rc = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT)
    if rc:
        sys.exit(f"ncu failed ({rc}): see {out}/run.log")


def ncu_kernels(out):
    """ncu's rows in OUT/ncu.csv (or ncu.csv.gz), one a profiled kernel, in launch order."""
    path = os.path.join(out, "ncu.csv")
    f = open(path) if os.path.exists(path) else gzip.open(path + ".gz", "rt")
    for r in csv.DictReader(line for line in f if not line.startswith("==")):
        if r["Kernel Name"]:  # not the units row
            yield r


def measure_l2(out):
    """ncu with the caches kept between kernels (--cache-control none) and between its passes
    (application replay: kernel replay saves and restores memory, which empties the L2)."""
    run_ncu(out, ["--cache-control", "none", "--replay-mode", "application", "--kernel-name",
                  "regex:reduce|Fill|spin", "--metrics",
                  "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,"
                  "launch__grid_size"],
            ["l2-steps", os.path.join(out, "cases.json")])


def report_l2(out):
    """One row a step, in tests/data/gpu/l2-policy.csv's columns."""
    meta = json.load(open(os.path.join(out, "cases.json")))
    got = []
    for r in ncu_kernels(out):
        if "Fill" in r["Kernel Name"] and num(r["launch__grid_size"]) == 1:
            got.append([0.0, 0.0])
        elif got:
            got[-1][0] += num(r["dram__bytes_read.sum"] or 0)
            got[-1][1] += num(r["dram__bytes_write.sum"] or 0)
    while len(got) > meta["steps"] and got[0] == [0.0, 0.0]:
        got.pop(0)  # the sink's zero fill reads as a marker
    if len(got) != meta["steps"]:
        sys.exit(f"report-l2: {len(got)} markers in ncu.csv, {meta['steps']} steps")
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["exp", "x_mib", "b_mib", "step", "name", "dram_read_mib", "dram_write_mib"])
    i = 0
    for c in meta["cases"]:
        for k, name in enumerate(c["steps"]):
            w.writerow([c["exp"], c["x"], c.get("us", c["b"]), k, name,
                        f"{got[i][0] / MIB:.3f}", f"{got[i][1] / MIB:.3f}"])
            i += 1


STL = re.compile(r"\bSTL(\.64|\.128)?\s+\[R1(?:\+0x([0-9a-f]+))?\]")
INSN = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);")
LOOP_BYTES = 0x2000  # a backward branch this long closes the K/V loop, not a short inner one


def frame_parts(lines):
    """Bytes of the frame stored inside the main loop (hot), and only outside it (cold)."""
    insns = [(int(m.group(1), 16), m.group(2)) for m in map(INSN.match, lines) if m]
    loops = []
    for a, t in insns:
        m = re.search(r"\bBRA\b.*0x([0-9a-f]+)\s*$", t)
        if m and int(m.group(1), 16) < a and a - int(m.group(1), 16) > LOOP_BYTES:
            loops.append((int(m.group(1), 16), a))
    hot, cold = set(), set()
    for a, t in insns:
        m = STL.search(t)
        if m:
            w = {".64": 8, ".128": 16}.get(m.group(1), 4)
            off = int(m.group(2) or "0", 16)
            (hot if any(x <= a <= y for x, y in loops) else cold).update(range(off, off + w))
    return len(hot), len(cold - hot)


def frames(raw):
    """The SASS of libtorch_cuda's sm_90 flash_fwd kernels: stack,regs,hot,cold,mangled name."""
    import torch

    lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so")
    res = subprocess.run(["cuobjdump", "-res-usage", "-arch", "sm_90", lib],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    usage = {}
    for i, line in enumerate(res[:-1]):
        m = re.match(r"\s*Function (\S+):", line)
        if m and "flash_fwd" in m.group(1):
            st, rg = re.search(r"STACK:(\d+)", res[i + 1]), re.search(r"REG:(\d+)", res[i + 1])
            usage[m.group(1)] = (int(st.group(1)) if st else -1, int(rg.group(1)) if rg else -1)
    sass = subprocess.Popen(["cuobjdump", "-sass", "-arch", "sm_90", lib],
                            stdout=subprocess.PIPE, text=True)
    with open(raw, "w") as out:
        def finish(fn, lines):
            if fn and "flash_fwd" in fn:
                hot, cold = frame_parts(lines)
                st, rg = usage.get(fn, (-1, -1))
                out.write(f"{st},{rg},{hot},{cold},{fn}\n")
                out.flush()

        fn, lines = None, []
        for line in sass.stdout:
            if "Function : " in line:
                finish(fn, lines)
                fn, lines = line.split()[-1], []
            elif fn and "flash_fwd" in fn:
                lines.append(line)
        finish(fn, lines)
    if sass.wait():
        sys.exit(f"cuobjdump -sass failed ({sass.returncode})")


# The tiles flash_fwd_kernel runs with on Hopper, by head dim (gpu/sdpa_plan.c fwd_tiles()).
TILES = {32: (128, 128), 64: (128, 128), 96: (128, 64), 128: (128, 64), 192: (128, 64),
         256: (64, 64)}


def frames_report(raw):
    """frames.csv: the modelled flash_fwd_kernel instances, fp16 (bf16's frames are the same)."""
    rows = [line.rstrip("\n").split(",", 4) for line in open(raw)]
    names = subprocess.run(["c++filt"], input="\n".join(r[4] for r in rows), check=True,
                           capture_output=True, text=True).stdout.splitlines()
    traits = re.compile(r"flash_fwd_kernel<(?:pytorch_flash::)?Flash_fwd_kernel_traits<(\d+), "
                        r"(\d+), (\d+), \d+, false, false, cutlass::half_t,.*?> >, "
                        r"([a-z, ]+)>")
    out = []
    for (stack, _regs, hot, cold, _), name in zip(rows, names):
        m = traits.search(name)
        if not m:
            continue
        d, bm, bn, flags = m.groups()
        (dropout, causal, local, alibi, even_mn, even_k, softcap,
         softmax) = (f.strip() == "true" for f in flags.split(","))
        if dropout or local or alibi or softcap or softmax or not even_k or \
                TILES.get(int(d)) != (int(bm), int(bn)):
            continue
        out.append((int(d), -int(bm), int(causal), int(even_mn), stack, hot, cold, bm, bn))
    print("kernel,d,block_m,block_n,dtype,causal,even_mn,stack,hot,cold")
    for d, _, causal, even, stack, hot, cold, bm, bn in sorted(set(out), reverse=True):
        print(f"flash_fwd_kernel,{d},{bm},{bn},half_t,{causal},{even},{stack},{hot},{cold}")


def measure(out):
    run_ncu(out, ["--cache-control", "all", "--kernel-name",
                  "regex:flash|FillFunctor|fill_kernel", "--metrics", METRICS],
            ["shapes", os.path.join(out, "shapes.json")])


def num(text):
    return float(str(text).replace(",", ""))


def measured(out):
    """Per shape: ncu's DRAM bytes read and written over its flash kernels, and their names."""
    meta = json.load(open(os.path.join(out, "shapes.json")))
    per, i = [[] for _ in meta["shapes"]], -1
    for r in ncu_kernels(out):
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
    """The measured rows in tests/data/gpu/sdpa.csv's columns and the local (spilled register)
    stores' bytes (test-sdpa reads them)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["batch", "heads", "kv_heads", "N", "N_kv", "d", "causal", "dtype",
                    "kernels", "dram_read_bytes", "dram_write_bytes", "time_ns", "grid",
                    "block", "local_store_bytes", "waves"])
        for s in rows:
            w.writerow([s["batch"], s["heads"], s["kv_heads"], s["N"], s["N_kv"], s["d"],
                        s["causal"], s["dtype"], s["kernels"].replace("pytorch_flash::", ""),
                        int(s["read"]), int(s["write"]), int(s["time_ns"]), s["grid"],
                        s["block"], int(32 * s["local_st"]), ""])


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
    sub.add_parser("l2-steps").add_argument("path")
    sub.add_parser("measure-l2").add_argument("out")
    sub.add_parser("report-l2").add_argument("out")
    sub.add_parser("frames").add_argument("raw")
    sub.add_parser("frames-report").add_argument("raw")
    r = sub.add_parser("report")
    r.add_argument("out")
    r.add_argument("--memsim", default="build/memsim")
    r.add_argument("--gpu", default="h200")
    r.add_argument("--csv", help="also write the measured rows in tests/data/gpu/sdpa.csv's "
                                 "columns to this file")
    a = ap.parse_args()
    if a.cmd == "report":
        report(a.out, a.memsim, a.gpu, a.csv)
        return
    run = {"shapes": shapes_run, "measure": measure, "l2-steps": l2_steps,
           "measure-l2": measure_l2, "report-l2": report_l2, "frames": frames,
           "frames-report": frames_report}[a.cmd]
    run(*(v for k, v in vars(a).items() if k != "cmd"))


if __name__ == "__main__":
    main()
