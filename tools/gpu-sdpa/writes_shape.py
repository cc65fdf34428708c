#!/usr/bin/env python3
"""One PyTorch SDPA call (flash backend) on a shape given on the command line, for writes.sh's
Nsight Compute run: python3 writes_shape.py BATCH HEADS KV_HEADS N D CAUSAL(0|1) [fp16|bf16]
[N_KV] (keys and values of N_KV rows, N by default). SDPA_LAYOUT=hb in the environment stores
q, k and v head-major (the batches of a head next to each other), the same [b, h, N, d] tensors
as strided views. SDPA_PAD_MIB=M allocates M MiB first and keeps it, so that q, k and v lie
elsewhere in memory (placement.sh)."""

import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def main():
    b, h, hk, n, d, causal = (int(x) for x in sys.argv[1:7])
    dt = torch.bfloat16 if len(sys.argv) > 7 and sys.argv[7] == "bf16" else torch.float16
    n_kv = int(sys.argv[8]) if len(sys.argv) > 8 else n
    pad_mib = int(os.environ.get("SDPA_PAD_MIB", "0"))
    pad = torch.empty(pad_mib << 20, dtype=torch.uint8, device="cuda") if pad_mib else None
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1)
    if os.environ.get("SDPA_LAYOUT") == "hb":
        # the same [b, h, N, d] tensors stored head-major: batch b of head h at (h x batch + b)
        q = torch.randn(h, b, n, d, device="cuda", dtype=dt, generator=gen).transpose(0, 1)
        k = torch.randn(hk, b, n_kv, d, device="cuda", dtype=dt, generator=gen).transpose(0, 1)
        v = torch.randn(hk, b, n_kv, d, device="cuda", dtype=dt, generator=gen).transpose(0, 1)
    else:
        q = torch.randn(b, h, n, d, device="cuda", dtype=dt, generator=gen)
        k = torch.randn(b, hk, n_kv, d, device="cuda", dtype=dt, generator=gen)
        v = torch.randn_like(k)
    torch.cuda.synchronize()
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal),
                                           enable_gqa=hk < h)
    torch.cuda.synchronize()
    print("shape", b, h, hk, n, n_kv, d, causal, "O bytes", o.numel() * o.element_size(),
          "finite", bool(torch.isfinite(o).all().item()), "q strides", tuple(q.stride()),
          "pad MiB", pad_mib if pad is not None else 0, "q at", hex(q.data_ptr()))


if __name__ == "__main__":
    main()
