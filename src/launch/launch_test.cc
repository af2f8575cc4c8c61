// Engine translation (src/launch/launch.h) on hand-written plans: which choices each engine cannot
// express, what it runs instead, the launch commands, and the best engine-expressible plan
// against a brute-force reference and the Megatron heuristic.
#include "launch/launch.h"

#include <gtest/gtest.h>

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "launch/emit.h"
#include "launch/test_plans.h"
#include "model/presets.h"
#include "search/search.h"

namespace l2s::launch {
namespace {

using testing::Has;
using testing::Megatron;
using testing::Preset;

Problem MakeProblem(const char* model, int gpus, Mode mode = Mode::kDecode) {
  Problem p;
  p.model = Preset(model);
  StatusOr<ClusterSpec> c = MakeCluster("h100", gpus, 8);
  EXPECT_TRUE(c.ok());
  p.cluster = *c;
  p.workload.mode = mode;
  p.workload.context = 4096;
  p.workload.weight = p.model.weight_dtype;
  return p;
}

TEST(Words, DimWordsNameTheSplitDimension) {
  // ffn2: Y[T, hidden] = X[T, ffn] W[ffn, hidden]: dim0 cuts K = feed-forward, dim1 cuts N = hidden.
  EXPECT_EQ(DimWords(Op::kDenseFfn2, Dim::kDim1), "split on hidden (dim1)");
  EXPECT_EQ(DimWords(Op::kDenseFfn2, Dim::kDim0), "split on feed-forward (dim0)");
  EXPECT_EQ(DimWords(Op::kDenseFfn1, Dim::kDim1), "split on feed-forward (dim1)");
  EXPECT_EQ(DimWords(Op::kAttnQkv, Dim::kDim1), "split on heads (dim1)");
  EXPECT_EQ(DimWords(Op::kAttnOut, Dim::kDim0), "split on heads (dim0)");
  EXPECT_EQ(DimWords(Op::kLmHead, Dim::kDim1), "split on vocabulary (dim1)");
  EXPECT_EQ(DimWords(Op::kEmbed, Dim::kDim0), "split on vocabulary (dim0)");
  EXPECT_EQ(DimWords(Op::kAttnCore, Dim::kDim0), "split on heads (dim0)");
  EXPECT_TRUE(Has(DimWords(Op::kAttnCore, Dim::kDim1), "context parallel"));
  EXPECT_TRUE(Has(DimWords(Op::kMoeFfn1, Dim::kNone), "(none)"));
  EXPECT_EQ(OpTitle(Op::kDenseFfn2), "MLP down-projection");
}

// Writes `text` to `dir`/`name` and returns the path.
std::string WriteFile(const std::filesystem::path& dir, const std::string& name,
                      const std::string& text) {
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

TEST(ModelArgument, RepoIdNeverTheFolderOfABareConfig) {
  EXPECT_EQ(ModelArgument(Preset("deepseek-v3")), "deepseek-ai/DeepSeek-V3");
  EXPECT_EQ(ModelArgument(Preset("llama-3.1-70b")), "meta-llama/Meta-Llama-3.1-70B");
  EXPECT_EQ(ModelArgument(Preset("gpt-moe-1.6t")), "<gpt-moe-1.6t-checkpoint>");
  EXPECT_TRUE(ResolveModelId(Preset("gpt-moe-1.6t")).placeholder);
  // --model given as a repo id (resolved offline from ../shared/models/hf): the id itself.
  ModelSpec by_id = Preset("deepseek-v3");
  by_id.name = "deepseek-ai/DeepSeek-R1";
  EXPECT_EQ(ResolveModelId(by_id).id, "deepseek-ai/DeepSeek-R1");
  EXPECT_EQ(ResolveModelId(by_id).source, "--model repo id");
  // The user's --model-id (ModelSpec::launch_id) comes first, a placeholder's note gone.
  ModelSpec given = Preset("gpt-moe-1.6t");
  given.launch_id = "/ckpt/gpt-moe";
  EXPECT_EQ(ResolveModelId(given).id, "/ckpt/gpt-moe");
  EXPECT_EQ(ResolveModelId(given).source, "--model-id");
  EXPECT_FALSE(ResolveModelId(given).placeholder);
  EXPECT_EQ(ModelArgument(given), "/ckpt/gpt-moe");
  const std::filesystem::path tmp =
      std::filesystem::temp_directory_path() / fmt::format("l2s_model_id_{}", ::getpid());
  std::filesystem::remove_all(tmp);
  ModelSpec m = Preset("llama-3.1-8b");
  // The org--name.json file names of ../shared/models/hf.
  m.name = WriteFile(tmp / "hf", "deepseek-ai--DeepSeek-R1.json", "{}");
  EXPECT_EQ(ModelArgument(m), "deepseek-ai/DeepSeek-R1");
  EXPECT_EQ(ResolveModelId(m).source, "file name");
  // The config's own name field wins when it is a repo id; a local name is not one.
  m.name = WriteFile(tmp / "a", "config.json", R"({"_name_or_path": "microsoft/phi-4"})");
  EXPECT_EQ(ModelArgument(m), "microsoft/phi-4");
  m.name = WriteFile(tmp / "b", "config.json", R"({"_name_or_path": "llama_nemotron_super"})");
  const ModelId bare = ResolveModelId(m);
  EXPECT_TRUE(bare.placeholder);
  EXPECT_EQ(bare.id, "<config-checkpoint>");
  EXPECT_TRUE(Has(bare.note, "--model-id")) << bare.note;
  // A config.json next to weights: the checkpoint folder is what the engines load.
  WriteFile(tmp / "ckpt", "model-00001-of-00002.safetensors", "");
  m.name = WriteFile(tmp / "ckpt", "config.json", "{}");
  EXPECT_EQ(ModelArgument(m), (tmp / "ckpt").string());
  // The commands say how to fill a placeholder, and --model-id replaces it.
  m.name = (tmp / "b" / "config.json").string();
  Problem p = MakeProblem("llama-3.1-8b", 8);
  p.model = m;
  const Strategy s = Megatron(m, 1, 8, 1, 1, 8);
  const LaunchCommand lc = MakeLaunchCommand(Engine::kVllm, p, s);
  EXPECT_TRUE(Has(lc.command, "vllm serve <config-checkpoint> "));
  EXPECT_TRUE(std::any_of(lc.notes.begin(), lc.notes.end(),
                          [](const std::string& n) { return Has(n, "--model-id"); }));
  LaunchOptions o;
  o.model_id = "acme/llama-ft";
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kSglang, p, s, o).command, "--model-path acme/llama-ft "));
  std::filesystem::remove_all(tmp);
}

