#!/usr/bin/env python3
"""Second device check (bench/device/README.md): where the per-tensor FP8 GEMM rows of the
calibration table spend the time a bare cuBLASLt FP8 GEMM does not. For the Llama-3.1-70B shapes of
h200_kernels.py it times, L2 cold:
  bare      torch._scaled_mm on an FP8 activation already quantised (h200_kernels.py's figure)
  quant     a fused Triton kernel that quantises the bf16 activation per tensor (amax over the
            row block, scale, cast), then the same GEMM: one extra launch and m*k*3 bytes
  rowwise   per-token scales (torch._scaled_mm with an (m,1) and a (1,n) scale)
and the HBM bandwidth of a 4 GiB fp32 copy and of a read-only sum. Writes CSV to argv[1].
"""
import csv
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from h200_kernels import time_graph  # noqa: E402  (runs nothing else on import: see __main__ guard)

dev = torch.device("cuda")
FP8 = torch.float8_e4m3fn
L2 = 60 * 2**20
rows = []


@triton.jit
def _quant(x_ptr, y_ptr, s_ptr, k, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    amax = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, k, BLOCK):
        v = tl.load(x_ptr + row * k + start + offs, mask=start + offs < k, other=0.0).to(tl.float32)
        amax = tl.maximum(amax, tl.abs(v))
    scale = tl.maximum(tl.max(amax, 0), 1e-6) / 448.0
    for start in range(0, k, BLOCK):
        v = tl.load(x_ptr + row * k + start + offs, mask=start + offs < k, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * k + start + offs, (v / scale).to(tl.float8e4nv), mask=start + offs < k)
    tl.store(s_ptr + row, scale)


def run(m, n, k, path):
    copies = max(2, int(4 * L2 // (n * k)) + 1)
    ws = [torch.randn(n, k, device=dev, dtype=torch.bfloat16).to(FP8)]
    ws += [ws[0].clone() for _ in range(copies - 1)]
    xb = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    xq = xb.to(FP8)
    one = torch.ones((), device=dev, dtype=torch.float32)
    srow = torch.ones(m, 1, device=dev, dtype=torch.float32)
    scol = torch.ones(1, n, device=dev, dtype=torch.float32)
    yq = torch.empty_like(xq)
    s = torch.empty(m, device=dev, dtype=torch.float32)

    def bare(i):
        torch._scaled_mm(xq, ws[i % copies].t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

    def quant(i):
        _quant[(m,)](xb, yq, s, k, BLOCK=1024)
        torch._scaled_mm(yq, ws[i % copies].t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

    def rowwise(i):
        torch._scaled_mm(xq, ws[i % copies].t(), scale_a=srow, scale_b=scol, out_dtype=torch.bfloat16)

    fn = {"bare": bare, "quant": quant, "rowwise": rowwise}[path]
    return time_graph(fn, min(max(copies, 20), 256))


if __name__ == "__main__":
    H, I = 8192, 28672
    for tp in (1, 8):
        shapes = {"qkv": (10240 // tp, H), "o": (H, H // tp), "gate_up": (2 * I // tp, H),
                  "down": (H, I // tp)}
        for name, (n, k) in shapes.items():
            for m in (1, 16, 64, 256, 1024, 4096):
                for path in ("bare", "quant", "rowwise"):
                    try:
                        t = run(m, n, k, path)
                    except Exception as e:
                        print(f"skip {path} {m}x{n}x{k}: {str(e).splitlines()[0][:160]}", flush=True)
                        continue
                    rows.append({"kind": "gemm", "dtype": "fp8", "m": m, "n": n, "k": k, "l2": "cold",
                                 "note": f"llama70b tp{tp} {name} {path}",
                                 "latency_us": round(t * 1e6, 3)})
        torch.cuda.empty_cache()
    a = torch.empty(2**30, device=dev, dtype=torch.float32)
    b = torch.empty_like(a)
    t = time_graph(lambda i: b.copy_(a), 5)
    rows.append({"kind": "copy", "dtype": "f32", "m": 0, "n": 0, "k": 4 * 2**30, "l2": "cold",
                 "note": "fp32 copy", "latency_us": round(t * 1e6, 3)})
    acc = torch.empty((), device=dev, dtype=torch.float32)
    t = time_graph(lambda i: torch.sum(a, dim=0, out=acc), 5)
    rows.append({"kind": "read", "dtype": "f32", "m": 0, "n": 0, "k": 4 * 2**30, "l2": "cold",
                 "note": "fp32 sum (read only)", "latency_us": round(t * 1e6, 3)})
    with open(sys.argv[1], "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} rows")
