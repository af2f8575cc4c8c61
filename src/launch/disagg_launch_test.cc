// Disaggregated launch commands (src/launch/disagg_launch.h) on hand-written pool plans: the
// command text of every engine with hand-checked flags, the cross-side rules (KV format, MTP
// pairing, transfer backend, vLLM's recurrent-state layout), the input checks, and
// invariants over random pool plans.
#include "launch/disagg_launch.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "hw/hw.h"
#include "model/hf_config.h"
#include "launch/test_plans.h"
#include "model/presets.h"

namespace l2s::launch {
namespace {

using testing::Has;
using testing::Megatron;
using testing::Preset;

// One pool: `instances` copies of `s` on `gpu`, the problem of one instance in `mode`.
PoolPlan Pool(const ModelSpec& m, const char* gpu, const Strategy& s, int instances, Mode mode,
              int64_t isl = 4096, int64_t osl = 1024) {
  PoolPlan p;
  p.strategy = s;
  p.instances = instances;
  p.gpus_per_instance = s.gpus();
  p.problem.model = m;
  StatusOr<ClusterSpec> c = MakeCluster(gpu, s.gpus(), 8);
  EXPECT_TRUE(c.ok()) << gpu;
  p.problem.cluster = *c;
  p.problem.workload.mode = mode;
  p.problem.workload.isl = isl;
  p.problem.workload.osl = osl;
  p.problem.workload.context = isl + osl;
  p.problem.workload.weight = m.weight_dtype;
  return p;
}

const DisaggProcess* Find(const DisaggLaunch& l, const std::string& role) {
  for (const DisaggProcess& p : l.processes)
    if (p.role == role) return &p;
  return nullptr;
}

// mixtral-8x7b (8 experts, every layer MoE) on H100: 2 prefill instances of attention-DP 8
// (tp=1, dp=8, ep=8, batch 4 per rank) and 1 decode instance of tp=2, dp=4, ep=8, batch 64.
struct MixtralPlan {
  ModelSpec m = Preset("mixtral-8x7b");
  PoolPlan prefill = Pool(m, "h100", Megatron(m, 1, 1, 8, 8, 4), 2, Mode::kPrefill);
  PoolPlan decode = Pool(m, "h100", Megatron(m, 1, 2, 4, 8, 64), 1, Mode::kDecode);
};

TEST(DisaggLaunch, SglangCommandsByHand) {
  MixtralPlan plan;
  StatusOr<DisaggLaunch> l = MakeDisaggLaunch(DisaggEngine::kSglang, plan.prefill, plan.decode);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_TRUE(l->unsupported.empty());
  ASSERT_TRUE(l->runnable);
  ASSERT_EQ(l->processes.size(), 3u);
  // --tp-size is the 8 GPUs of the instance; requests = batch 4 x dp 8 = 32; length 4096 + 1024;
  // DeepEP in normal mode on the prefill side, low_latency on the decode side; chunked prefill =
  // SGLang's per-rank budget 8192 x dp; the memory fraction SGLang's default at --tp-size 8,
  // 0.81, above the simulated share (the derivation is tested in launch_test).
  const DisaggProcess& p = l->processes[0];
  EXPECT_EQ(p.role, "prefill");
  EXPECT_EQ(p.count, 2);
  EXPECT_EQ(p.gpus, 8);
  EXPECT_EQ(p.command,
            "python -m sglang.launch_server --model-path mistralai/Mixtral-8x7B-v0.1 --tp-size 8 "
            "--dp-size 8 --enable-dp-attention --ep-size 8 --moe-a2a-backend deepep --deepep-mode "
            "normal --max-running-requests 32 --context-length 5120 --chunked-prefill-size 65536 "
            "--mem-fraction-static 0.81 --host 0.0.0.0 --port 30000 --disaggregation-mode prefill "
            "--disaggregation-transfer-backend nixl --disaggregation-bootstrap-port 8998");
  // Decode: attention TP 2 inside --tp 8; requests = 64 x 4 = 256.
  const DisaggProcess& d = l->processes[1];
  EXPECT_EQ(d.role, "decode");
  EXPECT_EQ(d.count, 1);
  EXPECT_EQ(d.command,
            "python -m sglang.launch_server --model-path mistralai/Mixtral-8x7B-v0.1 --tp-size 8 "
            "--dp-size 4 --enable-dp-attention --ep-size 8 --moe-a2a-backend deepep --deepep-mode "
            "low_latency --max-running-requests 256 --context-length 5120 --chunked-prefill-size "
            "32768 --mem-fraction-static 0.81 --host 0.0.0.0 --port 30000 --disaggregation-mode "
            "decode --disaggregation-transfer-backend nixl");
  EXPECT_EQ(l->processes[2].role, "router");
  EXPECT_EQ(l->processes[2].command,
            "python -m sglang_router.launch_router --pd-disaggregation --prefill "
            "http://<prefill-1>:30000 8998 --prefill http://<prefill-2>:30000 8998 --decode "
            "http://<decode-1>:30000 --host 0.0.0.0 --port 8000");
  EXPECT_EQ(l->prefill, plan.prefill.strategy);
  EXPECT_EQ(l->decode, plan.decode.strategy);
  EXPECT_TRUE(l->prefill_eval.valid());
  EXPECT_TRUE(l->decode_eval.valid());
}

TEST(DisaggLaunch, VllmCommandsByHand) {
  MixtralPlan plan;
  StatusOr<DisaggLaunch> l = MakeDisaggLaunch(DisaggEngine::kVllm, plan.prefill, plan.decode);
  ASSERT_TRUE(l.ok());
  // ep = 8 = tp*dp on both sides: vLLM's expert parallelism over the whole instance, its tokens
  // moved by DeepEP's high-throughput (prefill) and low-latency (decode) all-to-all.
  EXPECT_TRUE(l->unsupported.empty());
  ASSERT_EQ(l->processes.size(), 3u);
  EXPECT_EQ(l->processes[0].command,
            "vllm serve mistralai/Mixtral-8x7B-v0.1 --tensor-parallel-size 1 "
            "--pipeline-parallel-size 1 --data-parallel-size 8 --enable-expert-parallel "
            "--all2all-backend deepep_high_throughput "
            "--max-num-seqs 4 --max-model-len 5120 --max-num-batched-tokens 8192 "
            "--gpu-memory-utilization 0.90 --host 0.0.0.0 --port 8000 --kv-transfer-config "
            "'{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_producer\"}'");
  EXPECT_TRUE(Has(l->processes[1].command,
                  "--tensor-parallel-size 2 --pipeline-parallel-size 1 --data-parallel-size 4 "
                  "--enable-expert-parallel --all2all-backend deepep_low_latency --max-num-seqs 64"))
      << l->processes[1].command;
  EXPECT_TRUE(Has(l->processes[1].command, "\"kv_role\":\"kv_consumer\""));
  // vLLM's P/D router, not the repository's toy proxy.
  EXPECT_EQ(l->processes[2].command,
            "vllm-router --vllm-pd-disaggregation --prefill http://<prefill-1>:8000 --prefill "
            "http://<prefill-2>:8000 --decode http://<decode-1>:8000 --host 0.0.0.0 --port 8000");
}

TEST(DisaggLaunch, TrtllmContextAndGenerationServersByHand) {
  MixtralPlan plan;
  StatusOr<DisaggLaunch> l = MakeDisaggLaunch(DisaggEngine::kTrtllm, plan.prefill, plan.decode);
  ASSERT_TRUE(l.ok());
  // The prefill side (tp=1, dp=8) is attention-DP; the decode side's tp=2 with dp=4 is neither
  // all-TP nor all-DP: one line, and the decode servers run a repair.
  ASSERT_EQ(l->unsupported.size(), 1u);
  EXPECT_EQ(l->unsupported[0].rfind("decode: tp=2 with dp=4", 0), 0u) << l->unsupported[0];
  ASSERT_TRUE(l->runnable);
  EXPECT_TRUE((l->decode.tp == 1 && l->decode.dp == 8) || (l->decode.tp == 8 && l->decode.dp == 1))
      << ToText(l->decode);
  ASSERT_EQ(l->processes.size(), 3u);
  const DisaggProcess& ctx = l->processes[0];
  EXPECT_EQ(ctx.command,
            "trtllm-serve mistralai/Mixtral-8x7B-v0.1 --tp_size 8 --pp_size 1 --ep_size 8 "
            "--max_batch_size 4 --max_seq_len 5120 --max_num_tokens 8192 "
            "--extra_llm_api_options ctx-extra-llm-api-config.yml --host 0.0.0.0 --port 8001");
  EXPECT_EQ(ctx.file_name, "ctx-extra-llm-api-config.yml");
  // Context servers: no overlap scheduler; the transceiver buffer holds a 4,096-token prompt;
  // the KV cache needs less than TensorRT-LLM's default share of the free memory (0.90).
  EXPECT_EQ(ctx.file,
            "enable_attention_dp: true\nkv_cache_config:\n  free_gpu_memory_fraction: 0.90\n"
            "disable_overlap_scheduler: true\n"
            "cache_transceiver_config:\n  backend: NIXL\n  max_tokens_in_buffer: 4096\n");
  EXPECT_EQ(l->processes[1].file_name, "gen-extra-llm-api-config.yml");
  EXPECT_TRUE(Has(l->processes[1].file, "cache_transceiver_config:\n  backend: NIXL\n"));
  EXPECT_FALSE(Has(l->processes[1].file, "disable_overlap_scheduler"));
  const DisaggProcess& r = l->processes[2];
  EXPECT_EQ(r.command, "trtllm-serve disaggregated -c disagg-config.yml");
  EXPECT_EQ(r.file,
            "hostname: 0.0.0.0\nport: 8000\nbackend: pytorch\n"
            "context_servers:\n  num_instances: 2\n  urls:\n"
            "    - \"<prefill-1>:8001\"\n    - \"<prefill-2>:8001\"\n"
            "generation_servers:\n  num_instances: 1\n  urls:\n    - \"<decode-1>:8001\"\n");
}

TEST(DisaggLaunch, EngineRunningLimitOnThePrefillServers) {
  // The plan's prefill pool (plan/disaggregated.cc) asks for each engine's own running limit:
  // SGLang's default (4,096 per rank; with MTP its speculative default 48 split over the dp
  // ranks), vLLM's 1,024 per data-parallel engine; TensorRT-LLM's context servers keep the batch
  // (4). The decode side keeps its batch everywhere.
  MixtralPlan plan;
  plan.prefill.engine_running_limit = true;
  StatusOr<DisaggLaunch> g = MakeDisaggLaunch(DisaggEngine::kSglang, plan.prefill, plan.decode);
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(Has(Find(*g, "prefill")->command, "--max-running-requests 32768 "))
      << Find(*g, "prefill")->command;
  EXPECT_TRUE(Has(Find(*g, "decode")->command, "--max-running-requests 256 "));
  const std::vector<std::string>& notes = Find(*g, "prefill")->notes;
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const std::string& n) {
    return Has(n, "running limit 4096 per rank: the engine's own default") &&
           Has(n, "the plan's figures are at batch 4");
  }));
  StatusOr<DisaggLaunch> v = MakeDisaggLaunch(DisaggEngine::kVllm, plan.prefill, plan.decode);
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(Has(Find(*v, "prefill")->command, "--max-num-seqs 1024 "));
  EXPECT_TRUE(Has(Find(*v, "decode")->command, "--max-num-seqs 64 "));
  StatusOr<DisaggLaunch> t = MakeDisaggLaunch(DisaggEngine::kTrtllm, plan.prefill, plan.decode);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(Has(Find(*t, "prefill")->command, "--max_batch_size 4 "));
  // MTP: SGLang's speculative default, 48 requests over 8 ranks = 6 per rank (above the batch 4).
  const ModelSpec m = Preset("deepseek-v3");
  Strategy ps = Megatron(m, 1, 1, 8, 8, 4), ds = Megatron(m, 1, 1, 8, 8, 32);
  ps.mtp = ds.mtp = 2;
  PoolPlan pf = Pool(m, "h200", ps, 1, Mode::kPrefill);
  pf.engine_running_limit = true;
  StatusOr<DisaggLaunch> s =
      MakeDisaggLaunch(DisaggEngine::kSglang, pf, Pool(m, "h200", ds, 1, Mode::kDecode));
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(Has(Find(*s, "prefill")->command, "--max-running-requests 48 "))
      << Find(*s, "prefill")->command;
  // Two pipeline stages share vLLM's 1,024: 512 per microbatch, the flag 512 x pp 2 = 1,024.
  const ModelSpec l = Preset("llama-3.1-70b");
  PoolPlan pp = Pool(l, "h100", Megatron(l, 2, 1, 1, 1, 2), 2, Mode::kPrefill);
  pp.engine_running_limit = true;
  StatusOr<DisaggLaunch> vp =
      MakeDisaggLaunch(DisaggEngine::kVllm, pp, Pool(l, "h100", Megatron(l, 1, 4, 1, 1, 64), 1,
                                                     Mode::kDecode));
  ASSERT_TRUE(vp.ok());
  EXPECT_TRUE(Has(Find(*vp, "prefill")->command, "--max-num-seqs 1024 "))
      << Find(*vp, "prefill")->command;
}
TEST(DisaggLaunch, DynamoWorkerCountsOverTheExactBackend) {
  MixtralPlan plan;
  StatusOr<DisaggLaunch> l = MakeDisaggLaunch(DisaggEngine::kDynamo, plan.prefill, plan.decode);
  ASSERT_TRUE(l.ok());
  // SGLang expresses both sides exactly (TensorRT-LLM does not): Dynamo runs SGLang workers.
  EXPECT_EQ(l->backend, Engine::kSglang);
  EXPECT_TRUE(l->unsupported.empty());
  ASSERT_EQ(l->processes.size(), 3u);
  EXPECT_EQ(l->processes[0].command, "python -m dynamo.frontend --http-port 8000");
  const DisaggProcess* p = Find(*l, "prefill");
  const DisaggProcess* d = Find(*l, "decode");
  ASSERT_TRUE(p != nullptr && d != nullptr);
  EXPECT_EQ(p->count, 2);
  EXPECT_EQ(d->count, 1);
  EXPECT_EQ(p->command.rfind("python -m dynamo.sglang --model-path mistralai/Mixtral-8x7B-v0.1 "
                             "--tp-size 8 --dp-size 8 --enable-dp-attention",
                             0),
            0u)
      << p->command;
  EXPECT_TRUE(Has(p->command, "--disaggregation-mode prefill --disaggregation-transfer-backend nixl"));
  EXPECT_TRUE(Has(d->command, "--disaggregation-mode decode"));
  EXPECT_TRUE(std::any_of(l->notes.begin(), l->notes.end(), [](const std::string& n) {
    return Has(n, "2 prefill workers and 1 decode worker running SGLang");
  }));
}

