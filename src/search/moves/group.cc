// group: every dim of one operator group (attention's three, an FFN pair) drawn again together,
// uniformly among the valid options of each in head order: a group's dims pay only jointly (a
// column-parallel first matmul wants a row-parallel second).
#include "search/moves/registry.h"

namespace l2s::moves {
namespace {

class GroupMove final : public Move {
 public:
  std::string_view name() const override { return "group"; }
  bool Propose(const MoveContext& ctx, Rng& rng, std::vector<int>* idx) const override {
    const EncodedSpace& sp = ctx.space;
    std::vector<int> groups;
    for (int h : HeadsWhere(sp, [&](int h) { return sp.group(h) >= 0; }))
      if (std::find(groups.begin(), groups.end(), sp.group(h)) == groups.end())
        groups.push_back(sp.group(h));
    if (groups.empty()) return false;
    const int g = groups[rng.Uniform(static_cast<int>(groups.size()))];
    const std::vector<int> start = *idx;
    for (int attempt = 0; attempt < 4 && *idx == start; ++attempt) {
      for (int h = 0; h < sp.num_heads(); ++h) {
        if (sp.group(h) != g) continue;
        const std::vector<int> opts = ValidOptions(sp, *idx, h);
        if (opts.empty()) return false;
        (*idx)[h] = opts[rng.Uniform(static_cast<int>(opts.size()))];
      }
      if (!RepairNearest(sp, idx, 0)) return false;
    }
    return *idx != start;
  }
};

}  // namespace

const Move* GroupMoveInstance() {
  static const GroupMove m;
  return &m;
}

}  // namespace l2s::moves
