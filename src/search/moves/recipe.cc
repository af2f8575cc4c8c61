// recipe: the dims back to the recipe (Megatron's: column- then row-parallel, vocab-parallel
// embedding and head) - every dim of the point, or those of one group that differ from it.
#include "search/moves/registry.h"

namespace l2s::moves {
namespace {

class RecipeMove final : public Move {
 public:
  std::string_view name() const override { return "recipe"; }
  std::string_view summary() const override {
    return "the dims of the point (or of one group) back to Megatron's recipe";
  }
  bool Propose(const MoveContext& ctx, Rng& rng, std::vector<int>* idx) const override {
    const EncodedSpace& sp = ctx.space;
    const std::vector<int> off = HeadsWhere(sp, [&](int h) {
      return IsDimHead(sp, h) && (*idx)[h] != sp.recipe_option(h);
    });
    if (off.empty()) return false;
    const bool one_group = rng.Uniform(2) == 0;
    const int g = sp.group(off[rng.Uniform(static_cast<int>(off.size()))]);
    const std::vector<int> start = *idx;
    for (int h : off)
      if (!one_group || sp.group(h) == g) (*idx)[h] = sp.recipe_option(h);
    if (!RepairNearest(sp, idx, 0)) return false;
    return *idx != start;
  }
};

}  // namespace

const Move* RecipeMoveInstance() {
  static const RecipeMove m;
  return &m;
}

}  // namespace l2s::moves
