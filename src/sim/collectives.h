// Collective communication latency on a hierarchical topology (NVLink inside a domain,
// scale-out network across), fitted to ../shared/calibration/<gpu>/nccl.csv,
// custom_allreduce.csv and the DeepEP tables (coefficients in collective_coeffs.cc, refit by
// tools/fit_collectives.py, fit error checked by collectives_fit_test.cc). O(1), seconds.
#pragma once

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
};

// Time of one collective. `bytes` follows the nccl-tests convention: all-reduce = the reduced
// buffer; all-gather = the gathered output; reduce-scatter = the full input; all-to-all = each
// rank's send buffer; send/recv = the message. For dispatch/combine `bytes` is each rank's send
// volume (tokens x topk x hidden x element bytes, local routes included), and `decode` selects the
// low-latency kernels (true) or the high-throughput ones (false).
double CollectiveSeconds(const ClusterSpec& cluster, CollKind kind, GroupPlacement g, double bytes,
                         bool decode = true);

// Expected max-over-ranks / mean load of routed tokens for uniform top-k routing over `ep` ranks
// with `copies` token copies in total (binomial; see docs/COST_MODEL.md). >= 1.
double ExpertImbalance(double copies, int ep);

}  // namespace l2s
