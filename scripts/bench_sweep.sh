#!/usr/bin/env bash
# Times a 200-scenario `l2s sweep` with --jobs 1 and --jobs 2 (and mpirun -np 2 when available),
# and checks that the three runs write identical results.csv/json/svg.
# Usage: scripts/bench_sweep.sh [path/to/l2s]   (default build/src/cli/l2s)
# Issue 46's target: the 2-job wall time <= 0.6 x the 1-job wall time.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
l2s="$(realpath "${1:-$here/build/src/cli/l2s}")"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cd "$dir"
# 2 models x 2 GPUs x 5 counts x 2 workloads x 5 SLOs = 200 scenarios.
cat > grid.yaml <<'YAML'
models: [llama-3.1-8b, llama-3.1-70b]
gpus: [h100, h200]
counts: [1, 2, 4, 8, 16]
workloads:
  - {mode: serve, input: 2048, output: 256}
  - {mode: decode, context: 8192}
slos: [none, {tpot_ms: 20}, {tpot_ms: 40}, {tpot_ms: 80}, "ttft_ms=2000,tpot_ms=50"]
plan: {budget: 200, seed: 0}
YAML
t() { local s e; s=$(date +%s.%N); "$@"; e=$(date +%s.%N); echo "$e - $s" | bc; }
t1=$(t "$l2s" sweep grid.yaml --out j1 --jobs 1 --quiet)
t2=$(t "$l2s" sweep grid.yaml --out j2 --jobs 2 --quiet)
echo "scenarios: $(($(wc -l < j1/results.csv) - 1))"
echo "jobs 1: ${t1} s"
echo "jobs 2: ${t2} s  (ratio $(echo "scale=3; $t2 / $t1" | bc))"
for f in results.csv results.json results.svg; do cmp j1/$f j2/$f; done
echo "jobs 1 vs 2: identical results.csv/json/svg"
if command -v mpirun >/dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  t3=$(t mpirun --oversubscribe -np 2 "$l2s" sweep grid.yaml --out mpi --jobs 1 --quiet)
  echo "mpirun -np 2 (--jobs 1 each): ${t3} s  (ratio $(echo "scale=3; $t3 / $t1" | bc))"
  for f in results.csv results.json results.svg; do cmp j1/$f mpi/$f; done
  echo "jobs 1 vs mpirun -np 2: identical results.csv/json/svg"
fi
