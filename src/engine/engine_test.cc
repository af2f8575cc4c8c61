// Hand-derived facts of each engine's row of the capability table, each with where it comes from
// in the engine's own source or documentation.
#include "engine/engine.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "engine/restrict.h"
#include "model/presets.h"
#include "strategy/space.h"

namespace l2s::engine {
namespace {

ModelSpec Preset(const char* name) {
  StatusOr<ModelSpec> m = ModelPreset(name);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return *m;
}

// A strategy from its text form on `gpus` GPUs, with the operators the model lacks `none`.
Strategy S(const ModelSpec& m, const std::string& text, int gpus) {
  StatusOr<Strategy> s = FromText(text, gpus);
  EXPECT_TRUE(s.ok()) << text << ": " << s.status().message();
  Strategy out = *s;
  ClearAbsentOps(m, &out);
  EXPECT_TRUE(CheckStrategy(m, gpus, out).ok()) << text;
  return out;
}

const Capabilities& C(EngineId id) { return CapabilitiesOf(id); }

bool Has(const std::vector<Violation>& v, Violation::Kind k) {
  for (const Violation& x : v)
    if (x.kind == k) return true;
  return false;
}

// --engine may name a release: from the one its row describes on (Capabilities::version:
// vllm 0.11, sglang 0.5, trtllm 1.1, Dynamo 0.6, megatron core 0.14, atom 0.1), each release
// checked against the engine word before it.
TEST(EngineNames, ReleasesOlderThanTheRowAreRefused) {
  for (const char* ok : {"vllm", "vllm-0.11", "vLLM 0.11.2", "vllm0.12", "vllm-1.0", "sglang-0.5.4",
                         "sglang-0.5.5-rocm", "TensorRT-LLM v1.1", "trtllm-1.2.0rc1",
                         "dynamo-0.6+sglang-0.5", "NVIDIA Dynamo 0.7 + SGLang 0.5",
                         "dynamo+vllm-0.11", "megatron-core 0.14", "Megatron-LM 0.15", "ATOM 0.1.3",
                         "ideal", "0.12 vllm"})
    EXPECT_TRUE(CheckRelease(ok).ok()) << ok << ": " << CheckRelease(ok).message();
  const Status trt = CheckRelease("trtllm-0.17");
  ASSERT_FALSE(trt.ok());
  EXPECT_EQ(trt.message(),
            "l2s plans TensorRT-LLM from release 1.1 on (its capability row: the rules and launch "
            "flags read from that release; docs/PLAN.md \"Engine rules\"); 'trtllm-0.17' asks "
            "for 0.17: name release 1.1 or later, or none");
  // 0.6 < 0.11 numerically (not as text); a glued release; a release after "LLM" is TensorRT's.
  for (const char* old : {"vllm-0.6.3", "vllm0.6", "TensorRT-LLM v0.20", "sglang 0.4.9",
                          "megatron-core 0.9", "0.10 vllm"})
    EXPECT_FALSE(CheckRelease(old).ok()) << old;
  // Dynamo's release against Dynamo's row, the backend's against the backend's.
  const Status dyn = CheckRelease("dynamo-0.5+sglang-0.5");
  ASSERT_FALSE(dyn.ok());
  EXPECT_NE(dyn.message().find("l2s plans Dynamo from release 0.6 on"), std::string::npos)
      << dyn.message();
  const Status backend = CheckRelease("dynamo-0.7+vllm-0.10");
  ASSERT_FALSE(backend.ok());
  EXPECT_NE(backend.message().find("l2s plans vLLM from release 0.11 on"), std::string::npos)
      << backend.message();
  EXPECT_FALSE(CheckRelease("tgi-2.0").ok());  // not an engine at all
}

TEST(EngineNames, ParseEveryNameAndTheUsualSpellings) {
  for (const Capabilities& c : CapabilityTable()) {
    StatusOr<EngineId> id = ParseEngineId(c.name);
    ASSERT_TRUE(id.ok()) << c.name;
    EXPECT_EQ(*id, c.id) << c.name;
  }
  EXPECT_EQ(*ParseEngineId("vLLM 0.11"), EngineId::kVllm);
  EXPECT_EQ(*ParseEngineId("sglang-0.5.4"), EngineId::kSglang);
  EXPECT_EQ(*ParseEngineId("TensorRT-LLM v1.1"), EngineId::kTrtllm);
  EXPECT_EQ(*ParseEngineId("trt-llm"), EngineId::kTrtllm);
  EXPECT_EQ(*ParseEngineId("Dynamo+vLLM"), EngineId::kDynamoVllm);
  EXPECT_EQ(*ParseEngineId("dynamo-sglang"), EngineId::kDynamoSglang);
  EXPECT_EQ(*ParseEngineId("dynamo+trtllm"), EngineId::kDynamoTrtllm);
  EXPECT_EQ(*ParseEngineId("Megatron-LM"), EngineId::kMegatron);
  EXPECT_EQ(*ParseEngineId("none"), EngineId::kIdeal);
  EXPECT_EQ(*ParseEngineId("ATOM 0.1.3"), EngineId::kAtom);
  // Platform and remark words around the engine's name, and the backend named in a remark.
  EXPECT_EQ(*ParseEngineId("sglang-0.5.5-rocm"), EngineId::kSglang);
  EXPECT_EQ(*ParseEngineId("AMD ATOM"), EngineId::kAtom);
  EXPECT_EQ(*ParseEngineId("vllm (AITER + MoRI)"), EngineId::kVllm);
  EXPECT_EQ(*ParseEngineId("Dynamo (TensorRT-LLM)"), EngineId::kDynamoTrtllm);
  EXPECT_EQ(*ParseEngineId("NVIDIA Dynamo 0.6 + SGLang 0.5"), EngineId::kDynamoSglang);
  EXPECT_EQ(*ParseEngineId("dynamo_vllm"), EngineId::kDynamoVllm);
  EXPECT_EQ(*ParseEngineId("megatron-core 0.14"), EngineId::kMegatron);
  for (const char* bad : {"", " ", "0.5", "tgi", "dynamo+", "dynamo+tgi", "lmdeploy",
                          "dynamo (none)", "tgi (unlike sglang)"}) {
    StatusOr<EngineId> id = ParseEngineId(bad);
    ASSERT_FALSE(id.ok()) << bad;
    EXPECT_NE(id.status().message().find("dynamo+trtllm"), std::string::npos)
        << id.status().message();
  }
}

TEST(EngineTable, OneRowPerEngineNamesUniqueLaunchEnginesInTableOrder) {
  std::set<std::string_view> names;
  for (const Capabilities& c : CapabilityTable()) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_FALSE(c.source.empty()) << c.name;
    EXPECT_FALSE(c.version.empty()) << c.name;
  }
  ASSERT_EQ(CapabilityTable().size(), kLaunchEngines.size() + 1);
  EXPECT_EQ(CapabilityTable()[0].id, EngineId::kIdeal);
  for (size_t i = 0; i < kLaunchEngines.size(); ++i)
    EXPECT_EQ(CapabilityTable()[i + 1].id, kLaunchEngines[i]);
}

// Dynamo's workers are the backend engine's own processes (docs.nvidia.com/dynamo, backends:
// python -m dynamo.vllm / dynamo.sglang / dynamo.trtllm take the engine's arguments): the same
// capabilities and scheduler as the backend, and disaggregation (Dynamo's purpose).
TEST(EngineTable, DynamoRowsAreTheirBackendsWithDisaggregation) {
  const std::pair<EngineId, EngineId> pairs[] = {{EngineId::kDynamoVllm, EngineId::kVllm},
                                                 {EngineId::kDynamoSglang, EngineId::kSglang},
                                                 {EngineId::kDynamoTrtllm, EngineId::kTrtllm}};
  for (auto [d, b] : pairs) {
    const Capabilities &x = C(d), &y = C(b);
    EXPECT_EQ(x.workers, b);
    EXPECT_EQ(x.scheduler, y.scheduler);
    EXPECT_EQ(x.expert_span, y.expert_span);
    EXPECT_EQ(x.attention_split, y.attention_split);
    EXPECT_EQ(x.per_operator_dims, y.per_operator_dims);
    EXPECT_EQ(x.sequence_parallel, y.sequence_parallel);
    EXPECT_EQ(x.overlap, y.overlap);
    EXPECT_EQ(x.mtp, y.mtp);
    EXPECT_EQ(x.mtp_with_pp, y.mtp_with_pp);
    EXPECT_EQ(x.expert_slots, y.expert_slots);
    EXPECT_TRUE(x.disaggregation);
  }
  EXPECT_EQ(SchedulerOf(EngineId::kDynamoSglang), Engine::kSglang);
  EXPECT_EQ(SchedulerOf(EngineId::kDynamoTrtllm), Engine::kTrtllm);
  EXPECT_EQ(SchedulerOf(EngineId::kVllm), Engine::kVllm);
  // Megatron-LM has no serving scheduler: its inference loop takes the batch.
  EXPECT_EQ(SchedulerOf(EngineId::kMegatron), Engine::kIdeal);
  // The CUDA-graph limit is the simulator's default for the scheduler (SGLang cuda_graph_max_bs
  // 256, server_args.py).
  EXPECT_EQ(DefaultsOfEngine(EngineId::kDynamoSglang).cuda_graph_max_batch, 256);
}

// Every engine runs Megatron's per-operator layouts only (src/launch/launch.cc before this
// layer; docs/PLAN.md "Engine rules"); only the ideal engine searches the per-operator dims, and
// only Megatron-LM has a sequence-parallel residual stream (--sequence-parallel,
// megatron/training/arguments.py).
TEST(EngineFacts, LayoutsMegatronOnlySequenceParallelOnlyInMegatron) {
  const ModelSpec m = Preset("llama-3.1-70b");
  Strategy s = S(m, "tp=8,sp=on,dense_ffn2=dim1", 8);
  for (EngineId id : kLaunchEngines) {
    const std::vector<Violation> v = FindViolations(C(id), m, s);
    EXPECT_TRUE(Has(v, Violation::Kind::kDim)) << EngineName(id);
    EXPECT_EQ(Has(v, Violation::Kind::kSp), id != EngineId::kMegatron) << EngineName(id);
  }
  EXPECT_TRUE(FindViolations(C(EngineId::kIdeal), m, s).empty());
  // A group of one GPU: every dim is the same computation, nothing to report.
  const Strategy one = S(m, "tp=1,dp=8,sp=on,dense_ffn2=dim1,attn_qkv=none", 8);
  for (EngineId id : kLaunchEngines) EXPECT_TRUE(Launchable(C(id), m, one)) << EngineName(id);
}

// vLLM (docs.vllm.ai serving/data_parallel_deployment): a dense model's DP ranks are separate
// engine replicas, any tp; MoE experts form a DP x TP tensor-parallel group, or an expert-parallel
// one with --enable-expert-parallel: ep = 1 or ep = tp*dp, nothing between.
TEST(EngineFacts, VllmDenseReplicasAndExpertParallelAllOrNothing) {
  const ModelSpec llama = Preset("llama-3.1-70b");
  EXPECT_TRUE(C(EngineId::kVllm).dense_dp_replicas);
  EXPECT_TRUE(Launchable(C(EngineId::kVllm), llama, S(llama, "tp=4,dp=2", 8)));
  const ModelSpec q = Preset("qwen3-235b-a22b");
  EXPECT_TRUE(Launchable(C(EngineId::kVllm), q, S(q, "tp=2,dp=4,ep=1", 8)));
  EXPECT_TRUE(Launchable(C(EngineId::kVllm), q, S(q, "tp=2,dp=4,ep=8", 8)));
  const Strategy mid = S(q, "tp=2,dp=4,ep=4", 8);
  const std::vector<Violation> v = FindViolations(C(EngineId::kVllm), q, mid);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].kind, Violation::Kind::kExpertSpan);
  EXPECT_EQ(v[0].text.rfind("ep=4 (expert-TP 2)", 0), 0u) << v[0].text;
  EXPECT_NE(v[0].text.find("pp=1,tp=2,dp=4,ep=1 or pp=1,tp=2,dp=4,ep=8"), std::string::npos)
      << v[0].text;
  const std::vector<Strategy> r = Repairs(C(EngineId::kVllm), q, mid);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].ep, 1);
  EXPECT_EQ(r[1].ep, 8);
  // vllm/config/parallel.py enable_dbo: a two-batch overlap; no single-batch overlap. And
  // docs/design/dbo.md: DBO "must be run in conjunction with --data-parallel-size N where N is
  // greater than 1 and --enable-expert-parallel".
  EXPECT_TRUE(Launchable(C(EngineId::kVllm), q, S(q, "tp=1,dp=8,ep=8,overlap=tbo", 8)));
  const std::vector<Violation> no_dp =
      FindViolations(C(EngineId::kVllm), q, S(q, "tp=8,dp=1,ep=8,overlap=tbo", 8));
  ASSERT_EQ(no_dp.size(), 1u);
  EXPECT_EQ(no_dp[0].kind, Violation::Kind::kOverlap);
  // SGLang's two-batch overlap runs on DeepEP, which an instance without DP attention does not
  // use (its MoE layers end in one all-reduce).
  EXPECT_TRUE(Launchable(C(EngineId::kSglang), q, S(q, "tp=1,dp=8,ep=8,overlap=tbo", 8)));
  EXPECT_TRUE(Has(FindViolations(C(EngineId::kSglang), q, S(q, "tp=8,dp=1,ep=8,overlap=tbo", 8)),
                  Violation::Kind::kOverlap));
  EXPECT_TRUE(Has(FindViolations(C(EngineId::kVllm), q, S(q, "tp=1,dp=8,ep=8,overlap=sbo", 8)),
                  Violation::Kind::kOverlap));
}

