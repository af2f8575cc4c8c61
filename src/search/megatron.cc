// megatron: the paper's "Megatron heuristic" baseline. Per-operator dims fixed to Megatron-LM's
// (MegatronDims(), operators the model lacks set to none), sp off; pp, tp, ep and batch searched
// exhaustively over the space's options (structurally valid combinations only), in encoded
// order so that ties keep the first. Not limited by the budget: SearchResult.calls says how many
// simulator calls it took.
#include <limits>

#include <fmt/format.h>

#include "search/searchers.h"

namespace l2s {
namespace {

class MegatronSearcher : public Searcher {
 public:
  std::string name() const override { return "megatron"; }
  SearchResult Search(const Simulator& sim, const StrategySpace& space, int64_t budget,
                      uint64_t seed, Observer* observer) override {
    (void)budget;
    (void)seed;
    Objective obj(sim, space, std::numeric_limits<int64_t>::max(), observer);
    const int n = space.num_gpus();
    std::vector<uint8_t> tp_ok(space.head_size(StrategySpace::kTp)),
        ep_ok(space.head_size(StrategySpace::kEp));
    Strategy s;
    s.sp = false;
    s.dims = MegatronDims();
    ClearAbsentOps(sim.problem().model, &s);
    int configs = 0;
    for (int ipp = 0; ipp < space.head_size(StrategySpace::kPp); ++ipp) {
      const int pp_prefix[1] = {ipp};
      space.Mask(pp_prefix, StrategySpace::kTp, tp_ok);
      for (int itp = 0; itp < space.head_size(StrategySpace::kTp); ++itp) {
        if (!tp_ok[itp]) continue;
        const int tp_prefix[2] = {ipp, itp};
        space.Mask(tp_prefix, StrategySpace::kEp, ep_ok);
        for (int iep = 0; iep < space.head_size(StrategySpace::kEp); ++iep) {
          if (!ep_ok[iep]) continue;
          for (int b : space.batch_options()) {
            if (obj.Done()) return Result(obj, configs);
            s.pp = space.pp_options()[ipp];
            s.tp = space.tp_options()[itp];
            s.dp = n / (s.pp * s.tp);
            s.ep = space.ep_options()[iep];
            s.batch = b;
            obj.Evaluate(s);
            ++configs;
          }
        }
      }
    }
    return Result(obj, configs);
  }

 private:
  SearchResult Result(const Objective& obj, int configs) const {
    SearchResult r = obj.Finish(name());
    r.note = fmt::format("{} (pp, tp, ep, batch) combinations with Megatron dims, sp off", configs);
    return r;
  }
};

}  // namespace

StatusOr<std::unique_ptr<Searcher>> MakeMegatronSearcher(const SearcherSpec& spec) {
  if (Status st = CheckSpecKeys(spec, {}); !st.ok()) return st;
  return std::unique_ptr<Searcher>(new MegatronSearcher());
}

}  // namespace l2s
