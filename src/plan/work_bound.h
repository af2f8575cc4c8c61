// An observer that bounds a search by its work: the oracle's bound in `l2s plan`, `compare` and
// the Pareto sweeps. A bound counts work, not seconds, so the same request gives the same answer
// on a loaded machine.
#pragma once

#include <cstdint>

#include "search/search.h"

namespace l2s {

// The oracle's default work bound in its simulator calls (cost attributions and incumbent
// re-evaluations, oracle.h), for plan and the Pareto sweeps: about 5 s of one core at the rate
// measured on the README's default problem (268,531 calls in 0.78 s of CPU: ~340,000 calls/s,
// docs/PLAN.md, "l2s plan" step 5). An oracle that cannot finish within its bound reports
// "skipped".
inline constexpr int64_t kDefaultOracleCalls = 1'500'000;
// The same rate, rounded down, for reading the deprecated --oracle-seconds as calls.
inline constexpr int64_t kOracleCallsPerSecond = 300'000;

// Forwards to `inner` (may be null) and cancels the search at its first call past `max_calls`
// (0: never): a search that needs exactly max_calls calls finishes. Calls are counted across
// consecutive solves (the disaggregated oracle solves each pool
// with its own SolveExact, whose call count restarts at each).
class WorkBoundObserver : public Observer {
 public:
  WorkBoundObserver(Observer* inner, int64_t max_calls) : inner_(inner), max_calls_(max_calls) {}
  void OnProgress(int64_t calls, int64_t budget, double best) override;
  void OnEvaluation(const Strategy& s, const Evaluation& e) override;
  bool Cancelled() override;
  int64_t calls() const { return total_; }
  bool bound_hit() const { return bound_hit_; }        // stopped by the bound
  bool inner_cancelled() const { return inner_cancelled_; }  // stopped by the caller

 private:
  Observer* inner_;
  int64_t max_calls_;
  int64_t last_ = 0;   // the calls figure last reported (a new solve restarts it)
  int64_t total_ = 0;  // calls made across every solve seen
  bool bound_hit_ = false, inner_cancelled_ = false;
};

}  // namespace l2s
