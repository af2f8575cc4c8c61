// Collective latency model (see collectives.h; reasoning in docs/dev/COST_MODEL.md "Collectives").
// Hot path: no allocation; one log2/sqrt at most per call.
#include "sim/collectives.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace l2s {
namespace {

// nccl-tests bus factor: wire bytes per rank / message bytes.
inline double BusFactor(CollKind kind, int n) {
  const double f = static_cast<double>(n - 1) / n;
  return kind == CollKind::kAllReduce ? 2.0 * f : f;
}

// Index of the fitted group size used for n (2 -> 0, 3..4 -> 1, 5.. -> 2).
inline int SizeIndex(int n) { return n <= 2 ? 0 : (n <= 4 ? 1 : 2); }

// A phase of a collective split into its latency and its bandwidth time (the active line).
struct Phase {
  double lat_s = 0;
  double wire_s = 0;
  double total() const { return lat_s + wire_s; }
};

// Group of n GPUs inside one NVLink domain. Beyond the measured 8 GPUs (NVL72) the n = 8 curve
// is extrapolated: bus bandwidth unchanged (ring/NVLS bus bandwidth does not depend on n), latency
// grown with log2(n)/3 (tree/NVLS depth; 3 = log2(8)). bw_scale = nvlink_bw / 450e9.
Phase CurvePhase(const CollCurve& curve, CollKind kind, int n, double bytes, double bw_scale) {
  Phase best;
  if (n <= 1 || bytes <= 0) return best;
  const double wire = bytes * BusFactor(kind, n);
  const double lat_scale = n > 8 ? std::log2(static_cast<double>(n)) / 3.0 : 1.0;
  double best_t = 0;
  bool any = false;
  for (const CollLine& l : curve.line) {
    if (l.busbw <= 0) continue;
    const Phase p{l.lat_s * lat_scale, wire / (l.busbw * bw_scale)};
    if (!any || p.total() < best_t) {
      best = p;
      best_t = p.total();
      any = true;
    }
  }
  return best;
}

int NcclIndex(CollKind kind) {
  switch (kind) {
    case CollKind::kAllReduce: return 0;
    case CollKind::kAllGather: return 1;
    case CollKind::kReduceScatter: return 2;
    default: return 3;
  }
}

// All-reduce / all-gather / reduce-scatter / all-to-all inside one domain.
Phase IntraPhase(const CollectiveCoeffs& c, CollKind kind, int n, double bytes, double bw_scale) {
  if (n <= 1 || bytes <= 0) return {};
  const int s = SizeIndex(n);
  // Inference engines run the TP all-reduce with TRT-LLM's custom kernels up to 8 GPUs.
  if (kind == CollKind::kAllReduce && n <= 8) return CurvePhase(c.custom_ar[s], kind, n, bytes, bw_scale);
  return CurvePhase(c.nccl[NcclIndex(kind)][s], kind, n, bytes, bw_scale);
}

// Software latency floor of an NCCL collective among n ranks: the smallest line latency of the
// fitted curve (extrapolated as in CurvePhase beyond 8). A scale-out phase pays it on top of the
// network hops, so spanning domains always costs at least what one domain does.
double NcclFloor(const CollectiveCoeffs& c, CollKind kind, int n) {
  if (n <= 1) return 0.0;
  const CollCurve& curve = c.nccl[NcclIndex(kind)][SizeIndex(n)];
  double lat = 0;
  bool any = false;
  for (const CollLine& l : curve.line) {
    if (l.busbw > 0 && (!any || l.lat_s < lat)) {
      lat = l.lat_s;
      any = true;
    }
  }
  return lat * (n > 8 ? std::log2(static_cast<double>(n)) / 3.0 : 1.0);
}

// Steps of a latency-optimal (tree / recursive doubling) exchange among d domains: ceil(log2 d).
inline double LogSteps(int d) {
  return d <= 1 ? 0.0 : static_cast<double>(std::bit_width(static_cast<unsigned>(d - 1)));
}

// Hierarchical collective of n GPUs over d domains: NVLink phases inside each domain and one
// scale-out phase among the d domains (each GPU exchanging with its counterparts). Chunks are
// pipelined through the phases, so the bandwidth terms overlap (the slowest dominates) while the
// latencies add.
double Hierarchical(const CollectiveCoeffs& c, CollKind kind, int n, int d, double bytes,
                    double bw_scale, double so_bw, double so_lat) {
  const int n_local = std::max(n / d, 1);
  const double shard = bytes / n_local;  // what one GPU carries across domains
  const double inter_factor = static_cast<double>(d - 1) / d;
  switch (kind) {
    case CollKind::kAllReduce: {
      // reduce-scatter (intra) + all-reduce of 1/n_local of the data across domains + all-gather.
      const Phase rs = IntraPhase(c, CollKind::kReduceScatter, n_local, bytes, bw_scale);
      const Phase ag = IntraPhase(c, CollKind::kAllGather, n_local, bytes, bw_scale);
      const double inter_lat = NcclFloor(c, kind, d) + 2.0 * LogSteps(d) * so_lat;
      const double inter_s = 2.0 * inter_factor * shard / so_bw;
      return rs.lat_s + ag.lat_s + inter_lat + std::max(rs.wire_s + ag.wire_s, inter_s);
    }
    case CollKind::kAllGather:
    case CollKind::kReduceScatter: {
      const Phase p = IntraPhase(c, kind, n_local, bytes, bw_scale);
      const double inter_s = inter_factor * shard / so_bw;
      return p.lat_s + NcclFloor(c, kind, d) + LogSteps(d) * so_lat + std::max(p.wire_s, inter_s);
    }
    case CollKind::kAllToAll:
    default: {
      // Every rank sends bytes/n to each peer: (n_local - 1)/n of its buffer stays on NVLink
      // (the measured n_local all-to-all of a bytes*n_local/n buffer), (n - n_local)/n leaves,
      // concurrently; one NCCL all-to-all among all n ranks sets the start-up latency.
      const Phase p = IntraPhase(c, CollKind::kAllToAll, n_local, bytes * n_local / n, bw_scale);
      const double inter_s = static_cast<double>(n - n_local) / n * bytes / so_bw;
      return NcclFloor(c, kind, n) + so_lat + std::max(p.total(), inter_s);
    }
  }
}

}  // namespace

