// The one table of the local searcher's moves. Adding a move: a file with a Move subclass and its
// instance function (registry.h), one line here, one row in the ablation (docs/dev/SEARCH.md).
#include "search/moves/registry.h"

namespace l2s::moves {

const std::vector<const Move*>& RegisteredMoves() {
  static const std::vector<const Move*> table = {
      BatchMoveInstance(),  DegreeMoveInstance(),    PairMoveInstance(),
      DimMoveInstance(),    GroupMoveInstance(),     RecipeMoveInstance(),
      OptionMoveInstance(), CrossoverMoveInstance(), RestartMoveInstance(),
      RegroupMoveInstance(),
  };
  return table;
}

const Move* FindMove(std::string_view name) {
  for (const Move* m : RegisteredMoves())
    if (m->name() == name) return m;
  return nullptr;
}

}  // namespace l2s::moves
