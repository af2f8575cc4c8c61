// `l2s plan --pareto` and the frontier series of `l2s compare`'s pareto.svg: formatting of the
// throughput-interactivity sweep that src/plan/pareto.h computes (table, JSON, SVG series).
// docs/PLAN.md ("--pareto") describes the output.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/svg.h"
#include "plan/progress.h"
#include "plan/pareto.h"
#include "sim/simulator.h"


namespace l2s::cli {

struct ParetoPlanArgs {
  std::string search = "local";  // fallback searcher where the oracle does not finish within its bound
  int64_t budget = 4000;
  uint64_t seed = 0;
  int64_t oracle_calls = kDefaultOracleCalls;  // the oracle's work bound per TPOT limit (0: none)
  bool json = false;
  std::string out;            // also write the JSON here ("" = no)
  int mtp = -1;               // --mtp (-1 = searched)
  // More series over the same TPOT limits (e.g. the disaggregated planner's, built with
  // SweepTpot), shown and written after "aggregated". Null: the aggregated series only.
  std::function<std::vector<ParetoSeries>(const std::vector<double>& limits, Observer* observer)>
      more_series;
  // The engine-launchable series (plan/engines.h EngineParetoSeries): "" = the fastest engine of
  // the engine table (plan::PlanEngines, as `l2s plan` picks it), an engine name = that engine,
  // "ideal" = none.
  std::string engine;
  plan::PlanProgress progress;  // the engine plans' progress and interruption
  // The chart (ParetoPlanPlot): written here ("none" = not written), axes log or linear.
  std::string svg = "pareto.svg";
  bool log_x = true, log_y = true;
  int jobs = 1;  // TPOT limits searched at once (threads); the series are the same for every N
};

// Runs the sweep for `p` (serve or decode mode) and prints the table or JSON; returns the exit
// code (1 when no plan is valid, 130/143 when interrupted).
int RunParetoPlan(const Problem& p, const ParetoPlanArgs& args);

// The point's strategy in short (report.h's ShortText) when it is one strategy's text; another
// series' description as it is.
std::string ParetoStrategyText(const ModelSpec& m, const ParetoPoint& p);

// {series, tpot_limit_ms, tokens_per_s_per_gpu, tokens_per_s_per_user, ttft_ms, tpot_ms,
//  strategy, found_by, exact}.
nlohmann::ordered_json ParetoPointJson(const ParetoPoint& p);
// Every series' front points, in series order (the JSON `pareto` array).
nlohmann::ordered_json ParetoFrontJson(const std::vector<ParetoSeries>& series);

// The chart of `l2s plan --pareto`: each series' front as a staircase with its points (throughput
// per GPU against tokens/s per user), the problem's TPOT SLO shaded where it is violated
// (AddSloRegion), the legend boxed inside the frame; log or linear axes.
// `engine`: the title of the problem's --engine ("" for the ideal one), whose pools the
// disaggregated series holds.
Plot ParetoPlanPlot(const Problem& p, const std::vector<ParetoSeries>& series, bool log_x,
                    bool log_y, const std::string& engine = "");
// Shades the interactivity a TPOT SLO of `tpot_ms` rules out: tokens/s per user below
// 1000 / tpot_ms (TokensPerUser), labelled in the legend and, where it fits, in the region.
// Nothing when tpot_ms <= 0.
void AddSloRegion(double tpot_ms, Plot* plot);
// Series colours of the --pareto charts, in order.
const std::vector<std::string>& ParetoColors();

// Adds each series' front to `plot` as a staircase (the best throughput per GPU available at
// each interactivity) with a dot per point, one colour per series, named
// "<name> (TPOT sweep, N on the front)", or "<name>, <space> (...)" where `space` names the
// series' space (plan's chart: "paper's space", "vLLM's pools"; "" = none said).
void AddParetoSeries(const std::vector<ParetoSeries>& series, Plot* plot,
                     const std::function<std::string(const std::string&)>& space = nullptr);
// A staircase through `front` (sorted by x ascending, y descending) plus its dots.
void AddStaircase(const std::vector<ParetoPoint>& front, const std::string& name,
                  const std::string& color, Plot* plot);

}  // namespace l2s::cli
