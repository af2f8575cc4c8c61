// trtllm-bench's limit estimate (trtllm_bench.h) against hand-computed figures. Parameter counts
// are l2s's (model/counts.h; `l2s describe --model deepseek-v3 --json`): DeepSeek-V3/R1 total
// 671,026,419,200 + MTP 13,463,426,304; routed experts 653,908,770,816, shared 2,554,331,136,
// dense FFN 1,189,085,184. GPU memory is the preset's GiB (H200 141, B200 180).
#include "validate/trtllm_bench.h"

#include <gtest/gtest.h>

#include "hw/hw.h"
#include "model/presets.h"

namespace l2s {
namespace {

constexpr double kGiBf = 1024.0 * 1024.0 * 1024.0;

TEST(TrtllmBench, DeepSeekFp8OnEightH200) {
  // measurements-scale.csv row 217: DEP8 (--tp 8), FP8 checkpoint, FP8 KV, 1024/8192.
  // engine = (671,026,419,200 + 13,463,426,304) x 1 B / 2^30 = 637.48 GiB
  // cache  = (8 x 141 - 637.48) x 0.95 = 465.99 GiB
  // token  = 2 x 61 layers x max(8, 128) heads x 56 (7168 / 128) x 1 B = 874,496 B
  // requests = 465.99 GiB / (874,496 B x 9,216) = 62.08
  // max batch: raw 62.08 < 256 -> max(64, 32 x 2) = 64; tokens: 62.08 x 1.125 -> 2048
  const ModelSpec m = *ModelPreset("deepseek-v3");
  TrtllmBenchInput in;
  in.weight = DType::kFP8;
  in.kv = DType::kFP8;
  in.tp = 8;
  in.isl = 1024;
  in.osl = 8192;
  const StatusOr<TrtllmBenchLimits> l = TrtllmBenchSettings(m, *GpuPreset("h200"), in);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_TRUE(l->tuned);
  EXPECT_NEAR(l->engine_gib, 684489845504.0 / kGiBf, 1e-9);
  const double cache = (8 * 141.0 - 684489845504.0 / kGiBf) * 0.95;
  EXPECT_NEAR(l->kv_requests, cache * kGiBf / (874496.0 * 9216), 1e-9);
  EXPECT_NEAR(l->kv_requests, 62.08, 0.01);
  EXPECT_EQ(l->max_batch, 64);
  EXPECT_EQ(l->max_num_tokens, 2048);
}

TEST(TrtllmBench, DeepSeekNvfp4OnFourB200CountsPackedElements) {
  // Row 212: DEP4 on B200, NVIDIA's NVFP4 checkpoint (the model's own format is FP8), 1024/1024.
  // fp4 weights = 653,908,770,816 + 2,554,331,136 + 1,189,085,184 = 657,652,187,136, stored as
  // 1/2 + 1/16 element each: elements = 684,489,845,504 - 657,652,187,136 x 7/16
  //   = 396,767,013,632; engine = x 0.5 B / 2^30 = 184.76 GiB
  // cache = (4 x 180 - 184.76) x 0.95 = 508.48 GiB; requests = 508.48 GiB / (874,496 B x 2,048)
  //   = 304.8 -> 128 x ceil(2.38) = 384; tokens 304.8 x 2 = 610 -> 2048 (>= 1024 + 384)
  const ModelSpec m = *ModelPreset("deepseek-v3");
  TrtllmBenchInput in;
  in.weight = DType::kFP4;
  in.kv = DType::kFP8;
  in.tp = 4;
  in.isl = 1024;
  in.osl = 1024;
  const StatusOr<TrtllmBenchLimits> l = TrtllmBenchSettings(m, *GpuPreset("b200"), in);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_NEAR(l->engine_gib, 396767013632.0 * 0.5 / kGiBf, 1e-9);
  EXPECT_NEAR(l->kv_requests, 304.8, 0.1);
  EXPECT_EQ(l->max_batch, 384);
  EXPECT_EQ(l->max_num_tokens, 2048);
  // Long prompts without chunked prefill: the budget holds a whole prompt plus the batch
  // (8192/1024: 66.7 requests -> batch 96, tokens max(75 -> 2048, 8192 + 96) = 8288); with
  // chunked prefill the rounding alone (2048).
  in.isl = 8192;
  const StatusOr<TrtllmBenchLimits> lp = TrtllmBenchSettings(m, *GpuPreset("b200"), in);
  ASSERT_TRUE(lp.ok());
  EXPECT_EQ(lp->max_batch, 96);
  EXPECT_EQ(lp->max_num_tokens, 8192 + 96);
  in.chunked_prefill = true;
  EXPECT_EQ(TrtllmBenchSettings(m, *GpuPreset("b200"), in)->max_num_tokens, 2048);
}

TEST(TrtllmBench, GqaModelAndPipelineStages) {
  // Row 226: Llama-3.1-70B FP8 on 2 H200s (TP2), FP8 KV, 1024/1024.
  // engine 70,553,706,496 B = 65.708 GiB; cache (282 - 65.708) x 0.95 = 205.48 GiB
  // token = 2 x 80 x max(2, 8) x 128 x 1 B = 163,840 B; requests = 205.48 GiB / (163,840 x 2,048)
  //   = 657.5 -> 128 x 6 = 768; tokens 1315 -> 2048
  const ModelSpec m = *ModelPreset("llama-3.1-70b");
  TrtllmBenchInput in;
  in.weight = DType::kFP8;
  in.kv = DType::kFP8;
  in.tp = 2;
  in.isl = 1024;
  in.osl = 1024;
  StatusOr<TrtllmBenchLimits> l = TrtllmBenchSettings(m, *GpuPreset("h200"), in);
  ASSERT_TRUE(l.ok());
  EXPECT_NEAR(l->kv_requests, 657.5, 0.1);
  EXPECT_EQ(l->max_batch, 768);
  EXPECT_EQ(l->max_num_tokens, 2048);
  // tp 1 x pp 2: the same memory, the requests split over 2 stages: 328.7 -> 384 per stage;
  // bf16 KV halves the requests again: 164.4 -> 32 x 6 = 192.
  in.tp = 1;
  in.pp = 2;
  l = TrtllmBenchSettings(m, *GpuPreset("h200"), in);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->max_batch, 384);
  in.kv = DType::kBF16;
  l = TrtllmBenchSettings(m, *GpuPreset("h200"), in);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->max_batch, 192);
}