TEST(DisaggLaunch, DynamoPicksTheBackendThatExpressesThePlan) {
  // llama-4-maverick has dense FFN layers: with tp=2 and dp=4 neither SGLang (dense layers over
  // an attention-TP group) nor TensorRT-LLM (attention all-TP or all-DP) express it; vLLM does
  // (ep = 8 = tp*dp). Dynamo then runs vLLM workers, exactly.
  const ModelSpec m = Preset("llama-4-maverick");
  const PoolPlan pf = Pool(m, "h200", Megatron(m, 1, 2, 4, 8, 1), 3, Mode::kPrefill, 2048, 256);
  const PoolPlan dc = Pool(m, "h200", Megatron(m, 1, 2, 4, 8, 16), 2, Mode::kDecode, 2048, 256);
  StatusOr<DisaggLaunch> l = MakeDisaggLaunch(DisaggEngine::kDynamo, pf, dc);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->backend, Engine::kVllm);
  EXPECT_TRUE(l->unsupported.empty());
  ASSERT_TRUE(l->runnable);
  const DisaggProcess* p = Find(*l, "prefill");
  ASSERT_TRUE(p != nullptr);
  EXPECT_EQ(p->count, 3);
  EXPECT_EQ(p->command.rfind("python -m dynamo.vllm --model "
                             "meta-llama/Llama-4-Maverick-17B-128E-Instruct --tensor-parallel-size 2 "
                             "--pipeline-parallel-size 1 --data-parallel-size 4 "
                             "--enable-expert-parallel",
                             0),
            0u)
      << p->command;
  EXPECT_TRUE(Has(p->command, "--is-prefill-worker --kv-transfer-config "
                              "'{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'"))
      << p->command;
  EXPECT_EQ(Find(*l, "decode")->count, 2);
  // SGLang itself reports the choice on both sides.
  StatusOr<DisaggLaunch> g = MakeDisaggLaunch(DisaggEngine::kSglang, pf, dc);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->unsupported.size(), 2u);
  // Mooncake: Dynamo's vLLM workers move the KV cache with NIXL, which is one more line.
  l = MakeDisaggLaunch(DisaggEngine::kDynamo, pf, dc, KvTransfer::kMooncake);
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->backend, Engine::kVllm);
  ASSERT_EQ(l->unsupported.size(), 1u);
  EXPECT_TRUE(Has(l->unsupported[0], "(Dynamo's vLLM workers) transfer=mooncake")) << l->unsupported[0];
}