TEST(Unsupported, MegatronDimsWithoutSpAreExpressibleEverywhereWhenDegreesAre) {
  const ModelSpec m = Preset("mixtral-8x7b");  // 32 heads, 8 experts, every layer MoE
  // tp=8, dp=1, ep=8: vLLM EP = tp*dp = 8; TRT-LLM plain TP; SGLang --tp 8 --ep-size 8.
  const Strategy s = Megatron(m, 1, 8, 1, 8);
  for (Engine e : kAllEngines) {
    EXPECT_TRUE(UnsupportedChoices(e, m, s).empty()) << EngineName(e);
    const std::vector<Strategy> alts = EngineAlternatives(e, m, s);
    ASSERT_EQ(alts.size(), 1u);
    EXPECT_EQ(alts[0], s);
  }
}

TEST(Unsupported, PaperMlpVariantIsOneLineForEveryEngine) {
  const ModelSpec m = Preset("llama-3.1-70b");
  Strategy s = Megatron(m, 1, 8, 1, 1);
  s.set_dim(Op::kDenseFfn2, Dim::kDim1);  // the paper's discovered variant
  for (Engine e : kAllEngines) {
    const std::vector<std::string> u = UnsupportedChoices(e, m, s);
    ASSERT_EQ(u.size(), 1u) << EngineName(e);
    EXPECT_EQ(u[0].rfind("dense_ffn2=dim1 (MLP down-projection, split on hidden (dim1))", 0), 0u)
        << u[0];
    EXPECT_TRUE(Has(u[0], "runs split on feed-forward (dim0) instead")) << u[0];
    const std::vector<Strategy> alts = EngineAlternatives(e, m, s);
    ASSERT_EQ(alts.size(), 1u);
    EXPECT_EQ(alts[0], Megatron(m, 1, 8, 1, 1));
  }
  // With a tp group of one GPU every dim is the same computation: nothing to report.
  Strategy one = Megatron(m, 1, 1, 8, 1);
  one.set_dim(Op::kDenseFfn2, Dim::kDim1);
  for (Engine e : kAllEngines) EXPECT_TRUE(UnsupportedChoices(e, m, one).empty());
}

TEST(Unsupported, SequenceParallelOnlyOnMegatron) {
  const ModelSpec m = Preset("llama-3.1-70b");
  const Strategy s = Megatron(m, 1, 8, 1, 1, 8, /*sp=*/true);
  for (Engine e : {Engine::kVllm, Engine::kSglang, Engine::kTrtllm}) {
    const std::vector<std::string> u = UnsupportedChoices(e, m, s);
    ASSERT_EQ(u.size(), 1u);
    EXPECT_EQ(u[0].rfind("sp=on", 0), 0u) << u[0];
    EXPECT_FALSE(EngineAlternatives(e, m, s)[0].sp);
  }
  EXPECT_TRUE(UnsupportedChoices(Engine::kMegatron, m, s).empty());
  Problem p = MakeProblem("llama-3.1-70b", 8);
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kMegatron, p, s).command, "--sequence-parallel"));
  EXPECT_FALSE(Has(MakeLaunchCommand(Engine::kMegatron, p, Megatron(m, 1, 8, 1, 1)).command,
                   "--sequence-parallel"));
}

TEST(Unsupported, VllmExpertParallelismSpansTheStage) {
  const ModelSpec m = Preset("mixtral-8x7b");
  // tp=2, dp=4: G = 8 GPUs per stage. ep=2 (expert-TP 4) is neither 1 nor 8.
  const Strategy s = Megatron(m, 1, 2, 4, 2);
  const std::vector<std::string> u = UnsupportedChoices(Engine::kVllm, m, s);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].rfind("ep=2 (expert-TP 4)", 0), 0u) << u[0];
  EXPECT_TRUE(Has(u[0], "pp=1,tp=2,dp=4,ep=1 or pp=1,tp=2,dp=4,ep=8")) << u[0];
  const std::vector<Strategy> alts = EngineAlternatives(Engine::kVllm, m, s);
  ASSERT_EQ(alts.size(), 2u);
  EXPECT_EQ(alts[0].ep, 1);
  EXPECT_EQ(alts[1].ep, 8);
  // Megatron-LM sets any ep; TensorRT-LLM too but not tp=2 with dp=4; SGLang only without DP
  // attention (with it, its all-to-all sets --ep-size to --tp-size).
  EXPECT_TRUE(UnsupportedChoices(Engine::kMegatron, m, s).empty());
  EXPECT_FALSE(UnsupportedChoices(Engine::kSglang, m, s).empty());
  EXPECT_TRUE(UnsupportedChoices(Engine::kSglang, m, Megatron(m, 1, 8, 1, 2)).empty());
  // 16 GPUs per stage and 8 experts: vLLM can only turn EP off.
  const Strategy wide = Megatron(m, 1, 2, 8, 2);
  const std::vector<Strategy> wide_alts = EngineAlternatives(Engine::kVllm, m, wide);
  ASSERT_EQ(wide_alts.size(), 1u);
  EXPECT_EQ(wide_alts[0].ep, 1);
}

TEST(Unsupported, TrtllmAttentionIsAllTpOrAllDp) {
  const ModelSpec m = Preset("mixtral-8x7b");
  const Strategy s = Megatron(m, 1, 2, 4, 8);
  const std::vector<std::string> u = UnsupportedChoices(Engine::kTrtllm, m, s);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].rfind("tp=2 with dp=4", 0), 0u) << u[0];
  const std::vector<Strategy> alts = EngineAlternatives(Engine::kTrtllm, m, s);
  ASSERT_EQ(alts.size(), 2u);
  EXPECT_EQ(std::make_pair(alts[0].tp, alts[0].dp), std::make_pair(1, 8));
  EXPECT_EQ(std::make_pair(alts[1].tp, alts[1].dp), std::make_pair(8, 1));
  // Dense models: dp is plain replication, which TensorRT-LLM expresses as separate servers.
  const ModelSpec dense = Preset("llama-3.1-70b");
  EXPECT_TRUE(UnsupportedChoices(Engine::kTrtllm, dense, Megatron(dense, 1, 2, 4, 1)).empty());
}

TEST(Unsupported, SglangDenseLayersWithDpAttention) {
  const ModelSpec m = Preset("llama-4-maverick");  // 40 heads, dense and MoE layers alternate
  const Strategy s = Megatron(m, 1, 2, 4, 8);
  const std::vector<std::string> u = UnsupportedChoices(Engine::kSglang, m, s);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_TRUE(Has(u[0], "--moe-dense-tp-size 1")) << u[0];
  EXPECT_EQ(EngineAlternatives(Engine::kSglang, m, s).size(), 2u);
  // Attention TP 1 with dp 8 is expressible, with --moe-dense-tp-size 1.
  const Strategy adp = Megatron(m, 1, 1, 8, 8);
  EXPECT_TRUE(UnsupportedChoices(Engine::kSglang, m, adp).empty());
  const Problem p = MakeProblem("llama-4-maverick", 8);
  const std::string cmd = MakeLaunchCommand(Engine::kSglang, p, adp).command;
  EXPECT_TRUE(Has(cmd, "--tp-size 8 --dp-size 8 --enable-dp-attention --ep-size 8")) << cmd;
  EXPECT_TRUE(Has(cmd, "--moe-dense-tp-size 1")) << cmd;
}

