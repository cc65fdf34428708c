#!/usr/bin/env python3
"""The spilled-register frames of PyTorch's FlashAttention forward kernels, from frames.sh's output:
python3 tools/gpu-sdpa/frames_parse.py docs/gpu-run/sdpa-frames > frames.csv

One row a kernel of tools/gpu-sdpa/frames-kernels.txt (the fp16 flash_fwd_kernel instantiations
the SDPA rows run; bf16's frames are the same, res.txt): its template arguments, the frame
cuobjdump reports (STACK, bytes a thread), and from its SASS (sass.tgz) the frame bytes stored
inside the main loop (a backward branch spanning more than 8 KiB of code: the K/V loop), "hot",
stored every K/V step, and those stored only outside it, "cold", stored once a block. An offset
is [R1+0x..], R1 the stack pointer; STL.64 and STL.128 store 8 and 16 bytes. Needs c++filt."""

import re
import subprocess
import sys
import tarfile

INSN = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);")
STL = re.compile(r"\bSTL(\.64|\.128)?\s+\[R1(?:\+0x([0-9a-f]+))?\]")
TRAITS = re.compile(r"traits<(\d+), (\d+), (\d+), (\d+), \w+, \w+, cutlass::(\w+), .*?> >, (.*)>\(")
LOOP_MIN = 0x2000


def stores(text):
    """(hot, cold) frame byte offsets a thread stores, in and outside the main loop."""
    insns = [(int(m.group(1), 16), m.group(2)) for m in map(INSN.match, text.splitlines()) if m]
    loops = []
    for addr, t in insns:
        m = re.search(r"\bBRA\b.*0x([0-9a-f]+)\s*$", t)
        if m and int(m.group(1), 16) < addr and addr - int(m.group(1), 16) > LOOP_MIN:
            loops.append((int(m.group(1), 16), addr))
    hot, cold = set(), set()
    for addr, t in insns:
        m = STL.search(t)
        if not m:
            continue
        width = {".64": 8, ".128": 16}.get(m.group(1), 4)
        off = int(m.group(2) or "0", 16)
        inside = any(a <= addr <= b for a, b in loops)
        (hot if inside else cold).update(range(off, off + width))
    return hot, cold - hot


def main():
    d = sys.argv[1]
    names = [l.strip() for l in open(sys.argv[2] if len(sys.argv) > 2 else
                                     "tools/gpu-sdpa/frames-kernels.txt") if l.strip()]
    stack = {}
    res = open(f"{d}/res.txt").read().splitlines()
    for i, l in enumerate(res[:-1]):
        m = re.match(r"\s*Function (\S+):", l)
        s = re.search(r"STACK:(\d+)", res[i + 1])
        if m and s:
            stack[m.group(1)] = int(s.group(1))
    dem = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                         check=True).stdout.splitlines()
    print("kernel,d,block_m,block_n,dtype,causal,even_mn,stack,hot,cold")
    with tarfile.open(f"{d}/sass.tgz") as tar:
        for i, (name, pretty) in enumerate(zip(names, dem), 1):
            text = tar.extractfile(f"sass/kernel-{i}.sass").read().decode()
            assert name in text.splitlines()[0], f"kernel-{i}.sass is not {name}"
            m = TRAITS.search(pretty)
            flags = [f == "true" for f in m.group(6).split(", ")]
            # flash_fwd_kernel<Traits, Is_dropout, Is_causal, Is_local, Has_alibi, Is_even_MN, ...>
            hot, cold = stores(text)
            print(f"flash_fwd_kernel,{m.group(1)},{m.group(2)},{m.group(3)},{m.group(5)},"
                  f"{int(flags[1])},{int(flags[4])},{stack[name]},{len(hot)},{len(cold)}")


if __name__ == "__main__":
    main()
