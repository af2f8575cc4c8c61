#!/usr/bin/env python3
"""Compares one's own kernel timings (bench/device/h200_kernels.py) with the calibration table of
the same GPU in ../shared/calibration and with the cost model's price (tools/predict_kernels).

  scripts/device_check_report.py MEASURED.csv [--gpu h200] [--table-dir ../shared/calibration/h200_sxm]
      [--predict build/tools/predict_kernels]

Prints markdown: for each kind of kernel and range of m, the median ratio of the measured time to
the table's time of the same shape (where the table has it) and to the model's price, and the
spread (10th-90th percentile) of each ratio. A ratio below 1 means the kernel measured here is
faster than the table or the model.
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    i = q * (len(xs) - 1)
    lo = int(i)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (i - lo)


def band(m):
    for hi, name in ((16, "m 1-16"), (128, "m 17-128"), (512, "m 129-512"), (2048, "m 513-2048")):
        if m <= hi:
            return name
    return "m > 2048"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("measured")
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--table-dir", default=None)
    ap.add_argument("--predict", default="build/tools/predict_kernels")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    table_dir = a.table_dir or os.path.join(here, "..", "..", "shared", "calibration", f"{a.gpu}_sxm")

    with tempfile.TemporaryDirectory() as tmp:
        pred = os.path.join(tmp, "pred.csv")
        r = subprocess.run([a.predict, "--gpu", a.gpu, "--in", a.measured, "--out", pred])
        if r.returncode != 0:
            sys.exit(f"device_check_report: {a.predict} failed")
        rows = list(csv.DictReader(open(pred)))

    gemm = {}
    for t in csv.DictReader(open(os.path.join(table_dir, "gemm.csv"))):
        dt = {"bfloat16": "bf16", "fp8": "fp8"}.get(t["dtype"])
        if dt:
            gemm[(dt, int(t["m"]), int(t["n"]), int(t["k"]))] = float(t["latency_us"])
    attn = {}
    for t in csv.DictReader(open(os.path.join(table_dir, "context_attention.csv"))):
        if t["attn_dtype"] == "bfloat16" and t["kv_cache_dtype"] == "bfloat16" and t["window_size"] == "0":
            attn[(int(t["batch"]), int(t["seq_len"]), int(t["num_heads"]), int(t["num_kv_heads"]),
                  int(t["head_dim"]))] = float(t["latency_us"])

    groups = {}
    for r in rows:
        meas, model = float(r["latency_us"]), float(r["l2s_us"])
        m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
        table = None
        if r["kind"] == "gemm":
            table = gemm.get((r["dtype"], m, n, k))
            key = (f"gemm {r['dtype']}", "table sample" if r["note"] == "table sample" else
                   f"Llama-70B shapes, L2 {r['l2']}", band(m))
        elif r["kind"] == "attn_prefill":
            kv = int(r["note"].split("kv_heads=")[1].split()[0])
            table = attn.get((m, k, n, kv, 128))
            key = ("prefill attention bf16", f"{n} heads / {kv} kv", "")
        else:
            key = ("HBM copy", "", "")
            print(f"HBM copy: {2 * k / meas / 1e6:.2f} TB/s measured (bytes read + written), "
                  f"model {2 * k / model / 1e6:.2f} TB/s\n")
        g = groups.setdefault(key, {"table": [], "model": []})
        g["model"].append(meas / model)
        if table:
            g["table"].append(meas / table)

    print("| kernel | shapes | m | n | measured / table (p10-p90) | measured / model (p10-p90) |")
    print("|---|---|---|---:|---:|---:|")
    for key in sorted(groups, key=lambda k: (k[0], k[1], {"m 1-16": 0, "m 17-128": 1, "m 129-512": 2,
                                                          "m 513-2048": 3}.get(k[2], 4))):
        g = groups[key]
        if key[0] == "HBM copy":
            continue
        t = g["table"]
        ts = (f"{statistics.median(t):.2f} ({pct(t, .1):.2f}-{pct(t, .9):.2f}) [{len(t)}]"
              if t else "-")
        mm = g["model"]
        print(f"| {key[0]} | {key[1]} | {key[2]} | {len(mm)} | {ts} | "
              f"{statistics.median(mm):.2f} ({pct(mm, .1):.2f}-{pct(mm, .9):.2f}) |")


if __name__ == "__main__":
    main()
