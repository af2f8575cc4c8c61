#include "model/model.h"

namespace l2s {

int ModelSpec::num_moe_layers() const {
  int n = 0;
  for (const LayerSpec& l : layers) n += l.ffn == FfnKind::kMoe ? 1 : 0;
  return n;
}

}  // namespace l2s