// SGLang (python/sglang/srt/layers/dp_attention.py): with --enable-dp-attention the attention
// TP size is tp_size // dp_size, so l2s's tp x dp = --tp G --dp dp for any tp; but the dense FFN
// layers run over all --tp GPUs or unsharded (moe_dense_tp_size in [1, None]), so a model with
// dense FFN layers (DeepSeek-V3's first three) needs attention TP 1 (l2s tp = 1, SGLang's
// --dp = --tp) when dp > 1.
TEST(EngineFacts, SglangDpAttentionWithDenseFfnNeedsDpEqualTp) {
  const Capabilities& sg = C(EngineId::kSglang);
  const ModelSpec ds = Preset("deepseek-v3");
  const std::vector<Violation> v = FindViolations(sg, ds, S(ds, "tp=2,dp=4,ep=8", 8));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].kind, Violation::Kind::kAttentionSplit);
  EXPECT_EQ(v[0].text.rfind("tp=2 with dp=4: with data-parallel attention SGLang runs the dense "
                            "FFN layers",
                            0),
            0u)
      << v[0].text;
  EXPECT_NE(v[0].text.find("--moe-dense-tp-size 1"), std::string::npos);
  EXPECT_NE(v[0].text.find("pp=1,tp=1,dp=8,ep=8 or pp=1,tp=8,dp=1,ep=8"), std::string::npos)
      << v[0].text;
  EXPECT_TRUE(Launchable(sg, ds, S(ds, "tp=1,dp=8,ep=8,slots=288,overlap=sbo,mtp=2", 8)));
  EXPECT_TRUE(Launchable(sg, ds, S(ds, "tp=8,dp=1,ep=8,overlap=sbo", 8)));
  // Qwen3-235B-A22B has no dense FFN layer: attention TP 2 inside 4 DP ranks is --tp 8 --dp 4.
  const ModelSpec q = Preset("qwen3-235b-a22b");
  EXPECT_TRUE(Launchable(sg, q, S(q, "tp=2,dp=4,ep=8", 8)));
  // --ep-size any divisor without DP attention; with it the all-to-all backend sets --ep-size to
  // --tp-size (server_args.py _handle_a2a_moe), so ep is 1 or the stage.
  EXPECT_TRUE(Launchable(sg, q, S(q, "tp=8,dp=1,ep=4", 8)));
  EXPECT_FALSE(Launchable(sg, q, S(q, "tp=2,dp=4,ep=4", 8)));
  EXPECT_TRUE(Launchable(sg, q, S(q, "tp=2,dp=4,ep=1", 8)));
  // Redundant experts sit on expert-parallel ranks (--ep-num-redundant-experts).
  EXPECT_TRUE(Has(FindViolations(sg, ds, S(ds, "tp=8,dp=1,ep=1,slots=288", 8)),
                  Violation::Kind::kSlots));
}

