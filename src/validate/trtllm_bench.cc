#include "validate/trtllm_bench.h"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include "model/counts.h"

namespace l2s {
namespace {

// finetune_setting's rounding: up to a multiple of `step`.
int64_t RoundUp(double x, int64_t step) {
  return step * static_cast<int64_t>(std::ceil(x / static_cast<double>(step)));
}

}  // namespace

StatusOr<TrtllmBenchLimits> TrtllmBenchSettings(const ModelSpec& m, const GpuSpec& gpu,
                                                const TrtllmBenchInput& in) {
  if (in.tp < 1 || in.pp < 1) return Status::InvalidArgument("trtllm-bench estimate: tp and pp must be >= 1");
  if (in.isl < 1 || in.osl < 1)
    return Status::InvalidArgument("trtllm-bench estimate: needs the dataset's isl and osl");
  TrtllmBenchLimits out;
  // An FP4 row of a model whose own checkpoint is FP4 (gpt-oss: MXFP4) runs that checkpoint,
  // whose quantisation trtllm-bench does not tune: TensorRT-LLM's BuildConfig defaults.
  const bool nvfp4 = in.weight == DType::kFP4 && m.weight_dtype != DType::kFP4;
  if (in.weight == DType::kFP4 && !nvfp4) {
    out.max_batch = 2048;
    out.max_num_tokens = 8192;
    return out;
  }
  out.tuned = true;
  const double byte_per_elem = in.weight == DType::kBF16 ? 2.0 : in.weight == DType::kFP8 ? 1.0 : 0.5;
  const double byte_per_kv = in.kv == DType::kBF16 ? 2.0 : 1.0;

  // Stored elements. NVFP4 checkpoints quantise the expert and dense FFN weights, and the
  // attention projections of dense models (the simulator's FP4 rule, strategy/layout.cc).
  const ParamCounts c = CountParams(m);
  double elements = static_cast<double>(c.total + c.mtp);
  if (nvfp4) {
    double fp4 = static_cast<double>(c.routed_experts + c.shared_experts + c.dense_ffn);
    if (!m.is_moe() && !m.attention_unquantized) fp4 += static_cast<double>(c.attention);
    elements += fp4 * (0.5 + 1.0 / 16.0) - fp4;
  }
  out.engine_gib = elements * byte_per_elem / kGiB;

  const int heads = m.num_heads;
  const double head_size = m.attention == AttentionKind::kMla || m.head_dim <= 0
                               ? static_cast<double>(m.hidden_size / std::max(1, heads))
                               : static_cast<double>(m.head_dim);
  const double gib_per_token = 2.0 * m.num_layers * std::max(in.tp, m.num_kv_heads) * head_size *
                               byte_per_kv / kGiB;
  const double total_gib = gpu.hbm_bytes / kGiB * in.tp * in.pp;
  const double cache_gib = (total_gib - out.engine_gib) * in.kv_fraction;
  out.kv_requests = cache_gib / (gib_per_token * static_cast<double>(in.isl + in.osl));
  if (!(out.kv_requests >= 1))
    return Status::Invalid(fmt::format(
        "trtllm-bench estimate: {:.0f} GiB of weights leave no KV cache for one {}-token request "
        "on {} x {}",
        out.engine_gib, in.isl + in.osl, in.tp * in.pp, gpu.name));

  const double raw_bs = std::min(out.kv_requests, 4096.0) / in.pp;
  const double raw_tok =
      std::min(raw_bs * (1.0 + static_cast<double>(in.isl) / static_cast<double>(in.osl)), 32768.0);
  int64_t bs = 0;
  if (raw_bs < 256)
    bs = std::max<int64_t>(64, RoundUp(raw_bs, 32));
  else if (raw_bs < 1024)
    bs = RoundUp(raw_bs, 128);
  else
    bs = RoundUp(raw_bs, 256);
  int64_t tok = 0;
  if (raw_tok < 4096)
    tok = std::max<int64_t>(2048, RoundUp(raw_tok, 256));
  else if (raw_tok < 8192)
    tok = RoundUp(raw_tok, 512);
  else
    tok = RoundUp(raw_tok, 1024);
  // Without chunked prefill a whole prompt must fit one step's budget (general.py).
  if (!in.chunked_prefill) tok = std::max(tok, in.isl + bs);
  out.max_batch = static_cast<int>(bs);
  out.max_num_tokens = static_cast<int>(std::min<int64_t>(tok, 1 << 30));
  return out;
}

int64_t PerfOverviewRequests(int64_t isl, int64_t osl) {
  struct Dataset {
    int64_t isl, osl, requests;
  };
  static constexpr Dataset kDatasets[] = {
      {128, 128, 30000},  {128, 2048, 3000},  {128, 4096, 1500},  {1000, 2000, 1500},
      {2048, 128, 3000},  {2048, 2048, 1500}, {5000, 500, 1500},  {1000, 1000, 3000},
      {500, 2000, 3000},  {20000, 2000, 1000},
  };
  for (const Dataset& d : kDatasets)
    if (d.isl == isl && d.osl == osl) return d.requests;
  return 0;
}

}  // namespace l2s
