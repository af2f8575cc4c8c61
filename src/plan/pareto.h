// The throughput-interactivity frontier: output tokens/s per GPU against tokens/s per user, swept
// over the TPOT limit. Each point is the best plan under one TPOT limit (exact where the oracle
// finishes); the front keeps the points no other point beats on both axes. Series are named
// ("aggregated", "disaggregated") and produced by a callback per TPOT limit, so that any planner
// (the aggregated one here, a disaggregated one elsewhere) adds its own series to the same sweep.
// docs/PLAN.md ("--pareto") describes the grid and the output.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "search/search.h"
#include "plan/work_bound.h"
#include "sim/simulator.h"
#include "strategy/space.h"

namespace l2s {

struct ParetoPoint {
  std::string series;                // e.g. "aggregated"
  double tpot_limit_ms = 0;          // the TPOT limit this point is the best under
  double tokens_per_s_per_gpu = 0;   // output tokens/s per GPU, over all GPUs of the plan
  double tokens_per_s_per_user = 0;  // TokensPerUser(tpot_ms)
  double ttft_ms = 0;
  double tpot_ms = 0;                // per output token (a step emits `accept` tokens with MTP)
  std::string strategy;              // the plan in text form
  std::string found_by;              // "oracle", or the searcher spec used when it could not finish
  bool exact = false;                // the oracle finished: no plan under the limit is better
  double usd_per_mtok_output = -1;   // $ per million output tokens at the user's price (-1: none)
};

// Tokens per second one user receives at `tpot_ms` per output token: 1000 / tpot_ms. The
// simulator's TPOT is already per output token (step time / tokens per step, MTP included), so
// this equals 1000 x tokens per step / step time in ms.
double TokensPerUser(double tpot_ms);

// True when `a` dominates `b`: at least as good on both axes and better on one.
bool Dominates(const ParetoPoint& a, const ParetoPoint& b);

// The non-dominated points, sorted by tokens/s per user ascending (so tokens/s per GPU
// descending). Of points equal on both axes the first in input order is kept. O(n log n).
std::vector<ParetoPoint> ParetoFront(std::vector<ParetoPoint> points);

// `n` TPOT limits from `fastest_ms` to `slowest_ms`, both included, spaced geometrically (equal
// ratios: the frontier's interesting part is at low TPOT). {slowest_ms} when fastest >= slowest
// or n < 2.
std::vector<double> TpotLimitGrid(double fastest_ms, double slowest_ms, int n);

// One named series: the best point under each limit (limits without a valid plan are absent) and
// its front.
struct ParetoSeries {
  std::string name;
  std::vector<ParetoPoint> sweep;
  std::vector<ParetoPoint> front;
  bool cancelled = false;  // the callback asked to stop: the sweep is partial
};
// What a series answers for one limit: the best point (nullopt when no plan meets the limit),
// or cancelled to stop the sweep.
struct SweepAnswer {
  std::optional<ParetoPoint> point;
  bool cancelled = false;
};
using BestAtTpot = std::function<SweepAnswer(double tpot_limit_ms)>;
// Calls `best` for each limit (on up to `jobs` threads: `best` must then be safe to call
// concurrently, and its answer depend on the limit alone; common/parallel.h), then walks the
// limits in order: sets each point's series and tpot_limit_ms; an answer worse than a point of
// `known` or of an earlier limit that meets this limit is that point (exact false), so that every
// series, whatever its search, never falls as the limit loosens. A cancelled answer ends the
// series there. The same series for every `jobs`.
ParetoSeries SweepTpot(const std::string& name, const std::vector<double>& limits,
                       const BestAtTpot& best, int jobs = 1,
                       const std::vector<ParetoPoint>& known = {});

// ---------------------------------------------------------------- the aggregated series

struct AggregatedSweepOptions {
  std::string searcher = "local";  // the fallback when the oracle does not finish within its bound
  int64_t budget = 4000;
  uint64_t seed = 0;
  int64_t oracle_calls = kDefaultOracleCalls;  // the oracle's work bound per limit; 0 = none
  int points = 16;              // limits in the grid
  int jobs = 1;                 // limits searched at once (threads); the series is the same
};

// The lowest TPOT of any valid strategy at batch 1 with Megatron dims (every degree, sp, MTP
// depth of the space; no redundant slots or overlap): the fast end of the grid. The TPOT SLO of
// `sim`'s problem is ignored; the other limits (memory, TTFT) hold. nullopt when none is valid.
struct FastestTpot {
  Strategy strategy;
  Evaluation eval;
};
std::optional<FastestTpot> FastestTpotScan(const Simulator& sim, const StrategySpace& space);

// The best aggregated plan of `base` with its TPOT SLO replaced by `tpot_limit_ms` (0 = the
// problem's own SLO): the oracle (exact) within `oracle_calls`, else the better of its partial
// result and `searcher`. `observer` (may be null) sees progress and can cancel.
SweepAnswer BestAggregatedAtTpot(const Problem& base, const StrategySpace& space,
                                 double tpot_limit_ms, const AggregatedSweepOptions& opt,
                                 Observer* observer);

// The whole aggregated series: the grid runs from FastestTpotScan's TPOT to the TPOT of the best
// plan under the problem's own SLOs (unconstrained when it states no TPOT limit), `opt.points`
// limits; `limits` receives the grid (searched on opt.jobs threads: `observer` must then be safe
// to call from them). Each limit's point is the better of
// BestAggregatedAtTpot and every plan already known to meet the limit (the scan's, the
// unconstrained search's, earlier limits'), so that sweeps with inexact points stay monotone.
// Invalid when no valid plan exists; InvalidArgument in prefill mode.
StatusOr<ParetoSeries> AggregatedParetoSeries(const Problem& base, const StrategySpace& space,
                                              const AggregatedSweepOptions& opt,
                                              Observer* observer, std::vector<double>* limits);

// An MoE model's aggregated series with replicas (plan/replicas.h), as `l2s plan` sizes its
// headline: at each point's limit, the searcher's best (opt.searcher, opt.budget, no oracle) on
// each smaller instance size that holds the weights (`space_of` builds a size's space) replaces
// the point where it is better per GPU, written "Nx <strategy>" (not exact); ties keep the larger
// instance. Points stay monotone in the limit (an earlier point that meets a looser limit and is
// better carries over) and the front is recomputed. A dense model's series (its dp ranks are
// replicas already), and one whose sweep was cancelled, are returned as they are; `observer` can
// cancel (the series is then `cancelled`). The (point, size) searches run on opt.jobs threads,
// each with a searcher of its own.
ParetoSeries WithReplicas(ParetoSeries series, const Problem& base,
                          const std::function<StatusOr<StrategySpace>(const Problem&)>& space_of,
                          const AggregatedSweepOptions& opt, Observer* observer);

}  // namespace l2s
