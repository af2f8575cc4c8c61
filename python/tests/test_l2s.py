"""The Python package against the l2s binary: same numbers for the same flags, errors, results.

Run from the test command (ctest's python_pytest test, scripts/test.sh) with PYTHONPATH=build/python
and L2S_BIN=build/src/cli/l2s; by hand: PYTHONPATH=build/python /usr/bin/python3 -m pytest python/tests
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading

import pytest

import l2s

HERE = os.path.dirname(os.path.abspath(__file__))
L2S_BIN = os.environ.get("L2S_BIN") or os.path.join(HERE, "..", "..", "build", "src", "cli", "l2s")

# A small, fast plan: the searcher's 200 calls, no oracle.
SMALL = dict(model="llama-3.1-8b", gpus=8, budget=200, oracle_calls=0)


def cli_json(*args):
    """The binary's --json output and exit code."""
    p = subprocess.run([L2S_BIN, *args, "--json"], capture_output=True, text=True, timeout=600)
    return p.returncode, (json.loads(p.stdout) if p.stdout.strip() else None), p.stderr


def test_plan_matches_the_binary():
    r = l2s.plan(**SMALL, seed=3)
    code, j, _ = cli_json("plan", "--model", "llama-3.1-8b", "--gpus", "8", "--budget", "200",
                          "--oracle-calls", "0", "--seed", "3")
    assert code == 0
    assert r.best.tokens_per_s_per_gpu > 0
    assert r.best.tokens_per_s_per_gpu == j["best"]["tokens_per_s_per_gpu"]
    assert r.best.strategy == j["best"]["strategy"]
    # The whole object, not only the headline (wall-clock fields aside, if any).
    assert _without_times(r.to_dict()) == _without_times(j)


def test_plan_with_slo_dict_and_string_match_the_binary():
    slo = {"ttft_ms": 2000, "tpot_ms": 50}
    a = l2s.plan(**SMALL, mode="serve", slo=slo)
    b = l2s.plan(**SMALL, mode="serve", slo="ttft_ms=2000,tpot_ms=50")
    code, j, _ = cli_json("plan", "--model", "llama-3.1-8b", "--gpus", "8", "--budget", "200",
                          "--oracle-calls", "0", "--mode", "serve", "--slo", "ttft_ms=2000,tpot_ms=50")
    assert code == 0
    assert a.best.tokens_per_s_per_gpu == b.best.tokens_per_s_per_gpu == j["best"]["tokens_per_s_per_gpu"]
    assert a.best.strategy == b.best.strategy == j["best"]["strategy"]


def test_plan_with_traffic_takes_capacitys_keywords():
    # Percentile SLOs under a traffic (the keywords of l2s.capacity): the pick meets them and its
    # simulated percentiles are the binary's.
    kw = dict(model="llama-3.1-8b", gpus=2, isl=2000, osl=50, engine="vllm", budget=300,
              rate=2, requests=500, seed=1, slo={"tpot_ms": 20, "p99_ttft_ms": 60})
    r = l2s.plan(**kw)
    code, j, _ = cli_json("plan", "--model", "llama-3.1-8b", "--gpus", "2", "--isl", "2000",
                          "--osl", "50", "--engine", "vllm", "--budget", "300", "--rate", "2",
                          "--requests", "500", "--seed", "1", "--slo", "tpot_ms=20,p99_ttft_ms=60")
    assert code == 0
    assert r.best.found_by == "traffic_slo"
    assert r.best.meets
    assert r.best.serve.ttft_ms.p99 <= 60
    assert r.best.tpot_ms <= 20
    assert r.best.strategy == j["best"]["strategy"]
    assert r.best.serve.to_dict() == j["best"]["serve"]
    assert r.traffic.slo == "p99_ttft_ms=60"
    # A percentile key without a traffic: the one-line error, exit 2.
    with pytest.raises(l2s.Error) as e:
        l2s.plan(model="llama-3.1-8b", gpus=2, slo={"p99_ttft_ms": 60})
    assert e.value.exit_code == 2
    assert e.value.message == ("--slo p99_ttft_ms=60: percentile SLOs need a traffic: add --rate R "
                            "(open loop), --concurrency N (closed loop) or --trace FILE")


