// One interface for every searcher (open_spiel style): a searcher sees the problem only through
// Objective::Evaluate(strategy), which counts simulator calls against the budget (invalid
// proposals included, as in the paper), tracks the best valid strategy and the best-so-far trace,
// reports progress to an Observer, and stops the search when the budget is spent or the observer
// cancels. Searchers are created from spec strings such as "sa" or "rl(refine=0.25)".
#pragma once

#include <chrono>
#include <span>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "sim/simulator.h"
#include "strategy/encoded_space.h"
#include "strategy/space.h"
#include "strategy/strategy.h"

namespace l2s {

// A search problem over an abstract encoded space (for example the disaggregated joint space,
// search/joint.h): the space and the evaluation of one of its points. The Evaluation's
// tokens_per_s_per_gpu is the figure of merit, verdict says whether the point is valid.
class EncodedProblem {
 public:
  virtual ~EncodedProblem() = default;
  virtual const EncodedSpace& space() const = 0;
  virtual Evaluation Evaluate(std::span<const int> idx) const = 0;
};

// Progress sink and cancellation source (progress bar, Ctrl-C).
class Observer {
 public:
  virtual ~Observer() = default;
  // Called after every simulator call (cheap implementations should rate-limit themselves).
  virtual void OnProgress(int64_t calls, int64_t budget, double best_tokens_per_s_per_gpu) {
    (void)calls; (void)budget; (void)best_tokens_per_s_per_gpu;
  }
  // Called for every evaluated proposal (for Pareto fronts of everything a search looked at).
  virtual void OnEvaluation(const Strategy& s, const Evaluation& e) { (void)s; (void)e; }
  // Polled after every call; true stops the search, which returns its best so far.
  virtual bool Cancelled() { return false; }
};

struct TracePoint {
  int64_t call = 0;   // 1-based simulator call index at which the best improved
  double value = 0;   // best valid tokens/s per GPU so far
};

struct SearchResult {
  std::string searcher;       // spec of the searcher that produced it
  bool found = false;         // a valid strategy was found
  Strategy best;
  Evaluation eval;            // evaluation of `best`
  int64_t calls = 0;          // simulator calls made (megatron, oracle and default are not
                              // budget-limited and may exceed the budget)
  double wall_s = 0;
  bool interrupted = false;
  std::vector<TracePoint> trace;  // monotone increasing values, ends at eval.tokens_per_s_per_gpu
  std::string note;               // e.g. "space of 1.2e9 strategies solved exactly"
  std::vector<int> best_encoded;  // SearchEncoded only: the encoding of the best point
};

// The budgeted view of the simulator that searchers use.
class Objective {
 public:
  Objective(const Simulator& sim, const StrategySpace& space, int64_t budget, Observer* observer);
  // Over an abstract encoded problem: only EvaluateEncoded may be called, sim() may not; Finish
  // fills best_encoded (best is left default).
  Objective(const EncodedProblem& problem, int64_t budget, Observer* observer);

  // Evaluates one proposal, charging one call. Must not be called once Done().
  const Evaluation& Evaluate(const Strategy& s);
  // Same for an encoded proposal (one index per head of the space).
  const Evaluation& EvaluateEncoded(std::span<const int> idx);

  // Value used for comparisons: tokens/s per GPU when valid, 0 otherwise.
  static double Value(const Evaluation& e) { return e.valid() ? e.tokens_per_s_per_gpu : 0.0; }

  bool Done() const { return calls_ >= budget_ || cancelled_; }
  bool cancelled() const { return cancelled_; }
  int64_t calls() const { return calls_; }
  int64_t budget() const { return budget_; }
  bool has_best() const { return has_best_; }
  const Strategy& best() const { return best_; }
  double best_value() const { return has_best_ ? best_eval_.tokens_per_s_per_gpu : 0.0; }
  const Simulator& sim() const { return *sim_; }
  // The space searchers sample from (the StrategySpace, or the encoded problem's space).
  const EncodedSpace& encoded_space() const;
  // Null for an objective over an EncodedProblem.
  const StrategySpace* strategy_space() const { return space_; }

  // Fills the common fields of a result (best, eval, calls, trace, wall time, interrupted).
  SearchResult Finish(std::string searcher) const;

 private:
  // After a call: last_ becomes the best when it is valid and strictly better (true; the caller
  // stores its point), and the trace grows; then the observer hears of it and may cancel.
  bool Track();
  void Report();
  const Simulator* sim_ = nullptr;
  const StrategySpace* space_ = nullptr;
  const EncodedProblem* problem_ = nullptr;
  int64_t budget_;
  Observer* observer_;
  int64_t calls_ = 0;
  bool cancelled_ = false;
  bool has_best_ = false;
  Strategy best_;
  Evaluation best_eval_;
  Evaluation last_;
  std::vector<int> best_idx_;  // encoded problems: encoding of best_
  std::vector<TracePoint> trace_;
  std::chrono::steady_clock::time_point start_;
  Strategy scratch_;
};

// Parsed spec string: name(key=value,...).
struct SearcherSpec {
  std::string name;
  std::map<std::string, std::string> args;
  std::string text;  // as given
  // Typed accessors with defaults; record bad values in `error`.
  double Double(const std::string& key, double def) const;
  int64_t Int(const std::string& key, int64_t def) const;
  bool Bool(const std::string& key, bool def) const;
  mutable std::string error;
};
StatusOr<SearcherSpec> ParseSearcherSpec(std::string_view text);

class Searcher {
 public:
  virtual ~Searcher() = default;
  virtual std::string name() const = 0;  // canonical spec, with the options in force
  // Deterministic for a given seed. Uses at most `budget` calls of the objective (budget-free
  // searchers — megatron, default, oracle — report their own evaluation count).
  virtual SearchResult Search(const Simulator& sim, const StrategySpace& space, int64_t budget,
                              uint64_t seed, Observer* observer) = 0;
  // The same over an abstract encoded problem (the disaggregated joint space). Searchers that
  // need a strategy space (megatron, default, oracle) return found = false with a note saying so.
  virtual SearchResult SearchEncoded(const EncodedProblem& problem, int64_t budget,
                                     uint64_t seed, Observer* observer);
};

// Names accepted by MakeSearcher: local, rl, sa, rw, ga, megatron, default, oracle.
std::vector<std::string> SearcherNames();
StatusOr<std::unique_ptr<Searcher>> MakeSearcher(std::string_view spec);

// Implemented in rl.cc (the RL searcher).
StatusOr<std::unique_ptr<Searcher>> MakeRlSearcher(const SearcherSpec& spec);

}  // namespace l2s
