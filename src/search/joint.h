// The disaggregated joint space (docs/dev/SEARCH.md "Disaggregated joint space"): pool assignment x
// prefill instance size x decode instance size x prefill strategy x decode strategy. Instance
// counts are not heads: for given per-instance capacities the best counts are found exactly by
// DisaggModel::BestCounts inside every evaluation.
//
// Heads, in order:
//   0 pools        - which pool prefills and which decodes (one option on a homogeneous cluster)
//   1 prefill_gpus - GPUs of one prefill instance (InstanceSizes of the prefill pool, union over
//                    the assignments)
//   2 decode_gpus  - GPUs of one decode instance
//   3..            - the heads of the prefill instance's StrategySpace ("prefill.pp", ...), then
//                    those of the decode instance's ("decode.pp", ...). pp, tp and ep list the
//                    union of their options over the instance sizes; Mask allows only the
//                    options of the chosen size's space.
// The searchers see it through EncodedProblem (search/search.h); SolveDisaggExact is the exact
// oracle by decomposition.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "search/search.h"
#include "sim/disagg.h"
#include "strategy/space.h"

namespace l2s {

class JointSpace final : public EncodedSpace {
 public:
  // models: one per pool assignment (not owned; must outlive the space). prefill / decode: the
  // strategy-space options of each role (batch searched as powers of two: the oracle needs
  // explicit batches).
  static StatusOr<std::unique_ptr<JointSpace>> Make(std::vector<const DisaggModel*> models,
                                                    const SpaceOptions& prefill,
                                                    const SpaceOptions& decode);

  enum Head : int { kPools = 0, kPrefillGpus = 1, kDecodeGpus = 2, kFirstStrategy = 3 };

  int num_heads() const override { return static_cast<int>(head_sizes_.size()); }
  int head_size(int h) const override { return head_sizes_[h]; }
  const std::vector<int>& head_sizes() const override { return head_sizes_; }
  std::string head_name(int h) const override;
  std::string option_name(int h, int i) const override;
  void Mask(std::span<const int> prefix, int h, std::span<uint8_t> out) const override;
  bool Valid(std::span<const int> idx) const override;
  double Size() const override;
  bool ordinal(int h) const override;
  bool structural(int h) const override;
  // Each role's strategy heads carry the strategy space's hints (its operator groups, the
  // decode role's ids offset by 16; its batch head; its recipes).
  int group(int h) const override;
  bool batch(int h) const override;
  int num_recipes() const override { return proto_->num_recipes(); }
  int recipe_option(int h, int r) const override;

  // A decoded point.
  struct Point {
    int model = 0;  // index into models()
    int gp = 0, gd = 0;
    Strategy prefill, decode;
  };
  Point Decode(std::span<const int> idx) const;
  // False when the point is not representable.
  bool Encode(const Point& p, std::vector<int>* idx) const;

  const std::vector<const DisaggModel*>& models() const { return models_; }
  // The strategy space of one instance of g GPUs of a role of a model (null when g is not one of
  // its sizes or the space is empty).
  const StrategySpace* PrefillSpace(int model, int g) const;
  const StrategySpace* DecodeSpace(int model, int g) const;
  // Whether a prefill instance of gp GPUs and a decode instance of gd fit the pools of a model.
  bool PairFits(int model, int gp, int gd) const;
  const SpaceOptions& decode_options() const { return dopt_; }

 private:
  JointSpace() = default;
  // Per (model, role, size): the space and its pp/tp/ep union <-> local index maps.
  struct Sub {
    int g = 0;
    std::unique_ptr<StrategySpace> space;
    std::vector<int> to_local[3];   // [pp, tp, ep] union index -> local (-1 absent)
    std::vector<int> to_union[3];   // local -> union
  };
  struct Role {
    std::vector<Sub> subs;  // by size, ascending
    const Sub* Find(int g) const;
  };
  const Sub* SubOf(int model, bool prefill, int g) const;
  // Maps the union indices of a strategy block to the sub's local ones; false if absent.
  bool ToLocal(const Sub& s, std::span<const int> block, int n, std::vector<int>* local) const;