def test_capacity_disaggregated_matches_the_binary():
    # A disaggregated deployment (prefill_strategy / prefill_instances keywords): both pools and
    # the KV transfer in the result, the binary's numbers.
    kw = dict(model="llama-3.1-8b", gpu="h100", engine="vllm", isl=2000, osl=200,
              prefill_strategy="tp=1", strategy="tp=1", prefill_instances=2, instances=1,
              rate=6, requests=300, seed=1)
    r = l2s.capacity(**kw)
    code, j, _ = cli_json("capacity", "--model", "llama-3.1-8b", "--gpu", "h100", "--engine",
                          "vllm", "--isl", "2000", "--osl", "200", "--prefill-strategy", "tp=1",
                          "--strategy", "tp=1", "--prefill-instances", "2", "--instances", "1",
                          "--rate", "6", "--requests", "300", "--seed", "1")
    assert code == 0
    assert r.serving == "disagg"
    assert r.prefill_instances == 2 and r.instances == 1 and r.gpus == 3
    assert r.summary.disaggregated
    assert r.summary.kv_transfer_ms.p50 > 0
    assert r.summary.to_dict() == j["summary"]


def test_capacity_across_gpu_types_matches_the_binary():
    # gpu="a,b": each GPU type sized (child runs of the same code), priced per hour.
    r = l2s.capacity(model="llama-3.1-8b", gpu="h100,b200", engine="vllm", isl=2000, osl=200,
                     rate=20, requests=1000, slo={"p99_ttft_ms": 1000, "p99_tpot_ms": 30},
                     sizes="1,2,4", price_per_gpu_hour="2.5,6")
    code, j, _ = cli_json("capacity", "--model", "llama-3.1-8b", "--gpu", "h100,b200", "--engine",
                          "vllm", "--isl", "2000", "--osl", "200", "--rate", "20", "--requests",
                          "1000", "--slo", "p99_ttft_ms=1000,p99_tpot_ms=30", "--sizes", "1,2,4",
                          "--price-per-gpu-hour", "2.5,6")
    assert code == 0
    assert r.to_dict() == j
    assert [h.gpu for h in r.hardware] == ["h100", "b200"]
    assert all(h.usd_per_hour == h.gpus * p for h, p in zip(r.hardware, [2.5, 6]))


def test_capacity_sizes_for_concurrent_clients_as_the_binary():
    # concurrency=N without a strategy: the fewest GPUs for N clients, the binary's answer.
    r = l2s.capacity(model="llama-3.1-8b", gpu="h100", engine="vllm", isl=2048, osl=128,
                     concurrency=96, slo={"p99_ttft_ms": 1500, "p99_tpot_ms": 25}, sizes="1,2",
                     serving="agg", search="oracle")
    code, j, _ = cli_json("capacity", "--model", "llama-3.1-8b", "--gpu", "h100", "--engine",
                          "vllm", "--isl", "2048", "--osl", "128", "--concurrency", "96", "--slo",
                          "p99_ttft_ms=1500,p99_tpot_ms=25", "--sizes", "1,2", "--serving", "agg",
                          "--search", "oracle")
    assert code == 0
    assert r.to_dict() == j
    assert r.concurrency == 96 and r.found
    best = r.candidates[r.best]
    assert 0 < best.instance_max_clients < 96
    assert best.summary.completed == 960


def test_capacity_sglang_receive_interval_matches_the_binary():
    # SGLang's --scheduler-recv-interval as a keyword; another engine's deployment raises the
    # binary's one-line error with its exit code.
    kw = dict(model="llama-3.1-8b", gpu="h100", engine="sglang", isl=1000, osl=200,
              strategy="tp=1", concurrency=8, requests=80, osl_dist="uniform:0.8", seed=1,
              scheduler_recv_interval=30)
    r = l2s.capacity(**kw)
    code, j, _ = cli_json("capacity", "--model", "llama-3.1-8b", "--gpu", "h100", "--engine",
                          "sglang", "--isl", "1000", "--osl", "200", "--strategy", "tp=1",
                          "--concurrency", "8", "--requests", "80", "--osl-dist", "uniform:0.8",
                          "--seed", "1", "--scheduler-recv-interval", "30")
    assert code == 0
    assert r.summary.scheduler_recv_interval == 30
    assert r.summary.to_dict() == j["summary"]
    kw["engine"] = "vllm"
    with pytest.raises(l2s.Error) as e:
        l2s.capacity(**kw)
    assert e.value.exit_code == 2
    assert "--scheduler-recv-interval is an SGLang setting; --engine is vllm" in str(e.value)


def test_eval_matches_the_binary():
    r = l2s.eval(model="llama-3.1-8b", gpus=8, strategy="tp=8")
    code, j, _ = cli_json("eval", "--model", "llama-3.1-8b", "--gpus", "8", "--strategy", "tp=8")
    assert code == 0
    assert _without_times(r.to_dict()) == _without_times(j)


