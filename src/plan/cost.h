// Cost and energy of a plan: $ per million tokens at the user's price and tokens per joule at the
// GPUs' board power. l2s has no built-in prices: the price is the user's (--price-per-gpu-hour or
// the cluster file's price_per_gpu_hour); power is the board TDP of the GPU preset
// (../shared/reference/HARDWARE.md; hw/gpus.cc), an upper bound of what the GPUs draw.
//
// Tokens counted, per mode of the workload (sim/simulator.h Evaluation::tokens_per_s):
//   serve:   output tokens/s as simulated; total = output x (isl + osl) / osl (every request's
//            prompt is processed once, its osl output tokens generated);
//   decode:  output tokens/s; total = output (the context is already in the KV cache);
//   prefill: total = the input tokens/s simulated; output = total / isl (each request's first
//            token).
// Formulas (per GPU, so the GPU count cancels):
//   usd_per_mtok = price_per_gpu_hour / 3600 s/h / tokens_per_s_per_gpu x 1e6
//   tokens_per_joule = tokens_per_s_per_gpu / tdp_w
#pragma once

#include <optional>

#include "hw/hw.h"
#include "sim/simulator.h"

namespace l2s::plan {

struct Cost {
  bool prefill = false;  // a prefill workload: its output tokens are the prompts' first tokens
  double output_tokens_per_s_per_gpu = 0;
  double total_tokens_per_s_per_gpu = 0;   // input + output
  int gpus = 0;
  std::optional<double> price_per_gpu_hour;  // $; nullopt: no price given
  std::optional<double> usd_per_hour;        // the whole deployment, $ per hour
  std::optional<double> usd_per_mtok_output;
  std::optional<double> usd_per_mtok_total;
  std::optional<double> power_w;             // the whole deployment's board power, W
  std::optional<double> tokens_per_joule_output;
  std::optional<double> tokens_per_joule_total;
};

// The cost of running `tokens_per_s_per_gpu` (as Evaluation::tokens_per_s_per_gpu counts it for
// `w.mode`) on `gpus` GPUs of `cluster` (its price_per_gpu_hour and gpu.tdp_w; either may be 0 =
// not known, and the fields it prices are then nullopt). A throughput <= 0 prices nothing.
Cost CostOf(double tokens_per_s_per_gpu, const Workload& w, const ClusterSpec& cluster, int gpus);

}  // namespace l2s::plan
