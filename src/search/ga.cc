// ga: a generational genetic algorithm over encoded strategies.
//   - initial population: `pop` masked random samples;
//   - each generation keeps the `elite` best individuals unchanged (not re-evaluated) and fills
//     the rest with children: two parents by tournament selection (k uniform draws with
//     replacement, the best wins, ties to the earlier), uniform crossover over sub-actions, then
//     per-head mutation with probability `mut` (MaskedSampler::Mutate, which also repairs heads
//     made invalid by the crossover, so children are structurally valid);
//   - one simulator call per child, until the budget is spent.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "search/sampling.h"
#include "search/searchers.h"

namespace l2s {
namespace {

struct Individual {
  std::vector<int> idx;
  double value = 0;
};

class GaSearcher : public ObjectiveSearcher {
 public:
  GaSearcher(int pop, int k, double mut, int elite) : pop_(pop), k_(k), mut_(mut), elite_(elite) {}
  std::string name() const override {
    return fmt::format("ga(pop={},k={},mut={},elite={})", pop_, k_, mut_, elite_);
  }

 protected:
  SearchResult Run(Objective& obj, uint64_t seed) override {
    const EncodedSpace& space = obj.encoded_space();
    Rng rng(seed);
    MaskedSampler sampler(space);
    std::vector<Individual> popl, next;
    for (int i = 0; i < pop_ && !obj.Done(); ++i) {
      Individual ind;
      sampler.Sample(rng, &ind.idx);
      ind.value = Objective::Value(obj.EvaluateEncoded(ind.idx));
      popl.push_back(std::move(ind));
    }
    std::vector<int> order;
    while (!obj.Done()) {
      // Rank by value, ties by position (stable): the elites come first.
      order.resize(popl.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](int a, int b) { return popl[a].value > popl[b].value; });
      next.clear();
      for (int i = 0; i < elite_ && i < static_cast<int>(order.size()); ++i)
        next.push_back(popl[order[i]]);
      while (static_cast<int>(next.size()) < pop_ && !obj.Done()) {
        const Individual& a = popl[Tournament(rng, popl)];
        const Individual& b = popl[Tournament(rng, popl)];
        Individual child;
        child.idx.resize(a.idx.size());
        for (size_t h = 0; h < a.idx.size(); ++h)
          child.idx[h] = rng.Unit() < 0.5 ? a.idx[h] : b.idx[h];
        sampler.Mutate(rng, mut_, &child.idx);
        child.value = Objective::Value(obj.EvaluateEncoded(child.idx));
        next.push_back(std::move(child));
      }
      popl.swap(next);
    }
    return obj.Finish(name());
  }

 private:
  int Tournament(Rng& rng, const std::vector<Individual>& popl) const {
    int best = rng.Uniform(static_cast<int>(popl.size()));
    for (int i = 1; i < k_; ++i) {
      const int c = rng.Uniform(static_cast<int>(popl.size()));
      if (popl[c].value > popl[best].value || (popl[c].value == popl[best].value && c < best))
        best = c;
    }
    return best;
  }

  int pop_, k_;
  double mut_;
  int elite_;
};

}  // namespace

StatusOr<std::unique_ptr<Searcher>> MakeGaSearcher(const SearcherSpec& spec) {
  if (Status st = CheckSpecKeys(spec, {"pop", "k", "mut", "elite"}); !st.ok()) return st;
  const int64_t pop = spec.Int("pop", 64);
  const int64_t k = spec.Int("k", 3);
  const double mut = spec.Double("mut", 0.1);
  const int64_t elite = spec.Int("elite", 2);
  if (Status st = SpecValueError(spec); !st.ok()) return st;
  if (pop < 2 || pop > 1000000)
    return Status::InvalidArgument(fmt::format("searcher 'ga': pop must be in [2, 1e6], got {}", pop));
  if (k < 1 || k > pop)
    return Status::InvalidArgument(fmt::format("searcher 'ga': k must be in [1, pop={}], got {}", pop, k));
  if (!(mut >= 0 && mut <= 1))
    return Status::InvalidArgument(fmt::format("searcher 'ga': mut must be in [0, 1], got {}", mut));
  if (elite < 0 || elite >= pop)
    return Status::InvalidArgument(
        fmt::format("searcher 'ga': elite must be in [0, pop-1={}], got {}", pop - 1, elite));
  return std::unique_ptr<Searcher>(new GaSearcher(static_cast<int>(pop), static_cast<int>(k), mut,
                                                  static_cast<int>(elite)));
}

}  // namespace l2s
