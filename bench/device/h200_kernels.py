#!/usr/bin/env python3
"""Times, on the GPU it runs on, the kernels the cost model prices most: dense GEMMs (bf16 and
per-tensor FP8 through cuBLASLt), a prefill FlashAttention and an HBM copy. Writes one CSV row per
timing to the file given as argv[1]. It needs PyTorch with CUDA and nothing from this repository.

Run on the device machine (bench/device/README.md); scripts/device_check_report.py compares the
CSV with ../shared/calibration/<gpu>/ and with the cost model's own prediction.

Timing: each op is captured `reps` times into one CUDA graph, the graph replayed after a warm-up,
and the time per op is the median over replays divided by reps. `l2` says whether the operands stay
in L2 between ops ("hot": the same operands every time, as a microbenchmark of one shape measures)
or not ("cold": a ring of weight copies larger than 4x the L2, as successive layers of a model
forward see them). Shapes: per-GPU GEMMs of Llama-3.1-70B at tensor parallel 1, 2, 4 and 8
(qkv, o, gate_up, down), and a random sample of the (m, n, k) rows of the calibration table, whose
list is passed as argv[2] (dtype,m,n,k per line; optional).
"""
import csv
import sys
import time

import torch

dev = torch.device("cuda")
props = torch.cuda.get_device_properties(dev)
L2_BYTES = getattr(props, "L2_cache_size", 60 * 2**20) or 60 * 2**20
rows = []
OUT = None
t_start = time.time()


def time_graph(fn, reps, replays=15):
    """Median seconds of one call of fn (fn launches one op), from a graph of `reps` calls."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn(0)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(reps):
            fn(i)
    g.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e-3 / reps)
    times.sort()
    del g
    return times[len(times) // 2]


FP8 = torch.float8_e4m3fn
ONE = torch.ones((), device=dev, dtype=torch.float32)


def gemm_time(dtype, m, n, k, l2):
    w_bytes = n * k * (1 if dtype == "fp8" else 2)
    copies = 1 if l2 == "hot" else max(2, int(4 * L2_BYTES // max(w_bytes, 1)) + 1)
    copies = min(copies, 4096)
    if dtype == "fp8":
        ws = [torch.randn(n, k, device=dev, dtype=torch.bfloat16).to(FP8) for _ in range(min(copies, 2))]
        while len(ws) < copies:
            ws.append(ws[len(ws) % 2].clone())
        x = torch.randn(m, k, device=dev, dtype=torch.bfloat16).to(FP8)
        reps = max(copies, 20)

        def fn(i):
            torch._scaled_mm(x, ws[i % copies].t(), scale_a=ONE, scale_b=ONE, out_dtype=torch.bfloat16)
    else:
        base = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        ws = [base] + [base.clone() for _ in range(copies - 1)]
        x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        reps = max(copies, 20)

        def fn(i):
            torch.matmul(x, ws[i % copies].t())
    t = time_graph(fn, min(reps, 256))
    del ws
    return t


def flush():
    if rows:
        with open(OUT, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)


def add(kind, dtype, m, n, k, l2, note, seconds):
    rows.append({"kind": kind, "dtype": dtype, "m": m, "n": n, "k": k, "l2": l2, "note": note,
                 "latency_us": round(seconds * 1e6, 3)})


def safe(label, f):
    try:
        return f()
    except Exception as e:  # one failing shape must not lose the rest of the run
        print(f"skip {label}: {type(e).__name__}: {str(e).splitlines()[0][:160]}", flush=True)
        return None



def main():
    global OUT
    OUT = sys.argv[1]
    TABLE_ROWS = sys.argv[2] if len(sys.argv) > 2 else None
    # 1. HBM copy: device-to-device copy of 4 GiB, bytes read + written.
    src = torch.empty(2**31, device=dev, dtype=torch.uint8)
    dst = torch.empty_like(src)
    t = time_graph(lambda i: dst.copy_(src), 5)
    add("copy", "u8", 0, 0, 2**31, "cold", "bytes read+written = 2*k", t)
    del src, dst
    torch.cuda.empty_cache()

    # 2. Llama-3.1-70B GEMMs per GPU at tp 1, 2, 4, 8.
    H, I, HEADS, KV, HD = 8192, 28672, 64, 8, 128
    MS = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
    for tp in (1, 2, 4, 8):
        shapes = {"qkv": ((HEADS + 2 * KV) * HD // tp, H), "o": (H, H // tp),
                  "gate_up": (2 * I // tp, H), "down": (H, I // tp)}
        for name, (n, k) in shapes.items():
            for dtype in ("fp8", "bf16"):
                for m in MS:
                    for l2 in ("cold", "hot"):
                        t = safe(f"{dtype} {m}x{n}x{k}",
                                 lambda: gemm_time(dtype, m, n, k, l2))
                        if t is not None:
                            add("gemm", dtype, m, n, k, l2, f"llama70b tp{tp} {name}", t)
        torch.cuda.empty_cache()
        flush()
        print(f"tp{tp} done at {time.time() - t_start:.0f} s", flush=True)

    # 3. A sample of the calibration table's own rows (hot L2, as one shape is measured there).
    if TABLE_ROWS:
        with open(TABLE_ROWS) as f:
            sample = [l.strip().split(",") for l in f if l.strip()]
        for dtype, m, n, k in sample:
            m, n, k = int(m), int(n), int(k)
            t = safe(f"table {dtype} {m}x{n}x{k}", lambda: gemm_time(dtype, m, n, k, "hot"))
            if t is not None:
                add("gemm", dtype, m, n, k, "hot", "table sample", t)
            if time.time() - t_start > 300:
                print("table sample cut at 300 s", flush=True)
                break
        torch.cuda.empty_cache()

    # 4. Prefill attention (causal FlashAttention through SDPA), Llama-70B heads at tp 1 and 8.
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    for heads, kv in ((64, 8), (8, 1)):
        for seq in (512, 1024, 2048, 4096, 8192, 16384):
            for batch in (1, 4):
                def attn():
                    q = torch.randn(batch, heads, seq, HD, device=dev, dtype=torch.bfloat16)
                    kk = torch.randn(batch, kv, seq, HD, device=dev, dtype=torch.bfloat16)
                    vv = torch.randn_like(kk)
                    if kv != heads:  # one K/V head per query head, as SDPA's flash path takes them
                        kk = kk.repeat_interleave(heads // kv, dim=1)
                        vv = vv.repeat_interleave(heads // kv, dim=1)
                    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                        return time_graph(lambda i: F.scaled_dot_product_attention(
                            q, kk, vv, is_causal=True), 10)
                t = safe(f"attn {batch}x{seq}", attn)
                if t is not None:
                    rows.append({"kind": "attn_prefill", "dtype": "bf16", "m": batch, "n": heads,
                                 "k": seq, "l2": "cold", "note": f"kv_heads={kv} head_dim={HD} causal",
                                 "latency_us": round(t * 1e6, 3)})

    flush()
    print(f"{len(rows)} rows in {time.time() - t_start:.0f} s on {props.name}, "
          f"{props.multi_processor_count} SMs, L2 {L2_BYTES / 2**20:.0f} MiB, torch {torch.__version__}")


if __name__ == "__main__":
    main()
