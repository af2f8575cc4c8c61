#include "plan/space.h"

#include <algorithm>

namespace l2s::plan {

SpaceOptions PlanSpaceOptions(const Problem& p, int mtp) {
  const Workload& w = p.workload;
  SpaceOptions o;
  o.max_batch = std::max(1, std::min(w.max_batch, 1024));
  o.search_batch = true;
  o.search_sp = true;
  constexpr int kSearchedMtp = 3;  // MTP depths plan searches (issue 11: K = 0..3)
  if (mtp >= 0) {
    o.mtp = {mtp};
  } else if (p.model.can_speculate() && w.mode != Mode::kPrefill) {
    o.mtp.clear();
    for (int k = 0; k <= kSearchedMtp; ++k) o.mtp.push_back(k);
  }
  return o;
}

}  // namespace l2s::plan
