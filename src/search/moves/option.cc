// option: one of the other structural choices (sp, expert slots, overlap, MTP depth, the pool
// assignment) to another valid option.
#include "search/moves/registry.h"

namespace l2s::moves {
namespace {

class OptionMove final : public Move {
 public:
  std::string_view name() const override { return "option"; }
  bool Propose(const MoveContext& ctx, Rng& rng, std::vector<int>* idx) const override {
    const auto pick = [&](int h) { return IsOptionHead(ctx.space, h); };
    return ChangeOneOf(ctx.space, rng, HeadsWhere(ctx.space, pick), /*mostly_step=*/false, idx);
  }
};

}  // namespace

const Move* OptionMoveInstance() {
  static const OptionMove m;
  return &m;
}

}  // namespace l2s::moves
