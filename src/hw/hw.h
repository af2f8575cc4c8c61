// GPUs and clusters. Bandwidths in bytes/s, one direction, per GPU; FLOP/s dense (no sparsity);
// capacities in bytes (GiB = 2^30); latencies in seconds.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/dtype.h"
#include "common/status.h"

namespace l2s {

struct GpuSpec {
  std::string name;              // "h100", "h200", ...
  double bf16_flops = 0;         // dense tensor-core FLOP/s
  double fp8_flops = 0;          // 0 when the GPU has no FP8 tensor cores (A100)
  double hbm_bytes = 0;          // usable HBM capacity, bytes
  double hbm_bw = 0;             // peak HBM bandwidth, bytes/s
  double nvlink_bw = 0;          // per GPU, one direction, bytes/s
  std::string calibration;       // calibration table set used by the simulator ("h100_sxm", ...)

  double PeakFlops(DType compute) const {
    return (compute == DType::kBF16 || fp8_flops <= 0) ? bf16_flops : fp8_flops;
  }
};

struct ClusterSpec {
  std::string name;
  GpuSpec gpu;
  int num_gpus = 0;
  int gpus_per_domain = 8;        // GPUs sharing one NVLink domain (8 = HGX node, 72 = NVL72)
  double scaleout_bw = 0;         // InfiniBand/RoCE per GPU, one direction, bytes/s
  double nvlink_latency = 0;      // per-collective latency floor inside a domain, s
  double scaleout_latency = 0;    // per-hop latency across domains, s

  int num_domains() const { return (num_gpus + gpus_per_domain - 1) / gpus_per_domain; }
};

std::vector<std::string> GpuPresetNames();
StatusOr<GpuSpec> GpuPreset(std::string_view name);

std::vector<std::string> ClusterPresetNames();  // e.g. "gb200-nvl72"
// A cluster of `num_gpus` GPUs of type `gpu` in HGX nodes of `gpus_per_node` (default 8),
// with the scale-out network that GPU type ships with.
StatusOr<ClusterSpec> MakeCluster(std::string_view gpu, int num_gpus, int gpus_per_node = 8);
// A named preset ("gb200-nvl72", "h100-1024" ...) or a path to a cluster JSON file.
StatusOr<ClusterSpec> LoadCluster(std::string_view preset_or_path);
StatusOr<ClusterSpec> ParseClusterJson(std::string_view json_text, std::string_view source_name);

}  // namespace l2s
