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
//   Running limits the TPOT SLO survives: a candidate's batch is the running limit its server is
//   launched with and its steady state is what the plan reports, so with a TPOT or inter-token
//   SLO (TpotBoundS) a given candidate whose steady-state TPOT at its batch exceeds the
//   limit enters at the largest batch whose steady-state TPOT meets it (a full deployment decodes
//   every token at the steady-state TPOT, so its P99 is that too), and one whose batch 1 exceeds
//   it is left out. A light traffic meets the SLOs at any running limit; without this the pick
//   reported, priced and launched a running limit whose TPOT breaks the SLO once it is reached.
#pragma once

#include <functional>
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
  int64_t lowered = 0;   // given candidates entered at a smaller batch for the TPOT SLO
  int64_t left_out = 0;  // given candidates whose batch 1 exceeds the TPOT SLO
};

// The steady-state TPOT bound of `slos` (SteadyLimitsOf: the strictest TPOT or inter-token key,
// any statistic), seconds; +infinity without one.
double TpotBoundS(const std::vector<Slo>& slos);

// The largest batch in [1, hi] with tpot_s_at(batch) <= bound_s, by bisection (TPOT taken as
// nondecreasing in the batch; the answer itself is checked); 0 when none (batch 1 exceeds it).
int LargestBatchWithin(int hi, double bound_s, const std::function<double(int)>& tpot_s_at);

// `given`: valid strategies with their steady-state evaluations (e.g. the plan's evaluated sets);
// `requests`/`concurrency` as ServeSim::Run takes them. Errors: no candidate, empty SLOs. When
// every valid candidate exceeds the TPOT SLO at batch 1: not found, nothing simulated (left_out).
StatusOr<SloPick> PickBySlos(const Simulator& sim,
                             const std::vector<std::pair<Strategy, Evaluation>>& given,
                             const std::vector<RequestSpec>& requests, int concurrency,
                             const std::vector<Slo>& slos, const SloPickOptions& opt);

}  // namespace l2s::serve
