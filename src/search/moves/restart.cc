// restart: a fresh point - every structural head drawn uniformly under the mask, then one of the
// space's recipes (uniformly chosen) on the rest - for the meta-search to escape a basin.
#include "search/moves/registry.h"

namespace l2s::moves {
namespace {

class RestartMove final : public Move {
 public:
  std::string_view name() const override { return "restart"; }
  bool Propose(const MoveContext& ctx, Rng& rng, std::vector<int>* idx) const override {
    const EncodedSpace& sp = ctx.space;
    const std::vector<int> start = *idx;
    for (int h = 0; h < sp.num_heads(); ++h) {
      const std::vector<int> opts = ValidOptions(sp, *idx, h);
      if (opts.empty()) return false;
      (*idx)[h] = opts[rng.Uniform(static_cast<int>(opts.size()))];
    }
    ApplyRecipe(sp, rng.Uniform(std::max(1, sp.num_recipes())), -2, idx);
    return *idx != start;
  }
};

}  // namespace

const Move* RestartMoveInstance() {
  static const RestartMove m;
  return &m;
}

}  // namespace l2s::moves
