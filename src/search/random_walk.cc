// rw: the paper's random-walk baseline. Starts from a random (masked) strategy; every step
// changes one sub-action at random (MaskedSampler::MoveOne) and moves there whatever the result;
// the objective keeps the best valid strategy seen.
#include "search/sampling.h"
#include "search/searchers.h"

namespace l2s {
namespace {

class RwSearcher : public Searcher {
 public:
  std::string name() const override { return "rw"; }
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