TEST(Commands, EveryEngineOnAHandWrittenPlan) {
  // mixtral-8x7b on 16 GPUs: pp=2 stages of 8, tp=2, dp=4, ep=8 (expert-TP 1), batch 16.
  Problem p = MakeProblem("mixtral-8x7b", 16);
  p.workload.kv = DType::kFP8;
  const Strategy s = Megatron(p.model, 2, 2, 4, 8, 16);

  // vLLM: 2 nodes; a data-parallel rank is tp x pp = 4 GPUs, so 2 ranks per node start with
  // vLLM's multi-node data parallelism; the token budget is vLLM's default 8192.
  const LaunchCommand v = MakeLaunchCommand(Engine::kVllm, p, s);
  EXPECT_EQ(v.command,
            "vllm serve mistralai/Mixtral-8x7B-v0.1 --tensor-parallel-size 2 "
            "--pipeline-parallel-size 2 --data-parallel-size 4 --enable-expert-parallel "
            "--max-num-seqs 32 --max-model-len 4096 --max-num-batched-tokens 8192 "
            "--kv-cache-dtype fp8 --port 8000 --data-parallel-size-local 2 "
            "--data-parallel-address ${HEAD_ADDR} --data-parallel-rpc-port 13345");
  LaunchOptions second;
  second.node_rank = 1;
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kVllm, p, s, second).command,
                  "--headless --data-parallel-start-rank 2"));

  // SGLang: --tp-size is the 8 GPUs of a stage (attention TP = 8/4 = 2); requests = 16 x 4 x 2;
  // expert parallelism over DeepEP (auto mode: an aggregated server); chunked prefill = the
  // per-rank budget 8192 x dp 4 (SGLang divides it over the attention-DP ranks); 2 nodes.
  const LaunchCommand g = MakeLaunchCommand(Engine::kSglang, p, s);
  EXPECT_EQ(g.command,
            "python -m sglang.launch_server --model-path mistralai/Mixtral-8x7B-v0.1 --tp-size 8 "
            "--dp-size 4 --enable-dp-attention --ep-size 8 --moe-a2a-backend deepep --deepep-mode "
            "auto --pp-size 2 --max-running-requests 128 --context-length 4096 "
            "--chunked-prefill-size 32768 --kv-cache-dtype fp8_e4m3 --port 30000 --nnodes 2 "
            "--node-rank ${NODE_RANK} --dist-init-addr ${HEAD_ADDR}:5000");

  // TensorRT-LLM with attention DP (tp=1, dp=8) and an FP8 KV cache: both in the YAML.
  const Strategy adp = Megatron(p.model, 2, 1, 8, 8, 16);
  const LaunchCommand t = MakeLaunchCommand(Engine::kTrtllm, p, adp);
  // 16 GPUs on 2 nodes: one MPI job from the head node.
  EXPECT_EQ(t.command,
            "mpirun --allow-run-as-root -H ${MPI_HOSTS} -np 16 trtllm-llmapi-launch trtllm-serve "
            "mistralai/Mixtral-8x7B-v0.1 --tp_size 8 --pp_size 2 --ep_size 8 --max_batch_size 16 "
            "--max_seq_len 4096 --max_num_tokens 8192 --extra_llm_api_options "
            "extra-llm-api-config.yml --port 8000");
  EXPECT_EQ(t.extra_file_name, "extra-llm-api-config.yml");
  EXPECT_EQ(t.extra_file, "enable_attention_dp: true\nkv_cache_config:\n  dtype: fp8\n");

  // Megatron: expert-TP = tp*dp/ep = 8/8 = 1; data parallel implied (16 / (2 x 2) = 4).
  const LaunchCommand mg = MakeLaunchCommand(Engine::kMegatron, p, s);
  EXPECT_EQ(mg.command,
            "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 "
            "--expert-model-parallel-size 8 --expert-tensor-parallel-size 1");
  EXPECT_TRUE(std::any_of(mg.notes.begin(), mg.notes.end(),
                          [](const std::string& n) { return Has(n, "data-parallel size 4"); }));
  // 16 GPUs = 2 nodes: every engine says how to launch across them.
  for (Engine e : kAllEngines) {
    const LaunchCommand c = MakeLaunchCommand(e, p, e == Engine::kTrtllm ? adp : s);
    EXPECT_TRUE(std::any_of(c.notes.begin(), c.notes.end(),
                            [](const std::string& n) { return Has(n, "2 nodes"); }))
        << EngineName(e);
  }
}

TEST(Commands, ARunningLimitReplacesTheBatchInTheRunningFlags) {
  // LaunchOptions::max_running (a sized prefill pool's limit): mixtral-8x7b on 16 GPUs, pp=2,
  // tp=2, dp=4, batch 16, limit 100 per rank: vLLM 100 x pp 2 = 200, SGLang 100 x dp 4 x pp 2 =
  // 800, TensorRT-LLM 100 per rank; each says what it counts.
  Problem p = MakeProblem("mixtral-8x7b", 16);
  const Strategy s = Megatron(p.model, 2, 2, 4, 8, 16);
  LaunchOptions o;
  o.max_running = 100;
  auto note_has = [](const LaunchCommand& c, const std::string& what) {
    return std::any_of(c.notes.begin(), c.notes.end(),
                       [&](const std::string& n) { return Has(n, what); });
  };
  const LaunchCommand v = MakeLaunchCommand(Engine::kVllm, p, s, o);
  EXPECT_TRUE(Has(v.command, "--max-num-seqs 200 ")) << v.command;
  EXPECT_TRUE(note_has(v, "--max-num-seqs = running limit 100 x pp 2"));
  EXPECT_TRUE(note_has(v, "running limit 100 per rank: the limit the sizing simulated"));
  const LaunchCommand g = MakeLaunchCommand(Engine::kSglang, p, s, o);
  EXPECT_TRUE(Has(g.command, "--max-running-requests 800 ")) << g.command;
  const Strategy adp = Megatron(p.model, 2, 1, 8, 8, 16);
  const LaunchCommand t = MakeLaunchCommand(Engine::kTrtllm, p, adp, o);
  EXPECT_TRUE(Has(t.command, "--max_batch_size 100 ")) << t.command;
  EXPECT_TRUE(note_has(t, "--max_batch_size = running limit 100"));
  // Without the option the batch is launched, as before.
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kVllm, p, s).command, "--max-num-seqs 32 "));
  EXPECT_FALSE(note_has(MakeLaunchCommand(Engine::kVllm, p, s), "running limit"));
}