TEST(TrtllmBench, NativeMxfp4IsNotTunedAndTooLittleMemoryFails) {
  // gpt-oss ships MXFP4 (its own format): trtllm-bench keeps BuildConfig's 2048 / 8192.
  const ModelSpec g = *ModelPreset("gpt-oss-120b");
  TrtllmBenchInput in;
  in.weight = DType::kFP4;
  in.kv = DType::kFP8;
  in.tp = 2;
  in.isl = 1024;
  in.osl = 1024;
  const StatusOr<TrtllmBenchLimits> l = TrtllmBenchSettings(g, *GpuPreset("b200"), in);
  ASSERT_TRUE(l.ok());
  EXPECT_FALSE(l->tuned);
  EXPECT_EQ(l->max_batch, 2048);
  EXPECT_EQ(l->max_num_tokens, 8192);
  // DeepSeek FP8 (637 GiB) on 4 H200s (564 GiB): no KV memory, one line naming the cause.
  in.weight = DType::kFP8;
  in.tp = 4;
  const StatusOr<TrtllmBenchLimits> none =
      TrtllmBenchSettings(*ModelPreset("deepseek-v3"), *GpuPreset("h200"), in);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no KV cache"), std::string::npos);
  in.isl = 0;
  EXPECT_FALSE(TrtllmBenchSettings(g, *GpuPreset("b200"), in).ok());
}

TEST(TrtllmBench, PerfOverviewDatasetSizes) {
  // The overview's "Preparing a Dataset" table: every length pair it lists, and none other.
  EXPECT_EQ(PerfOverviewRequests(128, 128), 30000);
  EXPECT_EQ(PerfOverviewRequests(128, 4096), 1500);
  EXPECT_EQ(PerfOverviewRequests(2048, 128), 3000);
  EXPECT_EQ(PerfOverviewRequests(20000, 2000), 1000);
  EXPECT_EQ(PerfOverviewRequests(4096, 128), 0);
  EXPECT_EQ(PerfOverviewRequests(1024, 1024), 0);
}

}  // namespace
}  // namespace l2s
