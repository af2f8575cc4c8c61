// Percentile SLOs for the steady-state planner (`l2s plan` with a traffic, docs/CAPACITY.md
// "plan with a traffic"): of a set of candidate deployments ranked by their steady-state tokens/s
// per GPU, the best whose request-level simulation (serve_sim.h) of a given request stream meets
// every percentile SLO (stats.h).
//   Candidates: the given (strategy, steady-state evaluation) pairs, each also at its batch
//   halved (batch / 2, / 4, ... down to 1, priced by the Simulator at that batch: a smaller batch
//   queues requests for less time behind long decodes and prefills sooner), deduplicated, sorted
//   by tokens/s per GPU (best first; ties: the given order, then the larger batch). They are
//   simulated in that order, each with max running requests per rank = its batch; the first that
//   meets every SLO is the answer (so it is the best candidate that meets them).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "serve/serve_sim.h"
#include "serve/stats.h"
#include "serve/workload.h"
#include "sim/simulator.h"
#include "strategy/strategy.h"

namespace l2s::serve {

struct SloCandidate {
  Strategy strategy;     // batch = the max running requests per rank it is simulated with
  Evaluation steady;     // the Simulator's steady state at that batch
  bool meets = false;
  std::string why;       // the first SLO missed (or why the run is unstable)
  ServeSummary summary;  // the request stream on this deployment
};

struct SloPickOptions {
  ServeOptions serve;        // max_running is set per candidate
  int max_simulations = 24;  // work limit: candidates simulated before giving up
  int halvings = 6;          // batch halvings added per given candidate
};

struct SloPick {
  bool found = false;
  int best = -1;                       // index into simulated
  std::vector<SloCandidate> simulated;  // in the order simulated (best steady state first)
  int64_t candidates = 0;              // candidates after halvings and deduplication
};

// `given`: valid strategies with their steady-state evaluations (e.g. the plan's evaluated sets);
// `requests`/`concurrency` as ServeSim::Run takes them. Errors: no candidate, empty SLOs.
StatusOr<SloPick> PickBySlos(const Simulator& sim,
                             const std::vector<std::pair<Strategy, Evaluation>>& given,
                             const std::vector<RequestSpec>& requests, int concurrency,
                             const std::vector<Slo>& slos, const SloPickOptions& opt);

}  // namespace l2s::serve