// vLLM refuses --max-num-batched-tokens below --max-num-seqs (vllm/config/scheduler.py): with a
// 128-token budget, a running limit of 100 x pp 2 = 200 is capped at 128; a batch of 100 priced
// under another engine raises the budget to its 200 sequences, and says that it departs from the
// price; within the budget nothing changes.
TEST(Commands, VllmKeepsMaxNumSeqsWithinTheTokenBudget) {
  Problem p = MakeProblem("mixtral-8x7b", 16);
  p.workload.max_num_tokens = 128;
  const Strategy s = Megatron(p.model, 2, 2, 4, 8, 100);
  auto note_has = [](const LaunchCommand& c, const std::string& what) {
    return std::any_of(c.notes.begin(), c.notes.end(),
                       [&](const std::string& n) { return Has(n, what); });
  };
  LaunchOptions o;
  o.max_running = 100;
  const LaunchCommand capped = MakeLaunchCommand(Engine::kVllm, p, s, o);
  EXPECT_TRUE(Has(capped.command, "--max-num-seqs 128 ")) << capped.command;
  EXPECT_TRUE(Has(capped.command, "--max-num-batched-tokens 128")) << capped.command;
  EXPECT_TRUE(note_has(capped, "running limit 100 x pp 2 = 200 capped at the token budget"));
  const LaunchCommand raised = MakeLaunchCommand(Engine::kVllm, p, s);
  EXPECT_TRUE(Has(raised.command, "--max-num-seqs 200 ")) << raised.command;
  EXPECT_TRUE(Has(raised.command, "--max-num-batched-tokens 200")) << raised.command;
  EXPECT_TRUE(note_has(raised, "raised from the 128 the plan was priced with"));
  const LaunchCommand within = MakeLaunchCommand(Engine::kVllm, p, Megatron(p.model, 2, 2, 4, 8, 64));
  EXPECT_TRUE(Has(within.command, "--max-num-seqs 128 --max-model-len")) << within.command;
  EXPECT_TRUE(note_has(within, "the per-step token budget the plan was priced with"));
}

// TensorRT-LLM's LLM API leaves chunked prefill off, and a prompt above --max_num_tokens then
// cannot be scheduled: the plan priced it in chunks, so the YAML turns chunking on, and only then.
TEST(Commands, TrtllmChunksPromptsLongerThanItsTokenBudget) {
  Problem p = MakeProblem("llama-3.1-70b", 8, Mode::kServe);
  p.workload.isl = 20000;
  p.workload.osl = 500;
  const Strategy s = Megatron(p.model, 1, 8, 1, 1, 4);
  const LaunchCommand long_prompts = MakeLaunchCommand(Engine::kTrtllm, p, s);
  EXPECT_TRUE(Has(long_prompts.extra_file, "enable_chunked_prefill: true\n"))
      << long_prompts.extra_file;
  EXPECT_TRUE(Has(long_prompts.command, "--max_num_tokens 8192")) << long_prompts.command;
  p.workload.isl = 8192;
  EXPECT_FALSE(Has(MakeLaunchCommand(Engine::kTrtllm, p, s).extra_file, "enable_chunked_prefill"));
}

// SGLang caps each rank's prefill batch at --max-prefill-tokens (16,384 by default, not divided
// over DP-attention ranks): a priced budget above it raises the cap; the default budget does not.
TEST(Commands, SglangRaisesItsPrefillCapToALargerBudget) {
  Problem p = MakeProblem("deepseek-v3", 8, Mode::kServe);
  const Strategy s = Megatron(p.model, 1, 1, 8, 8, 16);
  EXPECT_FALSE(Has(MakeLaunchCommand(Engine::kSglang, p, s).command, "--max-prefill-tokens"));
  p.workload.max_num_tokens = 32768;
  const LaunchCommand big = MakeLaunchCommand(Engine::kSglang, p, s);
  EXPECT_TRUE(Has(big.command, "--chunked-prefill-size 262144")) << big.command;
  EXPECT_TRUE(Has(big.command, "--max-prefill-tokens 32768")) << big.command;
}

TEST(Commands, AtomAndSglangOnAmdGpus) {
  // DeepSeek-V3 on one node of 8 MI355X: attention DP 8, experts over all 8 (288 slots), two-batch
  // overlap, MTP 2, FP8 KV, decode at context 4096, batch 64 per rank.
  Problem p = MakeProblem("deepseek-v3", 8);
  p.cluster = *MakeCluster("mi355x", 8, 8);
  p.workload.kv = DType::kFP8;
  Strategy s = Megatron(p.model, 1, 1, 8, 8, 64);
  s.slots = 288;
  s.overlap = Overlap::kTbo;
  s.mtp = 2;
  // ATOM states vLLM's scheduler limits the plan was priced with (its own defaults differ):
  // max-num-seqs 64 x pp 1, the 8192-token budget; 288 - 256 = 32 redundant experts; the HTTP
  // port is --server-port (--port is its engine-internal one). Attention DP over a MoE model is
  // --enable-dp-attention on all 8 GPUs of --tensor-parallel-size (with -tp 1 -dp 8 alone each
  // engine core would hold every expert: its MoE layers span DP ranks only in that mode).
  const LaunchCommand a = MakeLaunchCommand(Engine::kAtom, p, s);
  EXPECT_EQ(a.command,
            "python -m atom.entrypoints.openai_server --model deepseek-ai/DeepSeek-V3 "
            "--tensor-parallel-size 8 --enable-dp-attention --enable-expert-parallel "
            "--eplb-enable --eplb-config '{\"num_redundant_experts\": 32}' --enable-tbo all "
            "--max-num-seqs 64 --max-model-len 4096 --max-num-batched-tokens 8192 "
            "--kv_cache_dtype fp8 --method mtp --num-speculative-tokens 2 --server-port 8000");
  // A dense model's -dp engine cores are replicas: -tp inside each, no DP attention.
  Problem dense = MakeProblem("llama-3.1-70b", 8);
  dense.cluster = p.cluster;
  const LaunchCommand ad = MakeLaunchCommand(Engine::kAtom, dense, Megatron(dense.model, 1, 2, 4, 1, 16));
  EXPECT_TRUE(Has(ad.command, " --tensor-parallel-size 2 --data-parallel-size 4 ")) << ad.command;
  EXPECT_FALSE(Has(ad.command, "dp-attention")) << ad.command;
  // SGLang on ROCm moves tokens with MoRI, not DeepEP (CUDA-only).
  const LaunchCommand g = MakeLaunchCommand(Engine::kSglang, p, s);
  EXPECT_TRUE(Has(g.command, " --ep-size 8 --moe-a2a-backend mori ")) << g.command;
  EXPECT_FALSE(Has(g.command, "deepep")) << g.command;
  // On NVIDIA GPUs the same plan keeps DeepEP.
  Problem nv = p;
  nv.cluster = *MakeCluster("h200", 8, 8);
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kSglang, nv, s).command,
                  "--moe-a2a-backend deepep --deepep-mode auto"));
  // vLLM's P/D pools: DeepEP's high-throughput kernels for prefill, low-latency for decode, MoRI
  // on AMD GPUs; an aggregated server keeps vLLM's default all2all backend.
  LaunchOptions pre, dec;
  pre.role = ServeRole::kPrefill;
  dec.role = ServeRole::kDecode;
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kVllm, nv, s, pre).command,
                  " --all2all-backend deepep_high_throughput "));
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kVllm, nv, s, dec).command,
                  " --all2all-backend deepep_low_latency "));
  EXPECT_FALSE(Has(MakeLaunchCommand(Engine::kVllm, nv, s).command, "--all2all-backend"));
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kVllm, p, s, dec).command, " --all2all-backend mori "));
  EXPECT_FALSE(Has(MakeLaunchCommand(Engine::kVllm, p, s).command, "--all2all-backend"));
  // A plan's translations are the engines with a build for the GPUs: no TensorRT-LLM on AMD, no
  // ATOM on NVIDIA.
  const Simulator sim(p);
  StatusOr<StrategySpace> space = StrategySpace::Make(p.model, 8, SpaceOptions{});
  ASSERT_TRUE(space.ok());
  const ExpressibleBest none;
  std::vector<Engine> amd;
  for (const EngineTranslation& t : TranslatePlan(sim, s, none)) amd.push_back(t.engine);
  EXPECT_EQ(amd, (std::vector<Engine>{Engine::kVllm, Engine::kSglang, Engine::kMegatron,
                                      Engine::kAtom}));
  std::vector<Engine> nvidia;
  for (const EngineTranslation& t : TranslatePlan(Simulator(nv), s, none))
    nvidia.push_back(t.engine);
  EXPECT_EQ(nvidia, (std::vector<Engine>{Engine::kVllm, Engine::kSglang, Engine::kTrtllm,
                                         Engine::kMegatron}));
  EXPECT_EQ(WorkersOf("dynamo+sglang"), Engine::kSglang);
  EXPECT_EQ(WorkersOf("ATOM"), Engine::kAtom);
  EXPECT_EQ(WorkersOf("ideal"), std::nullopt);
}