TEST(DisaggLaunch, DynamoOverTensorRtLlmPutsTheDegreesInTheEngineYaml) {
  MixtralPlan plan;
  StatusOr<DisaggLaunch> l = MakeDisaggLaunch(DisaggEngine::kDynamo, plan.prefill, plan.decode,
                                              KvTransfer::kNixl, Engine::kTrtllm);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->backend, Engine::kTrtllm);
  // TensorRT-LLM's rule on the decode side (tp=2 with dp=4), marked as Dynamo's workers'.
  ASSERT_EQ(l->unsupported.size(), 1u);
  EXPECT_EQ(l->unsupported[0].rfind("decode: (Dynamo's TensorRT-LLM workers) tp=2 with dp=4", 0),
            0u)
      << l->unsupported[0];
  ASSERT_TRUE(l->runnable);
  const DisaggProcess* p = Find(*l, "prefill");
  ASSERT_TRUE(p != nullptr);
  EXPECT_EQ(p->command,
            "python -m dynamo.trtllm --model mistralai/Mixtral-8x7B-v0.1 --extra-engine-args "
            "prefill.yaml --disaggregation-mode prefill");
  // tp_size = the instance's 8 GPUs (attention DP), ep 8, batch 4 per rank, 4096 + 1024 tokens.
  EXPECT_EQ(p->file_name, "prefill.yaml");
  EXPECT_EQ(p->file,
            "tensor_parallel_size: 8\npipeline_parallel_size: 1\nmoe_expert_parallel_size: 8\n"
            "max_batch_size: 4\nmax_seq_len: 5120\nmax_num_tokens: 8192\nenable_attention_dp: true\n"
            "kv_cache_config:\n  free_gpu_memory_fraction: 0.90\n"
            "disable_overlap_scheduler: true\ncache_transceiver_config:\n  backend: NIXL\n"
            "  max_tokens_in_buffer: 4096\n");
  EXPECT_EQ(Find(*l, "decode")->file_name, "decode.yaml");
  EXPECT_FALSE(Has(Find(*l, "decode")->file, "disable_overlap_scheduler"));
  EXPECT_FALSE(MakeDisaggLaunch(DisaggEngine::kDynamo, plan.prefill, plan.decode,
                                KvTransfer::kNixl, Engine::kMegatron)
                   .ok());
}

