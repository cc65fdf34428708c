#!/usr/bin/env python3
"""PyTorch's own SDPA (the flash backend) on a grid of shapes, for Nsight Compute to count.

Run under ncu by measure.sh on a machine with an NVIDIA GPU and PyTorch. For each shape it
makes fresh random inputs, launches a one-element fill whose value is the shape's index (a
marker: measure.sh's parser splits the kernel list at these), then one
F.scaled_dot_product_attention call with only the flash backend allowed (enable_gqa where
kv_heads < heads). It writes the shapes, in order, to shapes.json. A shape the flash backend
refuses is recorded with its error, and its marker is still launched.
"""

import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def grid():
    out = []
    # Prefill: 16 query heads, causal or not, MHA or GQA 4:1, batch 1 or 8, d 64 or 128.
    for N in (1024, 4096, 16384):
        for batch in (1, 8):
            for d in (64, 128):
                for causal in (False, True):
                    for kvh in (16, 4):
                        out.append(dict(batch=batch, heads=16, kv_heads=kvh, N=N, N_kv=N, d=d,
                                        causal=causal, dtype="fp16"))
    for d in (64, 128):
        for causal in (False, True):
            for kvh in (16, 4):
                out.append(dict(batch=1, heads=16, kv_heads=kvh, N=32768, N_kv=32768, d=d,
                                causal=causal, dtype="fp16"))
    for batch in (1, 8):
        for causal in (False, True):
            out.append(dict(batch=batch, heads=16, kv_heads=16, N=4096, N_kv=4096, d=128,
                            causal=causal, dtype="bf16"))
    # Decode: one new query over a KV cache, 32 heads, MHA or GQA 4:1.
    for N_kv in (8192, 32768, 131072):
        for batch in (1, 8):
            for kvh in (32, 8):
                out.append(dict(batch=batch, heads=32, kv_heads=kvh, N=1, N_kv=N_kv, d=128,
                                causal=False, dtype="fp16"))
    return out


def main():
    shapes = grid()
    dev = torch.device("cuda")
    marker = torch.empty(1, device=dev, dtype=torch.float32)
    props = torch.cuda.get_device_properties(dev)
    meta = {"device": props.name, "sms": props.multi_processor_count,
            "l2_bytes": getattr(props, "L2_cache_size", None), "torch": torch.__version__,
            "cuda": torch.version.cuda, "shapes": shapes}
    gen = torch.Generator(device=dev)
    for i, s in enumerate(shapes):
        gen.manual_seed(1000 + i)
        dt = torch.float16 if s["dtype"] == "fp16" else torch.bfloat16
        q = torch.randn(s["batch"], s["heads"], s["N"], s["d"], device=dev, dtype=dt,
                        generator=gen)
        k = torch.randn(s["batch"], s["kv_heads"], s["N_kv"], s["d"], device=dev, dtype=dt,
                        generator=gen)
        v = torch.randn_like(k)
        torch.cuda.synchronize()
        marker.fill_(float(i))
        try:
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                o = F.scaled_dot_product_attention(q, k, v, is_causal=s["causal"],
                                                   enable_gqa=s["kv_heads"] < s["heads"])
            torch.cuda.synchronize()
            s["ok"] = bool(torch.isfinite(o).all().item())
        except RuntimeError as e:
            s["ok"] = False
            s["error"] = str(e).splitlines()[0][:200]
        del q, k, v
        print(i, s, flush=True)
    with open(sys.argv[1] if len(sys.argv) > 1 else "shapes.json", "w") as f:
        json.dump(meta, f, indent=1)


if __name__ == "__main__":
    main()
