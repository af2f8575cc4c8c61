// pair: two structural choices at once (two degrees, or a degree with sp, slots, overlap, MTP or
// the pool assignment): where the optimum needs both changed, each alone is worse and a one-head
// move never gets there (e.g. the MTP depth with the tp/dp split).
#include "search/moves/registry.h"

namespace l2s::moves {
namespace {

class PairMove final : public Move {
 public:
  std::string_view name() const override { return "pair"; }
  bool Propose(const MoveContext& ctx, Rng& rng, std::vector<int>* idx) const override {
    const EncodedSpace& sp = ctx.space;
    const std::vector<int> heads = HeadsWhere(
        sp, [&](int h) { return IsDegreeHead(sp, h) || IsOptionHead(sp, h); });
    if (heads.size() < 2) return false;
    const int n = static_cast<int>(heads.size());
    int a = heads[rng.Uniform(n)];
    int b = heads[rng.Uniform(n - 1)];
    if (b >= a) b = heads[(std::find(heads.begin(), heads.end(), b) - heads.begin()) + 1];
    if (a > b) std::swap(a, b);
    const std::vector<int> start = *idx;
    if (!ChangeHead(sp, rng, a, rng.Uniform(2) != 0, idx)) return false;
    if (!ChangeHead(sp, rng, b, rng.Uniform(2) != 0, idx)) return false;
    return *idx != start;
  }
};

}  // namespace

const Move* PairMoveInstance() {
  static const PairMove m;
  return &m;
}

}  // namespace l2s::moves