TEST(DisaggLaunch, KvFormatMustMatchAndDecodeWins) {
  MixtralPlan plan;
  plan.prefill.problem.workload.kv = DType::kBF16;
  plan.decode.problem.workload.kv = DType::kFP8;
  for (DisaggEngine e : kDisaggEngines) {
    StatusOr<DisaggLaunch> l = MakeDisaggLaunch(e, plan.prefill, plan.decode);
    ASSERT_TRUE(l.ok());
    EXPECT_TRUE(std::any_of(l->unsupported.begin(), l->unsupported.end(), [](const std::string& u) {
      return u.rfind("both: ", 0) == 0 && Has(u, "KV cache in bf16 on the prefill side and fp8");
    })) << DisaggEngineName(e);
    if (e == DisaggEngine::kSglang) {
      EXPECT_TRUE(Has(Find(*l, "prefill")->command, "--kv-cache-dtype fp8_e4m3"));
    }
    if (e == DisaggEngine::kTrtllm) {
      EXPECT_TRUE(Has(Find(*l, "prefill")->file, "kv_cache_config:\n  dtype: fp8\n"));
    }
  }
}

TEST(DisaggLaunch, MooncakeTransfer) {
  MixtralPlan plan;
  StatusOr<DisaggLaunch> g =
      MakeDisaggLaunch(DisaggEngine::kSglang, plan.prefill, plan.decode, KvTransfer::kMooncake);
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(g->unsupported.empty());
  EXPECT_TRUE(Has(g->processes[0].command, "--disaggregation-transfer-backend mooncake"));
  StatusOr<DisaggLaunch> v =
      MakeDisaggLaunch(DisaggEngine::kVllm, plan.prefill, plan.decode, KvTransfer::kMooncake);
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(Has(v->processes[0].command, "\"kv_connector\":\"MooncakeConnector\""));
  StatusOr<DisaggLaunch> t =
      MakeDisaggLaunch(DisaggEngine::kTrtllm, plan.prefill, plan.decode, KvTransfer::kMooncake);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(std::any_of(t->unsupported.begin(), t->unsupported.end(), [](const std::string& u) {
    return Has(u, "transfer=mooncake") && Has(u, "it runs NIXL");
  }));
  KvTransfer k;
  EXPECT_TRUE(ParseKvTransfer("mooncake", &k));
  EXPECT_EQ(k, KvTransfer::kMooncake);
  EXPECT_FALSE(ParseKvTransfer("rdma", &k));
}

