#!/usr/bin/env python3
"""Third device check (bench/device/README.md): what a kernel costs when the CPU issues it (an eager
step) rather than a CUDA graph, the simulator's t_launch (docs/dev/COST_MODEL.md, "CUDA graphs").
For three op sequences it times N ops issued eagerly from PyTorch and the same N captured in one
graph; per op: eager = wall time / N (synchronised at the end only, so the GPU runs as far behind
as the CPU lets it), graph = replay time / N. Writes CSV to argv[1].
  tiny     x.add_(1.0) on a 1-element tensor (a kernel far shorter than its launch)
  norm     an RMSNorm of a 16 x 8192 bf16 activation in 5 PyTorch ops (pow, mean, rsqrt, mul, mul)
  gemm16   a 16 x 8192 x 8192 bf16 matmul (about 30 us of HBM traffic: longer than its launch)
"""
import csv
import sys
import time

import torch

dev = torch.device("cuda")
N = 2000
rows = []


def measure(name, ops_per_call, fn):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    best_eager = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(N):
            fn()
        torch.cuda.synchronize()
        best_eager = min(best_eager, time.perf_counter() - t0)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(N):
            fn()
    g.replay()
    torch.cuda.synchronize()
    best_graph = float("inf")
    for _ in range(5):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        best_graph = min(best_graph, a.elapsed_time(b) * 1e-3)
    per = N * ops_per_call
    rows.append({"seq": name, "ops": per, "eager_us_per_op": round(best_eager / per * 1e6, 3),
                 "graph_us_per_op": round(best_graph / per * 1e6, 3)})
    print(rows[-1], flush=True)


x1 = torch.zeros(1, device=dev)
measure("tiny", 1, lambda: x1.add_(1.0))
h = torch.randn(16, 8192, device=dev, dtype=torch.bfloat16)
w = torch.ones(8192, device=dev, dtype=torch.bfloat16)


def norm():
    v = h.float().pow(2).mean(-1, keepdim=True)
    return (h * torch.rsqrt(v + 1e-6)).to(torch.bfloat16) * w


measure("norm", 8, norm)  # float, pow, mean, add, rsqrt, mul, to, mul: 8 kernels
W = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
measure("gemm16", 1, lambda: torch.matmul(h, W.t()))
import platform
print("cpu", platform.processor() or platform.machine(), torch.__version__)
with open(sys.argv[1], "w", newline="") as f:
    wr = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    wr.writeheader()
    wr.writerows(rows)
