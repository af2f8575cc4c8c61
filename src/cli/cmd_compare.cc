// `l2s compare`: the paper's evaluation on any problem. Runs each searcher over seeds 0..N-1
// with the same budget (megatron, default and oracle are deterministic and budget-free: once),
// prints the paper-style table (mean best tokens/s per GPU, normalised to random walk, min/max,
// ratio to the Megatron heuristic, fraction of the oracle, seeds reaching Megatron, wall time),
// and writes DIR/traces.csv, DIR/convergence.svg and, in serve mode, DIR/pareto.svg.
// docs/PLAN.md describes the output.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/disagg_plan.h"
#include "cli/output.h"
#include "cli/pareto_report.h"
#include "cli/plan_problem.h"
#include "cli/problem_flags.h"
#include "cli/progress.h"
#include "cli/report.h"
#include "cli/svg.h"
#include "engine/engine.h"
#include "engine/restrict.h"
#include "search/search.h"
#include "plan/work_bound.h"

namespace l2s::cli {

namespace {

using json = nlohmann::ordered_json;

struct CompareFlags {
  ProblemFlags problem;
  std::string searchers = "local,rl,sa,rw,megatron,oracle";
  int seeds = 10;
  int64_t budget = 4000;
  bool json = false;
  std::string out_dir = "./compare-out";
  std::string x_scale = "log";
  int64_t oracle_calls = 0;    // the oracle's work bound (0 = none)
  double oracle_seconds = -1;  // deprecated (problem_flags.h OracleCallsOf); < 0 = not given
  std::string serving = "agg";  // serve mode: agg (one engine) or disagg (the joint space)
  bool pareto = false;  // also sweep the TPOT limit and draw the frontier on pareto.svg
};

// Splits "rl,rl(prior=0.5,refine=0),rw" on the commas outside parentheses.
std::vector<std::string> SplitSpecs(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  out.push_back(cur);
  for (std::string& s : out) {
    const auto a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
    s = a == std::string::npos ? "" : s.substr(a, b - a + 1);
  }
  return out;
}

bool BudgetFree(const std::string& name) {
  return name == "megatron" || name == "default" || name == "oracle";
}

struct Point {
  double x, y;  // tokens/s per user, tokens/s per GPU
};

struct SearcherRuns {
  std::string key;    // as given in --searchers
  std::string name;   // parsed name ("sa")
  std::string spec;   // canonical spec with options
  std::vector<SearchResult> runs;  // one per seed (1 for budget-free)
  std::vector<Point> cloud;        // serve mode: valid evaluations seen
  bool interrupted = false;        // stopped by Ctrl-C or the oracle's work bound
  bool bound_hit = false;          // the oracle stopped by --oracle-calls
  double Value(size_t i) const { return runs[i].found ? runs[i].eval.tokens_per_s_per_gpu : 0.0; }
  double Mean() const {
    double s = 0;
    for (size_t i = 0; i < runs.size(); ++i) s += Value(i);
    return runs.empty() ? 0 : s / runs.size();
  }
  double MeanWall() const {
    double s = 0;
    for (const SearchResult& r : runs) s += r.wall_s;
    return runs.empty() ? 0 : s / runs.size();
  }
};

// Colours: the Tableau 10 palette (distinct, colour-blind friendly).
const char* kColors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                         "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

// Best-so-far of one run at call x (0 before the first valid strategy).
double BestAt(const SearchResult& r, double x) {
  double v = 0;
  for (const TracePoint& t : r.trace) {
    if (t.call > x) break;
    v = t.value;
  }
  return v;
}

Plot ConvergencePlot(const Problem& p, const std::vector<SearcherRuns>& all, int64_t budget,
                     bool log_x, double megatron, double oracle, int seeds) {
  Plot plot;
  plot.title = fmt::format("Best-so-far: {} {} on {} x {} ({} seed{})", p.model.name,
                           ModeName(p.workload.mode), p.cluster.num_gpus, p.cluster.gpu.name, seeds,
                           seeds == 1 ? "" : "s");
  plot.x_label = "simulator calls";
  plot.y_label = "best tokens/s per GPU (simulated)";
  plot.log_x = log_x;
  size_t color = 0;
  for (const SearcherRuns& s : all) {
    const char* c = kColors[color++ % std::size(kColors)];
    if (BudgetFree(s.name)) {
      if (s.name == "megatron" || s.name == "oracle" || s.runs.empty() || !s.runs[0].found) continue;
      PlotSeries h;  // "default" and other budget-free searchers: a reference line
      h.kind = PlotSeries::Kind::kHLine;
      h.name = s.key;
      h.color = c;
      h.y = {s.Value(0)};
      h.dashed = true;
      plot.series.push_back(h);
      continue;
    }
    // Change points of every seed, plus the ends.
    std::set<double> xs = {1.0, static_cast<double>(budget)};
    for (const SearchResult& r : s.runs)
      for (const TracePoint& t : r.trace) xs.insert(static_cast<double>(t.call));
    PlotSeries band, mean;
    band.kind = PlotSeries::Kind::kBand;
    band.color = c;
    band.opacity = 0.12;
    mean.kind = PlotSeries::Kind::kLine;
    mean.color = c;
    mean.width_px = 2.2;
    mean.name = s.runs.size() > 1 ? fmt::format("{} (mean, min-max band)", s.key) : s.key;
    double prev_lo = 0, prev_hi = 0, prev_mean = 0;
    bool first = true;
    for (double x : xs) {
      double lo = 1e300, hi = -1e300, sum = 0;
      for (const SearchResult& r : s.runs) {
        const double v = BestAt(r, x);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        sum += v;
      }
      const double m = sum / std::max<size_t>(1, s.runs.size());
      if (!first) {  // hold the previous value up to x, then jump (step curves)
        band.x.push_back(x);
        band.y.push_back(prev_lo);
        band.y_hi.push_back(prev_hi);
        mean.x.push_back(x);
        mean.y.push_back(prev_mean);
      }
      band.x.push_back(x);
      band.y.push_back(lo);
      band.y_hi.push_back(hi);
      mean.x.push_back(x);
      mean.y.push_back(m);
      prev_lo = lo;
      prev_hi = hi;
      prev_mean = m;
      first = false;
    }
    if (s.runs.size() > 1) plot.series.push_back(band);
    plot.series.push_back(mean);
  }
  // The oracle first (solid black), the heuristic over it (dashed red): when the two are close,
  // both stay visible.
  if (oracle > 0) {
    PlotSeries h;
    h.kind = PlotSeries::Kind::kHLine;
    h.name = fmt::format("oracle optimum ({:.2f})", oracle);
    h.color = "#000000";
    h.width_px = 1.6;
    h.y = {oracle};
    plot.series.push_back(h);
  }
  if (megatron > 0) {
    PlotSeries h;
    h.kind = PlotSeries::Kind::kHLine;
    h.name = fmt::format("Megatron heuristic ({:.2f})", megatron);
    h.color = "#c0392b";
    h.dashed = true;
    h.width_px = 1.8;
    h.y = {megatron};
    plot.series.push_back(h);
  }
  return plot;
}

Plot ParetoPlot(const Problem& p, const std::vector<SearcherRuns>& all, size_t* front_size) {
  Plot plot;
  plot.title = fmt::format("Strategies evaluated: {} serving on {} x {}", p.model.name,
                           p.cluster.num_gpus, p.cluster.gpu.name);
  plot.x_label = "tokens/s per user (1 / TPOT)";
  plot.y_label = "tokens/s per GPU (simulated)";
  std::vector<Point> every;
  double xmax = 0, ymax = 0;
  for (const SearcherRuns& s : all)
    for (const Point& q : s.cloud) {
      every.push_back(q);
      xmax = std::max(xmax, q.x);
      ymax = std::max(ymax, q.y);
    }
  // The cloud, thinned to one dot per 3 x 3 px cell per searcher (the front is exact).
  constexpr double kCellsX = 220, kCellsY = 150;
  size_t color = 0;
  for (const SearcherRuns& s : all) {
    const char* c = kColors[color++ % std::size(kColors)];
    if (s.cloud.empty()) continue;
    std::set<std::pair<int, int>> seen;
    PlotSeries cloud;
    cloud.kind = PlotSeries::Kind::kScatter;
    cloud.name = fmt::format("{} (evaluated)", s.key);
    cloud.color = c;
    cloud.opacity = 0.45;
    cloud.width_px = 2.2;
    for (const Point& q : s.cloud) {
      const std::pair<int, int> cell{static_cast<int>(q.x / std::max(xmax, 1e-12) * kCellsX),
                                     static_cast<int>(q.y / std::max(ymax, 1e-12) * kCellsY)};
      if (!seen.insert(cell).second) continue;
      cloud.x.push_back(q.x);
      cloud.y.push_back(q.y);
    }
    plot.series.push_back(cloud);
  }
  std::vector<ParetoPoint> cloud;
  for (const Point& q : every) {
    ParetoPoint pt;
    pt.tokens_per_s_per_user = q.x;
    pt.tokens_per_s_per_gpu = q.y;
    cloud.push_back(pt);
  }
  const std::vector<ParetoPoint> front = ParetoFront(std::move(cloud));
  *front_size = front.size();
  AddStaircase(front, fmt::format("Pareto front ({} strategies)", front.size()), "#000000", &plot);
  return plot;
}

int RunCompare(CompareFlags f, const CLI::App& cmd) {
  if (Status st = CheckGivenCounts(cmd, f.problem); !st.ok()) return Fail(st);
  if (f.budget <= 0)
    return Fail(fmt::format("--budget must be a positive number of simulator calls, got {}", f.budget));
  if (f.seeds <= 0) return Fail(fmt::format("--seeds must be positive, got {}", f.seeds));
  if (f.x_scale != "log" && f.x_scale != "linear")
    return Fail(fmt::format("--x-scale: expected log or linear, got \"{}\"", f.x_scale));
  const int64_t oracle_calls = OracleCallsOf(f.oracle_calls, f.oracle_seconds);
  std::vector<SearcherRuns> all;
  std::set<std::string> keys;
  for (const std::string& key : SplitSpecs(f.searchers)) {
    if (key.empty()) return Fail(fmt::format("--searchers: empty entry in \"{}\"", f.searchers));
    if (!keys.insert(key).second) return Fail(fmt::format("--searchers: \"{}\" is listed twice", key));
    StatusOr<std::unique_ptr<Searcher>> s = MakeSearcher(key);
    if (!s.ok()) return Fail(Status::InvalidArgument("--searchers: " + s.status().message()));
    SearcherRuns r;
    r.key = key;
    r.name = ParseSearcherSpec(key)->name;
    r.spec = (*s)->name();
    all.push_back(std::move(r));
  }
  ApplyPlanDefaults(&f.problem);
  StatusOr<Problem> problem = BuildProblem(f.problem);
  if (!problem.ok()) return Fail(problem.status());
  const Simulator sim(std::move(*problem));
  const Problem& p = sim.problem();
  if (f.serving != "agg" && f.serving != "disagg")
    return Fail(fmt::format("--serving must be agg or disagg, got \"{}\"", f.serving));
  if (f.serving == "disagg" && p.workload.mode != Mode::kServe)
    return Fail(fmt::format("--serving disagg applies to --mode serve only (got --mode {})",
                            ModeName(p.workload.mode)));
  // --serving disagg: every searcher runs on the joint space (search/joint.h); the oracle is
  // SolveDisaggExact.
  std::optional<DisaggPlan> disagg;
  std::unique_ptr<JointProblem> joint;
  if (f.serving == "disagg") {
    // megatron and default build one strategy of one space: they have no meaning on the joint
    // space (a 0 in the table would read as a result). Left out of the default list, an error
    // when listed.
    std::vector<SearcherRuns> kept;
    for (SearcherRuns& r : all) {
      if (!BuildsOneEngineStrategy(r.name)) {
        kept.push_back(std::move(r));
        continue;
      }
      if (cmd.count("--searchers") > 0)
        return Fail(fmt::format("--searchers: {} builds a strategy of one engine's space; with "
                                "--serving disagg use {}",
                                r.name, kJointSpaceSearchers));
    }
    all = std::move(kept);
    DisaggPlanRequest req;
    req.mtp = f.problem.mtp;
    StatusOr<DisaggPlan> d = PrepareDisaggregated(p, req);
    if (!d.ok()) return Fail(d.status());
    disagg = std::move(*d);
    joint = std::make_unique<JointProblem>(*disagg->space);
  }
  // --engine E: the searchers, baselines and oracle run on the space E launches, as plan
  // --engine E searches it (the ideal engine's is the paper's space).
  StatusOr<StrategySpace> space =
      engine::RestrictedSpace(engine::CapabilitiesOf(LaunchEngineOf(f.problem)), p.model,
                              p.cluster.num_gpus, PlanSpaceOptions(p, f.problem.mtp));
  if (!space.ok()) return Fail(space.status());
  if (f.pareto && p.workload.mode == Mode::kPrefill)
    return Fail("--pareto sweeps the TPOT limit: it needs --mode serve or decode (prefill has no "
                "TPOT)");
  std::error_code ec;
  std::filesystem::create_directories(f.out_dir, ec);
  if (ec || !std::filesystem::is_directory(f.out_dir))
    return Fail(Status::IoError(fmt::format("--out-dir {}: cannot create the directory ({})",
                                            f.out_dir, ec ? ec.message() : "not a directory")));
  // A previous run's files must not look like this run's: they are removed now (an interrupted
  // run rewrites them, marked interrupted; a failed one leaves none). The directory must be
  // writable before the runs start, and must not hold an input.
  for (const char* name : {"traces.csv", "convergence.svg", "pareto.svg"}) {
    const std::string path = (std::filesystem::path(f.out_dir) / name).string();
    if (Status st = CheckNotAnInput("--out-dir", path, {{"--model", f.problem.model},
                                                        {"--cluster", f.problem.cluster}});
        !st.ok())
      return Fail(st);
    std::filesystem::remove(path, ec);
  }
  if (Status st = CheckWritable("--out-dir", (std::filesystem::path(f.out_dir) / "traces.csv").string());
      !st.ok())
    return Fail(st);

  InstallSigintHandler();
  const bool serve = p.workload.mode == Mode::kServe;
  bool interrupted = false;
  auto run_one = [&](SearcherRuns& sr, uint64_t seed, int of) {
    StatusOr<std::unique_ptr<Searcher>> s = MakeSearcher(sr.key);
    ProgressObserver::EvalSink sink;
    if (serve)
      sink = [&sr](const Strategy&, const Evaluation& e) {
        if (e.valid() && e.tpot_s > 0) sr.cloud.push_back({1.0 / e.tpot_s, e.tokens_per_s_per_gpu});
      };
    const std::string label = of > 1 ? fmt::format("{} seed {}/{}", sr.key, seed + 1, of) : sr.key;
    ProgressObserver progress({label, StderrIsTerminal(), 0}, sink);
    WorkBoundObserver obs(&progress, sr.name == "oracle" ? oracle_calls : 0);
    SearchResult r;
    if (joint && sr.name == "oracle") {
      r = DisaggOracleAsSearch(SolveDisaggExact(*disagg->space, &obs));
    } else if (joint) {
      r = (*s)->SearchEncoded(*joint, f.budget, seed, &obs);
    } else {
      r = (*s)->Search(sim, *space, f.budget, seed, &obs);
    }
    progress.Finish();
    if (obs.bound_hit() && !obs.inner_cancelled()) sr.bound_hit = true;
    if (r.interrupted) sr.interrupted = true;
    sr.runs.push_back(std::move(r));
    interrupted = InterruptRequested();
  };
  for (SearcherRuns& sr : all) {
    const int n = BudgetFree(sr.name) ? 1 : f.seeds;
    for (int seed = 0; seed < n && !interrupted; ++seed) run_one(sr, static_cast<uint64_t>(seed), n);
    if (interrupted) break;
  }
  // References: the Megatron heuristic (run for the ratios when not in the list) and the oracle.
  double megatron = 0, oracle = 0, rw_mean = 0;
  bool have_megatron = false, have_oracle = false, have_rw = false;
  std::string oracle_note;
  SearcherRuns extra_megatron;
  for (const SearcherRuns& sr : all) {
    if (sr.name == "megatron" && sr.spec == "megatron" && !sr.runs.empty() && !sr.interrupted) {
      have_megatron = sr.runs[0].found;
      megatron = sr.Value(0);
    }
    if (sr.name == "oracle" && !sr.runs.empty()) {
      if (sr.interrupted)
        oracle_note = sr.bound_hit ? fmt::format("the oracle did not finish within --oracle-calls {}", oracle_calls)
                                      : "the oracle was interrupted";
      else {
        have_oracle = sr.runs[0].found;
        oracle = sr.Value(0);
      }
    }
    if (sr.name == "rw" && sr.spec == "rw" && !sr.runs.empty()) {
      have_rw = true;
      rw_mean = sr.Mean();
    }
  }
  bool oracle_listed = false, oracle_ran = false;
  for (const SearcherRuns& sr : all)
    if (sr.name == "oracle") {
      oracle_listed = true;
      oracle_ran |= !sr.runs.empty();
    }
  if (!oracle_listed) oracle_note = "oracle not in --searchers";
  else if (!oracle_ran) oracle_note = "the oracle did not run (interrupted)";
  if (!have_megatron && !interrupted) {
    extra_megatron.key = extra_megatron.name = extra_megatron.spec = "megatron";
    run_one(extra_megatron, 0, 1);
    if (!extra_megatron.interrupted && !extra_megatron.runs.empty()) {
      have_megatron = extra_megatron.runs[0].found;
      megatron = extra_megatron.Value(0);
    }
  }

  // The throughput-interactivity frontier (--pareto): the oracle per TPOT limit (compare's
  // --oracle-calls per limit), the first budgeted searcher of the list where it cannot finish.
  std::vector<ParetoSeries> sweep;
  std::vector<double> sweep_limits;
  if (f.pareto && !interrupted) {
    AggregatedSweepOptions opt;
    opt.searcher = "rl";
    for (const SearcherRuns& sr : all)
      if (!BudgetFree(sr.name)) {
        opt.searcher = sr.key;
        break;
      }
    opt.budget = f.budget;
    opt.oracle_calls = oracle_calls;
    ProgressObserver obs({"pareto sweep", StderrIsTerminal(), 0});
    StatusOr<ParetoSeries> agg = AggregatedParetoSeries(p, *space, opt, &obs, &sweep_limits);
    obs.Finish();
    if (!agg.ok()) return Fail(agg.status());
    sweep.push_back(*agg);
    interrupted = interrupted || agg->cancelled || InterruptRequested();
  }

  // traces.csv
  const std::filesystem::path dir(f.out_dir);
  const std::string csv_path = (dir / "traces.csv").string();
  {
    std::string csv = "searcher,seed,call,value\n";
    for (const SearcherRuns& sr : all)
      for (size_t i = 0; i < sr.runs.size(); ++i) {
        const SearchResult& r = sr.runs[i];
        std::string key = sr.key;
        if (key.find_first_of(",\"") != std::string::npos) {
          std::string q = "\"";
          for (char c : key) q += c == '"' ? std::string("\"\"") : std::string(1, c);
          key = q + "\"";
        }
        for (const TracePoint& t : r.trace) csv += fmt::format("{},{},{},{}\n", key, i, t.call, t.value);
        // The curve continues flat to the last call.
        if (r.calls > 0 && (r.trace.empty() || r.trace.back().call < r.calls))
          csv += fmt::format("{},{},{},{}\n", key, i, r.calls, sr.Value(i));
      }
    if (Status st = WriteFileAtomic(csv_path, csv); !st.ok()) return Fail(st);
  }
  // convergence.svg, pareto.svg
  const std::string conv_path = (dir / "convergence.svg").string();
  if (Status st = WriteSvg(ConvergencePlot(p, all, f.budget, f.x_scale == "log", megatron, oracle,
                                           f.seeds),
                           conv_path);
      !st.ok())
    return Fail(st);
  std::string pareto_path;
  size_t front_size = 0;
  const bool draw_pareto = serve || f.pareto;
  if (draw_pareto) {
    pareto_path = (dir / "pareto.svg").string();
    Plot plot = ParetoPlot(p, all, &front_size);
    AddParetoSeries(sweep, &plot);
    // As plan --pareto's chart: log axes (the interactive end is not squashed), the legend boxed
    // inside the frame, the SLO's violating side shaded.
    plot.log_x = plot.log_y = true;
    plot.pad = 0.04;
    plot.legend = Plot::Legend::kInside;
    AddSloRegion(p.workload.tpot_ms, &plot);
    if (Status st = WriteSvg(plot, pareto_path); !st.ok()) return Fail(st);
  }

  // Table / JSON.
  json j;
  j["problem"] = ProblemJson(p);
  j["budget"] = f.budget;
  j["seeds"] = f.seeds;
  json sj;
  for (const SearcherRuns& sr : all) {
    json o;
    o["spec"] = sr.spec;
    o["runs"] = sr.runs.size();
    json per_seed = json::array(), calls = json::array(), walls = json::array();
    double lo = 0, hi = 0;
    int at_least = 0;
    for (size_t i = 0; i < sr.runs.size(); ++i) {
      const double v = sr.Value(i);
      per_seed.push_back(v);
      calls.push_back(sr.runs[i].calls);
      walls.push_back(sr.runs[i].wall_s);
      lo = i == 0 ? v : std::min(lo, v);
      hi = i == 0 ? v : std::max(hi, v);
      if (have_megatron && v >= megatron * (1 - 1e-9)) ++at_least;
    }
    const double mean = sr.Mean();
    const bool ran = !sr.runs.empty();  // false: Ctrl-C came before its first run
    o["per_seed"] = per_seed;
    o["mean"] = ran ? json(mean) : json();
    o["min"] = ran ? json(lo) : json();
    o["max"] = ran ? json(hi) : json();
    o["mean_wall_s"] = ran ? json(sr.MeanWall()) : json();
    o["per_seed_calls"] = calls;
    o["per_seed_wall_s"] = walls;
    o["normalised_to_rw"] = ran && have_rw && rw_mean > 0 ? json(mean / rw_mean) : json();
    o["ratio_to_megatron"] = ran && have_megatron && megatron > 0 ? json(mean / megatron) : json();
    o["fraction_of_oracle"] = ran && have_oracle && oracle > 0 ? json(mean / oracle) : json();
    o["seeds_at_least_megatron"] = ran && have_megatron ? json(at_least) : json();
    o["interrupted"] = sr.interrupted;
    sj[sr.key] = o;
  }
  j["searchers"] = sj;
  j["oracle"] = have_oracle ? json(oracle) : json();
  j["oracle_note"] = oracle_note.empty() ? json() : json(oracle_note);
  j["megatron"] = have_megatron ? json(megatron) : json();
  j["rw_in_list"] = have_rw;
  j["interrupted"] = interrupted;
  j["files"] = {{"traces_csv", csv_path},
                {"convergence_svg", conv_path},
                {"pareto_svg", draw_pareto ? json(pareto_path) : json()}};
  j["pareto"] = f.pareto ? ParetoFrontJson(sweep) : json();
  j["pareto_tpot_limits_ms"] = f.pareto ? json(sweep_limits) : json();
  if (f.json) {
    fmt::print("{}\n", DumpJson(j));
    return interrupted ? InterruptExitCode() : kExitOk;
  }

  fmt::print("l2s compare: {}\n", ProblemSummary(p));
  fmt::print("budget {} simulator calls, seeds 0..{} (megatron, default, oracle: one deterministic run)\n\n",
             f.budget, f.seeds - 1);
  if (interrupted) fmt::print("INTERRUPTED: partial results\n\n");
  fmt::print("{:<16} {:>4} {:>12} {:>8} {:>10} {:>10} {:>9} {:>9} {:>10} {:>9}\n", "searcher", "runs",
             "mean tok/s", "vs rw", "min", "max", "vs Megat.", "of oracle", ">= Megat.", "wall s");
  fmt::print("{:<16} {:>4} {:>12}\n", "", "", "per GPU");
  for (const SearcherRuns& sr : all) {
    const json& o = sj[sr.key];
    if (sr.runs.empty()) {
      fmt::print("{:<16} {:>4}  not run (interrupted)\n", sr.key, 0);
      continue;
    }
    auto opt = [](const json& v, const char* suffix, double scale) {
      return v.is_null() ? std::string("-")
                         : fmt::format("{:.{}f}{}", v.get<double>() * scale, scale > 1 ? 1 : 3,
                                       suffix);
    };
    fmt::print("{:<16} {:>4} {:>12.2f} {:>8} {:>10.2f} {:>10.2f} {:>9} {:>9} {:>10} {:>9.2f}\n",
               sr.key, sr.runs.size(), o["mean"].get<double>(), opt(o["normalised_to_rw"], "x", 1),
               o["min"].get<double>(), o["max"].get<double>(), opt(o["ratio_to_megatron"], "x", 1),
               opt(o["fraction_of_oracle"], "%", 100),
               o["seeds_at_least_megatron"].is_null()
                   ? std::string("-")
                   : fmt::format("{}/{}", o["seeds_at_least_megatron"].get<int>(), sr.runs.size()),
               sr.MeanWall());
  }
  fmt::print("\n");
  if (!have_rw) {
    const bool listed = keys.count("rw") > 0;
    fmt::print("vs rw: {}\n", listed ? "random walk did not run (interrupted), nothing to normalise to"
                                     : "random walk (\"rw\") is not in --searchers, nothing to "
                                       "normalise to");
  }
  if (have_megatron && megatron > 0) fmt::print("Megatron heuristic: {:.2f} tokens/s per GPU\n", megatron);
  if (have_oracle) fmt::print("oracle optimum: {:.2f} tokens/s per GPU\n", oracle);
  else fmt::print("oracle: {}\n", oracle_note.empty() ? "no valid strategy" : oracle_note);
  fmt::print("\nwrote {}\n      {}\n", csv_path, conv_path);
  if (draw_pareto) fmt::print("      {} (Pareto front of {} strategies)\n", pareto_path, front_size);
  for (const ParetoSeries& s : sweep) {
    fmt::print("\nTPOT sweep ({}): {} of {} limits on the front", s.name, s.front.size(),
               s.sweep.size());
    if (!sweep_limits.empty())
      fmt::print(", limits {:.2f} .. {:.2f} ms", sweep_limits.front(), sweep_limits.back());
    fmt::print("\n  {:>10} {:>12} {:>12}  {}\n", "TPOT ms", "tok/s/GPU", "tok/s/user", "strategy");
    for (const ParetoPoint& pt : s.front)
      fmt::print("  {:>10.2f} {:>12.2f} {:>12.2f}  {}\n", pt.tpot_ms, pt.tokens_per_s_per_gpu,
                 pt.tokens_per_s_per_user, ParetoStrategyText(p.model, pt));
  }
  return interrupted ? InterruptExitCode() : kExitOk;
}

}  // namespace

Runner RegisterCompare(CLI::App& app) {
  auto f = std::make_shared<CompareFlags>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Run several searchers over seeds on one problem (the paper's evaluation): "
                 "table, traces.csv, convergence.svg and pareto.svg");
  AddProblemFlags(cmd, &f->problem);
  cmd->add_option("--searchers", f->searchers,
                  "comma-separated searcher specs (default local,rl,sa,rw,megatron,oracle)");
  cmd->add_option("--seeds", f->seeds, "seeds 0..N-1 per budgeted searcher (default 10)")
      ->check(CLI::Range(1, kMaxSeeds));
  cmd->add_option("--budget", f->budget, "simulator calls per run (default 4000)")
      ->check(CountRange(kMaxBudget));
  cmd->add_flag("--json", f->json, "print the results as JSON");
  cmd->add_option("--out-dir", f->out_dir, "directory for traces.csv and the SVG plots "
                                           "(default ./compare-out)");
  cmd->add_option("--x-scale", f->x_scale, "x axis of convergence.svg: log (default) or linear");
  AddOracleFlags(cmd, &f->oracle_calls, &f->oracle_seconds, "no bound");
  cmd->add_option("--serving", f->serving,
                  "serve mode: agg (default: one engine) or disagg (searchers and oracle on the "
                  "disaggregated joint space)");
  cmd->add_flag("--pareto", f->pareto,
                "also sweep the TPOT limit (oracle per limit) and draw the throughput-"
                "interactivity front on pareto.svg");
  return [f, cmd] { return RunCompare(*f, *cmd); };
}

}  // namespace l2s::cli
