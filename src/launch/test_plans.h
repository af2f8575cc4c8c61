// Test-only helpers of the launch tests: presets by name and hand-written Megatron-dim plans.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "model/presets.h"
#include "strategy/space.h"
#include "strategy/strategy.h"
#include "strategy/test_strategies.h"

namespace l2s::launch::testing {

inline ModelSpec Preset(const char* name) {
  StatusOr<ModelSpec> m = ModelPreset(name);
  EXPECT_TRUE(m.ok()) << name;
  return *m;
}

// A strategy with Megatron dims (absent operators none).
inline Strategy Megatron(const ModelSpec& m, int pp, int tp, int dp, int ep, int batch = 8,
                         bool sp = false) {
  Strategy s = l2s::testing::MegatronStrategy(pp, tp, dp, ep, batch);
  s.sp = sp;
  ClearAbsentOps(m, &s);
  return s;
}

inline bool Has(const std::string& s, const std::string& needle) {
  return s.find(needle) != std::string::npos;
}

}  // namespace l2s::launch::testing