// The GUIDE's first problem: Llama-3.1-70B FP8 on 8 H100s, 1024/256, TTFT 2 s, TPOT 50 ms, planned
// under vLLM's scheduler and limits.
Problem GuideLlama70b() {
  Problem p = MakeProblem("llama-3.1-70b", 8, Mode::kServe);
  p.workload.isl = 1024;
  p.workload.osl = 256;
  p.workload.weight = p.workload.kv = DType::kFP8;
  p.workload.ttft_ms = 2000;
  p.workload.tpot_ms = 50;
  p.workload.engine = l2s::Engine::kVllm;
  p.workload.max_batch = DefaultsOf(l2s::Engine::kVllm).max_batch;
  return p;
}

TEST(TranslatePlan, TheRunnablePlanBoundsTheBestExpressible) {
  // Llama-3.1-70B FP8 on 8 H100s under vLLM, the plan pp 2 x dp 4 at batch 55: the scan of the
  // space's batch options (powers of two) finds less (pp 1 x tp 2 x dp 4 at 64: 849 tokens/s per
  // GPU against 1,044 when written). Every engine that runs the plan valid has a best-as-is of at
  // least what it runs; one that expresses it exactly has the plan itself as its best.
  const Problem p = GuideLlama70b();
  const Simulator sim(p);
  const Strategy s = Megatron(p.model, 2, 1, 4, 1, 55);
  const StrategySpace space = *StrategySpace::Make(p.model, 8, SpaceOptions{});
  const ExpressibleBest best = BestExpressible(sim, space, nullptr);
  int exact = 0;
  for (const EngineTranslation& x : TranslatePlan(sim, s, best)) {
    if (!x.runnable) continue;
    ASSERT_TRUE(x.has_best) << EngineName(x.engine);
    EXPECT_GE(x.best_eval.tokens_per_s_per_gpu, x.launched_eval.tokens_per_s_per_gpu)
        << EngineName(x.engine);
    if (x.unsupported.empty()) {
      ++exact;
      EXPECT_EQ(x.best, x.launched) << EngineName(x.engine);
      EXPECT_EQ(x.best, s) << EngineName(x.engine);
    }
  }
  EXPECT_GE(exact, 1);
}

// The Launch section's other engines: a plan priced under vLLM's scheduler is also priced, as run
// by each other serving engine, under that engine's scheduler and default batch limit (the GUIDE's
// Llama-3.1-70B plan: SGLang expresses it exactly, but its scheduler misses the 50 ms TPOT).
TEST(TranslatePlan, OtherEnginesArePricedUnderTheirOwnScheduler) {
  const Problem p = GuideLlama70b();
  const Simulator sim(p);
  const Strategy s = Megatron(p.model, 2, 1, 4, 1, 55);
  ASSERT_TRUE(sim.Evaluate(s).valid());
  int others = 0;
  for (const EngineTranslation& x : TranslatePlan(sim, s, ExpressibleBest{})) {
    const l2s::Engine own = SchedulerOf(x.engine);
    EXPECT_EQ(x.other_scheduler, own != l2s::Engine::kVllm && x.engine != Engine::kMegatron)
        << EngineName(x.engine);
    if (!x.other_scheduler) continue;
    ++others;
    Problem q = p;
    q.workload.engine = own;
    q.workload.max_batch = DefaultsOf(own).max_batch;
    q.workload.engine_factor = Simulator::EngineFactor(std::string(EngineName(x.engine)));
    const Evaluation e = Simulator(q).Evaluate(x.launched);
    ASSERT_EQ(e.valid(), x.own_eval.valid()) << EngineName(x.engine);
    if (e.valid()) {
      EXPECT_DOUBLE_EQ(e.tokens_per_s_per_gpu, x.own_eval.tokens_per_s_per_gpu);
    }
    if (x.engine == Engine::kSglang) {
      EXPECT_FALSE(x.own_eval.valid());
      EXPECT_TRUE(Has(x.own_reason, "TPOT")) << x.own_reason;
    }
  }
  EXPECT_EQ(others, 2);  // SGLang and TensorRT-LLM
}

