// The strategy space `l2s plan` searches for a problem (shared by plan, compare, space and the
// disaggregated roles).
#pragma once

#include "sim/simulator.h"
#include "strategy/space.h"

namespace l2s::plan {

// The searched space: batch over powers of two up to min(workload.max_batch, 1024), sp searched;
// mtp fixed to `mtp` when >= 0 (--mtp), else searched over 0..3 for models with MTP layers in
// decode and serve modes ({0} otherwise).
SpaceOptions PlanSpaceOptions(const Problem& p, int mtp = -1);

}  // namespace l2s::plan