  std::vector<const DisaggModel*> models_;
  SpaceOptions dopt_;  // the decode role's options (the disaggregated oracle fixes its mtp)
  std::vector<Role> prefill_, decode_;  // by model
  std::vector<int> sizes_;              // union of instance sizes (both roles), ascending
  std::vector<int> pp_, tp_, ep_;       // union options
  std::vector<int> head_sizes_;
  int strat_heads_ = 0;
  const StrategySpace* proto_ = nullptr;  // a sub-space whose head names and non-degree options
                                          // every sub shares
  mutable std::vector<int> scratch_local_;
  mutable std::vector<uint8_t> scratch_mask_;
};

class JointProblem final : public EncodedProblem {
 public:
  explicit JointProblem(const JointSpace& space) : space_(space) {}
  const EncodedSpace& space() const override { return space_; }
  Evaluation Evaluate(std::span<const int> idx) const override;
  DisaggEvaluation Describe(std::span<const int> idx) const;

 private:
  const JointSpace& space_;
};

// The search of the joint space by decomposition (docs/dev/SEARCH.md "Decomposed search"): what
// `local` does on a JointProblem, `run` searching one role's StrategySpace from given start
// points. Each role at each instance size of each pool (a slot) is an ordinary StrategySpace
// problem; its evaluations are kept as parts not dominated in (capacity, latency or step), and
// pairs of parts are joined exactly by DisaggModel::Combine, with no call. A slot whose space fits
// its share of a quarter of the budget is solved by the role oracle, any other is searched; then
// successive halving per role; the last call evaluates the best pair through the joint problem.
// The result's calls = the role calls + 1 <= budget; deterministic for a seed (each search's seed
// derives from the seed, the slot and the round); the observer sees every role call and may
// cancel.
using RoleRun = std::function<SearchResult(const Simulator& sim, const StrategySpace& space,
                                           int64_t budget, uint64_t seed,
                                           std::span<const Strategy> start, Observer* observer)>;
SearchResult SearchJointDecomposed(const JointProblem& problem, int64_t budget, uint64_t seed,
                                   Observer* observer, const RoleRun& run);

struct DisaggOracleStats {
  int64_t pool_solves = 0;      // SolveExact calls on one role's instance space
  int64_t pairs = 0;            // (assignment, prefill size, decode size) pairs
  int64_t pairs_examined = 0;   // ... not pruned by their upper bound
  int64_t frontier_points = 0;  // decode frontier points examined
  int64_t sizes_bounded = 0;    // decode sizes whose solve the incumbent's floor cut short
                                // (or made unnecessary)
  double wall_s = 0;
};

struct DisaggResult {
  bool found = false;
  bool interrupted = false;
  std::vector<int> best_encoded;
  JointSpace::Point best;
  DisaggEvaluation eval;
  double wall_s = 0;
  std::string note;
  std::string why_none;  // solved without a valid point: the binding limit, one line
};

// The exact optimum of the joint space by decomposition (docs/dev/SEARCH.md): per instance size,
// each role is solved exactly by SolveExact (oracle.h); the TTFT couples the roles only through
// the decode step, so the decode role is walked along its frontier (best capacity at a step
// strictly shorter than the previous point's) with the prefill solved at the latency the rest of
// the TTFT leaves, and pairs of sizes are pruned by an upper bound. The observer may cancel.
struct DisaggOracleOptions {
  // Decode sizes solved with the incumbent's floor (OracleOptions::floor) or skipped when no
  // capacity could beat the incumbent; off = every decode size solved in full (the reference).
  bool floors = true;
  // Each pool solve's partial bound (OracleOptions::partial_bound).
  bool partial_bound = true;
};
DisaggResult SolveDisaggExact(const JointSpace& space, Observer* observer,
                              DisaggOracleStats* stats = nullptr,
                              const DisaggOracleOptions& options = {});

}  // namespace l2s
