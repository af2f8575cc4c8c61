// The move table's entries (each defined in its own file) and what the moves include.
#pragma once

#include <algorithm>

#include "search/moves/move.h"

namespace l2s::moves {

const Move* BatchMoveInstance();
const Move* DegreeMoveInstance();
const Move* PairMoveInstance();
const Move* DimMoveInstance();
const Move* GroupMoveInstance();
const Move* RecipeMoveInstance();
const Move* OptionMoveInstance();
const Move* CrossoverMoveInstance();
const Move* RestartMoveInstance();
const Move* RegroupMoveInstance();

}  // namespace l2s::moves
