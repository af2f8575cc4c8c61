// recipe: the point's non-degree choices set to one of the space's recipes (StrategySpace:
// Megatron's dims with sp off, or data-parallel attention inside the tp group with sp on) -
// every head the recipe sets, or only the dims of one operator group.
#include "search/moves/registry.h"

namespace l2s::moves {
namespace {

class RecipeMove final : public Move {
 public:
  std::string_view name() const override { return "recipe"; }
  bool Propose(const MoveContext& ctx, Rng& rng, std::vector<int>* idx) const override {
    const int r = rng.Uniform(std::max(1, ctx.space.num_recipes()));
    int group = -2;  // -2: every head the recipe sets
    if (rng.Uniform(2) == 0) {
      const std::vector<int> off = HeadsWhere(ctx.space, [&](int h) {
        const int o = ctx.space.recipe_option(h, r);
        return ctx.space.group(h) >= 0 && o >= 0 && (*idx)[h] != o;
      });
      if (off.empty()) return false;
      group = ctx.space.group(off[rng.Uniform(static_cast<int>(off.size()))]);
    }
    return ApplyRecipe(ctx.space, r, group, idx);
  }
};

}  // namespace

const Move* RecipeMoveInstance() {
  static const RecipeMove m;
  return &m;
}

}  // namespace l2s::moves
