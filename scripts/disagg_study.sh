#!/usr/bin/env bash
# The disaggregated figures of docs/dev/RL_STUDY.md (issue 14): `l2s compare --serving disagg` on the
# nine problems of the disaggregated suite, the eight outside it (`all`: both) and the eight held
# out of issue 14's fifteenth pass (`held15`), seeds 0-9, each searcher's
# fraction of the exact oracle per seed; prints, per problem and searcher, the worst seed and the
# seeds at 0.99 and 0.98 of the oracle, then the totals.
#
#   scripts/disagg_study.sh [--build-dir DIR] [--budget N] [--searchers "local,rl"]
#                           [--set suite|outside|all|held15] [--jobs N] [--out DIR]
#
# Every problem serves 2,048 in / 512 out tokens (the suite's deepseek-v3 on 128 H100s: 4,096 in)
# with TTFT <= 2 s and TPOT <= 50 ms. The oracle runs once per problem (up to ~40 s on the
# 256-GPU ones); a whole set takes a few minutes on two cores.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$here/build"
budget=4000
searchers="local,rl"
set_name=suite
jobs=2
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    --searchers) searchers="$2"; shift 2 ;;
    --set) set_name="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "disagg_study.sh: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
case "$set_name" in suite|outside|all|held15) ;; *)
  echo "disagg_study.sh: --set must be suite, outside, all or held15 (got '$set_name')" >&2; exit 2 ;;
esac
l2s="$build/src/cli/l2s"
if [ ! -x "$l2s" ]; then
  echo "disagg_study.sh: no l2s at $l2s (build first: scripts/test.sh, or pass --build-dir)" >&2
  exit 2
fi
[ -n "$out" ] || out="$(mktemp -d)"
mkdir -p "$out"

suite=(
  "ds32 --model deepseek-v3 --gpus 32"
  "ds64h200 --model deepseek-v3 --gpus 64 --gpu h200"
  "ds256 --model deepseek-v3 --gpus 256"
  "kimi32 --model kimi-k2 --gpus 32"
  "kimi64h200 --model kimi-k2 --gpus 64 --gpu h200"
  "qwen16 --model qwen3-235b-a22b --gpus 16"
  "ds128_4k --model deepseek-v3 --gpus 128 --isl 4096"
  "kimi256 --model kimi-k2 --gpus 256"
  "ds_gb200 --model deepseek-v3 --cluster gb200-nvl72"
)
outside=(
  "mixtral32h200 --model mixtral-8x7b --gpus 32 --gpu h200"
  "qwen64b200 --model qwen3-235b-a22b --gpus 64 --gpu b200"
  "ds64 --model deepseek-v3 --gpus 64"
  "kimi128 --model kimi-k2 --gpus 128"
  "ds128h200 --model deepseek-v3 --gpus 128 --gpu h200"
  "qwen32 --model qwen3-235b-a22b --gpus 32"
  "llama405_32 --model llama-3.1-405b --gpus 32"
  "kimi_gb200 --model kimi-k2 --cluster gb200-nvl72"
)
held15=(
  "qwen128 --model qwen3-235b-a22b --gpus 128"
  "ds96h200 --model deepseek-v3 --gpus 96 --gpu h200"
  "kimi192h200 --model kimi-k2 --gpus 192 --gpu h200"
  "mix22_64 --model mixtral-8x22b --gpus 64"
  "oss32 --model gpt-oss-120b --gpus 32"
  "glm64h200 --model $here/../shared/models/hf/zai-org--GLM-4.7.json --gpus 64 --gpu h200"
  "mav64 --model llama-4-maverick --gpus 64"
  "ds48 --model deepseek-v3 --gpus 48"
)
problems=()
case "$set_name" in
  suite) problems+=("${suite[@]}") ;;
  outside) problems+=("${outside[@]}") ;;
  all) problems+=("${suite[@]}" "${outside[@]}") ;;
  held15) problems+=("${held15[@]}") ;;
esac

run() {
  local name="$1"; shift
  local isl=2048
  case " $* " in *" --isl "*) isl="" ;; esac
  mkdir -p "$out/$name"
  (cd "$out/$name" && "$l2s" compare --mode serve ${isl:+--isl "$isl"} --osl 512 \
      --slo ttft_ms=2000,tpot_ms=50 --serving disagg --seeds 10 --budget "$budget" \
      --searchers "$searchers,oracle" "$@" --json > "$out/$name.json" 2> "$out/$name.err") ||
    echo "disagg_study.sh: $name failed (see $out/$name.err)" >&2
}
running=0
for p in "${problems[@]}"; do
  # shellcheck disable=SC2086
  run $p &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait

python3 - "$out" "${problems[@]%% *}" <<'PY'
import json, os, sys
out, names = sys.argv[1], sys.argv[2:]
totals = {}
print(f"{'problem':<14} {'searcher':<14} {'worst':>7} {'>=0.99':>7} {'>=0.98':>7}")
for name in names:
    path = os.path.join(out, name + ".json")
    try:
        js = json.load(open(path))
    except (OSError, ValueError):
        print(f"{name:<14} (no result: {path})")
        continue
    oracle = js.get("oracle")
    if not oracle:
        print(f"{name:<14} (no oracle value)")
        continue
    for spec, r in js["searchers"].items():
        if spec == "oracle":
            continue
        fr = [v / oracle for v in r["per_seed"]]
        a = sum(x >= 0.99 - 1e-9 for x in fr)
        b = sum(x >= 0.98 - 1e-9 for x in fr)
        t = totals.setdefault(spec, [0, 0, 0])
        t[0] += a; t[1] += b; t[2] += len(fr)
        print(f"{name:<14} {spec:<14} {min(fr):7.4f} {a:7d} {b:7d}")
for spec, (a, b, n) in totals.items():
    print(f"total {spec}: {a} of {n} runs at 0.99, {b} at 0.98")
PY