// TensorRT-LLM (features/parallel-strategy; llm_args.py): attention over tensor_parallel_size
// is all-TP or all-DP (enable_attention_dp), MoE ep any divisor (moe_expert_parallel_size), MTP
// (speculative_config decoding_type MTP) and redundant slots (moe_load_balancer num_slots); no
// MoE communication overlap switch.
TEST(EngineFacts, TrtllmAttentionDpWithEpMtpAndSlots) {
  const Capabilities& t = C(EngineId::kTrtllm);
  const ModelSpec ds = Preset("deepseek-v3");
  EXPECT_TRUE(Launchable(t, ds, S(ds, "tp=1,dp=8,ep=8,slots=288,mtp=3", 8)));
  EXPECT_TRUE(Launchable(t, ds, S(ds, "tp=8,dp=1,ep=4", 8)));
  const std::vector<Violation> v = FindViolations(t, ds, S(ds, "tp=2,dp=4,ep=8", 8));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].kind, Violation::Kind::kAttentionSplit);
  EXPECT_EQ(v[0].text.rfind("tp=2 with dp=4: TensorRT-LLM runs attention either", 0), 0u)
      << v[0].text;
  EXPECT_TRUE(Has(FindViolations(t, ds, S(ds, "tp=1,dp=8,ep=8,overlap=tbo", 8)),
                  Violation::Kind::kOverlap));
  // A dense model: dp separate servers, any tp.
  const ModelSpec llama = Preset("llama-3.1-70b");
  EXPECT_TRUE(Launchable(t, llama, S(llama, "tp=2,dp=4", 8)));
}