TEST(DisaggLaunch, SglangOnAmdMovesTheKvCacheWithMori) {
  // The same Mixtral pools on MI355X: SGLang's P/D servers move the KV cache with MoRI (as the
  // measured MI355X P/D runs do), whichever transfer was asked for; the all-to-all is MoRI's too.
  const ModelSpec m = Preset("mixtral-8x7b");
  const PoolPlan prefill = Pool(m, "mi355x", Megatron(m, 1, 1, 8, 8, 4), 1, Mode::kPrefill);
  const PoolPlan decode = Pool(m, "mi355x", Megatron(m, 1, 1, 8, 8, 64), 1, Mode::kDecode);
  for (KvTransfer k : {KvTransfer::kNixl, KvTransfer::kMooncake}) {
    StatusOr<DisaggLaunch> l = MakeDisaggLaunch(DisaggEngine::kSglang, prefill, decode, k);
    ASSERT_TRUE(l.ok()) << l.status().message();
    for (int i = 0; i < 2; ++i) {
      EXPECT_TRUE(Has(l->processes[i].command, "--disaggregation-transfer-backend mori"))
          << l->processes[i].command;
      EXPECT_TRUE(Has(l->processes[i].command, "--moe-a2a-backend mori")) << l->processes[i].command;
    }
    EXPECT_TRUE(std::any_of(l->notes.begin(), l->notes.end(),
                            [](const std::string& n) { return Has(n, "MoRI moves the KV cache"); }));
  }
}

