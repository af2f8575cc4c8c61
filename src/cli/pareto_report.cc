#include "cli/pareto_report.h"

#include <fmt/core.h>

#include <chrono>
#include <limits>
#include <optional>
#include <set>

#include "cli/common.h"
#include "cli/output.h"
#include "cli/plan_problem.h"
#include "cli/progress.h"
#include "cli/report.h"
#include "engine/engine.h"
#include "plan/cost.h"
#include "plan/engines.h"
#include "plan/replicas.h"

namespace l2s::cli {

namespace {

using json = nlohmann::ordered_json;

// Series colours: distinct from compare's searcher palette (black and its reds are taken), and
// from the SLO region's red.
const char* kSeriesColors[] = {"#1b9e77", "#7570b3", "#d95f02", "#e7298a", "#66a61e", "#a6761d"};

// The engine-launchable series of RunParetoPlan over `limits`; nullopt when none is drawn
// (engine "ideal", or no engine launches a valid plan).
StatusOr<std::optional<ParetoSeries>> EngineSeries(const Problem& p, const ParetoPlanArgs& a,
                                                   const std::vector<double>& limits) {
  plan::AggRequest req;
  req.search = a.search;
  req.budget = a.budget;
  req.seed = a.seed;
  req.oracle_calls = a.oracle_calls;
  req.no_baselines = true;  // the engines' oracle runs first (PlanForEngine)
  engine::EngineId id = engine::EngineId::kIdeal;
  if (!a.engine.empty()) {
    StatusOr<engine::EngineId> e = engine::ParseEngineId(a.engine);
    if (!e.ok()) return e.status();
    id = *e;
  } else {
    StatusOr<plan::EngineTable> t = plan::PlanEngines(p, req, a.mtp, a.progress);
    if (!t.ok()) return t.status();
    if (t->interrupted) {
      ParetoSeries cancelled;
      cancelled.name = "engine launchable";
      cancelled.cancelled = true;
      return std::optional<ParetoSeries>(cancelled);
    }
    if (t->fastest < 0) return std::optional<ParetoSeries>();
    id = t->rows[t->fastest].id;
  }
  if (id == engine::EngineId::kIdeal) return std::optional<ParetoSeries>();
  StatusOr<ParetoSeries> s =
      plan::EngineParetoSeries(p, id, req, a.mtp, limits, a.progress, a.jobs);
  if (!s.ok()) return s.status();
  return std::optional<ParetoSeries>(std::move(*s));
}

bool OnFront(const ParetoSeries& s, const ParetoPoint& p) {
  for (const ParetoPoint& f : s.front)
    if (f.tpot_limit_ms == p.tpot_limit_ms) return true;
  return false;
}

}  // namespace

std::string ParetoStrategyText(const ModelSpec& m, const ParetoPoint& p) {
  // "Nx <strategy>": N replicas of an instance (plan/replicas.h ReplicatedText).
  int n = 1;
  std::string text = p.strategy;
  const bool replicated = plan::SplitReplicatedText(p.strategy, &n, &text);
  StatusOr<Strategy> s = FromText(text);
  if (!s.ok()) return p.strategy;
  return replicated ? plan::ReplicatedText(n, ShortText(m, *s)) : ShortText(m, *s);
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

const std::vector<std::string>& ParetoColors() {
  static const std::vector<std::string> colors(std::begin(kSeriesColors), std::end(kSeriesColors));
  return colors;
}

void AddSloRegion(double tpot_ms, Plot* plot) {
  if (!(tpot_ms > 0)) return;
  PlotSeries span;
  span.kind = PlotSeries::Kind::kXSpan;
  span.x = {-std::numeric_limits<double>::infinity(), TokensPerUser(tpot_ms)};
  span.color = "#d62728";
  span.opacity = 0.12;
  span.name = fmt::format("violates the SLO: TPOT > {:g} ms (< {:.3g} tok/s/user)", tpot_ms,
                          TokensPerUser(tpot_ms));
  span.note = "TPOT SLO violated";
  plot->series.insert(plot->series.begin(), span);
}

namespace {

// What a `plan --pareto` series ranges over, in the chart's legend (short; "" = the name says it)
// and under the table's heading: the aggregated series is the paper's space (under the problem's
// engine's scheduler: what a custom engine could reach), the disaggregated one the prefill and
// decode pools the problem's engine `engine` launches (the paper's space for the ideal engine,
// ""), the third what one engine launches, aggregated.
struct SeriesSpace {
  std::string legend, table;
};
SeriesSpace SpaceOfSeries(const std::string& name, const std::string& engine) {
  if (name == "aggregated")
    return {"paper's space",
            engine.empty()
                ? "every layout of the paper's space: what a custom engine could reach"
                : fmt::format("every layout of the paper's space, under {}'s scheduler: what a "
                              "custom engine could reach",
                              engine)};
  if (name == "disaggregated")
    return engine.empty() ? SeriesSpace{"paper's space",
                                        "prefill and decode pools over the paper's space"}
                          : SeriesSpace{engine + "'s pools",
                                        fmt::format("prefill and decode pools as {} launches them",
                                                    engine)};
  return {"", "aggregated, as this engine launches it"};
}

}  // namespace

Plot ParetoPlanPlot(const Problem& p, const std::vector<ParetoSeries>& series, bool log_x,
                    bool log_y, const std::string& engine) {
  Plot plot;
  plot.title = fmt::format("{} serving on {} x {}: throughput vs interactivity (TPOT sweep)",
                           p.model.name, p.cluster.num_gpus, p.cluster.gpu.name);
  if (p.workload.mode == Mode::kDecode)
    plot.title = fmt::format("{} decoding on {} x {}: throughput vs interactivity (TPOT sweep)",
                             p.model.name, p.cluster.num_gpus, p.cluster.gpu.name);
  plot.x_label = "tokens/s per user (1000 / TPOT ms)";
  plot.y_label = "output tokens/s per GPU";
  plot.log_x = log_x;
  plot.log_y = log_y;
  plot.y_from_zero = true;
  plot.pad = 0.04;
  plot.legend = Plot::Legend::kInside;
  // The legend names each series' space, as the table's "space:" lines do.
  AddParetoSeries(series, &plot,
                  [&](const std::string& name) { return SpaceOfSeries(name, engine).legend; });
  AddSloRegion(p.workload.tpot_ms, &plot);
  return plot;
}

void AddParetoSeries(const std::vector<ParetoSeries>& series, Plot* plot,
                     const std::function<std::string(const std::string&)>& space) {
  size_t k = 0;
  for (const ParetoSeries& s : series) {
    const std::string where = space ? space(s.name) : std::string();
    AddStaircase(s.front,
                 fmt::format("{}{} (TPOT sweep, {} on the front)", s.name,
                             where.empty() ? std::string() : ", " + where, s.front.size()),
                 kSeriesColors[k++ % std::size(kSeriesColors)], plot);
  }
}

int RunParetoPlan(const Problem& p, const ParetoPlanArgs& a) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string engine_title;  // the problem's engine (--engine), "" for the ideal one
  if (StatusOr<engine::EngineId> id = engine::ParseEngineId(a.engine.empty() ? "ideal" : a.engine);
      id.ok() && *id != engine::EngineId::kIdeal)
    engine_title = std::string(engine::EngineTitle(*id));
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
  opt.jobs = a.jobs;
  std::vector<double> limits;
  ProgressObserver obs({"pareto sweep", StderrIsTerminal(), 0});
  StatusOr<ParetoSeries> agg = AggregatedParetoSeries(p, *space, opt, &obs, &limits);
  // An MoE model's points also as replicas of smaller instances (plan's "Replicas").
  if (agg.ok())
    *agg = WithReplicas(std::move(*agg), p,
                        [&a](const Problem& q) {
                          return StrategySpace::Make(q.model, q.cluster.num_gpus,
                                                     PlanSpaceOptions(q, a.mtp));
                        },
                        opt, &obs);
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
  if (!interrupted && !limits.empty()) {
    StatusOr<std::optional<ParetoSeries>> es = EngineSeries(p, a, limits);
    if (!es.ok()) {
      if (es.status().code() != Status::Code::kInvalidArgument) return Fail(es.status());
      Warn("no engine-launchable series: " + es.status().message());
    } else if (es->has_value()) {
      interrupted |= (*es)->cancelled || InterruptRequested();
      if (!(*es)->sweep.empty() || !(*es)->cancelled) series.push_back(std::move(**es));
    }
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // The chart first (stdout may be a pipe that goes away).
  const bool draw = a.svg != "none" && !a.svg.empty();
  if (draw) {
    if (Status st = WriteSvg(ParetoPlanPlot(p, series, a.log_x, a.log_y, engine_title), a.svg);
        !st.ok())
      return Fail(Status::IoError("--svg " + st.message()));
    fmt::print(stderr, "l2s plan --pareto: wrote {}\n", a.svg);
  }
  json j;
  j["problem"] = ProblemJson(p);
  j["pareto"] = ParetoFrontJson(series);
  // With a price, each front point's $ per million output tokens (plan/cost.h).
  if (p.cluster.price_per_gpu_hour > 0)
    for (json& pt : j["pareto"]) {
      const plan::Cost c = plan::CostOf(pt["tokens_per_s_per_gpu"].get<double>(), p.workload,
                                        p.cluster, p.cluster.num_gpus);
      pt["usd_per_mtok_output"] = c.usd_per_mtok_output ? json(*c.usd_per_mtok_output) : json();
    }
  j["svg"] = draw ? json(a.svg) : json();
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
    fmt::print("  space: {}\n", SpaceOfSeries(s.name, engine_title).table);
    fmt::print("  {:>10} {:>11} {:>10} {:>8} {:>8} {:>5}  {:<8} {}\n", "TPOT limit", "tok/s/GPU",
               "tok/s/user", "TTFT ms", "TPOT ms", "front", "found by", "strategy");
    for (const ParetoPoint& pt : s.sweep)
      fmt::print("  {:>10.2f} {:>11.2f} {:>10.2f} {:>8.1f} {:>8.2f} {:>5}  {:<8} {}\n",
                 pt.tpot_limit_ms, pt.tokens_per_s_per_gpu, pt.tokens_per_s_per_user, pt.ttft_ms,
                 pt.tpot_ms, OnFront(s, pt) ? "*" : "",
                 pt.found_by == "oracle" ? std::string("oracle") : pt.found_by.substr(0, pt.found_by.find('(')),
                 ParetoStrategyText(p.model, pt));
  }
  if (draw) fmt::print("\nchart: {}\n", a.svg);
  fmt::print("\nwall time {:.1f} s\n", wall);
  return interrupted ? InterruptExitCode() : kExitOk;
}

}  // namespace l2s::cli