// Megatron-LM (megatron/core/transformer/moe/README.md, MoE parallel folding): attention TP x DP
// and experts ETP x EP fold over the same GPUs, so any tp, dp and ep dividing the stage; its
// inference has no MTP drafting, no redundant experts, no MoE overlap.
TEST(EngineFacts, MegatronFoldsAnyDegreesButHasNoServingFeatures) {
  const Capabilities& mg = C(EngineId::kMegatron);
  const ModelSpec ds = Preset("deepseek-v3");
  EXPECT_TRUE(Launchable(mg, ds, S(ds, "tp=2,dp=4,ep=4,sp=on", 8)));
  const std::vector<Violation> v =
      FindViolations(mg, ds, S(ds, "tp=1,dp=8,ep=8,slots=288,overlap=tbo,mtp=1", 8));
  EXPECT_TRUE(Has(v, Violation::Kind::kMtp));
  EXPECT_TRUE(Has(v, Violation::Kind::kSlots));
  EXPECT_TRUE(Has(v, Violation::Kind::kOverlap));
  EXPECT_EQ(v.size(), 3u);
  const std::vector<Strategy> r =
      Repairs(mg, ds, S(ds, "tp=1,dp=8,ep=8,slots=288,overlap=tbo,mtp=1", 8));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(ToText(r[0]), ToText(S(ds, "tp=1,dp=8,ep=8", 8)));
}