TEST(DisaggLaunch, MtpDecodePairsThePrefillSide) {
  // DeepSeek-V3 (MLA, MTP, three dense layers first) on H200: 16-GPU instances, attention DP.
  const ModelSpec m = Preset("deepseek-v3");
  Strategy ds = Megatron(m, 1, 1, 16, 16, 16);
  ds.mtp = 2;
  const PoolPlan pf = Pool(m, "h200", Megatron(m, 1, 1, 16, 16, 1), 1, Mode::kPrefill);
  const PoolPlan dc = Pool(m, "h200", ds, 1, Mode::kDecode);
  StatusOr<DisaggLaunch> g = MakeDisaggLaunch(DisaggEngine::kSglang, pf, dc);
  ASSERT_TRUE(g.ok());
  ASSERT_TRUE(g->runnable) << (g->notes.empty() ? "" : g->notes.back());
  EXPECT_EQ(g->prefill.mtp, 0);  // the simulated prefill plan is unchanged
  EXPECT_TRUE(Has(Find(*g, "prefill")->command,
                  "--speculative-algorithm EAGLE --speculative-num-steps 2"));
  EXPECT_TRUE(Has(Find(*g, "decode")->command, "--speculative-num-draft-tokens 3"));
  EXPECT_TRUE(std::any_of(g->notes.begin(), g->notes.end(),
                          [](const std::string& n) { return Has(n, "drafts with MTP (2 tokens)"); }));
  // 16 GPUs = 2 nodes per instance: the per-process notes say how to start a multi-node server.
  EXPECT_TRUE(std::any_of(Find(*g, "decode")->notes.begin(), Find(*g, "decode")->notes.end(),
                          [](const std::string& n) { return Has(n, "2 nodes"); }));
  EXPECT_TRUE(std::any_of(g->notes.begin(), g->notes.end(), [](const std::string& n) {
    return Has(n, "the prefill figures were simulated without it");
  }));
  StatusOr<DisaggLaunch> t = MakeDisaggLaunch(DisaggEngine::kTrtllm, pf, dc);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(Has(Find(*t, "prefill")->file,
                  "speculative_config:\n  decoding_type: MTP\n  num_nextn_predict_layers: 2\n"));
  // A plan's prefill strategy that carries the decode side's depth (priced with the draft's
  // extend, plan/disaggregated.h): the same commands, no note.
  Strategy ps = pf.strategy;
  ps.mtp = 2;
  const PoolPlan pf2 = Pool(m, "h200", ps, 1, Mode::kPrefill);
  StatusOr<DisaggLaunch> g2 = MakeDisaggLaunch(DisaggEngine::kSglang, pf2, dc);
  ASSERT_TRUE(g2.ok());
  ASSERT_TRUE(g2->runnable) << (g2->notes.empty() ? "" : g2->notes.back());
  EXPECT_EQ(g2->prefill.mtp, 2);
  EXPECT_EQ(Find(*g2, "prefill")->command, Find(*g, "prefill")->command);
  EXPECT_TRUE(std::none_of(g2->notes.begin(), g2->notes.end(), [](const std::string& n) {
    return Has(n, "drafts with MTP");
  }));
}

