// dim: the sharding dimension of one operator to another valid option.
#include "search/moves/registry.h"

namespace l2s::moves {
namespace {

class DimMove final : public Move {
 public:
  std::string_view name() const override { return "dim"; }
  bool Propose(const MoveContext& ctx, Rng& rng, std::vector<int>* idx) const override {
    const auto pick = [&](int h) { return IsDimHead(ctx.space, h); };
    return ChangeOneOf(ctx.space, rng, HeadsWhere(ctx.space, pick), /*mostly_step=*/false, idx);
  }
};

}  // namespace

const Move* DimMoveInstance() {
  static const DimMove m;
  return &m;
}

}  // namespace l2s::moves