const char* CollKindName(CollKind k) {
  switch (k) {
    case CollKind::kAllReduce: return "all_reduce";
    case CollKind::kAllGather: return "all_gather";
    case CollKind::kReduceScatter: return "reduce_scatter";
    case CollKind::kAllToAll: return "all_to_all";
    case CollKind::kSendRecv: return "send_recv";
    case CollKind::kDispatch: return "dispatch";
    case CollKind::kCombine: return "combine";
  }
  return "?";
}

namespace {

// AMD Instinct (no tables): the H100 set with every line's bus bandwidth scaled by one factor,
// RCCL's achieved share of the xGMI mesh over the H100 fit's share of NVLink for the 8-GPU
// all-reduce at large messages (../shared/calibration/OTHER-MEASUREMENTS.md section 1: RCCL
// 316.82 GB/s busbw at 8 GB on 8 MI300X, whose 7 links carry 448 GB/s; H100 fit: the best line
// of nccl all_reduce n = 8). Latencies are the H100 fit's: the engines run their own all-reduce
// below 16 MB on ROCm (OTHER-MEASUREMENTS.md section 3), and MoRI's EP8 latencies (35 / 47 us at
// 128 tokens) are of the order of DeepEP's on H100.
CollectiveCoeffs MakeAmdCollectiveCoeffs() {
  CollectiveCoeffs c = H100CollectiveCoeffs();
  c.name = "amd (h100_sxm scaled)";
  const double scale = AmdCollectiveScale();
  auto scale_curve = [&](CollCurve& cv) {
    for (CollLine& l : cv.line) l.busbw *= scale;
  };
  for (auto& kind : c.nccl)
    for (CollCurve& cv : kind) scale_curve(cv);
  for (CollCurve& cv : c.custom_ar) scale_curve(cv);
  for (auto& mode : c.deepep)
    for (CollLine& l : mode) l.busbw *= scale;
  return c;
}

}  // namespace

double AmdCollectiveScale() {
  double h100_best = 0;
  for (const CollLine& l : H100CollectiveCoeffs().nccl[0][kCollSizes - 1].line)
    h100_best = std::max(h100_best, l.busbw);
  return (kRcclAllReduceBusBw / kMi300xMeshBw) / (h100_best / kCalibNvlinkBw);
}

const CollectiveCoeffs& AmdCollectiveCoeffs() {
  static const CollectiveCoeffs kAmd = MakeAmdCollectiveCoeffs();
  return kAmd;
}

const CollectiveCoeffs& CollectiveCoeffsFor(const GpuSpec& gpu) {
  if (gpu.vendor == "amd") return AmdCollectiveCoeffs();
  const std::string& s = gpu.calibration;
  if (s.size() >= 4 && s[0] == 'h' && s[1] == '2' && s[2] == '0' && s[3] == '0') {
    return H200CollectiveCoeffs();
  }
  if (const CollectiveCoeffs* b = BlackwellCollectiveCoeffs(s)) return *b;
  return H100CollectiveCoeffs();
}

double CurveSeconds(const CollCurve& curve, CollKind kind, int n, double bytes) {
  return CurvePhase(curve, kind, n, bytes, 1.0).total();
}

