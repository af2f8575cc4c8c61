// dim: the sharding dimension of one operator to another valid option.
#include "search/moves/registry.h"

namespace l2s::moves {
namespace {

class DimMove final : public Move {
 public:
  std::string_view name() const override { return "dim"; }
  std::string_view summary() const override { return "one operator's sharding dim"; }
  bool Propose(const MoveContext& ctx, Rng& rng, std::vector<int>* idx) const override {
    const std::vector<int> heads =
        HeadsWhere(ctx.space, [&](int h) { return IsDimHead(ctx.space, h); });
    if (heads.empty()) return false;
    return ChangeHead(ctx.space, rng, heads[rng.Uniform(static_cast<int>(heads.size()))], false,
                      idx);
  }
};

}  // namespace

const Move* DimMoveInstance() {
  static const DimMove m;
  return &m;
}

}  // namespace l2s::moves
