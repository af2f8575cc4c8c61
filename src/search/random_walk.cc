// rw: the paper's random-walk baseline. Starts from a random (masked) strategy; every step
// changes one sub-action at random (MaskedSampler::MoveOne) and moves there whatever the result;
// the objective keeps the best valid strategy seen.
#include "search/sampling.h"
#include "search/searchers.h"

namespace l2s {
namespace {

class RwSearcher : public ObjectiveSearcher {
 public:
  std::string name() const override { return "rw"; }
 protected:
  SearchResult Run(Objective& obj, uint64_t seed) override {
    const EncodedSpace& space = obj.encoded_space();
    Rng rng(seed);
    MaskedSampler sampler(space);
    std::vector<int> idx;
    sampler.Sample(rng, &idx);
    while (!obj.Done()) {
      obj.EvaluateEncoded(idx);
      // A one-point space has no neighbour: the walk stays (and keeps re-evaluating it).
      sampler.MoveOne(rng, &idx);
    }
    return obj.Finish(name());
  }
};

}  // namespace

StatusOr<std::unique_ptr<Searcher>> MakeRwSearcher(const SearcherSpec& spec) {
  if (Status st = CheckSpecKeys(spec, {}); !st.ok()) return st;
  return std::unique_ptr<Searcher>(new RwSearcher());
}

}  // namespace l2s
