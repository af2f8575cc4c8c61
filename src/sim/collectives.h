// Collective communication latency on a hierarchical topology (NVLink inside a domain,
// scale-out network across), fitted to ../shared/calibration/<gpu>/nccl.csv,
// custom_allreduce.csv and the DeepEP tables (coefficients in collective_coeffs.cc, written by
// tools/fit_collectives, fit error checked by collectives_test.cc; forms and assumptions in
// docs/dev/COST_MODEL.md, section "Collectives"). O(1), allocation-free, seconds.
#pragma once

#include <string_view>

#include "hw/hw.h"

namespace l2s {

enum class CollKind : unsigned char {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kSendRecv,     // point-to-point (pipeline stage boundary)
  kDispatch,     // MoE token dispatch (DeepEP-style all-to-all, top-k copies)
  kCombine,      // MoE combine (reverse of dispatch, weighted sum)
};
const char* CollKindName(CollKind k);

// Where a group's members sit. n = group size; n_domains = NVLink domains the group spans
// (1 = inside one domain); the group is assumed evenly spread (n / n_domains members each).
struct GroupPlacement {
  int n = 1;
  int n_domains = 1;
  // MoE dispatch/combine only: routed copies per token (top-k). With the high-throughput
  // kernels a token crosses the scale-out network once per destination domain and fans out
  // over NVLink there; 0 = unknown (every copy that leaves the domain crosses the NIC).
  double fanout = 0;
};

// Expected number of OTHER NVLink domains a token's `k` routed copies land in when the copies
// pick uniformly among `d` domains: (d - 1) * (1 - (1 - 1/d)^k).
double RemoteDomainsPerToken(double k, int d);

// Inside a domain the bandwidth is the fabric's for the group (GpuSpec::FabricBw): on a switched
// NVLink domain nvlink_bw whatever the group size; on a point-to-point mesh (AMD xGMI) only the
// links among the group's members carry its traffic: (n_local - 1) links per GPU; a send/recv one
// link.
// Time of one collective. `bytes` follows the nccl-tests convention: all-reduce = the reduced
// buffer; all-gather = the gathered output; reduce-scatter = the full input; all-to-all = each
// rank's send buffer; send/recv = the message. For dispatch/combine `bytes` is each rank's send
// volume (tokens x topk x hidden x element bytes, local routes included), and `decode` selects the
// low-latency kernels (true) or the high-throughput ones (false).
// Out-of-range placements are clamped (n < 1 -> 1, n_domains to [1, n]); bytes <= 0 gives 0.
double CollectiveSeconds(const ClusterSpec& cluster, CollKind kind, GroupPlacement g, double bytes,
                         bool decode = true);

// ---- fitted coefficients -----------------------------------------------------------------------

// One protocol / algorithm: t = lat_s + wire_bytes / busbw, wire_bytes = bytes x the nccl-tests
// bus factor (all-reduce 2(n-1)/n, others (n-1)/n), busbw in bytes/s. busbw <= 0: line unused.
struct CollLine {
  double lat_s;
  double busbw;
};
// Size-dependent bandwidth as the minimum over protocol lines (NCCL LL / LL128 / Simple; TRT-LLM
// one-shot / two-shot / NCCL): each line is what one protocol costs, the library picks the
// cheapest. Monotone non-decreasing in bytes.
inline constexpr int kCollLines = 3;
struct CollCurve {
  CollLine line[kCollLines];
};
// The group sizes measured in one 8-GPU NVLink node.
inline constexpr int kCollSizes = 3;  // n = 2, 4, 8
// Ranks of the DeepEP tables (deepep_normal.csv, deepep_ll.csv: num_nodes 1, 8 GPUs).
inline constexpr int kDeepEpCalibRanks = 8;

struct CollectiveCoeffs {
  const char* name;                     // calibration set, e.g. "h100_sxm"
  CollCurve nccl[4][kCollSizes];        // [all-reduce, all-gather, reduce-scatter, all-to-all][n]
  CollCurve custom_ar[kCollSizes];      // TRT-LLM AllReduce (strategy AUTO) [n]
  // DeepEP, t = lat_s + bytes / busbw with bytes as CollectiveSeconds defines them for
  // dispatch/combine: [0] normal (high-throughput) kernels at deepep_normal_sms SMs,
  // [1] low-latency kernels; each [dispatch, combine].
  CollLine deepep[2][2];
  double deepep_normal_sms;
  // NVLink bandwidth (per GPU, one direction) of the GPU the set was measured on: a cluster's
  // fabric bandwidth scales the fitted bus bandwidths by FabricBw / nvlink_bw.
  double nvlink_bw = 450e9;
  // Curves this set did not measure and took from another set (GB200 / GB300 trays hold 4 GPUs,
  // so their n = 8 curves are the 8-GPU HGX node's of the same NVLink generation); "" = none.
  const char* borrowed = "";
};

// By gpu.calibration (h200_sxm, b200_sxm, gb200, b300_sxm, gb300 -> their own sets fitted on
// their own nccl / custom_allreduce / DeepEP tables; anything else -> the H100 set); AMD GPUs
// (gpu.vendor "amd") -> AmdCollectiveCoeffs. O(1).
const CollectiveCoeffs& CollectiveCoeffsFor(const GpuSpec& gpu);
// The H100 set with every line's bus bandwidth scaled by (kRcclAllReduceBusBw / kMi300xMeshBw) /
// (the H100 fit's best 8-GPU all-reduce bus bandwidth / kCalibNvlinkBw): RCCL's achieved share of
// the Infinity Fabric mesh relative to NCCL's of NVLink (collectives.cc).
const CollectiveCoeffs& AmdCollectiveCoeffs();
double AmdCollectiveScale();  // that factor
// RCCL all-reduce bus bandwidth on 8 MI300X at 8 GB (OTHER-MEASUREMENTS.md section 1) and the
// mesh bandwidth it ran over (7 xGMI links x 64 GB/s per direction).
inline constexpr double kRcclAllReduceBusBw = 316.82e9;
inline constexpr double kMi300xMeshBw = 7 * 64e9;
const CollectiveCoeffs& H100CollectiveCoeffs();
const CollectiveCoeffs& H200CollectiveCoeffs();
// The Blackwell sets by calibration name (b200_sxm, gb200, b300_sxm, gb300); nullptr if none.
const CollectiveCoeffs* BlackwellCollectiveCoeffs(std::string_view set);

// CollectiveSeconds with explicit coefficients (fitter and tests).
double CollectiveSecondsWith(const CollectiveCoeffs& c, const ClusterSpec& cluster, CollKind kind,
                             GroupPlacement g, double bytes, bool decode = true);
// One fitted curve at `bytes` for a group of n GPUs (t = min over lines, bus factor of `kind`).
double CurveSeconds(const CollCurve& curve, CollKind kind, int n, double bytes);

// Achieved fraction of the scale-out link rate for bulk GPU-to-GPU RDMA traffic (HARDWARE.md:
// DeepEP normal kernels reach 43-58 GB/s over 50 GB/s CX7 links; the low end, 43/50, is used).
inline constexpr double kScaleoutEfficiency = 43.0 / 50.0;
// NVLink bandwidth the tables were measured with (H100/H200 SXM, per GPU one direction).
inline constexpr double kCalibNvlinkBw = 450e9;

}  // namespace l2s
