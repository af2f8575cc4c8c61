#!/usr/bin/env python3
"""Issue 43's target, measured: for each problem of the README and docs and each serving engine,
`l2s plan --engine E --serving agg` must equal `l2s eval --engine E` of its best.strategy (on one
instance's GPUs where the plan is replicated; within
0.5%), `launch.E.exact` must be true (`launch.dynamo.exact`, Dynamo's workers of the
backend, for the Dynamo engines) and that eval must find the strategy launchable by E (its
`launchable`). Prints one line per (problem, engine) and a summary;
exits 1 on a miss. Usage: scripts/check_engine_plans.py [path/to/l2s]"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBLEMS = [
    # the README's default (`l2s plan`), spelled out for eval
    "--model gpt-moe-1.6t --gpu h100 --gpus 1024 --mode decode --context 16384".split(),
    "--model deepseek-v3 --gpu h200 --gpus 8 --mode serve --isl 2048 --osl 512 --slo ttft_ms=2000,tpot_ms=50".split(),
    "--model deepseek-v3 --gpus 128 --mode serve --isl 4096 --osl 512 --slo ttft_ms=2000,tpot_ms=50".split(),
    "--model llama-3.1-70b --gpu h100 --gpus 8 --mode serve --isl 2048 --osl 256 --dtype fp8 --kv-dtype fp8 --slo ttft_ms=1000,tpot_ms=40".split(),
    "--model qwen3-235b-a22b --gpu h200 --gpus 8 --mode serve --isl 2048 --osl 512 --slo ttft_ms=2000,tpot_ms=50".split(),
    "--model qwen3-30b-a3b --gpu h100 --gpus 8 --mode serve --isl 1024 --osl 256 --slo ttft_ms=2000,tpot_ms=50".split(),
    "--model llama-3.1-8b --gpus 8 --context 4096".split(),
    "--model mixtral-8x7b --gpus 8 --context 4096".split(),
    # speculation with a draft model (docs/GUIDE.md section 1)
    "--model llama-3.1-70b --gpu h100 --gpus 8 --mode serve --isl 1024 --osl 256 --dtype fp8 --kv-dtype fp8 --slo ttft_ms=2000,tpot_ms=15 --draft-model yuhuili/EAGLE3-LLaMA3.3-Instruct-70B".split(),
    # AMD (docs/GUIDE.md): the engines with a ROCm build
    "--model deepseek-v3 --gpu mi355x --gpus 8 --mode serve --isl 1024 --osl 256 --slo ttft_ms=2000,tpot_ms=50".split(),
]
# The serving engines with a build for the problem's GPUs (docs/PLAN.md "Engine rules").
ENGINES = {"nvidia": ["vllm", "sglang", "trtllm", "dynamo+vllm", "dynamo+sglang", "dynamo+trtllm"],
           "amd": ["vllm", "sglang", "atom"]}
AMD_GPUS = {"mi300x", "mi325x", "mi355x"}


def run(l2s, args):
    p = subprocess.run([l2s, *args, "--json"], capture_output=True, text=True, cwd=HERE)
    return p.returncode, (json.loads(p.stdout) if p.stdout.strip() else {})


def main():
    l2s = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "build/src/cli/l2s")
    misses = checked = 0
    for prob in PROBLEMS:
        gpu = prob[prob.index("--gpu") + 1] if "--gpu" in prob else "h100"
        for e in ENGINES["amd" if gpu in AMD_GPUS else "nvidia"]:
            extra = ["--serving", "agg"] if "serve" in prob else []
            rc, j = run(l2s, ["plan", *prob, *extra, "--engine", e])
            name = " ".join(prob)
            if rc != 0 or not j.get("best"):
                print(f"{name} [{e}]: no plan ({j.get('reason', rc)})")
                continue
            b = j["best"]
            # Aggregated replicas: the plan's figures are one instance's, on its GPUs.
            on = list(prob)
            if b.get("instances", 1) > 1:
                on[on.index("--gpus") + 1] = str(b["gpus_per_instance"])
            rc, ev = run(l2s, ["eval", *on, "--engine", e, "--strategy", b["strategy"]])
            ratio = ev.get("tokens_per_s_per_gpu", 0) / b["tokens_per_s_per_gpu"]
            key = "dynamo" if e.startswith("dynamo+") else e
            exact = (j.get("launch") or {}).get(key, {}).get("exact")
            ok = (abs(ratio - 1) <= 0.005 and exact is True and b.get("launchable") is True
                  and ev.get("launchable") is True)
            checked += 1
            misses += not ok
            print(f"{name} [{e}]: plan {b['tokens_per_s_per_gpu']:.2f}, eval/plan {ratio:.6f}, "
                  f"launch.{key}.exact {exact}{'' if ok else '  MISS'}")
    print(f"{checked} plans checked, {misses} misses")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
