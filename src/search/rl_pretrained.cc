// Placeholder until tools/pretrain_rl writes this file: no pretrained weights compiled in.
#include "search/rl_features.h"

namespace l2s {

const nn::ScorerWeights* PretrainedRlWeights() { return nullptr; }

}  // namespace l2s
