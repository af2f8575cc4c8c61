// The exact oracle: the true optimum of the simulator over the FULL strategy space (degrees,
// batch, sp and every per-operator dim), found without evaluating every point.
//
// Method (docs/dev/SEARCH.md, "oracle"): for each structurally valid (pp, tp, ep, batch, sp, mtp), 27
// Simulator::ComputeOpTotals calls give the cost attribution of every option of every operator
// group (attention's 27 dim combinations, the FFN pairs' 9, the single operators' 3; the space's
// dim options, so one call in a space restricted to an engine's Megatron dims, src/engine). A full
// strategy's Simulator::Totals is the sum of its groups' attributions (the largest activation is
// their max), and Simulator::Compose turns totals into the Evaluation the simulator would return.
// Per group, options dominated in every cost criterion are dropped; the product of the rest is
// enumerated depth-first with an exact bound (throughput, memory and SLO bounds from per-group
// minima). Candidates within 1e-9 of the incumbent are decided by Compose itself, and every new
// incumbent is re-evaluated with Simulator::EvaluateAtBatch (reported as SearchResult.eval).
//
// Objective: tokens/s per GPU of valid strategies. Ties keep the first in encoded (lexicographic
// index) order among the options that survive dominance pruning.
// Batch: the space's batch options; a space whose batch head is {auto} makes the oracle
// enumerate the powers of two 1..workload.max_batch (the result then has an explicit batch).
#pragma once

#include <cstdint>

#include "search/search.h"

namespace l2s {

struct OracleStats {
  double space_size = 0;         // StrategySpace::Size()
  double valid_count = 0;        // StrategySpace::CountValid() (structurally valid points)
  int64_t degree_configs = 0;    // (pp, tp, ep, batch, sp) combinations solved
  int64_t op_totals_calls = 0;   // Simulator::ComputeOpTotals calls
  int64_t composed = 0;          // leaves decided by Simulator::Compose
  int64_t nodes = 0;             // branch-and-bound nodes visited
  double max_verify_rel_err = 0; // largest |Compose - EvaluateAtBatch| / value over incumbents
  bool auto_batch = false;       // the space's batch head was {auto}
  int64_t partial_checks = 0;    // configurations bounded after their smaller groups' calls
  int64_t partial_pruned = 0;    // ... and skipped there (their remaining calls not made)
  double wall_s = 0;
};

// Solves the problem exactly. SearchResult.calls = ComputeOpTotals calls plus
// EvaluateAtBatch re-evaluations; the observer sees every one of them (OnProgress's `budget` is
// the planned number of ComputeOpTotals calls) and can cancel (the result is then the best of
// the degree configurations finished). `stats` may be null.
struct OracleOptions {
  // Bound each configuration once every operator group but the largest is costed (the largest
  // counted 0) and skip its remaining ComputeOpTotals calls when that bound is already pruned.
  // Exact either way (oracle_test checks both paths agree); off = the reference path.
  bool partial_bound = true;
  // Only strategies worth at least `floor` tokens/s per GPU are of interest: configurations and
  // nodes whose bound is below floor x (1 - 1e-9) are pruned as if an incumbent of that value
  // existed. The result is the exact optimum whenever that optimum is >= floor x (1 - 1e-9);
  // otherwise it is either not found or a valid strategy below that value (then the optimum is
  // below it too). 0: no floor.
  double floor = 0;
};
SearchResult SolveExact(const Simulator& sim, const StrategySpace& space, Observer* observer,
                        OracleStats* stats = nullptr, const OracleOptions& options = {});

}  // namespace l2s
