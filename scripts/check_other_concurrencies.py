#!/usr/bin/env python3
"""The held-out rows of measurements-frontier.csv are of the same kinds at other settings, other
concurrencies among them (issue 45). This check predicts every row that states a concurrency at
FACTORS times it (default 1/4, 1/2, 1, 2, 4) and reports (a) the rows `l2s validate` misses and
(b) each run's metric that is not monotone in the concurrency: output tokens/s, TTFT and TPOT
may only grow with the clients (a drop of more than 3% between neighbours is reported). Exits 1
on a miss or a non-monotone run. About 3 minutes of one core.

Usage: scripts/check_other_concurrencies.py [path/to/l2s] [--factors 0.25,0.5,1,2,4]
(docs/dev/VALIDATION.md, "Rows of the same kinds at other settings")."""
import collections
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(HERE, "..", "shared")
FRONTIER = os.path.join(SHARED, "reference", "measurements-frontier.csv")
MONOTONE = {"output_tokens_per_s", "ttft_ms", "tpot_ms"}


def main(argv):
    l2s = os.path.join(HERE, "build", "src", "cli", "l2s")
    factors = [0.25, 0.5, 1.0, 2.0, 4.0]
    args = list(argv)
    if "--factors" in args:
        i = args.index("--factors")
        factors = [float(x) for x in args[i + 1].split(",")]
        del args[i:i + 2]
    if args:
        l2s = args[0]
    rows = list(csv.DictReader(open(FRONTIER, newline="")))
    scaled, origin = [], {}
    next_id = 100000
    for r in rows:
        if not r["concurrency"]:
            continue
        for f in factors:
            x = dict(r)
            x["id"] = str(next_id)
            x["concurrency"] = str(max(1, round(int(r["concurrency"]) * f)))
            origin[x["id"]] = (r["id"], f)
            scaled.append(x)
            next_id += 1
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "scaled.csv")
        with open(path, "w", newline="") as out:
            w = csv.DictWriter(out, fieldnames=rows[0].keys())
            w.writeheader()
            w.writerows(scaled)
        p = subprocess.run([l2s, "validate", "--measurements", path, "--models-dir",
                            os.path.join(SHARED, "models", "hf"), "--json"],
                           capture_output=True, text=True)
    if p.returncode not in (0, 1):
        print(p.stderr.strip())
        return 2
    result = json.loads(p.stdout)
    runs = collections.defaultdict(dict)
    misses = 0
    for x in result["rows"]:
        row, f = origin[x["id"]]
        if x["status"] != "ok":
            misses += 1
            print(f"miss: row {row} x{f:g} ({x['concurrency']} clients): {x['reason']}")
            continue
        runs[(row, x["metric"])][f] = (x["concurrency"], x["predicted"])
    bad = 0
    for (row, metric), by_f in sorted(runs.items(), key=lambda t: int(t[0][0])):
        if metric not in MONOTONE:
            continue
        fs = sorted(by_f)
        drops = [(a, b) for a, b in zip(fs, fs[1:]) if by_f[b][1] < 0.97 * by_f[a][1]]
        if drops:
            bad += 1
            series = " ".join(f"{by_f[f][0]}:{by_f[f][1]:.1f}" for f in fs)
            print(f"not monotone: row {row} {metric}: {series}")
    print(f"{len(scaled)} rows ({len(runs)} run metrics at {len(factors)} concurrencies): "
          f"{misses} missed, {bad} not monotone")
    return 1 if misses or bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
