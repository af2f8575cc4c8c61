#include "cli/pareto_report.h"

#include <fmt/core.h>

#include <chrono>
#include <set>

#include "cli/common.h"
#include "cli/output.h"
#include "cli/plan_problem.h"
#include "cli/progress.h"
#include "cli/report.h"

namespace l2s::cli {

namespace {

using json = nlohmann::ordered_json;

// Series colours: distinct from compare's searcher palette (black and its reds are taken).
const char* kSeriesColors[] = {"#1b9e77", "#7570b3", "#d95f02", "#e7298a"};

bool OnFront(const ParetoSeries& s, const ParetoPoint& p) {
  for (const ParetoPoint& f : s.front)
    if (f.tpot_limit_ms == p.tpot_limit_ms) return true;
  return false;
}

}  // namespace

std::string ParetoStrategyText(const ModelSpec& m, const ParetoPoint& p) {
  StatusOr<Strategy> s = FromText(p.strategy);
  return s.ok() ? ShortText(m, *s) : p.strategy;
}

json ParetoPointJson(const ParetoPoint& p) {
  json j;
  j["series"] = p.series;
  j["tpot_limit_ms"] = p.tpot_limit_ms;
  j["tokens_per_s_per_gpu"] = p.tokens_per_s_per_gpu;
  j["tokens_per_s_per_user"] = p.tokens_per_s_per_user;
  j["ttft_ms"] = p.ttft_ms;
  j["tpot_ms"] = p.tpot_ms;
  j["strategy"] = p.strategy;
  j["found_by"] = p.found_by;
  j["exact"] = p.exact;
  return j;
}

json ParetoFrontJson(const std::vector<ParetoSeries>& series) {
  json a = json::array();
  for (const ParetoSeries& s : series)
    for (const ParetoPoint& p : s.front) a.push_back(ParetoPointJson(p));
  return a;
}

void AddStaircase(const std::vector<ParetoPoint>& front, const std::string& name,
                  const std::string& color, Plot* plot) {
  PlotSeries line, dots;
  line.kind = PlotSeries::Kind::kLine;
  line.name = name;
  line.color = color;
  line.width_px = 2.2;
  dots.kind = PlotSeries::Kind::kScatter;
  dots.color = color;
  dots.width_px = 3.6;
  // Sorted by tokens/s per user ascending, so throughput per GPU descends: the best throughput
  // available at interactivity x is that of the first point with x_i >= x, a staircase that
  // drops at each point, then runs right to the next one.
  for (size_t i = 0; i < front.size(); ++i) {
    dots.x.push_back(front[i].tokens_per_s_per_user);
    dots.y.push_back(front[i].tokens_per_s_per_gpu);
    line.x.push_back(front[i].tokens_per_s_per_user);
    line.y.push_back(front[i].tokens_per_s_per_gpu);
    if (i + 1 < front.size()) {
      line.x.push_back(front[i].tokens_per_s_per_user);
      line.y.push_back(front[i + 1].tokens_per_s_per_gpu);
    }
  }
  plot->series.push_back(line);
  plot->series.push_back(dots);
}

void AddParetoSeries(const std::vector<ParetoSeries>& series, Plot* plot) {
  size_t k = 0;
  for (const ParetoSeries& s : series)
    AddStaircase(s.front,
                 fmt::format("{} (TPOT sweep, {} on the front)", s.name, s.front.size()),
                 kSeriesColors[k++ % std::size(kSeriesColors)], plot);
}

int RunParetoPlan(const Problem& p, const ParetoPlanArgs& a) {
  const auto t0 = std::chrono::steady_clock::now();
  if (p.workload.mode == Mode::kPrefill)
    return Fail("--pareto sweeps the TPOT limit: it needs --mode serve or decode (prefill has no "
                "TPOT)");
  StatusOr<std::unique_ptr<Searcher>> searcher = MakeSearcher(a.search);
  if (!searcher.ok()) return Fail(Status::InvalidArgument("--search: " + searcher.status().message()));
  StatusOr<StrategySpace> space =
      StrategySpace::Make(p.model, p.cluster.num_gpus, PlanSpaceOptions(p, a.mtp));
  if (!space.ok()) return Fail(space.status());
  InstallSigintHandler();
  AggregatedSweepOptions opt;
  opt.searcher = a.search;
  opt.budget = a.budget;
  opt.seed = a.seed;
  opt.oracle_calls = a.oracle_calls;
  std::vector<double> limits;
  ProgressObserver obs({"pareto sweep", StderrIsTerminal(), 0});
  StatusOr<ParetoSeries> agg = AggregatedParetoSeries(p, *space, opt, &obs, &limits);
  obs.Finish();
  if (!agg.ok()) return Fail(agg.status());
  std::vector<ParetoSeries> series = {*agg};
  if (a.more_series && !agg->cancelled && !InterruptRequested()) {
    ProgressObserver more_obs({"pareto sweep", StderrIsTerminal(), 0});
    for (ParetoSeries& s : a.more_series(limits, &more_obs)) series.push_back(std::move(s));
    more_obs.Finish();
  }
  bool interrupted = InterruptRequested();
  for (const ParetoSeries& s : series) interrupted |= s.cancelled;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  json j;
  j["problem"] = ProblemJson(p);
  j["pareto"] = ParetoFrontJson(series);
  json sweep;
  sweep["tpot_limits_ms"] = limits;
  sweep["grid"] = fmt::format(
      "{} limits spaced geometrically from the lowest TPOT of a batch-1 scan (Megatron dims) to "
      "the TPOT of the best plan under the problem's own SLOs",
      limits.size());
  sweep["searcher"] = (*searcher)->name();
  sweep["oracle_calls"] = a.oracle_calls;
  // The bound in the deprecated unit (--oracle-seconds is read as calls / kOracleCallsPerSecond).
  sweep["oracle_seconds"] =
      static_cast<double>(a.oracle_calls) / static_cast<double>(kOracleCallsPerSecond);
  json sj = json::array();
  for (const ParetoSeries& s : series) {
    json o;
    o["name"] = s.name;
    json pts = json::array();
    for (const ParetoPoint& pt : s.sweep) {
      json x = ParetoPointJson(pt);
      x["on_front"] = OnFront(s, pt);
      pts.push_back(x);
    }
    o["points"] = pts;
    o["front_size"] = s.front.size();
    o["interrupted"] = s.cancelled;
    sj.push_back(o);
  }
  sweep["series"] = sj;
  j["sweep"] = sweep;
  j["wall_s"] = wall;
  j["interrupted"] = interrupted;
  if (!a.out.empty())
    if (Status st = WriteFileAtomic(a.out, DumpJson(j) + "\n"); !st.ok())
      return Fail(Status::IoError("--out " + st.message()));
  if (a.json) {
    fmt::print("{}\n", DumpJson(j));
    return interrupted ? InterruptExitCode() : kExitOk;
  }
  fmt::print("l2s plan --pareto: {}\n", ProblemSummary(p));
  if (interrupted) fmt::print("INTERRUPTED: partial sweep\n");
  if (!limits.empty())
    fmt::print("TPOT limits: {} from {:.2f} ms (lowest TPOT of a batch-1 scan) to {:.2f} ms (TPOT "
               "of the best plan under the problem's SLOs), geometric; each point is the oracle's "
               "optimum under its limit ({} where the oracle does not finish within {} calls)\n",
               limits.size(), limits.front(), limits.back(), a.search, a.oracle_calls);
  for (const ParetoSeries& s : series) {
    fmt::print("\n{}: {} of {} points on the front\n", s.name, s.front.size(), s.sweep.size());
    fmt::print("  {:>10} {:>11} {:>10} {:>8} {:>8} {:>5}  {:<8} {}\n", "TPOT limit", "tok/s/GPU",
               "tok/s/user", "TTFT ms", "TPOT ms", "front", "found by", "strategy");
    for (const ParetoPoint& pt : s.sweep)
      fmt::print("  {:>10.2f} {:>11.2f} {:>10.2f} {:>8.1f} {:>8.2f} {:>5}  {:<8} {}\n",
                 pt.tpot_limit_ms, pt.tokens_per_s_per_gpu, pt.tokens_per_s_per_user, pt.ttft_ms,
                 pt.tpot_ms, OnFront(s, pt) ? "*" : "",
                 pt.found_by == "oracle" ? std::string("oracle") : pt.found_by.substr(0, pt.found_by.find('(')),
                 ParetoStrategyText(p.model, pt));
  }
  fmt::print("\nwall time {:.1f} s\n", wall);
  return interrupted ? InterruptExitCode() : kExitOk;
}

}  // namespace l2s::cli