TEST(RestrictOptions, FixedChoicesTheEngineLacksAreErrorsNamingIt) {
  const ModelSpec ds = Preset("deepseek-v3");
  SpaceOptions fixed_slots;
  fixed_slots.search_slots = false;
  fixed_slots.fixed_slots = 288;
  StatusOr<SpaceOptions> r = RestrictOptions(C(EngineId::kMegatron), ds, fixed_slots);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Megatron-LM"), std::string::npos);
  SpaceOptions fixed_sbo;
  fixed_sbo.search_overlap = false;
  fixed_sbo.fixed_overlap = Overlap::kSbo;
  r = RestrictOptions(C(EngineId::kTrtllm), ds, fixed_sbo);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("TensorRT-LLM"), std::string::npos);
  SpaceOptions mtp_only;
  mtp_only.mtp = {2};
  EXPECT_FALSE(RestrictOptions(C(EngineId::kMegatron), ds, mtp_only).ok());
  EXPECT_TRUE(RestrictOptions(C(EngineId::kSglang), ds, mtp_only).ok());
  // The ideal engine leaves the options as they are, restriction inactive.
  r = RestrictOptions(C(EngineId::kIdeal), ds, fixed_sbo);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->restriction.active);
}

// Hand count: vLLM, Qwen3-235B-A22B (128 experts, 64 heads, 94 layers, no MTP) on 8 GPUs, batch
// {1}. pp in {1,2,4,8}; tp divides the stage's 8/pp GPUs; ep in {1, 8/pp}; slot options {0, 144,
// 160} (SlotOptions: E + E/8, E + E/4) all divisible by 2, 4, 8, and only with ep > 1; overlaps
// {none, tbo}, tbo only with ep > 1 and dp > 1 (--enable-dbo needs --data-parallel-size > 1).
// A (pp, tp) with dp > 1 counts 1 + 3 x 2 = 7 (ep = 1; ep = 8/pp with 3 slot options x 2
// overlaps), one with dp = 1 (tp = 8/pp) counts 1 + 3 = 4: pp=1 3x7+4, pp=2 2x7+4, pp=4 7+4,
// pp=8 1 (ep = 1 only) = 25 + 18 + 11 + 1 = 55.
TEST(RestrictedSpace, HandCountedVllmQwen3Space) {
  const ModelSpec q = Preset("qwen3-235b-a22b");
  SpaceOptions opt;
  opt.max_batch = 1;
  StatusOr<StrategySpace> sp = RestrictedSpace(C(EngineId::kVllm), q, 8, opt);
  ASSERT_TRUE(sp.ok()) << sp.status().message();
  EXPECT_DOUBLE_EQ(sp->CountValid(), 55.0);
  EXPECT_EQ(sp->head_size(StrategySpace::kSp), 1);
  for (size_t i = 0; i < sp->searched_ops().size(); ++i)
    EXPECT_EQ(sp->head_size(StrategySpace::kFirstDim + static_cast<int>(i)), 1);
  EXPECT_EQ(sp->overlap_options().size(), 2u);
  // The same space from an existing unrestricted one.
  StatusOr<StrategySpace> full = StrategySpace::Make(q, 8, opt);
  ASSERT_TRUE(full.ok());
  StatusOr<StrategySpace> again = RestrictedSpace(C(EngineId::kVllm), *full);
  ASSERT_TRUE(again.ok());
  EXPECT_DOUBLE_EQ(again->CountValid(), 55.0);
  // A point outside: the reason names the engine.
  const Status st = sp->Check(S(q, "tp=2,dp=4,ep=4,batch=1", 8));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("vLLM"), std::string::npos) << st.message();
}