// ATOM runs vLLM's scheduler with a factor and a request overhead of its own: a plan priced as
// vLLM's (its factor) is re-priced for ATOM's translation, one priced as ATOM's is not.
TEST(TranslatePlan, AtomIsPricedAsItselfUnderVllmsScheduler) {
  Problem p = MakeProblem("deepseek-v3", 8, Mode::kServe);
  p.cluster = *MakeCluster("mi355x", 8, 8);
  p.workload.isl = 1024;
  p.workload.osl = 256;
  p.workload.weight = DType::kFP8;
  p.workload.engine = l2s::Engine::kVllm;
  p.workload.max_batch = DefaultsOf(l2s::Engine::kVllm).max_batch;
  p.workload.engine_factor = Simulator::EngineFactor("vllm");
  p.workload.request_overhead_s = Simulator::RequestOverheadSeconds(std::string("vllm"));
  const Strategy s = Megatron(p.model, 1, 8, 1, 8, 64);
  ASSERT_TRUE(Simulator(p).Evaluate(s).valid());
  auto atom_of = [&](const Problem& q) {
    for (const EngineTranslation& x : TranslatePlan(Simulator(q), s, ExpressibleBest{}))
      if (x.engine == Engine::kAtom) return x;
    ADD_FAILURE() << "no ATOM translation";
    return EngineTranslation{};
  };
  const EngineTranslation a = atom_of(p);
  ASSERT_TRUE(a.other_scheduler);
  Problem q = p;
  q.workload.engine_factor = Simulator::EngineFactor("atom");
  q.workload.request_overhead_s = Simulator::RequestOverheadSeconds(std::string("atom"));
  const Evaluation e = Simulator(q).Evaluate(a.launched);
  ASSERT_TRUE(e.valid());
  ASSERT_TRUE(a.own_eval.valid());
  EXPECT_DOUBLE_EQ(a.own_eval.tokens_per_s_per_gpu, e.tokens_per_s_per_gpu);
  EXPECT_LT(a.own_eval.tokens_per_s_per_gpu, a.launched_eval.tokens_per_s_per_gpu);  // 0.907 < 0.981
  EXPECT_NEAR(a.own_eval.ttft_s - a.launched_eval.ttft_s, 0.031, 0.02);
  EXPECT_FALSE(atom_of(q).other_scheduler);  // a plan priced as ATOM's is ATOM's already
}

TEST(Commands, DenseModelsReplicateOverDp) {
  Problem p = MakeProblem("llama-3.1-8b", 8);
  const Strategy s = Megatron(p.model, 1, 2, 4, 1, 32);
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kSglang, p, s).command, "--tp-size 2 --dp-size 4 --max"));
  EXPECT_FALSE(Has(MakeLaunchCommand(Engine::kSglang, p, s).command, "deepep"));
  EXPECT_FALSE(Has(MakeLaunchCommand(Engine::kSglang, p, s).command, "dp-attention"));
  const LaunchCommand t = MakeLaunchCommand(Engine::kTrtllm, p, s);
  EXPECT_TRUE(Has(t.command, "--tp_size 2 --pp_size 1 --max_batch_size 32")) << t.command;
  EXPECT_TRUE(t.extra_file.empty());
  EXPECT_FALSE(Has(MakeLaunchCommand(Engine::kVllm, p, s).command, "expert"));
}

TEST(Commands, DenseReplicasOverNodesAreServersOfTheirOwn) {
  // Llama-3.1-70B, tp 2 x dp 8 on two 8-GPU nodes: eight replicas of 2 GPUs.
  Problem p = MakeProblem("llama-3.1-70b", 16);
  const Strategy s = Megatron(p.model, 1, 2, 8, 1, 32);
  auto noted = [](const LaunchCommand& lc, const std::string& words) {
    return std::any_of(lc.notes.begin(), lc.notes.end(),
                       [&](const std::string& n) { return Has(n, words); });
  };
  // SGLang's --dp-size starts every replica on each node's GPUs (--nnodes 2 would split each tp
  // group over the nodes): one server of tp 2, started 8 times.
  const LaunchCommand g = MakeLaunchCommand(Engine::kSglang, p, s);
  EXPECT_TRUE(Has(g.command, "--tp-size 2 --max-running-requests 32")) << g.command;
  EXPECT_FALSE(Has(g.command, "--dp-size")) << g.command;
  EXPECT_FALSE(Has(g.command, "--nnodes")) << g.command;
  EXPECT_TRUE(noted(g, "dp = 8: start 8 such servers of 2 GPUs each behind a router"));
  // TensorRT-LLM: the same servers, each without an MPI job over the nodes.
  const LaunchCommand t = MakeLaunchCommand(Engine::kTrtllm, p, s);
  EXPECT_FALSE(Has(t.command, "mpirun")) << t.command;
  EXPECT_TRUE(noted(t, "dp = 8: start 8 such servers of 2 GPUs each"));
  EXPECT_FALSE(noted(t, "spans 2 nodes"));
  // vLLM runs data parallelism over nodes itself: one server, headless ranks on node 2.
  const LaunchCommand v = MakeLaunchCommand(Engine::kVllm, p, s);
  EXPECT_TRUE(Has(v.command, "--data-parallel-size 8")) << v.command;
  EXPECT_TRUE(Has(v.command, "--data-parallel-size-local 4")) << v.command;
  // Within one node SGLang keeps --dp-size: tp 2 x dp 4 on 8 GPUs.
  const Strategy one = Megatron(p.model, 1, 2, 4, 1, 32);
  Problem p8 = MakeProblem("llama-3.1-70b", 8);
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kSglang, p8, one).command, "--dp-size 4"));
  EXPECT_EQ(SeparateReplicaServers(Engine::kSglang, false, p.model, s, 8), 8);
  EXPECT_EQ(SeparateReplicaServers(Engine::kSglang, false, p8.model, one, 8), 1);
  EXPECT_EQ(SeparateReplicaServers(Engine::kVllm, false, p.model, s, 8), 1);
  EXPECT_EQ(SeparateReplicaServers(Engine::kTrtllm, false, p8.model, one, 8), 4);
  // The written scripts: eight SGLang servers, four per node, each on its own GPUs and port.
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "l2s-sglang-dense-replicas";
  std::filesystem::remove_all(dir);
  Evaluation e;
  e.verdict = Verdict::kValid;
  ASSERT_TRUE(EmitDeployment(dir.string(), Engine::kSglang, p, s, e, {}, nullptr).ok());
  for (const char* node : {"node-1.sh", "node-2.sh"}) {
    std::ifstream in(dir / node);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    int servers = 0;
    for (size_t at = text.find("sglang.launch_server"); at != std::string::npos;
         at = text.find("sglang.launch_server", at + 1))
      ++servers;
    EXPECT_EQ(servers, 4) << node << "\n" << text;
    EXPECT_TRUE(Has(text, "CUDA_VISIBLE_DEVICES=6,7")) << text;
    EXPECT_FALSE(Has(text, "--nnodes")) << text;
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "router.sh"));
}

