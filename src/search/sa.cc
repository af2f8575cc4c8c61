// sa: simulated annealing as in the paper's baseline. Neighbourhood: one sub-action changed
// (MaskedSampler::MoveOne). Values are normalised to percent of the first valid value seen, so
// that the paper's initial temperature t0 = 100 means "a move losing 100% of the first value is
// accepted with probability 1/e at the start". Temperature follows a cosine schedule from t0 at
// call 0 to 0 at the last call of the budget: T(i) = t0 * (1 + cos(pi * i / budget)) / 2.
// Metropolis acceptance: a move that does not lose value is always taken, a losing one with
// probability exp(delta / T). Invalid proposals have value 0.
#include <cmath>
#include <numbers>

#include "search/sampling.h"
#include "search/searchers.h"

namespace l2s {
namespace {

// The paper's initial temperature, in percent of the first valid value.
constexpr double kT0 = 100.0;

class SaSearcher : public ObjectiveSearcher {
 public:
  std::string name() const override { return "sa"; }

 protected:
  SearchResult Run(Objective& obj, uint64_t seed) override {
    const EncodedSpace& space = obj.encoded_space();
    Rng rng(seed);
    MaskedSampler sampler(space);
    std::vector<int> cur, cand;
    sampler.Sample(rng, &cur);
    if (obj.Done()) return obj.Finish(name());
    double v_cur = Objective::Value(obj.EvaluateEncoded(cur));
    double first_valid = v_cur;  // 0 until a valid proposal is seen
    auto norm = [&](double v) { return first_valid > 0 ? 100.0 * v / first_valid : 0.0; };
    while (!obj.Done()) {
      cand = cur;
      sampler.MoveOne(rng, &cand);
      const double progress = static_cast<double>(obj.calls()) / static_cast<double>(obj.budget());
      const double temp = kT0 * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
      const double v = Objective::Value(obj.EvaluateEncoded(cand));
      if (first_valid <= 0 && v > 0) first_valid = v;
      const double delta = norm(v) - norm(v_cur);
      const double u = rng.Unit();  // drawn every step: the stream does not depend on delta
      const bool accept = delta >= 0 || (temp > 0 && u < std::exp(delta / temp));
      if (accept) {
        cur.swap(cand);
        v_cur = v;
      }
    }
    return obj.Finish(name());
  }
};

}  // namespace

StatusOr<std::unique_ptr<Searcher>> MakeSaSearcher(const SearcherSpec& spec) {
  if (Status st = CheckSpecKeys(spec, {}); !st.ok()) return st;
  return std::unique_ptr<Searcher>(new SaSearcher());
}

}  // namespace l2s