// Which GPUs each engine has a build for: TensorRT-LLM and Dynamo are CUDA-only
// (nvidia.github.io/TensorRT-LLM, docs.nvidia.com/dynamo support matrix), ATOM is ROCm-only
// (github.com/ROCm/ATOM), vLLM, SGLang and Megatron-LM have both (ROCm builds and AMD's
// ROCm/Megatron-LM port).
TEST(EngineVendors, BuildsPerVendorAndOneLineRefusals) {
  const std::set<EngineId> amd_only = {EngineId::kAtom};
  const std::set<EngineId> nvidia_only = {EngineId::kTrtllm, EngineId::kDynamoVllm,
                                          EngineId::kDynamoSglang, EngineId::kDynamoTrtllm};
  for (EngineId id : kLaunchEngines) {
    EXPECT_EQ(RunsOn(C(id), "nvidia"), !amd_only.count(id)) << EngineName(id);
    EXPECT_EQ(RunsOn(C(id), "amd"), !nvidia_only.count(id)) << EngineName(id);
  }
  EXPECT_TRUE(CheckVendor(EngineId::kSglang, "amd", "mi355x").ok());
  EXPECT_EQ(CheckVendor(EngineId::kTrtllm, "amd", "mi355x").message(),
            "TensorRT-LLM does not run on AMD GPUs (mi355x): the engines for them are vllm, "
            "sglang, megatron, atom");
  EXPECT_EQ(CheckVendor(EngineId::kAtom, "nvidia", "h100").message(),
            "ATOM does not run on NVIDIA GPUs (h100): the engines for them are vllm, sglang, "
            "trtllm, dynamo+vllm, dynamo+sglang, dynamo+trtllm, megatron");
  // ATOM serves from one node (no node-rank argument in atom/model_engine/arg_utils.py).
  EXPECT_TRUE(CheckCluster(EngineId::kAtom, "amd", "mi355x", 8, 8).ok());
  EXPECT_EQ(CheckCluster(EngineId::kAtom, "amd", "mi355x", 16, 8).message(),
            "ATOM serves from one node: plan instances of at most 8 GPUs (one node of mi355x; plan "
            "--instance-gpus 8 replicates one behind a router), or a multi-node instance with "
            "another engine (got 16 GPUs)");
  EXPECT_TRUE(CheckCluster(EngineId::kSglang, "amd", "mi355x", 16, 8).ok());
}

