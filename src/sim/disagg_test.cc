// Disaggregated cost model (sim/disagg.h): hand-derived figures.
#include "sim/disagg.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/counts.h"
#include "model/model.h"
#include "model/presets.h"
#include "strategy/space.h"

namespace l2s {
namespace {

Problem Serve(const char* model, int gpus) {
  Problem p;
  p.model = *ModelPreset(model);
  p.cluster = *MakeCluster("h100", gpus);
  p.workload.mode = Mode::kServe;
  p.workload.weight = DType::kFP8;
  p.workload.isl = 4096;
  p.workload.osl = 512;
  return p;
}

std::unique_ptr<DisaggModel> Model(const Problem& p, bool layerwise = false) {
  DisaggSetup s = SharedSetup(p);
  s.layerwise = layerwise;
  return std::move(DisaggModel::Make(std::move(s))).value();
}

TEST(Disagg, KvBytesOfAPromptIsTheModelsKvTimesIsl) {
  // DeepSeek-V3: MLA latent cache kv_lora_rank 512 + rope dim 64 = 576 elements per token per
  // layer, bf16 (2 bytes), 61 layers: 70,272 bytes per token; x 4096 tokens = 287,834,112.
  auto m = Model(Serve("deepseek-v3", 128));
  EXPECT_DOUBLE_EQ(m->KvBytesPerPrompt(), 576.0 * 2 * 61 * 4096);
  // Speculating, the MTP module's cache crosses too: one more MLA layer, 576 x 2 x 4096 =
  // 4,718,592 bytes.
  DisaggSetup s = SharedSetup(Serve("deepseek-v3", 128));
  s.speculating = true;
  auto spec = std::move(DisaggModel::Make(std::move(s))).value();
  EXPECT_DOUBLE_EQ(spec->KvBytesPerPrompt(), 576.0 * 2 * 62 * 4096);
  EXPECT_DOUBLE_EQ(DraftKvBytesForSequence(spec->setup().serve.model, DType::kBF16, 4096),
                   4'718'592.0);
  // An EAGLE-3 draft of Llama-3.1-8B (no draft config: the model's attention shape): GQA with 8
  // KV heads of 128, K and V, bf16: 4,096 bytes per token, 4,096,000 for 1,000 tokens; a model
  // that cannot speculate has none.
  ModelSpec llama = *ModelPreset("llama-3.1-8b");
  EXPECT_DOUBLE_EQ(DraftKvBytesForSequence(llama, DType::kBF16, 1000), 0.0);
  ASSERT_TRUE(AttachDraftModel("org/eagle3-draft", &llama).ok());
  EXPECT_DOUBLE_EQ(DraftKvBytesForSequence(llama, DType::kBF16, 1000), 4'096'000.0);
}

TEST(Disagg, LinkIsNvlinkOnlyWhenBothInstancesFitOneDomain) {
  const Problem p = Serve("llama-3.1-8b", 64);
  auto m = Model(p);
  const KvLink in = m->Link(2, 4);  // 6 GPUs <= 8 per node
  EXPECT_TRUE(in.nvlink);
  EXPECT_DOUBLE_EQ(in.bw, p.cluster.gpu.nvlink_bw);
  const KvLink out = m->Link(8, 8);  // 16 GPUs: two nodes
  EXPECT_FALSE(out.nvlink);
  EXPECT_DOUBLE_EQ(out.bw, p.cluster.scaleout_bw);
  EXPECT_DOUBLE_EQ(out.latency, p.cluster.scaleout_latency);
}

TEST(Disagg, BestCountsMatchTheRatesOnASharedPool) {
  // 64 GPUs, 8-GPU instances: np + nd <= 8. cp = 3, cd = 2 requests/s: rate = min(3 np, 2 nd)
  // is 9 at np = 3, nd = 5 (np = 4, nd = 4 gives 8; np = 3, nd = 4 gives 8).
  auto m = Model(Serve("llama-3.1-8b", 64));
  DisaggModel::Counts c;
  ASSERT_TRUE(m->BestCounts(8, 3.0, 8, 2.0, 1e9, &c));
  EXPECT_EQ(c.np, 3);
  EXPECT_EQ(c.nd, 5);
  EXPECT_DOUBLE_EQ(c.rate, 9.0);
  // The link binds: 0.5 requests/s per GPU of the smaller side: np = 4, nd = 4 -> min(12, 8,
  // 16) = 8; np = 3, nd = 5 -> min(9, 10, 12) = 9 still; at 0.25/GPU np = 3, nd = 5 gives
  // min(9, 10, 6) = 6 and np = 4, nd = 4 gives min(12, 8, 8) = 8: the best.
  ASSERT_TRUE(m->BestCounts(8, 3.0, 8, 2.0, 0.25, &c));
  EXPECT_EQ(c.np, 4);
  EXPECT_EQ(c.nd, 4);
  EXPECT_DOUBLE_EQ(c.rate, 8.0);
  // Nothing fits: a 64-GPU prefill instance leaves no room for decode.
  EXPECT_FALSE(m->BestCounts(64, 3.0, 8, 2.0, 1e9, &c));
}

TEST(Disagg, CombineFollowsTheFormulas) {
  Problem p = Serve("llama-3.1-8b", 64);
  p.workload.ttft_ms = 2000;
  auto m = Model(p);
  Strategy sp, sd;
  Evaluation ep, ed;
  ep.verdict = ed.verdict = Verdict::kValid;
  ep.tokens_per_s = 3.0 * 4096;  // cp = 3 requests/s
  ep.ttft_s = 0.5;               // prefill latency
  ed.tokens_per_s = 2.0 * 512;   // cd = 2 requests/s
  ed.tpot_s = 0.02;
  ed.accept = 2;                 // MTP: one step = tpot x accept = 40 ms
  const DisaggEvaluation d = m->Combine(8, sp, ep, 8, sd, ed);
  ASSERT_TRUE(d.valid()) << d.reason;
  // Llama-3.1-8B: GQA 8 KV heads x 128 dims x 2 (K and V) x 2 bytes x 32 layers = 131,072 bytes
  // per token; x 4096 = 536,870,912 bytes over the 50 GB/s scale-out NIC + its latency.
  const double bytes = 8.0 * 128 * 2 * 2 * 32 * 4096;
  EXPECT_DOUBLE_EQ(d.kv_bytes_per_prompt, bytes);
  const double t = bytes / p.cluster.scaleout_bw + p.cluster.scaleout_latency;
  EXPECT_DOUBLE_EQ(d.kv_transfer_s, t);
  EXPECT_DOUBLE_EQ(d.ttft_s, 0.5 + t + 0.04);
  EXPECT_DOUBLE_EQ(d.tpot_s, 0.02);
  // Counts as in BestCountsMatchTheRatesOnASharedPool (the link carries 50e9 / bytes = 93
  // requests/s per GPU: not binding): 9 requests/s x 512 tokens over 64 GPUs.
  EXPECT_EQ(d.prefill.instances, 3);
  EXPECT_EQ(d.decode.instances, 5);
  EXPECT_DOUBLE_EQ(d.tokens_per_s, 9.0 * 512);
  EXPECT_DOUBLE_EQ(d.tokens_per_s_per_gpu, 9.0 * 512 / 64);
  EXPECT_DOUBLE_EQ(d.prefill.spare, 0.0);
  EXPECT_NEAR(d.decode.spare, 0.1, 1e-12);  // 1 - 9 / (5 x 2)
  EXPECT_EQ(d.bottleneck, "prefill");
  EXPECT_EQ(d.gpus_used, 64);
  // A TTFT SLO below 0.5 + t + 0.04 s rejects it with the sum in the reason.
  m = nullptr;
  p.workload.ttft_ms = 500;
  auto tight = Model(p);
  const DisaggEvaluation bad = tight->Combine(8, sp, ep, 8, sd, ed);
  EXPECT_EQ(bad.verdict, Verdict::kTtft);
  EXPECT_NE(bad.reason.find("exceeds the SLO of 500 ms"), std::string::npos) << bad.reason;
}

TEST(Disagg, RequestOverheadIsItsOwnTermOfTheTtft) {
  // SGLang: the prefill pool's TTFT (0.5 s here) holds the request overhead h; the prefill steps
  // are 0.5 - h, and a layer-wise transfer overlaps those steps only: exposed =
  // max(t / 32, t - (0.5 - h) x 31/32). TTFT = h + (0.5 - h) + exposed + one decode step.
  Problem p = Serve("llama-3.1-8b", 64);
  p.workload.engine = Engine::kSglang;
  const double h = Simulator::RequestOverheadSeconds(Engine::kSglang);
  ASSERT_GT(h, 0);
  ASSERT_LT(h, 0.5);
  auto m = Model(p, /*layerwise=*/true);
  Strategy sp, sd;
  Evaluation ep, ed;
  ep.verdict = ed.verdict = Verdict::kValid;
  ep.tokens_per_s = 3.0 * 4096;
  ep.ttft_s = 0.5;
  ed.tokens_per_s = 2.0 * 512;
  ed.tpot_s = 0.02;
  ed.accept = 1;
  const DisaggEvaluation d = m->Combine(8, sp, ep, 8, sd, ed);
  ASSERT_TRUE(d.valid()) << d.reason;
  EXPECT_DOUBLE_EQ(d.request_overhead_s, h);
  EXPECT_DOUBLE_EQ(d.prefill_s, 0.5 - h);
  const double t = d.kv_transfer_s;
  EXPECT_DOUBLE_EQ(d.kv_exposed_s, std::max(t / 32, t - (0.5 - h) * 31 / 32));
  EXPECT_DOUBLE_EQ(d.ttft_s, 0.5 + d.kv_exposed_s + 0.02);
  // The other engines: no overhead, the prefill is the pool's TTFT.
  p.workload.engine = Engine::kTrtllm;
  m = nullptr;
  auto trt = Model(p);
  const DisaggEvaluation dt = trt->Combine(8, sp, ep, 8, sd, ed);
  EXPECT_EQ(dt.request_overhead_s, 0);
  EXPECT_DOUBLE_EQ(dt.prefill_s, 0.5);
}

TEST(Disagg, LayerwiseTransferHidesAllButTheLastLayer) {
  auto m = Model(Serve("llama-3.1-8b", 64), /*layerwise=*/true);
  // 32 layers: t = 64 ms under a 1 s prefill: max(t / 32, t - 1 x 31/32) = 2 ms.
  EXPECT_DOUBLE_EQ(m->ExposedTransfer(0.064, 1.0), 0.064 / 32);
  // A link slower than the prefill: t = 2 s, prefill 1 s -> 2 - 31/32.
  EXPECT_DOUBLE_EQ(m->ExposedTransfer(2.0, 1.0), 2.0 - 31.0 / 32);
}

TEST(Disagg, DecodeReservesTheWholeRequestButAttendsTheAverage) {
  const Problem serve = Serve("llama-3.1-8b", 8);
  const Problem dec = *DecodeProblem(serve, serve.cluster, 8);
  EXPECT_EQ(dec.workload.mode, Mode::kDecode);
  EXPECT_EQ(dec.workload.context, 4096 + 256);
  EXPECT_EQ(dec.workload.kv_hold, 4096 + 512);
  // Same strategy and batch, KV reserved for 4608 vs 4352 tokens: the KV memory scales by
  // 4608 / 4352 (full-attention model: KV is linear in the tokens held).
  Problem plain = dec;
  plain.workload.kv_hold = 0;
  Strategy s;
  s.tp = 8;
  s.dims = MegatronDims();
  ClearAbsentOps(serve.model, &s);
  const Evaluation a = Simulator(dec).EvaluateAtBatch(s, 64);
  const Evaluation b = Simulator(plain).EvaluateAtBatch(s, 64);
  EXPECT_NEAR(a.kv_bytes / b.kv_bytes, 4608.0 / 4352.0, 1e-9);
  EXPECT_DOUBLE_EQ(a.tpot_s, b.tpot_s);  // attention reads the same average context
  const Problem pre = *PrefillProblem(serve, serve.cluster, 8);
  EXPECT_EQ(pre.workload.mode, Mode::kPrefill);
  EXPECT_EQ(pre.workload.ttft_ms, 0);
}

TEST(Disagg, InstanceSizesArePowersOfTwoThenWholeDomains) {
  EXPECT_EQ(InstanceSizes(*MakeCluster("h100", 32)), (std::vector<int>{1, 2, 4, 8, 16, 24, 32}));
  const ClusterSpec nvl = *LoadCluster("gb200-nvl72");
  EXPECT_EQ(InstanceSizes(nvl), (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 72}));
}

TEST(Disagg, MakeRejectsNonServeProblems) {
  Problem p = Serve("llama-3.1-8b", 8);
  p.workload.mode = Mode::kDecode;
  StatusOr<std::unique_ptr<DisaggModel>> m = DisaggModel::Make(SharedSetup(p));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("--mode serve"), std::string::npos);
}

}  // namespace
}  // namespace l2s
