// What a plan's figures rest on (issue 43 item 5): the calibration of its GPU's kernel
// efficiencies, and the validation error of l2s's predictions on the measured deployments of
// ../shared of the same GPU and of the same regime (error_bands_data.inc, derived by
// scripts/error_bands.py from `l2s validate --json`), plus what no measurement covers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/simulator.h"

namespace l2s::plan {

// One group of validated rows: |error| of the throughput and TPOT predictions.
struct ErrorBand {
  std::string kind;  // "gpu" or "regime"
  std::string key;   // "h100", "attention-dp+ep", ...
  int rows = 0;
  double median_abs_pct = 0;
  double share_within_25pct = 0;
};

// The band of `key` within `kind`; nullopt when no measured row has it.
std::optional<ErrorBand> FindErrorBand(const std::string& kind, const std::string& key);

// The regime of a strategy, as validate.h Regime names measured rows: "disagg" for a
// disaggregated deployment; attention data parallelism of a MoE model (dp > 1 with experts)
// "attention-dp+ep" / "attention-dp"; otherwise "tp+ep" / "tp-only" (a dense model's dp
// replicas are independent instances of the tp layout).
std::string RegimeOf(const ModelSpec& m, const Strategy& s, bool disaggregated);

struct Uncertainty {
  std::string calibration;            // CalibrationNote of the GPU
  std::optional<ErrorBand> gpu;       // the GPU's measured rows
  std::string regime;                 // RegimeOf
  std::optional<ErrorBand> regime_band;
  std::vector<std::string> unmeasured;  // choices of the plan no measured row covers
  std::vector<std::string> unmodelled;  // parts of the deployment the plan does not price
};
// `pp_used`: the largest pipeline degree of the plan (of either pool when disaggregated).
Uncertainty UncertaintyOf(const Problem& p, const Strategy& s, bool disaggregated, int pp_used);

// One line per fact, for the plan's text ("  calibration  ...").
std::vector<std::string> UncertaintyLines(const Uncertainty& u);

}  // namespace l2s::plan