// ATOM (engine.cc's row, from its code): vLLM's scheduler family; a MoE stage with dp > 1 is
// data-parallel attention (tp = 1: without --enable-dp-attention its -dp ranks would be separate
// replicas for the experts too), experts over the whole stage with --enable-expert-parallel or
// tensor-parallel; no pipeline stages with dp > 1; two-batch overlap (--enable-tbo) only where
// there is an all-to-all, MTP, EPLB slots, aggregated serving only (its P/D mode is not launched
// by l2s).
TEST(EngineFacts, AtomIsVllmShapedWithTboMtpAndSlotsAggregatedOnly) {
  const Capabilities& a = C(EngineId::kAtom);
  EXPECT_EQ(a.scheduler, Engine::kVllm);
  EXPECT_EQ(a.workers, EngineId::kAtom);
  EXPECT_FALSE(a.disaggregation);
  EXPECT_TRUE(a.single_node);
  const ModelSpec ds = Preset("deepseek-v3");
  const std::vector<Violation> split = FindViolations(a, ds, S(ds, "tp=4,dp=2,ep=8,batch=8", 8));
  ASSERT_EQ(split.size(), 1u);
  EXPECT_EQ(split[0].kind, Violation::Kind::kAttentionSplit);
  EXPECT_TRUE(Launchable(C(EngineId::kVllm), ds, S(ds, "tp=4,dp=2,ep=8,batch=8", 8)));
  EXPECT_TRUE(Launchable(a, ds, S(ds, "tp=8,ep=1,batch=8", 8)));
  EXPECT_TRUE(Launchable(a, ds, S(ds, "tp=1,dp=8,ep=1,batch=8", 8)));
  // Pipeline stages with data parallelism, MoE or dense (vLLM runs both).
  const ModelSpec llama = Preset("llama-3.1-70b");
  for (const ModelSpec* m : {&ds, &llama}) {
    const Strategy staged = S(*m, m->is_moe() ? "pp=2,tp=1,dp=4,ep=4,batch=8" : "pp=2,tp=2,dp=2,batch=8", 8);
    const std::vector<Violation> v = FindViolations(a, *m, staged);
    ASSERT_FALSE(v.empty()) << m->name;
    EXPECT_EQ(v.back().kind, Violation::Kind::kStagesWithDp) << v.back().text;
    EXPECT_NE(v.back().text.find("pp=2 with dp="), std::string::npos) << v.back().text;
    EXPECT_TRUE(Launchable(C(EngineId::kVllm), *m, staged)) << m->name;
    for (const Strategy& r : Repairs(a, *m, staged)) {
      EXPECT_EQ(r.pp, 2);
      EXPECT_EQ(r.dp, 1);
      EXPECT_EQ(r.tp, 4);
    }
    EXPECT_FALSE(Repairs(a, *m, staged).empty()) << m->name;
  }
  const std::vector<Violation> partial = FindViolations(a, ds, S(ds, "tp=1,dp=8,ep=4,batch=8", 8));
  EXPECT_TRUE(Has(partial, Violation::Kind::kExpertSpan));
  Strategy tbo = S(ds, "tp=1,dp=8,ep=8,batch=8,slots=288,mtp=2", 8);
  tbo.overlap = Overlap::kTbo;
  EXPECT_TRUE(Launchable(a, ds, tbo));
  tbo.overlap = Overlap::kSbo;
  EXPECT_TRUE(Has(FindViolations(a, ds, tbo), Violation::Kind::kOverlap));
}

}  // namespace
}  // namespace l2s::engine
