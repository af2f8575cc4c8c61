// regroup: a degree (one option either way, or any other option) together with a recipe on the
// rest. A degree move alone keeps dims chosen for the old degree, which are often worse or
// invalid under the new one (tp = 1 -> 8 with Megatron's dims adds collectives a tp = 1 point
// never had; with data-parallel attention and sp it computes as before and can then gain).
#include "search/moves/registry.h"

namespace l2s::moves {
namespace {

class RegroupMove final : public Move {
 public:
  std::string_view name() const override { return "regroup"; }
  bool Propose(const MoveContext& ctx, Rng& rng, std::vector<int>* idx) const override {
    const std::vector<int> heads =
        HeadsWhere(ctx.space, [&](int h) { return IsDegreeHead(ctx.space, h); });
    if (heads.empty()) return false;
    const std::vector<int> start = *idx;
    const int h = heads[rng.Uniform(static_cast<int>(heads.size()))];
    if (!ChangeHead(ctx.space, rng, h, rng.Uniform(2) != 0, idx)) return false;
    const int r = rng.Uniform(std::max(1, ctx.space.num_recipes()));
    if (!ApplyRecipe(ctx.space, r, -2, idx)) return false;
    return *idx != start;
  }
};

}  // namespace

const Move* RegroupMoveInstance() {
  static const RegroupMove m;
  return &m;
}

}  // namespace l2s::moves
