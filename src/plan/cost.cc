#include "plan/cost.h"

namespace l2s::plan {

namespace {
constexpr double kSecondsPerHour = 3600;
constexpr double kTokensPerMtok = 1e6;
}  // namespace

Cost CostOf(double tokens_per_s_per_gpu, const Workload& w, const ClusterSpec& cluster, int gpus) {
  Cost c;
  c.gpus = gpus;
  c.prefill = w.mode == Mode::kPrefill;
  if (tokens_per_s_per_gpu <= 0) return c;
  switch (w.mode) {
    case Mode::kServe:
      c.output_tokens_per_s_per_gpu = tokens_per_s_per_gpu;
      c.total_tokens_per_s_per_gpu =
          w.osl > 0 ? tokens_per_s_per_gpu * static_cast<double>(w.isl + w.osl) / w.osl
                    : tokens_per_s_per_gpu;
      break;
    case Mode::kDecode:
      c.output_tokens_per_s_per_gpu = tokens_per_s_per_gpu;
      c.total_tokens_per_s_per_gpu = tokens_per_s_per_gpu;
      break;
    case Mode::kPrefill:
      c.total_tokens_per_s_per_gpu = tokens_per_s_per_gpu;
      c.output_tokens_per_s_per_gpu = w.isl > 0 ? tokens_per_s_per_gpu / w.isl : 0;
      break;
  }
  const double price = cluster.price_per_gpu_hour;
  if (price > 0) {
    c.price_per_gpu_hour = price;
    c.usd_per_hour = price * gpus;
    const double usd_per_s_per_gpu = price / kSecondsPerHour;
    if (c.output_tokens_per_s_per_gpu > 0)
      c.usd_per_mtok_output = usd_per_s_per_gpu / c.output_tokens_per_s_per_gpu * kTokensPerMtok;
    c.usd_per_mtok_total = usd_per_s_per_gpu / c.total_tokens_per_s_per_gpu * kTokensPerMtok;
  }
  const double tdp = cluster.gpu.tdp_w;
  if (tdp > 0) {
    c.power_w = tdp * gpus;
    c.tokens_per_joule_output = c.output_tokens_per_s_per_gpu / tdp;
    c.tokens_per_joule_total = c.total_tokens_per_s_per_gpu / tdp;
  }
  return c;
}

}  // namespace l2s::plan
