// GPUs and clusters. Bandwidths in bytes/s, one direction, per GPU; FLOP/s dense (no sparsity);
// capacities in bytes (GiB = 2^30); latencies in seconds.
#pragma once

#include <cstdint>
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
  double fp4_flops = 0;          // 0 when the GPU has no FP4 tensor cores (everything before Blackwell)
  double hbm_bytes = 0;          // usable HBM capacity, bytes
  double hbm_bw = 0;             // peak HBM bandwidth, bytes/s
  double nvlink_bw = 0;          // per GPU, one direction, bytes/s
  std::string calibration;       // calibration table set used by the simulator ("h100_sxm", ...)
  int sm_count = 0;              // streaming multiprocessors (AMD: compute units); 0 = unknown
                                 // (overlap then assumes communication kernels take no compute
                                 // from the GEMMs)
  // Intra-node fabric. 0: a switch (NVSwitch): any group of GPUs of a domain exchanges at
  // nvlink_bw per GPU. > 0: a point-to-point mesh without a switch (AMD Infinity Fabric / xGMI:
  // one link of this bandwidth, bytes/s one direction, between each pair of GPUs of a node): a
  // group of k GPUs of a node reaches its k - 1 peers over k - 1 links, min(nvlink_bw,
  // (k - 1) mesh_link_bw) per GPU (FabricBw).
  double mesh_link_bw = 0;
  double tdp_w = 0;              // board power (TDP), W; 0 = not stated
  std::string vendor = "nvidia";  // "nvidia" | "amd" (engines and kernels differ by vendor)
  // A Grace CPU shares the GPU's board (GB200, GB300), its memory reachable over NVLink-C2C. The
  // cost model keeps every weight in HBM all the same (no CPU-memory offload is modelled); the
  // "does not fit" message says so.
  bool grace_host = false;

  // Bandwidth per GPU, one direction, bytes/s, of a collective among `k` GPUs of one domain.
  double FabricBw(int k) const {
    if (mesh_link_bw <= 0 || k <= 1) return nvlink_bw;
    const double mesh = (k - 1) * mesh_link_bw;
    return mesh < nvlink_bw ? mesh : nvlink_bw;
  }

  // Peak of the tensor-core rate for `compute`, falling back to the next wider format the GPU has
  // (FP4 -> FP8 -> BF16).
  double PeakFlops(DType compute) const {
    if (compute == DType::kFP4 && fp4_flops > 0) return fp4_flops;
    return (compute == DType::kBF16 || fp8_flops <= 0) ? bf16_flops : fp8_flops;
  }
  bool operator==(const GpuSpec&) const = default;
};

struct ClusterSpec {
  std::string name;
  GpuSpec gpu;
  int num_gpus = 0;
  int gpus_per_domain = 8;        // GPUs sharing one NVLink domain (8 = HGX node, 72 = NVL72)
  // GPUs of one host (a server or an NVL72 compute tray: 4), where a launch places processes
  // (HostGpus); 0: the NVLink domain is one host. The cost model does not read it.
  int gpus_per_host = 0;
  double scaleout_bw = 0;         // InfiniBand/RoCE per GPU, one direction, bytes/s
  double nvlink_latency = 0;      // per-collective latency floor inside a domain, s
  double scaleout_latency = 0;    // per-hop latency across domains, s
  double price_per_gpu_hour = 0;  // the user's price, $ per GPU-hour (cluster file or
                                  // --price-per-gpu-hour); 0 = not given (l2s has no built-in prices)

  int num_domains() const {  // int64: no overflow whatever the counts
    return static_cast<int>((int64_t{num_gpus} + gpus_per_domain - 1) / gpus_per_domain);
  }
  bool operator==(const ClusterSpec&) const = default;
};

// GPUs of one host of `c`: gpus_per_host when it is set and divides the NVLink domain, else the
// domain (an HGX node is both).
int HostGpus(const ClusterSpec& c);

// The name of the GPU's scale-up fabric, as its vendor calls it in output: "Infinity Fabric" for
// AMD GPUs (the xGMI mesh), else "NVLink". The model treats both as the intra-domain link.
const char* ScaleUpName(const GpuSpec& g);

