#!/usr/bin/env python3
"""Fourth device check (bench/device/README.md): the HBM rate of elementwise traffic, the figure
the simulator's ElementwiseSeconds prices. For buffers of 256 MiB, 1 GiB and 4 GiB (fp32) it times,
each eagerly (CUDA events around 10 calls after 3 warm-ups, median of 5) and in a CUDA graph:
  copy   b.copy_(a)              bytes = read + written
  add    torch.add(a, 1, out=b)  bytes = read + written
  sum    torch.sum(a, 0, out=s)  bytes = read
Writes CSV to argv[1]: op, mode, bytes_moved, seconds, tb_per_s.
"""
import csv
import statistics
import sys

import torch

dev = torch.device("cuda")
rows = []


sys.path.insert(0, __file__.rsplit("/", 1)[0])
from h200_kernels import time_graph  # noqa: E402  (graph-replayed median of one call)


def timed(fn, graph):
    """Seconds of one call of fn: in a CUDA graph (h200_kernels.time_graph) or issued eagerly,
    10 calls between CUDA events, median of 5."""
    if graph:
        return time_graph(lambda i: fn(), 10, replays=5)
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(5):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(10):
            fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e-3 / 10)
    return statistics.median(ts)


for mib in (256, 1024, 4096):
    n = mib * 2**20 // 4
    a = torch.randn(n, device=dev)
    b = torch.empty_like(a)
    s = torch.empty((), device=dev)
    nbytes = n * 4
    for op, fn, moved in (("copy", lambda: b.copy_(a), 2 * nbytes),
                          ("add", lambda: torch.add(a, 1.0, out=b), 2 * nbytes),
                          ("sum", lambda: torch.sum(a, 0, out=s), nbytes)):
        for graph in (False, True):
            t = timed(fn, graph)
            rows.append({"op": op, "mode": "graph" if graph else "eager", "bytes_moved": moved,
                         "seconds": f"{t:.6e}", "tb_per_s": round(moved / t / 1e12, 3)})
            print(rows[-1], flush=True)
    del a, b
    torch.cuda.empty_cache()
with open(sys.argv[1], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
