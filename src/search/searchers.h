// Factories of the built-in searchers (MakeSearcher dispatches to them by name) and the spec
// helpers they share. Each factory validates its own options: an unknown key or a bad value is an
// InvalidArgument naming it.
#pragma once

#include <initializer_list>
#include <memory>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "search/search.h"

namespace l2s {

// InvalidArgument naming the first key of `spec` not in `known`.
Status CheckSpecKeys(const SearcherSpec& spec, std::initializer_list<std::string_view> known);
// InvalidArgument carrying spec.error when a typed accessor rejected a value.
Status SpecValueError(const SearcherSpec& spec);

// Base of the searchers whose body needs only an Objective and its encoded space (rw, sa, ga,
// rl): Search and SearchEncoded build the objective (over a strategy space, or over an
// EncodedProblem such as the disaggregated joint space) and call Run.
class ObjectiveSearcher : public Searcher {
 public:
  SearchResult Search(const Simulator& sim, const StrategySpace& space, int64_t budget,
                      uint64_t seed, Observer* observer) final {
    Objective obj(sim, space, budget, observer);
    return Run(obj, seed);
  }
  SearchResult SearchEncoded(const EncodedProblem& problem, int64_t budget, uint64_t seed,
                             Observer* observer) final {
    Objective obj(problem, budget, observer);
    return Run(obj, seed);
  }

 protected:
  virtual SearchResult Run(Objective& obj, uint64_t seed) = 0;
};

// rw: the paper's random walk. No options.
StatusOr<std::unique_ptr<Searcher>> MakeRwSearcher(const SearcherSpec& spec);
// sa: simulated annealing, cosine cooling over the budget from the paper's t0 = 100.
StatusOr<std::unique_ptr<Searcher>> MakeSaSearcher(const SearcherSpec& spec);
// ga: genetic algorithm (population 64, tournaments of 3, 2 elites, mutation 0.1).
StatusOr<std::unique_ptr<Searcher>> MakeGaSearcher(const SearcherSpec& spec);
// megatron: Megatron dims, degrees and batch exhaustive. No options.
StatusOr<std::unique_ptr<Searcher>> MakeMegatronSearcher(const SearcherSpec& spec);
// default: the hand-written rule of thumb. No options.
StatusOr<std::unique_ptr<Searcher>> MakeDefaultSearcher(const SearcherSpec& spec);
// local(patience=80,without=): iterated local search over the registered moves (moves/move.h),
// a bandit choosing among them; without=a+b leaves moves out (the ablation).
StatusOr<std::unique_ptr<Searcher>> MakeLocalSearcher(const SearcherSpec& spec);
// The local searcher's loop (every registered move, patience 80) on obj from `starts` (encoded
// points of obj.encoded_space(), evaluated first; none: its own drawn starts) until obj is done
// or nothing new is reachable: rl's refine phase (rl.h 9.).
void LocalSearchFrom(Objective& obj, uint64_t seed, const std::vector<std::vector<int>>& starts);
// oracle: the exact optimum over the whole space. No options.
StatusOr<std::unique_ptr<Searcher>> MakeOracleSearcher(const SearcherSpec& spec);

}  // namespace l2s
