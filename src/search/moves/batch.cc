// batch: one batch head one valid option up or down (three times in four) or to any other valid
// option.
#include "search/moves/registry.h"

namespace l2s::moves {
namespace {

class BatchMove final : public Move {
 public:
  std::string_view name() const override { return "batch"; }
  std::string_view summary() const override {
    return "one batch head one option up or down, or to any other option";
  }
  bool Propose(const MoveContext& ctx, Rng& rng, std::vector<int>* idx) const override {
    const std::vector<int> heads =
        HeadsWhere(ctx.space, [&](int h) { return ctx.space.batch(h); });
    if (heads.empty()) return false;
    const int h = heads[rng.Uniform(static_cast<int>(heads.size()))];
    return ChangeHead(ctx.space, rng, h, rng.Uniform(4) != 0, idx);
  }
};

}  // namespace

const Move* BatchMoveInstance() {
  static const BatchMove m;
  return &m;
}

}  // namespace l2s::moves
