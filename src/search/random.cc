// random: uniform masked sampling (each head uniform among the options the mask allows given
// the heads before it), one simulator call per sample, until the budget is spent.
#include "search/sampling.h"
#include "search/searchers.h"

namespace l2s {
namespace {

class RandomSearcher : public ObjectiveSearcher {
 public:
  std::string name() const override { return "random"; }
 protected:
  SearchResult Run(Objective& obj, uint64_t seed) override {
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
