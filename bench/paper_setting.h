// The paper's decode problem for the search benchmarks: a GPT-MoE preset decoding at 16k context
// on H100 nodes of 8, batch searched over the powers of two up to 1024.
#pragma once

#include <memory>
#include <utility>

#include "hw/hw.h"
#include "model/presets.h"
#include "sim/simulator.h"
#include "strategy/space.h"

namespace l2s::bench {

struct PaperSetting {
  std::unique_ptr<Simulator> sim;
  std::unique_ptr<StrategySpace> space;
};

inline PaperSetting MakePaperSetting(const char* model, int gpus) {
  PaperSetting f;
  Problem p;
  p.model = *ModelPreset(model);
  p.cluster = *MakeCluster("h100", gpus);
  p.workload.mode = Mode::kDecode;
  p.workload.context = 16384;
  p.workload.weight = p.model.weight_dtype;
  p.workload.max_batch = 1024;
  f.sim = std::make_unique<Simulator>(std::move(p));
  SpaceOptions so;
  so.max_batch = 1024;
  f.space = std::make_unique<StrategySpace>(
      *StrategySpace::Make(f.sim->problem().model, f.sim->problem().cluster.num_gpus, so));
  return f;
}

}  // namespace l2s::bench