def test_draft_model_keyword_speculates_as_the_binary_does():
    args = dict(model="llama-3.1-8b", gpus=1, strategy="tp=1,mtp=2", batch=8, mode="decode",
                context=2048)
    r = l2s.eval(draft_model="org/eagle3-draft", **args)
    code, j, _ = cli_json("eval", "--model", "llama-3.1-8b", "--gpus", "1", "--strategy",
                          "tp=1,mtp=2", "--batch", "8", "--mode", "decode", "--context", "2048",
                          "--draft-model", "org/eagle3-draft")
    assert code == 0
    assert _without_times(r.to_dict()) == _without_times(j)
    assert r.draft_model == "org/eagle3-draft" and r.mtp == 2
    with pytest.raises(l2s.Error) as e:
        l2s.eval(**args)  # nothing to draft with
    assert "--draft-model" in str(e.value)


def test_describe_matches_the_binary():
    r = l2s.describe(model="llama-3.1-8b")
    code, j, _ = cli_json("describe", "--model", "llama-3.1-8b")
    assert code == 0
    assert r.to_dict() == j


SHARED = os.environ.get("L2S_SHARED_DIR") or os.path.join(HERE, "..", "..", "..", "shared")
MEASUREMENTS = os.path.join(SHARED, "reference", "measurements.csv")


@pytest.mark.skipif(not os.path.exists(MEASUREMENTS), reason="no ../shared/reference/measurements.csv")
def test_validate_matches_the_binary():
    r = l2s.validate(measurements=MEASUREMENTS)
    code, j, _ = cli_json("validate", "--measurements", MEASUREMENTS)
    assert code == 0
    assert len(r.rows) == len(j["rows"]) > 0
    assert r.to_dict() == j


def test_deterministic_per_seed():
    a = l2s.plan(**SMALL, seed=7).to_dict()
    b = l2s.plan(**SMALL, seed=7).to_dict()
    assert _without_times(a) == _without_times(b)


def test_unknown_model_is_an_error_with_exit_2_and_the_message():
    code, _, err = cli_json("plan", "--model", "no-such-model", "--gpus", "8")
    assert code == 2
    with pytest.raises(l2s.Error) as e:
        l2s.plan(model="no-such-model", gpus=8)
    assert e.value.exit_code == 2
    line = [ln for ln in err.splitlines() if ln.startswith("l2s: error: ")][0]
    assert e.value.message == line[len("l2s: error: "):]
    assert "no-such-model" in e.value.message
    assert "\n" not in e.value.message


def test_engines_by_gpu_vendor_from_python():
    # AMD GPUs: ATOM plans and launches; TensorRT-LLM (no ROCm build) is the CLI's one-line error.
    with pytest.raises(l2s.Error) as e:
        l2s.plan(model="deepseek-v3", gpu="mi355x", gpus=8, mode="serve", engine="trtllm")
    assert e.value.exit_code == 2
    assert e.value.message == ("--engine: TensorRT-LLM does not run on AMD GPUs (mi355x): the "
                               "engines for them are vllm, sglang, megatron, atom")
    args = dict(model="llama-3.1-8b", gpu="mi300x", gpus=8, mode="decode", context=2048,
                engine="atom")
    r = l2s.plan(**args)
    code, j, _ = cli_json("plan", "--model", "llama-3.1-8b", "--gpu", "mi300x", "--gpus", "8",
                          "--mode", "decode", "--context", "2048", "--engine", "atom")
    assert code == 0
    assert r.best.engine == "atom" and r.best.launchable
    assert r.best.tokens_per_s_per_gpu == j["best"]["tokens_per_s_per_gpu"]
    assert sorted(r.to_dict()["launch"]) == ["atom", "megatron", "sglang", "vllm"]


def test_unknown_keyword_is_named_as_a_keyword():
    with pytest.raises(l2s.Error) as e:
        l2s.plan(model="llama-3.1-8b", gpus=8, no_such_flag=1)
    assert e.value.exit_code == 2
    assert e.value.message == ("plan(): unknown keyword argument no_such_flag=; the keywords are "
                               "the flags of `l2s plan --help`, with _ for -")
    with pytest.raises(l2s.Error) as e:
        l2s.capacity(model="llama-3.1-8b", rate=1, slos="p99_ttft_ms=2000")
    assert e.value.message.startswith("capacity(): unknown keyword argument slos= (did you mean slo=?)")
    with pytest.raises(l2s.Error) as e:
        l2s.plan(model="llama-3.1-8b", gpus=8, instance_gpu=2)
    assert e.value.message.startswith(
        "plan(): unknown keyword argument instance_gpu= (did you mean instance_gpus=?)")
    # Another tool's name for the flag (vLLM's benchmark client's input_len) names l2s's.
    with pytest.raises(l2s.Error) as e:
        l2s.plan(model="llama-3.1-8b", gpus=8, input_len=2000)
    assert e.value.message.startswith(
        "plan(): unknown keyword argument input_len= (did you mean isl=?)")


