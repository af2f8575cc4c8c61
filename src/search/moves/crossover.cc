// crossover: recombines the incumbent with another elite - the elite's dims on the incumbent's
// structure, or the elite's structure (degrees, batch, the other structural choices) with the
// incumbent's dims. Dims that pay on one layout often pay on its neighbours.
#include "search/moves/registry.h"

namespace l2s::moves {
namespace {

class CrossoverMove final : public Move {
 public:
  std::string_view name() const override { return "crossover"; }
  bool Propose(const MoveContext& ctx, Rng& rng, std::vector<int>* idx) const override {
    const EncodedSpace& sp = ctx.space;
    std::vector<const std::vector<int>*> others;
    for (const std::vector<int>& e : ctx.elites)
      if (e != *idx) others.push_back(&e);
    if (others.empty()) return false;
    const std::vector<int>& e = *others[rng.Uniform(static_cast<int>(others.size()))];
    const bool take_dims = rng.Uniform(2) == 0;
    const std::vector<int> start = *idx;
    for (int h = 0; h < sp.num_heads(); ++h)
      if (IsDimHead(sp, h) == take_dims) (*idx)[h] = e[h];
    if (!RepairNearest(sp, idx, 0)) return false;
    return *idx != start;
  }
};

}  // namespace

const Move* CrossoverMoveInstance() {
  static const CrossoverMove m;
  return &m;
}

}  // namespace l2s::moves