// Servers sharing a node get their GPUs by the variable the GPU's runtime reads: on AMD
// HIP_VISIBLE_DEVICES, with CUDA_VISIBLE_DEVICES equal to it (vLLM's ROCm platform refuses two
// lists that differ); on NVIDIA CUDA_VISIBLE_DEVICES alone.
TEST(Commands, VisibleDevicesFollowTheGpusVendor) {
  EXPECT_EQ(VisibleDevicesEnv("nvidia", "0,1"), "CUDA_VISIBLE_DEVICES=0,1 ");
  EXPECT_EQ(VisibleDevicesEnv("amd", "4,5,6,7"),
            "HIP_VISIBLE_DEVICES=4,5,6,7 CUDA_VISIBLE_DEVICES=4,5,6,7 ");
  EXPECT_EQ(VisibleDevicesEnv("amd", ""), "");
  // Two 4-GPU replicas on one MI355X node, as written to its script.
  Problem p = MakeProblem("llama-3.1-70b", 8);
  StatusOr<ClusterSpec> amd = MakeCluster("mi355x", 4, 8);
  ASSERT_TRUE(amd.ok());
  p.cluster = *amd;
  const Strategy s = Megatron(p.model, 1, 4, 1, 1, 32);
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "l2s-amd-replicas";
  std::filesystem::remove_all(dir);
  Evaluation e;
  e.verdict = Verdict::kValid;
  EmitOptions two;
  two.replicas = 2;
  ASSERT_TRUE(EmitDeployment(dir.string(), Engine::kSglang, p, s, e, two, nullptr).ok());
  std::ifstream in(dir / "node-1.sh");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(Has(text, "HIP_VISIBLE_DEVICES=0,1,2,3 CUDA_VISIBLE_DEVICES=0,1,2,3 nohup")) << text;
  EXPECT_TRUE(Has(text, "HIP_VISIBLE_DEVICES=4,5,6,7 CUDA_VISIBLE_DEVICES=4,5,6,7 nohup")) << text;
}

TEST(Commands, MemoryFractionsByHand) {
  // 80 GiB per GPU: weights 40, KV 20.5, activations 2, reserve 3.9 GiB (66.4 in all).
  const double GiB = 1024.0 * 1024.0 * 1024.0;
  Evaluation e;
  e.verdict = Verdict::kValid;
  e.mem_capacity_bytes = 80 * GiB;
  e.weight_bytes = 40 * GiB;
  e.kv_bytes = 20.5 * GiB;
  e.act_bytes = 2 * GiB;
  e.reserve_bytes = 3.9 * GiB;
  e.mem_bytes = 66.4 * GiB;
  const Problem p = MakeProblem("llama-3.1-70b", 8);
  const Strategy s = Megatron(p.model, 1, 8, 1, 1, 32);
  LaunchOptions o;
  o.eval = &e;
  // SGLang's static pool: weights + KV = 60.5 / 80 = 0.75625 -> 0.76, below SGLang's default
  // at --tp-size 8, 0.81, which stays.
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kSglang, p, s, o).command, "--mem-fraction-static 0.81 "));
  // vLLM: 66.4 / 80 = 0.83 is below vLLM's default 0.90, which stays.
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kVllm, p, s, o).command, "--gpu-memory-utilization 0.90 "));
  // TensorRT-LLM: the KV's share of what weights, activations and reserve leave, 20.5 / 34.1 =
  // 0.601, is below its default 0.90.
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kTrtllm, p, s, o).extra_file,
                  "kv_cache_config:\n  free_gpu_memory_fraction: 0.90\n"));
  // A fuller GPU: KV 28.5 GiB (74.4 in all, the issue's vLLM prefill server).
  e.kv_bytes = 28.5 * GiB;
  e.mem_bytes = 74.4 * GiB;
  // (74.4 - 0.538 in use before vLLM starts) / 80 = 0.9233 -> 0.93.
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kVllm, p, s, o).command, "--gpu-memory-utilization 0.93 "));
  {
    // A plan that fills the GPU: (78 - 0.538) / 80 = 0.9683 -> 0.97; (80 - 0.538) / 80 = 0.9933
    // rounds up to 1.00, which vLLM refuses at startup (more than is free after the CUDA
    // context): at most 0.99, the free share rounded down, and the note says so.
    Evaluation full = e;
    full.mem_bytes = 78 * GiB;
    o.eval = &full;
    EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kVllm, p, s, o).command,
                    "--gpu-memory-utilization 0.97 "));
    full.mem_bytes = 80 * GiB;
    const LaunchCommand lc = MakeLaunchCommand(Engine::kVllm, p, s, o);
    EXPECT_TRUE(Has(lc.command, "--gpu-memory-utilization 0.99 ")) << lc.command;
    EXPECT_TRUE(std::any_of(lc.notes.begin(), lc.notes.end(), [](const std::string& n) {
      return Has(n, "at most 0.99, the share free at startup");
    }));
    EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kAtom, p, s, o).command,
                    "--gpu-memory-utilization 0.99 "));
    o.eval = &e;
  }
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kSglang, p, s, o).command, "--mem-fraction-static 0.86 "));
  // 28.5 / 34.1 = 0.8358 -> the default 0.90; KV 32 GiB: 32 / 34.1 = 0.9384 -> 0.94.
  e.kv_bytes = 32 * GiB;
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kTrtllm, p, s, o).extra_file,
                  "free_gpu_memory_fraction: 0.94\n"));
  // No evaluation: no fraction, and a note says the default stays.
  const LaunchCommand none = MakeLaunchCommand(Engine::kVllm, p, s);
  EXPECT_FALSE(Has(none.command, "--gpu-memory-utilization"));
  EXPECT_TRUE(std::any_of(none.notes.begin(), none.notes.end(),
                          [](const std::string& n) { return Has(n, "engine's default"); }));
}

TEST(Commands, CudaGraphLimitAndTokenBudgetFollowThePlan) {
  Problem p = MakeProblem("qwen3-30b-a3b", 8);
  // Batch 300 per rank: above SGLang's 256 and TensorRT-LLM's 128, below vLLM's 512.
  const Strategy s = Megatron(p.model, 1, 1, 8, 8, 300);
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kSglang, p, s).command, "--cuda-graph-max-bs 300"));
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kTrtllm, p, s).extra_file,
                  "cuda_graph_config:\n  enable_padding: true\n  max_batch_size: 300\n"));
  EXPECT_FALSE(Has(MakeLaunchCommand(Engine::kVllm, p, s).command, "cudagraph"));
  // SGLang with attention DP divides --chunked-prefill-size over the 8 ranks: 8192 x 8.
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kSglang, p, s).command, "--chunked-prefill-size 65536"));
  // The plan's own limits win: a budget of 4096 tokens and graphs up to 64.
  p.workload.max_num_tokens = 4096;
  p.workload.cuda_graph_max_batch = 64;
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kVllm, p, s).command,
                  "--max-num-batched-tokens 4096 --max-cudagraph-capture-size 64"));
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kTrtllm, p, s).command, "--max_num_tokens 4096"));
  // A prefill server captures no decode graphs.
  LaunchOptions prefill;
  prefill.role = ServeRole::kPrefill;
  EXPECT_FALSE(Has(MakeLaunchCommand(Engine::kSglang, p, s, prefill).command, "cuda-graph"));
  EXPECT_TRUE(Has(MakeLaunchCommand(Engine::kSglang, p, s, prefill).command, "--deepep-mode normal"));
}

