// default: what an engineer types today without a search.
//   pp    = number of NVLink domains, clamped to the largest pp option (a divisor of the GPU
//           count that is <= the layer count) not above it: one stage per node;
//   tp    = GPUs per NVLink domain, clamped to the largest tp option (a divisor of the heads)
//           that divides the GPUs of a stage and is not above the domain size;
//   ep    = MoE: the whole stage, clamped to the largest ep option (a divisor of the experts)
//           that divides the GPUs of a stage; dense models: 1;
//   dims  = Megatron's, sp off;
//   batch = the largest of the space's batch options that is valid (tried from the largest
//           down; a space whose batch head is {auto} lets the simulator choose).
// Not limited by the budget (it needs at most one call per batch option).
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "search/searchers.h"

namespace l2s {
namespace {

// Largest option satisfying `ok`; options are ascending and the first (1) always qualifies.
template <class F>
int LargestOption(const std::vector<int>& options, F ok) {
  int best = options.front();
  for (int o : options)
    if (ok(o)) best = o;
  return best;
}

class DefaultSearcher : public Searcher {
 public:
  std::string name() const override { return "default"; }
  SearchResult Search(const Simulator& sim, const StrategySpace& space, int64_t budget,
                      uint64_t seed, Observer* observer) override {
    (void)budget;
    (void)seed;
    Objective obj(sim, space, std::numeric_limits<int64_t>::max(), observer);
    const ClusterSpec& c = sim.problem().cluster;
    const ModelSpec& m = sim.problem().model;
    const int n = space.num_gpus();
    const int domains = std::max(1, (n + c.gpus_per_domain - 1) / std::max(1, c.gpus_per_domain));
    Strategy s;
    s.pp = LargestOption(space.pp_options(), [&](int pp) { return pp <= domains; });
    const int per_stage = n / s.pp;
    // The space's masks: divisibility, and an engine restriction's degree rules when it has one.
    auto index_of = [](const std::vector<int>& opts, int v) {
      return static_cast<int>(std::find(opts.begin(), opts.end(), v) - opts.begin());
    };
    std::vector<int> prefix = {index_of(space.pp_options(), s.pp)};
    std::vector<uint8_t> tp_ok(space.head_size(StrategySpace::kTp)),
        ep_ok(space.head_size(StrategySpace::kEp));
    space.Mask(prefix, StrategySpace::kTp, tp_ok);
    s.tp = LargestOption(space.tp_options(), [&](int tp) {
      return tp_ok[index_of(space.tp_options(), tp)] && tp <= c.gpus_per_domain;
    });
    s.dp = per_stage / s.tp;
    prefix.push_back(index_of(space.tp_options(), s.tp));
    space.Mask(prefix, StrategySpace::kEp, ep_ok);
    s.ep = LargestOption(space.ep_options(),
                         [&](int ep) { return ep_ok[index_of(space.ep_options(), ep)] != 0; });
    s.sp = false;
    s.dims = MegatronDims();
    ClearAbsentOps(m, &s);
    const std::vector<int>& batches = space.batch_options();
    for (auto it = batches.rbegin(); it != batches.rend() && !obj.Done(); ++it) {
      s.batch = *it;
      if (obj.Evaluate(s).valid()) break;
    }
    SearchResult r = obj.Finish(name());
    r.note = fmt::format("pp={} (domains {}), tp={}, ep={}, Megatron dims{}", s.pp, domains, s.tp,
                         s.ep, r.found ? "" : "; no batch option is valid");
    if (!r.found) r.best = s;
    return r;
  }
};

}  // namespace

StatusOr<std::unique_ptr<Searcher>> MakeDefaultSearcher(const SearcherSpec& spec) {
  if (Status st = CheckSpecKeys(spec, {}); !st.ok()) return st;
  return std::unique_ptr<Searcher>(new DefaultSearcher());
}

}  // namespace l2s
