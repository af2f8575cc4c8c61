// ga: a generational genetic algorithm over encoded strategies.
//   - initial population: kPop masked random samples;
//   - each generation keeps the kElite best individuals unchanged (not re-evaluated) and fills
//     the rest with children: two parents by tournament selection (kTournament uniform draws
//     with replacement, the best wins, ties to the earlier), uniform crossover over sub-actions,
//     then per-head mutation with probability kMutation (MaskedSampler::Mutate, which also
//     repairs heads made invalid by the crossover, so children are structurally valid);
//   - one simulator call per child, until the budget is spent.
#include <algorithm>
#include <numeric>

#include "search/sampling.h"
#include "search/searchers.h"

namespace l2s {
namespace {

// Population, tournament draws, elites kept, per-head mutation rate: the former spec defaults,
// which nothing varied (ga is a reference baseline, not tuned).
constexpr int kPop = 64, kTournament = 3, kElite = 2;
constexpr double kMutation = 0.1;

struct Individual {
  std::vector<int> idx;
  double value = 0;
};

class GaSearcher : public ObjectiveSearcher {
 public:
  std::string name() const override { return "ga"; }

 protected:
  SearchResult Run(Objective& obj, uint64_t seed) override {
    const EncodedSpace& space = obj.encoded_space();
    Rng rng(seed);
    MaskedSampler sampler(space);
    std::vector<Individual> popl, next;
    for (int i = 0; i < kPop && !obj.Done(); ++i) {
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
      for (int i = 0; i < kElite && i < static_cast<int>(order.size()); ++i)
        next.push_back(popl[order[i]]);
      while (static_cast<int>(next.size()) < kPop && !obj.Done()) {
        const Individual& a = popl[Tournament(rng, popl)];
        const Individual& b = popl[Tournament(rng, popl)];
        Individual child;
        child.idx.resize(a.idx.size());
        for (size_t h = 0; h < a.idx.size(); ++h)
          child.idx[h] = rng.Unit() < 0.5 ? a.idx[h] : b.idx[h];
        sampler.Mutate(rng, kMutation, &child.idx);
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
    for (int i = 1; i < kTournament; ++i) {
      const int c = rng.Uniform(static_cast<int>(popl.size()));
      if (popl[c].value > popl[best].value || (popl[c].value == popl[best].value && c < best))
        best = c;
    }
    return best;
  }
};

}  // namespace

StatusOr<std::unique_ptr<Searcher>> MakeGaSearcher(const SearcherSpec& spec) {
  if (Status st = CheckSpecKeys(spec, {}); !st.ok()) return st;
  return std::unique_ptr<Searcher>(new GaSearcher());
}

}  // namespace l2s
