// degree: one degree head (pp, tp, ep; a pool's GPU count) to the nearest valid option either
// side (three times in four) or to any other valid option; the heads after it keep their options
// where still valid (RepairNearest).
#include "search/moves/registry.h"

namespace l2s::moves {
namespace {

class DegreeMove final : public Move {
 public:
  std::string_view name() const override { return "degree"; }
  bool Propose(const MoveContext& ctx, Rng& rng, std::vector<int>* idx) const override {
    const auto pick = [&](int h) { return IsDegreeHead(ctx.space, h); };
    return ChangeOneOf(ctx.space, rng, HeadsWhere(ctx.space, pick), /*mostly_step=*/true, idx);
  }
};

}  // namespace

const Move* DegreeMoveInstance() {
  static const DegreeMove m;
  return &m;
}

}  // namespace l2s::moves
