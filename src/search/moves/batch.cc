// batch: one batch head one valid option up or down (three times in four) or to any other valid
// option.
#include "search/moves/registry.h"

namespace l2s::moves {
namespace {

class BatchMove final : public Move {
 public:
  std::string_view name() const override { return "batch"; }
  bool Propose(const MoveContext& ctx, Rng& rng, std::vector<int>* idx) const override {
    const auto pick = [&](int h) { return ctx.space.batch(h); };
    return ChangeOneOf(ctx.space, rng, HeadsWhere(ctx.space, pick), /*mostly_step=*/true, idx);
  }
};

}  // namespace

const Move* BatchMoveInstance() {
  static const BatchMove m;
  return &m;
}

}  // namespace l2s::moves
