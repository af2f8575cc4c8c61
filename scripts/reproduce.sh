#!/usr/bin/env bash
# Reproduces the paper's evaluation (and our extensions) with one command and writes the results
# page docs/dev/RESULTS.md plus the figures it embeds (docs/dev/results/*.svg).
#
# Usage: scripts/reproduce.sh [--quick] [--build-dir DIR] [--skip-build]
#   --quick       3 seeds instead of 10 and a subset of the scenarios (the page lists what it
#                 leaves out); about a third of the full run's time.
#   --build-dir   Release build directory (default: <repo>/build-reproduce). It is configured
#                 with -DL2S_BUILD_TESTS=OFF -DL2S_BUILD_BENCH=ON through scripts/setup.sh.
#   --skip-build  use the binaries already in the build directory.
#
# What it does:
#   1. builds Release with the benchmarks (scripts/setup.sh; if the whole tree does not build,
#      falls back to the l2s and benchmark targets one by one);
#   2. runs the scenario suite with `l2s compare --json --out-dir` (paper suite: gpt-moe-1.2t and
#      -1.6t decoding at 16k/32k/64k on 1,024 H100s plus 1.6t at 24,576 GPUs; beyond the paper:
#      real models in serve mode with TTFT/TPOT SLOs, and a GB200 NVL72 domain), and for the
#      beyond-paper problems the oracle's best plan (`l2s plan --search oracle --json`) and its
#      explanation (`l2s explain --json`);
#   3. runs bench/ (sim_bench, rl_bench, search_bench) with --benchmark_format=json;
#   4. scripts/make_results.py turns every JSON output into docs/dev/RESULTS.md and copies the
#      compare pictures to docs/dev/results/<scenario>-{convergence,pareto}.svg.
# Raw outputs (JSON, stderr, traces) stay in <build-dir>/reproduce/. A failing command is recorded
# (exit status and its last error line go on the page) and the rest continues.
# The full run takes ~10-15 minutes on a 2-core machine after the build (measured figures are on
# the page itself).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
quick=0
skip_build=0
build="$here/build-reproduce"
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --skip-build) skip_build=1 ;;
    --build-dir)
      [ $# -ge 2 ] || { echo "reproduce: --build-dir needs a directory" >&2; exit 2; }
      build="$2"
      shift
      ;;
    -h | --help)
      sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "reproduce: unknown argument '$1' (see --help)" >&2
      exit 2
      ;;
  esac
  shift
done
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac

raw="$build/reproduce"
rm -rf "$raw"
mkdir -p "$raw"
manifest="$raw/manifest.tsv"
meta="$raw/meta.env"
: >"$manifest"
: >"$meta"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
note() { printf 'reproduce: %s\n' "$*" >&2; }
meta_kv() { printf '%s=%s\n' "$1" "$2" >>"$meta"; }

t_start="$(now)"
meta_kv mode "$([ "$quick" = 1 ] && echo quick || echo full)"
meta_kv started_utc "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
meta_kv commit "$(git -C "$here" rev-parse HEAD 2>/dev/null || echo unknown)"
# Dirty state taken before this script writes anything into the tree (make_results.py ignores
# the page and figures this script itself writes).
git -C "$here" status --porcelain 2>/dev/null >"$raw/git-status.txt" || true
meta_kv loadavg_start "$(cut -d' ' -f1-3 /proc/loadavg)"
meta_kv build_dir "$build"

# ---------------------------------------------------------------------------------------------
# 1. Build
t0="$(now)"
build_status=ok
if [ "$skip_build" = 0 ]; then
  note "building Release with benchmarks in $build"
  if ! "$here/scripts/setup.sh" "$build" -DL2S_BUILD_TESTS=OFF -DL2S_BUILD_BENCH=ON \
    >"$raw/build.log" 2>&1; then
    build_status="full build failed; built targets one by one"
    note "full build failed (see $raw/build.log); building the needed targets one by one"
    for target in l2s sim_bench rl_bench search_bench; do
      cmake --build "$build" -j "$(nproc)" --target "$target" >>"$raw/build.log" 2>&1 ||
        note "target $target did not build"
    done
  fi
else
  build_status="skipped (--skip-build)"