// vLLM moves a recurrent model's state (conv and SSM) between unequal TP degrees in the DS
// conv-state layout and with the hybrid KV-cache manager, which --kv-transfer-config turns off
// unless asked for: both servers start with VLLM_SSM_CONV_STATE_LAYOUT=DS and
// --no-disable-hybrid-kv-cache-manager; an aggregated server and SGLang need neither.
TEST(DisaggLaunch, VllmMovesRecurrentStateInTheDsLayout) {
  StatusOr<ModelSpec> m =
      LoadHfConfig(std::string(L2S_SHARED_DIR) + "/models/hf/Qwen--Qwen3-Next-80B-A3B-Thinking.json");
  ASSERT_TRUE(m.ok()) << m.status().message();
  // Prefill tp=4 x dp=2 (8 GPUs), decode tp=2 x dp=4: unequal TP, as planned.
  const PoolPlan pf = Pool(*m, "h100", Megatron(*m, 1, 4, 2, 8, 1), 1, Mode::kPrefill);
  const PoolPlan dc = Pool(*m, "h100", Megatron(*m, 1, 2, 4, 8, 32), 1, Mode::kDecode);
  StatusOr<DisaggLaunch> v = MakeDisaggLaunch(DisaggEngine::kVllm, pf, dc);
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->unsupported.empty()) << v->unsupported.front();
  EXPECT_EQ(v->prefill.tp, 4);
  EXPECT_EQ(v->decode.tp, 2);
  for (const char* role : {"prefill", "decode"}) {
    const std::string& c = Find(*v, role)->command;
    EXPECT_EQ(c.rfind("VLLM_SSM_CONV_STATE_LAYOUT=DS vllm serve ", 0), 0u) << c;
    EXPECT_TRUE(Has(c, " --no-disable-hybrid-kv-cache-manager ")) << c;
  }
  const LaunchCommand agg = MakeLaunchCommand(Engine::kVllm, dc.problem, dc.strategy);
  EXPECT_FALSE(Has(agg.command, "VLLM_SSM")) << agg.command;
  EXPECT_FALSE(Has(agg.command, "hybrid-kv-cache")) << agg.command;
  // A model without recurrent layers needs neither.
  MixtralPlan plain;
  StatusOr<DisaggLaunch> x = MakeDisaggLaunch(DisaggEngine::kVllm, plain.prefill, plain.decode);
  ASSERT_TRUE(x.ok());
  EXPECT_FALSE(Has(Find(*x, "decode")->command, "VLLM_SSM")) << Find(*x, "decode")->command;
  // SGLang has no such setting.
  StatusOr<DisaggLaunch> g = MakeDisaggLaunch(DisaggEngine::kSglang, pf, dc);
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE(Has(Find(*g, "decode")->command, "VLLM_SSM")) << Find(*g, "decode")->command;
}

