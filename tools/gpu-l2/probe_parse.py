#!/usr/bin/env python3
"""Joins probe.sh's run.log and ncu.csv into one CSV row per case (on stdout):

    python3 tools/gpu-l2/probe_parse.py OUT_DIR > probe.csv

run.log holds memsim-gpu's line per case ("l2probe kind=... pid=P device=..."); ncu.csv (or
ncu.csv.gz) one row per profiled kernel. Each memsim-gpu process launches one probe kernel,
so the two meet on the process id. A kernel without a case line (its process failed after
the launch) is left out and counted on stderr; a case without a kernel is an error.
Columns (MiB are 2^20 bytes; a parameter not of the case's kind reads 0):
  kind, tile_kib, region_kib, local, steps, total_mib, stream_mib, buffer_mib, lag, cross,
  blocks: the case (steps: each block's loop count; cross 1: partners on opposite halves)
  reuse_mib            crossread: distinct MiB read between a chunk's two reads
  compulsory_read_mib  distinct bytes read: every one from DRAM at least once
  compulsory_write_mib distinct bytes written: at most this need reach DRAM (the L2 may keep
                       it dirty past the kernel's end)
  rewritten_mib        rewrite: bytes stored to the regions over all steps
  reread_mib           crossread: bytes read a second time
  dram_read_mib, dram_write_mib, l2_read_mib, l2_write_mib, time_us: ncu's
                       dram__bytes_{read,write}, lts__t_sectors_srcunit_tex_op_{read,write}
                       x 32 (the barrier's polls and atomics included), gpu__time_duration
  extra_read_mib       dram_read - compulsory read (re-reads that missed, and background)
  extra_write_mib      dram_write - compulsory write (negative: dirty data kept in the L2)
  write_over_rewritten dram_write / rewritten (rewrite: the share of region stores that went
                       to DRAM); write_over_compulsory: dram_write / compulsory write
  out_tile_kib         rewrite: fresh output a block writes each step (in compulsory_write)
"""

import csv
import gzip
import os
import sys

MIB = 1 << 20
SECTOR = 32
CASE_KEYS = ["kind", "sms", "blocks", "tile", "region", "local", "steps", "total", "stream",
             "buffer", "lag", "cross", "read_bytes", "write_bytes", "rewritten", "reread",
             "reuse_distance", "pid"]
METRICS = ["dram__bytes_read.sum", "dram__bytes_write.sum",
           "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
           "gpu__time_duration.sum", "launch__grid_size"]
FIELDS = ["kind", "tile_kib", "region_kib", "local", "steps", "total_mib", "stream_mib",
          "buffer_mib", "lag", "cross", "blocks", "reuse_mib", "compulsory_read_mib",
          "compulsory_write_mib", "rewritten_mib", "reread_mib", "dram_read_mib",
          "dram_write_mib", "l2_read_mib", "l2_write_mib", "time_us", "extra_read_mib",
          "extra_write_mib", "write_over_rewritten", "write_over_compulsory", "out_tile_kib"]


def fail(msg):
    sys.exit(f"probe_parse.py: {msg}")


def cases(d):
    """memsim-gpu's lines, by process id."""
    out = {}
    path = os.path.join(d, "run.log")
    if not os.path.exists(path):
        fail(f"{path}: no such file")
    for n, line in enumerate(open(path), 1):
        if not line.startswith("l2probe kind="):
            continue
        head, _, device = line.rstrip("\n").partition(" device=")
        kv = dict(f.split("=", 1) for f in head.split()[1:])
        if any(k not in kv for k in CASE_KEYS):
            fail(f"{path}:{n}: a case line without {[k for k in CASE_KEYS if k not in kv]}")
        kv.setdefault("out_tile", "0")  # lines written before --out-tile
        kv["device"] = device
        out[kv["pid"]] = kv
    return out


def num(text, where):
    """ncu's numbers, with thousands separators."""
    try:
        return float(text.replace(",", ""))
    except ValueError:
        fail(f"{where}: '{text}' is not a number")