def test_switch_and_valued_keywords_say_which_they_are():
    with pytest.raises(l2s.Error) as e:
        l2s.plan(model="llama-3.1-8b", gpus=8, pareto=1)
    assert e.value.exit_code == 2
    assert e.value.message == ("plan(): pareto=1: --pareto is a switch; give pareto=True "
                               "(or False to leave it out)")
    with pytest.raises(l2s.Error) as e:
        l2s.plan(model="llama-3.1-8b", gpus=True)
    assert e.value.message == "plan(): gpus=True: --gpus takes a value; give gpus=VALUE"


def test_invalid_strategy_exits_1():
    # tp=3 does not divide 8 GPUs' worth of heads evenly or the GPU count: no valid answer.
    code, j, err = cli_json("eval", "--model", "llama-3.1-8b", "--gpus", "8", "--strategy", "tp=3")
    with pytest.raises(l2s.Error) as e:
        l2s.eval(model="llama-3.1-8b", gpus=8, strategy="tp=3")
    assert e.value.exit_code == code != 0


def test_result_attribute_access_and_to_dict_round_trip():
    r = l2s.plan(**SMALL)
    d = r.to_dict()
    assert isinstance(d, dict) and "best" in d
    assert json.loads(json.dumps(d)) == d
    assert l2s.Result(d) == r
    assert r["best"]["strategy"] == r.best.strategy == d["best"]["strategy"]
    d["best"]["strategy"] = "changed"  # a copy: the result is untouched
    assert r.best.strategy != "changed"
    with pytest.raises(AttributeError):
        r.no_such_field


def test_flags_mapping():
    assert l2s._flags({"gpus": 8, "oracle_calls": 0, "json": True, "pareto": False, "x": None}) == [
        "--gpus", "8", "--oracle-calls", "0", "--json"]
    assert l2s._flags({"slo": {"ttft_ms": 2000, "tpot_ms": 50.0}}) == ["--slo", "ttft_ms=2000,tpot_ms=50"]
    assert l2s._flags({"gpu": ["h100", "h200"]}) == ["--gpu", "h100,h200"]


def test_signal_handlers_are_restored():
    before_int = signal.getsignal(signal.SIGINT)
    before_term = signal.getsignal(signal.SIGTERM)
    l2s.plan(**SMALL)  # plan installs its one-shot Ctrl-C handler while it runs
    assert signal.getsignal(signal.SIGINT) is before_int
    assert signal.getsignal(signal.SIGTERM) is before_term
    # Python's own handler still works after the call.
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000000):
            pass


def test_ctrl_c_stops_a_search_and_raises_keyboard_interrupt():
    # The search (2M calls: minutes) is stopped by the SIGINT the timer sends while it runs; the
    # message says the interrupt came back through l2s (exit 130), not from Python's own handler.
    before = signal.getsignal(signal.SIGINT)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt, match=r"l2s plan interrupted \(exit 130\)") as e:
            l2s.plan(model="deepseek-v3", gpus=64, budget=2000000, oracle_calls=0)
    finally:
        timer.cancel()
    assert isinstance(e.value, l2s.Interrupted) and e.value.exit_code == 130
    assert e.value.result.interrupted is True
    assert 0 < e.value.result.calls < 2000000
    assert signal.getsignal(signal.SIGINT) is before


def test_output_is_captured_not_printed(capfd):
    l2s.describe(model="llama-3.1-8b")
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def _without_times(j):
    """The JSON without wall-clock fields (seconds), which differ between two runs."""
    if isinstance(j, dict):
        return {k: _without_times(v) for k, v in j.items()
                if not (k.endswith("_s") and ("wall" in k or "elapsed" in k or "time" in k))}
    if isinstance(j, list):
        return [_without_times(v) for v in j]
    if isinstance(j, str):
        # The oracle's note ends with its solve time ("..., 0.01 s").
        return re.sub(r", [0-9.]+ s$", ", <time> s", j)
    return j


GRID = """models: [llama-3.1-8b]
gpus: [h100]
counts: [1, 2]
workloads:
  - {mode: serve, input: 1024, output: 256}
plan:
  budget: 100
  seed: 0
"""


