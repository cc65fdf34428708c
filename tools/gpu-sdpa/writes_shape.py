#!/usr/bin/env python3
"""One PyTorch SDPA call (flash backend) on a shape given on the command line, for writes.sh's
Nsight Compute run: python3 writes_shape.py BATCH HEADS KV_HEADS N D CAUSAL(0|1) [fp16|bf16]
[N_KV] (keys and values of N_KV rows, N by default)."""

import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def main():
    b, h, hk, n, d, causal = (int(x) for x in sys.argv[1:7])
    dt = torch.bfloat16 if len(sys.argv) > 7 and sys.argv[7] == "bf16" else torch.float16
    n_kv = int(sys.argv[8]) if len(sys.argv) > 8 else n
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1)
    q = torch.randn(b, h, n, d, device="cuda", dtype=dt, generator=gen)
    k = torch.randn(b, hk, n_kv, d, device="cuda", dtype=dt, generator=gen)
    v = torch.randn_like(k)
    torch.cuda.synchronize()
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal),
                                           enable_gqa=hk < h)
    torch.cuda.synchronize()
    print("shape", b, h, hk, n, n_kv, d, causal, "O bytes", o.numel() * o.element_size(),
          "finite", bool(torch.isfinite(o).all().item()))


if __name__ == "__main__":
    main()