std::vector<std::string> GpuPresetNames();
StatusOr<GpuSpec> GpuPreset(std::string_view name);

std::vector<std::string> ClusterPresetNames();  // e.g. "gb200-nvl72", "gb300-nvl72"
// A cluster of `num_gpus` GPUs of type `gpu` in NVLink domains of `gpus_per_node` GPUs (0 = the
// GPU type's own: 8 for HGX boards, 72 for gb200's NVL72 racks), with the scale-out network that
// GPU type ships with.
StatusOr<ClusterSpec> MakeCluster(std::string_view gpu, int num_gpus, int gpus_per_node = 0);
// The GPU type's own NVLink domain (8 for HGX boards, 72 for GB200/GB300); 8 for a name that is
// not a GPU preset.
int DefaultGpusPerDomain(std::string_view gpu);
// A named preset ("gb200-nvl72", "h100-1024" ...) or a path to a cluster JSON file. Besides the
// listed presets, "<gpu>" (one 8-GPU node) and "<gpu>-<N>" (N GPUs in the GPU's own NVLink
// domains) work for every GPU preset.
StatusOr<ClusterSpec> LoadCluster(std::string_view preset_or_path);
// Cluster JSON (GB/s = 10^9 bytes/s, not gigabits; "gpu" is a preset name or an object whose
// "name" is a preset to override or a new GPU that then needs every figure):
//   {"name": "my-cluster", "gpu": "h100" | {"name": "h100", "bf16_tflops": 989,
//    "fp8_tflops": 1979, "fp4_tflops": 0, "hbm_gib": 80, "hbm_tbps": 3.35, "nvlink_gbps": 450,
//    "calibration": "h100_sxm", "mesh_link_gbps": 0, "tdp_w": 700}, "num_gpus": 64,
//    "gpus_per_domain": 8, "scaleout_gbps_per_gpu": 50, "nvlink_latency_us": 3,
//    "scaleout_latency_us": 5, "price_per_gpu_hour": 2.5}
// Only num_gpus and gpu are required; the rest default to the GPU preset's. Unknown fields are
// errors (typos would otherwise be silently ignored).
StatusOr<ClusterSpec> ParseClusterJson(std::string_view json_text, std::string_view source_name);

// A cluster of several pools of GPUs (mixed GPU types) joined by a link, for disaggregated
// serving (sim/disagg.h). JSON:
//   {"name": "mixed", "pools": [{"name": "a", "gpu": "h100", "num_gpus": 64}, {"name": "b",
//    "gpu": "h200", "num_gpus": 64}], "num_gpus": 128, "link_gbps_per_gpu": 50,
//    "link_latency_us": 5}
// Each pool is a cluster object as above plus a required unique "name"; at least two pools;
// num_gpus (optional) must equal the pools' sum; the link defaults to the slower pool's scale-out
// NIC and the larger latency. ParseClusterJson rejects such a file with a line saying so.
struct ClusterPools {
  std::string name;
  std::vector<ClusterSpec> pools;  // ClusterSpec::name = the pool's name
  double link_bw = 0;              // bytes/s per GPU, one direction
  double link_latency = 0;         // s
  int total_gpus() const;
};
StatusOr<ClusterPools> ParseClusterPoolsJson(std::string_view json_text, std::string_view source_name);
StatusOr<ClusterPools> LoadClusterPools(std::string_view path);
// True when `path` is a readable cluster JSON file with "pools".
bool IsClusterPoolsFile(std::string_view path);

// num_gpus > 0, gpus_per_domain > 0, and num_gpus a multiple of gpus_per_domain unless the
// cluster is a single partial domain (num_gpus < gpus_per_domain); positive bandwidths and
// FLOP/s, non-negative latencies. Messages name `source` and the offending field.
Status ValidateCluster(const ClusterSpec& c, std::string_view source);
// The same cluster with `num_gpus` GPUs (validated; the name gets the new count).
StatusOr<ClusterSpec> ResizeCluster(const ClusterSpec& c, int num_gpus);

}  // namespace l2s