fi
meta_kv build_status "$build_status"
meta_kv build_s "$(elapsed "$t0" "$(now)")"
l2s="$build/src/cli/l2s"
if [ ! -x "$l2s" ]; then
  note "no l2s binary at $l2s: nothing to run (see $raw/build.log)"
  exit 1
fi

# ---------------------------------------------------------------------------------------------
# Runs one command; stdout -> $raw/<id>.json, stderr -> $raw/<id>.err; one manifest line:
# id, kind, group, exit status, wall seconds, the command as typed (binary shortened to its name).
run_job() {
  local id="$1" kind="$2" group="$3" bin="$4"
  shift 4
  local t rc=0 shown a
  t="$(now)"
  "$bin" "$@" >"$raw/$id.json" 2>"$raw/$id.err" || rc=$?
  shown="$(basename "$bin")"
  for a in "$@"; do  # quote only what a shell would need quoted
    if [[ "$a" =~ ^[A-Za-z0-9_./=,:+@%-]+$ ]]; then shown+=" $a"; else shown+=" $(printf '%q' "$a")"; fi
  done
  shown="${shown//"$raw"/<raw>}"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$kind" "$group" "$rc" "$(elapsed "$t" "$(now)")" \
    "$shown" >>"$manifest"
  [ "$rc" = 0 ] || note "$id: exit $rc: $(tail -n 1 "$raw/$id.err" 2>/dev/null)"
  return 0
}
skip_job() {  # a scenario --quick leaves out
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" skipped 0 "-" >>"$manifest"
}

seeds=10
[ "$quick" = 1 ] && seeds=3
meta_kv seeds "$seeds"
common=(--budget 4000 --seeds "$seeds" --searchers "rl,rl(paper=1),sa,rw,megatron,oracle" --oracle-seconds 120)

# Oracle plan + explain of its best strategy (the "why" sentence; search.best: the oracle's own
# optimum, before plan refines its batch) for one serve-mode problem: the
# aggregated optimum (`--serving agg`), as `compare` and `explain` see the problem; plan's default
# (`auto`) can answer with a disaggregated plan, which has no single strategy to explain.
oracle_and_explain() {
  local id="$1" group="$2"
  shift 2
  run_job "$id.plan" plan "$group" "$l2s" plan "$@" --serving agg --engine ideal --search oracle --no-baselines \
    --json
  local best
  if best="$(python3 - "$raw/$id.plan.json" <<'EOF' 2>/dev/null
import json, sys
j = json.load(open(sys.argv[1]))
b = (j.get("search") or {}).get("best") or j["best"]  # the oracle's own optimum
print(b["strategy"]); print(b["batch"])
EOF
  )"; then
    local strategy batch
    strategy="$(sed -n 1p <<<"$best")"
    batch="$(sed -n 2p <<<"$best")"
    run_job "$id.explain" explain "$group" "$l2s" explain "$@" --strategy "$strategy" \
      --batch "$batch" --json
  else
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$id.explain" explain "$group" "no-plan" 0 "-" >>"$manifest"
  fi
}