TEST(DisaggLaunch, BadPoolsAreErrorsNamingThePool) {
  MixtralPlan plan;
  PoolPlan bad = plan.prefill;
  bad.instances = 0;
  StatusOr<DisaggLaunch> l = MakeDisaggLaunch(DisaggEngine::kSglang, bad, plan.decode);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().message(), "prefill pool: instances must be >= 1, got 0");
  bad = plan.decode;
  bad.gpus_per_instance = 16;
  l = MakeDisaggLaunch(DisaggEngine::kSglang, plan.prefill, bad);
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(Has(l.status().message(), "decode pool: gpus_per_instance 16")) << l.status().message();
  bad = plan.decode;
  bad.strategy.tp = 3;  // 3 x 4 = 12 GPUs: not the instance's 8
  bad.gpus_per_instance = 12;
  l = MakeDisaggLaunch(DisaggEngine::kSglang, plan.prefill, bad);
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(Has(l.status().message(), "decode pool: the problem's cluster has 8 GPUs"));
  bad = plan.decode;
  bad.problem.model = Preset("mixtral-8x22b");
  l = MakeDisaggLaunch(DisaggEngine::kSglang, plan.prefill, bad);
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(Has(l.status().message(), "prefill pool serves mixtral-8x7b"));
}

// Invariants over random pool plans of three models: every launch names each pool's instance
// count and GPUs, its router lists every instance, and what a runnable launch runs is expressible
// by the engine (Dynamo: its backend) on each side.
TEST(DisaggLaunch, RandomPlansInvariants) {
  std::mt19937 rng(7);
  int runnable = 0, total = 0;
  for (const char* name : {"mixtral-8x7b", "llama-4-maverick", "llama-3.1-70b"}) {
    const ModelSpec m = Preset(name);
    for (int trial = 0; trial < 12; ++trial) {
      auto random_strategy = [&](int gpus) {
        for (;;) {
          const int tp = 1 << (rng() % 4);
          const int ep = m.is_moe() ? 1 << (rng() % 4) : 1;
          Strategy s = Megatron(m, 1, tp, gpus / tp, ep, 1 << (rng() % 6));
          if (CheckStrategy(m, gpus, s).ok()) return s;
        }
      };
      const int pi = 1 + static_cast<int>(rng() % 4), di = 1 + static_cast<int>(rng() % 3);
      const PoolPlan pf = Pool(m, "h200", random_strategy(8), pi, Mode::kPrefill, 2048, 512);
      const PoolPlan dc = Pool(m, "h200", random_strategy(8), di, Mode::kDecode, 2048, 512);
      StatusOr<std::vector<DisaggLaunch>> all = TranslateDisaggPlan(pf, dc);
      ASSERT_TRUE(all.ok());
      ASSERT_EQ(all->size(), kDisaggEngines.size());  // H200: every engine has an NVIDIA build
      for (const DisaggLaunch& l : *all) {
        ++total;
        if (!l.runnable) {
          EXPECT_TRUE(l.processes.empty());
          continue;
        }
        ++runnable;
        const Engine base = l.backend;
        EXPECT_TRUE(Expressible(base, m, l.prefill)) << DisaggEngineName(l.engine);
        EXPECT_TRUE(Expressible(base, m, l.decode)) << DisaggEngineName(l.engine);
        const DisaggProcess* p = Find(l, "prefill");
        const DisaggProcess* d = Find(l, "decode");
        ASSERT_TRUE(p != nullptr && d != nullptr && Find(l, "router") != nullptr);
        EXPECT_EQ(p->count, pi);
        EXPECT_EQ(d->count, di);
        EXPECT_EQ(p->gpus, 8);
        const DisaggProcess& r = *Find(l, "router");
        const std::string router_text = r.command + r.file;
        if (l.engine != DisaggEngine::kDynamo)  // Dynamo's workers register themselves
          for (int i = 1; i <= pi; ++i) {
            EXPECT_TRUE(Has(router_text, fmt::format("<prefill-{}>", i)));
          }
        EXPECT_FALSE(Has(router_text, fmt::format("<prefill-{}>", pi + 1)));
        EXPECT_FALSE(Has(router_text, fmt::format("<decode-{}>", di + 1)));
        if (l.unsupported.empty()) {  // exact: the commands run the plan itself
          EXPECT_EQ(Canonical(m, l.prefill).pp, pf.strategy.pp);
          EXPECT_EQ(l.prefill.tp, pf.strategy.tp);
          EXPECT_EQ(l.decode.tp, dc.strategy.tp);
          EXPECT_EQ(l.decode.ep, dc.strategy.ep);
        }
      }
    }
  }
  EXPECT_GT(runnable, total / 2);
}

}  // namespace
}  // namespace l2s::launch
