// random: uniform masked sampling (each head uniform among the options the mask allows given
// the heads before it), one simulator call per sample, until the budget is spent.
#include "search/sampling.h"
#include "search/searchers.h"

namespace l2s {
namespace {

class RandomSearcher : public Searcher {
 public:
  std::string name() const override { return "random"; }
  SearchResult Search(const Simulator& sim, const StrategySpace& space, int64_t budget,
                      uint64_t seed, Observer* observer) override {
    Objective obj(sim, space, budget, observer);
    return Run(obj, seed);
  }
  SearchResult SearchEncoded(const EncodedProblem& problem, int64_t budget, uint64_t seed,
                             Observer* observer) override {
    Objective obj(problem, budget, observer);
    return Run(obj, seed);
  }

 private:
  SearchResult Run(Objective& obj, uint64_t seed) {
    const EncodedSpace& space = obj.encoded_space();
    Rng rng(seed);
    MaskedSampler sampler(space);
    std::vector<int> idx;
    while (!obj.Done()) {
      sampler.Sample(rng, &idx);
      obj.EvaluateEncoded(idx);
    }
    return obj.Finish(name());
  }
};

}  // namespace

StatusOr<std::unique_ptr<Searcher>> MakeRandomSearcher(const SearcherSpec& spec) {
  if (Status st = CheckSpecKeys(spec, {}); !st.ok()) return st;
  return std::unique_ptr<Searcher>(new RandomSearcher());
}

}  // namespace l2s