def kernels(d):
    """ncu's rows of probe kernels, in launch order; a header line may repeat."""
    path = os.path.join(d, "ncu.csv")
    if os.path.exists(path):
        f = open(path)
    elif os.path.exists(path + ".gz"):
        f = gzip.open(path + ".gz", "rt")
    else:
        fail(f"{path}: no such file")
    header = None
    for row in csv.reader(line for line in f if not line.startswith("==")):
        if row and row[0] == "ID":
            header = row
            missing = [m for m in METRICS + ["Process ID", "Kernel Name"] if m not in row]
            if missing:
                fail(f"{path}: no column {', '.join(missing)}")
            continue
        if header is None or len(row) != len(header):
            continue
        r = dict(zip(header, row))
        # ncu names a template instance with its return type: "void probe_rewrite_local<4>(..."
        r["Kernel Name"] = r["Kernel Name"].removeprefix("void ")
        if not r["Kernel Name"].startswith("probe_"):
            continue  # the units row, or another kernel
        yield r


def row(c, k):
    b = {m: num(k[m], f"kernel {k['ID']} {m}") for m in METRICS}
    kind = c["kind"]
    name = k["Kernel Name"].removeprefix("probe_").split("(")[0].split("<")[0]
    if name != kind + ("_local" if c["local"] == "1" else ""):
        fail(f"process {c['pid']}: case {kind}{' --local' if c['local'] == '1' else ''} "
             f"but kernel {k['Kernel Name']}")
    if int(b["launch__grid_size"]) != int(c["blocks"]):
        fail(f"process {c['pid']}: {c['blocks']} blocks but a grid of {b['launch__grid_size']}")
    i = {x: int(c[x]) for x in CASE_KEYS + ["out_tile"] if x not in ("kind", "pid")}
    mib = lambda v: f"{v / MIB:.3f}"
    ratio = lambda a, z: f"{a / z:.4f}" if z else ""
    wr, ww = b["dram__bytes_read.sum"], b["dram__bytes_write.sum"]
    return [kind, i["tile"] >> 10, f"{i['region'] / 1024:g}", i["local"], i["steps"],
            mib(i["total"]), mib(i["stream"]), mib(i["buffer"]), i["lag"], i["cross"], i["blocks"],
            mib(i["reuse_distance"]), mib(i["read_bytes"]), mib(i["write_bytes"]),
            mib(i["rewritten"]), mib(i["reread"]), mib(wr), mib(ww),
            mib(b["lts__t_sectors_srcunit_tex_op_read.sum"] * SECTOR),
            mib(b["lts__t_sectors_srcunit_tex_op_write.sum"] * SECTOR),
            f"{b['gpu__time_duration.sum'] / 1e3:.1f}", mib(wr - i["read_bytes"]),
            mib(ww - i["write_bytes"]), ratio(ww, i["rewritten"]), ratio(ww, i["write_bytes"]),
            f"{i['out_tile'] / 1024:g}"]


def main():
    if len(sys.argv) != 2:
        fail("usage: probe_parse.py DIR (probe.sh's $OUT: run.log and ncu.csv)")
    d = sys.argv[1]
    cs = cases(d)
    if not cs:
        fail(f"{d}/run.log: no case lines (l2probe kind=...)")
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(FIELDS)
    seen, orphans = set(), 0
    for k in kernels(d):
        c = cs.get(k["Process ID"])
        if c is None:
            orphans += 1
            continue
        if k["Process ID"] in seen:
            fail(f"process {k['Process ID']}: more than one probe kernel")
        seen.add(k["Process ID"])
        w.writerow(row(c, k))
    missing = [p for p in cs if p not in seen]
    if missing:
        fail(f"{len(missing)} cases without a kernel in ncu.csv (processes {', '.join(missing)})")
    if orphans:
        print(f"probe_parse.py: {orphans} kernels of failed cases left out", file=sys.stderr)


if __name__ == "__main__":
    main()