double CollectiveSecondsWith(const CollectiveCoeffs& c, const ClusterSpec& cluster, CollKind kind,
                             GroupPlacement g, double bytes, bool decode) {
  const int n = std::max(g.n, 1);
  const int d = std::clamp(g.n_domains, 1, n);
  if (bytes <= 0 || (n == 1 && kind != CollKind::kSendRecv)) return 0.0;
  const int n_local = std::max(n / d, 1);
  // GPUs without their own tables: same latencies, bandwidth scaled by their fabric's rate for a
  // group of n_local GPUs of one domain (a switch: nvlink_bw whatever the group; a mesh: the
  // n_local - 1 links among the group's GPUs, GpuSpec::FabricBw).
  const double fabric = cluster.gpu.FabricBw(n_local);
  const double bw_scale = fabric > 0 ? fabric / c.nvlink_bw : 1.0;
  const double so_bw = std::max(cluster.scaleout_bw, 1.0) * kScaleoutEfficiency;  // bytes/s
  const double so_lat = cluster.scaleout_latency;

  switch (kind) {
    case CollKind::kSendRecv: {
      // One peer over NVLink: a 2-GPU all-to-all of a 2*bytes buffer sends exactly `bytes` each
      // way, so the measured 2-GPU all-to-all curve is the point-to-point cost. Across domains the
      // same software latency, one network hop, and the bytes over the NIC.
      // On a mesh the pair's one link (FabricBw(2)).
      const double pair = cluster.gpu.FabricBw(2);
      const double nv = CurvePhase(c.nccl[3][0], CollKind::kAllToAll, 2, 2.0 * bytes,
                                   pair > 0 ? pair / c.nvlink_bw : 1.0).total();
      if (d == 1) return nv;
      return std::max(nv, NcclFloor(c, CollKind::kAllToAll, 2) + so_lat + bytes / so_bw);
    }
    case CollKind::kDispatch:
    case CollKind::kCombine: {
      const CollLine& l = c.deepep[decode ? 1 : 0][kind == CollKind::kDispatch ? 0 : 1];
      const double nv_s = bytes / (l.busbw * bw_scale);
      if (d == 1) {
        // The lines were fitted on one 8-GPU domain. The high-throughput kernels send a token
        // once per destination rank (its copies for that rank's experts travel together), so
        // inside a domain of n_local ranks a rank's wire bytes follow the distinct other ranks a
        // token's k copies reach, RemoteDomainsPerToken(k, n_local) with ranks for domains, over
        // the 8-GPU figure the fit absorbed. The low-latency kernels send every copy (no change).
        const double dedup =
            !decode && g.fanout > 0 && n_local != kDeepEpCalibRanks
                ? RemoteDomainsPerToken(g.fanout, n_local) /
                      RemoteDomainsPerToken(g.fanout, kDeepEpCalibRanks)
                : 1.0;
        return l.lat_s + nv_s * dedup;
      }
      if (!decode && g.fanout > 0) {
        // High-throughput (normal) kernels: a token is sent over RDMA once per destination
        // domain and forwarded to its experts' GPUs over NVLink there, so the NIC carries
        // RemoteDomainsPerToken(k, d) / k of the copies' bytes while NVLink carries all of them.
        const double nic = bytes * RemoteDomainsPerToken(g.fanout, d) / g.fanout;
        return l.lat_s + so_lat + std::max(nv_s, nic / so_bw);
      }
      // Low-latency kernels (and unknown fan-out): every copy is sent straight to its GPU, so a
      // share (n - n_local)/n of each rank's copies leaves the domain over the scale-out NIC
      // while the rest moves over NVLink, concurrently.
      const double off = static_cast<double>(n - n_local) / n;
      return std::max(l.lat_s + nv_s,
                      l.lat_s + so_lat + std::max((1.0 - off) * nv_s, off * bytes / so_bw));
    }
    default:
      break;
  }

  // A spanning group is never modelled faster than the same group inside one domain. The
  // pipelined hierarchical form uses the NIC as an extra path, so for n > 8 it can undercut the
  // flat extrapolation of the 8-GPU curves - a comparison with no physical counterpart on 8-GPU
  // nodes; the bound keeps compact placements preferred (docs/dev/COST_MODEL.md).
  const double inside = IntraPhase(c, kind, n, bytes, bw_scale).total();
  if (d == 1) return inside;
  return std::max(inside, Hierarchical(c, kind, n, d, bytes, bw_scale, so_bw, so_lat));
}

double CollectiveSeconds(const ClusterSpec& cluster, CollKind kind, GroupPlacement g, double bytes,
                         bool decode) {
  return CollectiveSecondsWith(CollectiveCoeffsFor(cluster.gpu), cluster, kind, g, bytes, decode);
}

double RemoteDomainsPerToken(double k, int d) {
  if (d <= 1 || !(k > 0)) return 0.0;
  const double dd = static_cast<double>(d);
  return (dd - 1.0) * (1.0 - std::pow(1.0 - 1.0 / dd, k));
}

}  // namespace l2s
