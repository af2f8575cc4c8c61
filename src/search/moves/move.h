// Neighbourhood moves of the local searcher (search/local.cc), one small unit per file,
// registered in one table (registry.cc). A move reads the incumbent point of an encoded space
// (strategy/encoded_space.h: one option index per head) and rewrites it into a structurally
// valid neighbour; it never evaluates anything. The meta-search chooses among the registered
// moves by their recent gains and charges every evaluation to the budget, so a move's cost is the
// simulator calls its proposals take. Moves are stateless and know no problem by name: what they
// change is told by the space's hints (ordinal, structural, group, batch, recipes).
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "search/sampling.h"
#include "strategy/encoded_space.h"

namespace l2s::moves {

// What a move may read besides the incumbent.
struct MoveContext {
  const EncodedSpace& space;
  // The best distinct points found so far (valid ones first, best first; may be empty).
  std::span<const std::vector<int>> elites;
};

class Move {
 public:
  virtual ~Move() = default;
  virtual std::string_view name() const = 0;
  // Rewrites *idx (a structurally valid point on entry) into a structurally valid point that
  // differs from it; false when this move has no neighbour to offer from there (*idx is then
  // unspecified and the caller discards it).
  virtual bool Propose(const MoveContext& ctx, Rng& rng, std::vector<int>* idx) const = 0;
};

// Every registered move, in registry order (the order of the ablation table).
const std::vector<const Move*>& RegisteredMoves();
// The registered move of that name, or null.
const Move* FindMove(std::string_view name);

// Helpers the moves share (util.cc).
// The options of head h valid given the heads before it in idx.
std::vector<int> ValidOptions(const EncodedSpace& space, std::span<const int> idx, int h);
// Makes heads >= from valid given the heads before each, keeping a valid option as it is and
// otherwise taking the valid option nearest to it (ordinal heads: by index distance, ties to
// the lower; other heads: the recipe option when valid, else the first valid). Returns false
// when some head has no valid option (cannot happen on a space honouring Mask's guarantee).
bool RepairNearest(const EncodedSpace& space, std::vector<int>* idx, int from);
// Sets head h to another valid option: with an ordinal head and `step`, one of the nearest valid
// options either side (uniformly), else uniformly among the other valid options; then repairs
// the heads after h. False when head h has no other valid option.
bool ChangeHead(const EncodedSpace& space, Rng& rng, int h, bool step, std::vector<int>* idx);
// ChangeHead on one of `heads`, uniformly chosen; with `mostly_step`, a step (nearest option
// either side) three times in four and any other option otherwise, else always any other
// option. False when `heads` is empty or the chosen head has no other valid option.
bool ChangeOneOf(const EncodedSpace& space, Rng& rng, const std::vector<int>& heads,
                 bool mostly_step, std::vector<int>* idx);
// Sets every head recipe r sets (group -2) or only the dim heads of operator group `group` to
// the recipe's option, then repairs. False when nothing changed or no repair exists.
bool ApplyRecipe(const EncodedSpace& space, int r, int group, std::vector<int>* idx);
// Heads satisfying `pred(h)`.
template <class Pred>
std::vector<int> HeadsWhere(const EncodedSpace& space, Pred pred) {
  std::vector<int> out;
  for (int h = 0; h < space.num_heads(); ++h)
    if (space.head_size(h) > 1 && pred(h)) out.push_back(h);
  return out;
}
// The degree-like heads: ordinal, structural, not batch (pp, tp, ep; a pool's GPU count).
bool IsDegreeHead(const EncodedSpace& space, int h);
// The operator-dim heads: not structural.
inline bool IsDimHead(const EncodedSpace& space, int h) { return !space.structural(h); }
// The other structural choices: structural, neither ordinal nor batch (sp, expert slots,
// overlap, MTP depth, the pool assignment).
bool IsOptionHead(const EncodedSpace& space, int h);

}  // namespace l2s::moves