# ---------------------------------------------------------------------------------------------
# 2. Scenario suite. Entries: id | in --quick (1/0) | problem flags.
t0="$(now)"
paper=(
  "paper-gpt-moe-1.2t-16k|1|--model gpt-moe-1.2t --gpus 1024 --mode decode --context 16384"
  "paper-gpt-moe-1.2t-32k|0|--model gpt-moe-1.2t --gpus 1024 --mode decode --context 32768"
  "paper-gpt-moe-1.2t-64k|0|--model gpt-moe-1.2t --gpus 1024 --mode decode --context 65536"
  "paper-gpt-moe-1.6t-16k|1|--model gpt-moe-1.6t --gpus 1024 --mode decode --context 16384"
  "paper-gpt-moe-1.6t-32k|0|--model gpt-moe-1.6t --gpus 1024 --mode decode --context 32768"
  "paper-gpt-moe-1.6t-64k|0|--model gpt-moe-1.6t --gpus 1024 --mode decode --context 65536"
  "paper24k-gpt-moe-1.6t-16k-24576gpu|1|--model gpt-moe-1.6t --gpus 24576 --mode decode --context 16384"
)
serve=(--mode serve --isl 2048 --osl 512 --slo ttft_ms=2000,tpot_ms=50)
beyond=(
  "serve-deepseek-v3-32xh100|0|--model deepseek-v3 --gpu h100 --gpus 32"
  "serve-deepseek-v3-256xh100|1|--model deepseek-v3 --gpu h100 --gpus 256"
  "serve-deepseek-v3-64xh200|0|--model deepseek-v3 --gpu h200 --gpus 64"
  "serve-kimi-k2-32xh100|0|--model kimi-k2 --gpu h100 --gpus 32"
  "serve-kimi-k2-256xh100|0|--model kimi-k2 --gpu h100 --gpus 256"
  "serve-kimi-k2-64xh200|0|--model kimi-k2 --gpu h200 --gpus 64"
  "serve-llama-3.1-405b-16xh100|0|--model llama-3.1-405b --gpu h100 --gpus 16"
  "serve-qwen3-235b-a22b-8xh100|1|--model qwen3-235b-a22b --gpu h100 --gpus 8"
  "serve-qwen3-235b-a22b-16xh100|0|--model qwen3-235b-a22b --gpu h100 --gpus 16"
  "serve-deepseek-v3-gb200-nvl72|1|--model deepseek-v3 --cluster gb200-nvl72"
)
# Topology pairs: the same 72 B200 GPUs as nine 8-GPU nodes and as one NVL72 domain.
topology=(
  "topo-deepseek-v3-72xb200-8pernode|1|--model deepseek-v3 --gpu b200 --gpus 72 --gpus-per-node 8"
  "topo-deepseek-v3-gb200-nvl72|1|--model deepseek-v3 --cluster gb200-nvl72"
  "topo-kimi-k2-72xb200-8pernode|0|--model kimi-k2 --gpu b200 --gpus 72 --gpus-per-node 8"
  "topo-kimi-k2-gb200-nvl72|0|--model kimi-k2 --cluster gb200-nvl72"
)

for entry in "${paper[@]}"; do
  IFS='|' read -r id in_quick flags <<<"$entry"
  group="${id%%-*}"
  if [ "$quick" = 1 ] && [ "$in_quick" = 0 ]; then skip_job "$id" compare "$group"; continue; fi
  note "compare $id"
  # shellcheck disable=SC2086  # flags are whitespace-separated words without spaces inside
  run_job "$id" compare "$group" "$l2s" compare $flags "${common[@]}" --json --out-dir "$raw/$id"
done
for entry in "${beyond[@]}"; do
  IFS='|' read -r id in_quick flags <<<"$entry"
  if [ "$quick" = 1 ] && [ "$in_quick" = 0 ]; then skip_job "$id" compare beyond; continue; fi
  note "compare $id"
  # shellcheck disable=SC2086
  run_job "$id" compare beyond "$l2s" compare $flags "${serve[@]}" "${common[@]}" --json \
    --out-dir "$raw/$id"
  # shellcheck disable=SC2086
  oracle_and_explain "$id" beyond $flags "${serve[@]}"
done
for entry in "${topology[@]}"; do
  IFS='|' read -r id in_quick flags <<<"$entry"
  if [ "$quick" = 1 ] && [ "$in_quick" = 0 ]; then skip_job "$id.plan" plan topology; continue; fi
  note "oracle + explain $id"
  # shellcheck disable=SC2086
  oracle_and_explain "$id" topology $flags "${serve[@]}"
done
meta_kv suite_s "$(elapsed "$t0" "$(now)")"

# ---------------------------------------------------------------------------------------------
# 3. Benchmarks (CPU time per iteration is what the page uses).
t0="$(now)"
for b in sim_bench rl_bench search_bench; do
  exe="$build/bench/$b"
  if [ -x "$exe" ]; then
    note "benchmark $b"
    run_job "$b" bench bench "$exe" --benchmark_format=json
  else
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$b" bench bench not-built 0 "-" >>"$manifest"
  fi
done
meta_kv bench_s "$(elapsed "$t0" "$(now)")"
meta_kv loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"
meta_kv total_s "$(elapsed "$t_start" "$(now)")"
meta_kv finished_utc "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"

# ---------------------------------------------------------------------------------------------
# 4. The page.
python3 "$here/scripts/make_results.py" --raw "$raw" --page "$here/docs/dev/RESULTS.md" \
  --figures "$here/docs/dev/results"
note "wrote $here/docs/dev/RESULTS.md and docs/dev/results/*.svg (raw outputs in $raw)"