def test_sweep_from_python_matches_the_binary(tmp_path):
    # From Python the scenarios run in forked children of this process (the interpreter is not an
    # l2s binary); the derived files must be the binary's byte for byte.
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID)
    rows = l2s.sweep(str(grid), out=str(tmp_path / "py"), jobs=2, quiet=True)
    p = subprocess.run([L2S_BIN, "sweep", str(grid), "--out", str(tmp_path / "cli"), "--jobs", "1",
                        "--quiet"], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert len(rows) == 2
    assert all(r.valid for r in rows)
    for name in ("results.csv", "results.json", "results.svg"):
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    assert rows[1].to_dict() == json.loads((tmp_path / "cli" / "results.json").read_text())[1]


def test_sweep_takes_the_grid_as_a_mapping(tmp_path):
    # The grid as a Python mapping is the same sweep as the same grid in a file.
    grid = {"models": ["llama-3.1-8b"], "gpus": ["h100"], "counts": [1, 2],
            "workloads": [{"mode": "serve", "input": 1024, "output": 128}],
            "plan": {"budget": 50, "oracle-calls": 0}}
    rows = l2s.sweep(grid, out=str(tmp_path / "d"), quiet=True)
    (tmp_path / "g.json").write_text(json.dumps(grid))
    again = l2s.sweep(str(tmp_path / "g.json"), out=str(tmp_path / "f"), quiet=True)
    assert (tmp_path / "d" / "grid.json").exists()
    assert len(rows) == 2
    assert [r.to_dict() for r in rows] == [r.to_dict() for r in again]


def test_sweep_bad_grid_is_an_error(tmp_path):
    grid = tmp_path / "bad.yaml"
    grid.write_text("models: [llama-3.1-8b]\ngpus: [h100]\ncounts: [0]\n")
    with pytest.raises(l2s.Error) as e:
        l2s.sweep(str(grid), out=str(tmp_path / "o"), quiet=True)
    assert e.value.exit_code == 2
    assert "counts" in str(e.value)


def test_plan_several_gpu_types_from_python_matches_the_binary():
    # plan --gpu a,b plans each GPU type in a child; from Python, a forked child of this process.
    args = dict(model="llama-3.1-8b", gpus=8, gpu="h100,h200", budget=100, oracle_calls=0)
    r = l2s.plan(**args)
    code, j, _ = cli_json("plan", "--model", "llama-3.1-8b", "--gpus", "8", "--gpu", "h100,h200",
                          "--budget", "100", "--oracle-calls", "0")
    assert code == 0
    assert [h["gpu"] for h in r.hardware] == ["h100", "h200"]
    assert ([h["tokens_per_s_per_gpu"] for h in r.hardware] ==
            [h["tokens_per_s_per_gpu"] for h in j["hardware"]])


def test_plan_replicas_and_instance_gpus_from_python():
    # An MoE model's aggregated plan sized into replicas (docs/PLAN.md "Replicas"), as the binary.
    q = dict(model="qwen3-30b-a3b", gpu="h100", gpus=8, mode="serve", isl=1024, osl=256,
             slo="ttft_ms=2000,tpot_ms=50", engine="vllm", serving="agg")
    r = l2s.plan(**q)
    code, j, _ = cli_json("plan", "--model", "qwen3-30b-a3b", "--gpu", "h100", "--gpus", "8",
                          "--mode", "serve", "--isl", "1024", "--osl", "256", "--slo",
                          "ttft_ms=2000,tpot_ms=50", "--engine", "vllm", "--serving", "agg")
    assert code == 0
    assert r.replicas.instances == j["replicas"]["instances"] > 1
    assert r.best.instances * r.best.gpus_per_instance == 8
    assert r.best.strategy == j["best"]["strategy"]
    # instance_gpus fixes the size: the whole node is one instance.
    one = l2s.plan(**q, instance_gpus=8)
    assert one.best.instances == 1 and one.replicas.fixed
    assert one.best.tokens_per_s_per_gpu <= r.best.tokens_per_s_per_gpu * (1 + 1e-9)


def test_version_is_the_binarys_and_the_projects():
    out = subprocess.run([L2S_BIN, "--version"], capture_output=True, text=True, timeout=60).stdout
    assert out.strip() == "l2s " + l2s.version()
    with open(os.path.join(HERE, "..", "..", "CMakeLists.txt"), encoding="utf-8") as f:
        project = re.search(r"project\(l2s VERSION ([0-9.]+)", f.read()).group(1)
    assert l2s.__version__ == project
    assert l2s.version().startswith(project)
    # `pip install ./python` names the package with the same version (setup.py reads it).
    setup = subprocess.run([sys.executable, os.path.join(HERE, "..", "setup.py"), "--version"],
                           capture_output=True, text=True, timeout=120, cwd=os.path.join(HERE, ".."))
    assert setup.stdout.strip().splitlines()[-1] == project, setup.stderr