// Exhaustive reference: the best valid strategy with Megatron dims that `e` expresses, over the
// space's degree, batch and sp options, by evaluating everything. Sets *found.
double BruteForceBest(const Simulator& sim, const StrategySpace& space, Engine e, bool* found) {
  const ModelSpec& m = sim.problem().model;
  double best = 0;
  *found = false;
  for (int pp : space.pp_options())
    for (int tp : space.tp_options())
      for (int ep : space.ep_options())
        for (int b : space.batch_options())
          for (bool sp : {false, true}) {
            const int n = space.num_gpus();
            if (n % (pp * tp) != 0) continue;
            const Strategy s = Megatron(m, pp, tp, n / (pp * tp), ep, b, sp);
            if (!CheckStrategy(m, n, s).ok() || !Expressible(e, m, s)) continue;
            const Evaluation ev = sim.Evaluate(s);
            if (ev.valid() && (!*found || ev.tokens_per_s_per_gpu > best)) {
              best = ev.tokens_per_s_per_gpu;
              *found = true;
            }
          }
  return best;
}

TEST(BestExpressible, MatchesBruteForceAndBoundsTheHeuristic) {
  Problem p = MakeProblem("mixtral-8x7b", 16);
  const Simulator sim(p);
  SpaceOptions opt;  // plan's space (batch and sp searched), batch up to 64
  opt.max_batch = 64;
  StatusOr<StrategySpace> space = StrategySpace::Make(sim.problem().model, 16, opt);
  ASSERT_TRUE(space.ok());
  const ExpressibleBest eb = BestExpressible(sim, *space, nullptr);
  EXPECT_FALSE(eb.cancelled);
  for (size_t k = 0; k < kAllEngines.size(); ++k) {
    const Engine e = kAllEngines[k];
    bool ref_found = false;
    const double ref = BruteForceBest(sim, *space, e, &ref_found);
    EXPECT_EQ(eb.found[k], ref_found) << EngineName(e);
    if (!eb.found[k]) continue;
    EXPECT_DOUBLE_EQ(eb.eval[k].tokens_per_s_per_gpu, ref) << EngineName(e);
    EXPECT_TRUE(Expressible(e, sim.problem().model, eb.best[k])) << EngineName(e);
    // Megatron-LM expresses a superset of what the serving engines express (with Megatron dims).
    EXPECT_LE(eb.eval[k].tokens_per_s_per_gpu, eb.eval[3].tokens_per_s_per_gpu) << EngineName(e);
  }
  // The Megatron heuristic (Megatron dims, sp off, exhaustive degrees and batch) is one of
  // Megatron-LM's expressible plans.
  StatusOr<std::unique_ptr<Searcher>> meg = MakeSearcher("megatron");
  ASSERT_TRUE(meg.ok());
  const SearchResult r = (*meg)->Search(sim, *space, 1, 0, nullptr);
  if (r.found) {
    ASSERT_TRUE(eb.found[3]);
    EXPECT_GE(eb.eval[3].tokens_per_s_per_gpu,
              r.eval.tokens_per_s_per_gpu - 1e-12 * std::fabs(r.eval.tokens_per_s_per_gpu));
  }
  // Translating an expressible plan changes nothing; translating the paper's variant runs
  // Megatron's dims.
  if (eb.found[3]) {
    // On NVIDIA GPUs: vLLM, SGLang, TensorRT-LLM and Megatron-LM, not ATOM (AMD only).
    const std::vector<EngineTranslation> t = TranslatePlan(sim, eb.best[3], eb);
    ASSERT_EQ(t.size(), 4u);
    ASSERT_EQ(t[3].engine, Engine::kMegatron);
    EXPECT_TRUE(t[3].unsupported.empty());
    EXPECT_TRUE(t[3].runnable);
    EXPECT_EQ(t[3].launched, eb.best[3]);
    EXPECT_EQ(t[3].best, eb.best[3]);
    for (const EngineTranslation& x : t) {
      if (!x.runnable) continue;
      EXPECT_TRUE(Expressible(x.engine, sim.problem().model, x.launched)) << EngineName(x.engine);
      EXPECT_FALSE(x.command.command.empty());
    }
  }
}

TEST(BestExpressible, StopsWhenCancelled) {
  struct CancelAfter : Observer {
    int64_t n = 0;
    bool Cancelled() override { return ++n >= 5; }
  } cancel;
  Problem p = MakeProblem("mixtral-8x7b", 16);
  const Simulator sim(p);
  StatusOr<StrategySpace> space =
      StrategySpace::Make(sim.problem().model, 16, SpaceOptions{});
  ASSERT_TRUE(space.ok());
  const ExpressibleBest eb = BestExpressible(sim, *space, &cancel);
  EXPECT_TRUE(eb.cancelled);
  EXPECT_EQ(eb.evaluated, 5);
}

// Invariant over random plans of four model shapes (all-MoE, MoE with dense layers, MLA + MTP,
// dense): every alternative an engine runs instead is structurally valid and expressible by that
// engine, and an expressible plan is run as itself (up to choices without effect).
TEST(EngineAlternatives, ValidExpressibleAndIdentityOnExpressiblePlans) {
  std::mt19937 rng(12);
  int checked = 0, expressible = 0, repaired = 0;
  for (const char* name : {"mixtral-8x7b", "llama-4-maverick", "deepseek-v3", "llama-3.1-70b"}) {
    const ModelSpec m = Preset(name);
    for (int gpus : {16, 64}) {
      std::vector<int> div;
      for (int d = 1; d <= gpus; d *= 2) div.push_back(d);
      const std::vector<int> slot_options = SlotOptions(m);
      for (int pp : div)
        for (int tp : div)
          for (int ep : div) {
            if (pp * tp > gpus) continue;
            Strategy s = Megatron(m, pp, tp, gpus / (pp * tp), ep, 8, rng() % 2 == 1);
            for (int i = 0; i < kNumOps; ++i)
              if (ModelHasOp(m, static_cast<Op>(i)))
                s.dims[i] = static_cast<Dim>(rng() % 3);
            s.slots = slot_options[rng() % slot_options.size()];
            if (ep > 1) s.overlap = static_cast<Overlap>(rng() % 3);
            if (m.mtp_layers > 0) s.mtp = static_cast<int>(rng() % 3);
            if (!CheckStrategy(m, gpus, s).ok()) continue;
            for (Engine e : kAllEngines) {
              ++checked;
              const std::vector<Strategy> alts = EngineAlternatives(e, m, s);
              for (const Strategy& a : alts) {
                EXPECT_TRUE(CheckStrategy(m, gpus, a).ok()) << EngineName(e) << " " << ToText(a);
                EXPECT_TRUE(Expressible(e, m, a)) << EngineName(e) << " " << ToText(a);
              }
              if (Expressible(e, m, s)) {
                ++expressible;
                ASSERT_EQ(alts.size(), 1u) << EngineName(e) << " " << ToText(s);
                EXPECT_EQ(Canonical(m, alts[0]), Canonical(m, s)) << EngineName(e);
              } else if (!alts.empty()) {
                ++repaired;
              }
            }
          }
    }
  }
  // The sample exercises both branches (hundreds of plans per engine).
  EXPECT_GT(checked, 400);
  EXPECT_GT(expressible, 20);
  EXPECT_GT(repaired, 100);
}

}  // namespace
}  // namespace l2s::launch
