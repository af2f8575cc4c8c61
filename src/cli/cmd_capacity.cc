// `l2s capacity`: request-level serving simulation and capacity answers (docs/CAPACITY.md).
//   Deployment given (--strategy, one instance's GPUs; --instances K):
//     simulate the workload and print its percentiles; with --slo also the highest open-loop
//     rate the deployment sustains within the SLOs (bisection, --rate-tol).
//   No deployment: the fewest GPUs (instances x layout) that serve the workload (--rate,
//     --trace or --concurrency) within the SLOs, over instance sizes --sizes (each size's layout chosen by
//     --search on the serve-mode problem), with the figures at that size and one instance fewer.
//     The sizing is plan::SizeFewest (plan/capacity.h); this file parses the flags and prints.
// Workloads: --rate R [--burstiness B] --requests N | --concurrency N [--requests N, default
// 10 N] | --trace FILE (arrival_s,prompt_tokens,output_tokens[,cached_tokens]); lengths --isl,
// --osl with --isl-dist / --osl-dist fixed|uniform:R|lognormal:S; --prefix-hit H; --seed.
// Exit: 0 answered; 1 no size / rate meets the SLOs or the run is unstable; 2 usage errors.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/output.h"
#include "cli/plan_problem.h"
#include "cli/problem_flags.h"
#include "cli/report.h"
#include "cli/svg.h"
#include "cli/workload_flags.h"
#include "common/parallel.h"
#include "engine/engine.h"
#include "launch/emit.h"
#include "plan/capacity.h"
#include "plan/engines.h"
#include "plan/error_bands.h"
#include "serve/capacity.h"
#include "serve/serve_sim.h"
#include "serve/stats.h"
#include "serve/step_cost.h"
#include "serve/workload.h"
#include "sim/disagg.h"
#include "strategy/space.h"

namespace l2s::cli {
namespace {

// Why a max rate is unbounded (serve::MaxRateResult::unbounded), in words.
std::string UnboundedWords(size_t requests) {
  return fmt::format(
      "all {} requests at once meet the SLOs, so no rate fails: the stream is too short to load "
      "the deployment (more requests: --requests N, or a longer trace)",
      requests);
}

using serve::ServeSummary;

// A max rate whose answer ran its stream as a burst (serve::MaxRateResult::burst), in words.
std::string MaxRateBurstWords(const serve::MaxRateResult& mr) {
  const ServeSummary& s = mr.at.summary;
  const auto n = static_cast<double>(
      serve::SteadyStreamLength(s, std::numeric_limits<int64_t>::max()));
  return fmt::format(
      "a burst at that rate: the {} requests arrive over {:.1f} s, less than {:g}x their mean "
      "end-to-end latency ({:.1f} s), so the deployment is still filling and may not sustain it; "
      "about {} requests simulate a steady state (--requests N)",
      mr.requests, s.window_s, serve::kSteadySpanLatencies, s.e2e.mean, Thousands(n));
}

struct CapacityFlags {
  ProblemFlags problem;  // model, gpu, dtypes, engine flags (mode serve, lengths from --isl/--osl)
  std::string strategy;
  int instances = 1;
  // Disaggregated: a deployment (--prefill-strategy, --prefill-instances; --strategy and
  // --instances are then the decode pool's) or, without one, sizing by --serving: auto (both,
  // the default, as plan's), agg or disagg.
  std::string serving = "auto";
  std::string prefill_strategy;
  int prefill_instances = 1;
  bool layerwise = false;
  TrafficFlags traffic;  // the workload (cli/workload_flags.h, shared with plan)
  int64_t seed = 1;
  std::string slo;
  // search
  std::string sizes;
  int max_gpus = 4096;
  std::string search = "local";
  int64_t budget = 1000;
  int layouts_per_size = 3;
  double rate_tol = 0.02;
  int jobs = 0;  // sizing: layouts' one-instance rates found at once (threads); 0 = every core
  int64_t probe_requests = 2000;
  bool json = false;
  std::string svg;
  std::string emit;  // --emit DIR: the answer's launch files (launch/emit.h)
};

using plan::DisaggLabel;
using plan::EngineRow;
using plan::FewestOutcome;
using plan::LayoutLabel;
using plan::SizedServeOptions;

// The problem on `gpus` GPUs under engine `engine` from the command's flags (plan::ProblemOnGpusFn):
// BuildProblem with --gpus gpus, no --nodes, --engine engine.
plan::ProblemOnGpusFn ProblemOnGpus(const ProblemFlags& pf) {
  return [pf](int gpus, const std::string& engine_name) {
    ProblemFlags one = pf;
    one.gpus = gpus;
    one.nodes = 0;
    one.engine = engine_name;
    // Every engine sized in turn (no --engine): --quick-reduce for those that run it.
    if (pf.engine.empty() && !engine_name.empty()) {
      StatusOr<engine::EngineId> id = engine::ParseEngineId(engine_name);
      if (id.ok() && !engine::CapabilitiesOf(*id).quick_reduce) one.quick_reduce.clear();
    }
    return BuildProblem(one);
  };
}

Status TimelineSvg(const serve::ServeRun& run, const std::string& title, const std::string& path) {
  Plot plot;
  plot.title = title;
  plot.x_label = "time (s)";
  plot.y_label = "requests  /  KV occupancy (% of the pool)";
  PlotSeries w, r, kv;
  w.name = "waiting";
  w.color = "#d62728";
  r.name = "running";
  r.color = "#1f77b4";
  kv.name = "KV occupancy %";
  kv.color = "#2ca02c";
  kv.dashed = true;
  for (const serve::TimelinePoint& p : run.timeline) {
    w.x.push_back(p.t_s);
    w.y.push_back(static_cast<double>(p.waiting));
    r.x.push_back(p.t_s);
    r.y.push_back(static_cast<double>(p.running));
    kv.x.push_back(p.t_s);
    kv.y.push_back(100 * p.kv_fraction);
  }
  plot.series = {w, r, kv};
  return WriteSvg(plot, path);
}

// The cost line of the text output: "cost       at the rate the traffic is served: $1.667 per
// million output tokens (...) at $2.50/GPU-h, $22.50 per hour for 9 GPUs; ..." ("" when
// CostLine has nothing to say).
std::string ServedCostLine(const plan::Cost& c) {
  const std::string line = CostLine(c, /*hourly=*/true);
  if (line.empty()) return "";
  const bool priced = c.usd_per_mtok_output || c.tokens_per_joule_output;
  return fmt::format("cost       {}{}\n", priced ? "at the rate the traffic is served: " : "", line);
}

// --rank-assign places requests on the attention-DP ranks (or data-parallel replicas) of an
// instance; a given deployment whose layouts have dp = 1 has none, and the flag would be ignored.
Status CheckRankAssign(const CapacityFlags& f, int max_dp) {
  if (max_dp > 1 || f.traffic.rank_assign == TrafficFlags().rank_assign) return Status::Ok();
  return Status::InvalidArgument(
      "--rank-assign places requests on an instance's attention-DP ranks; the given layout has "
      "dp=1 (drop --rank-assign, or give dp > 1)");
}

// The highest open-loop rate a given deployment (`sim`, all its instances) sustains within the
// SLOs, on the workload's lengths (a closed loop's as Poisson arrivals at unit rate); nullopt
// without SLOs. `hint_rps`: a first guess (its steady-state capacity).
StatusOr<std::optional<serve::MaxRateResult>> GivenMaxRate(
    const CapacityFlags& f, const Workload& w, serve::ServeSim* sim,
    const std::vector<serve::RequestSpec>& reqs, const std::vector<serve::Slo>& slos,
    double hint_rps) {
  if (slos.empty()) return std::optional<serve::MaxRateResult>();
  std::vector<serve::RequestSpec> unit = reqs;
  if (f.traffic.concurrency > 0 || serve::StreamRate(reqs) <= 0) {
    // Closed loop: open-loop Poisson arrivals at unit rate with the same lengths.
    serve::ServeRng rng(static_cast<uint64_t>(f.seed) + 17);
    double t = 0;
    for (auto& r : unit) r.arrival_s = (t += rng.Exponential(1.0));
  } else {
    unit = serve::ToUnitRate(reqs);
  }
  serve::MaxRateOptions mo;
  mo.rel_tol = f.rate_tol;
  mo.longer = LongerStream(f.traffic, w.isl, w.osl, static_cast<uint64_t>(f.seed));
  mo.max_requests = kMaxDefaultRequests;
  StatusOr<serve::MaxRateResult> r = serve::MaxRate(sim, unit, slos, hint_rps, mo);
  if (!r.ok()) return r.status();
  return std::optional<serve::MaxRateResult>(std::move(*r));
}

// GivenMaxRate's answer as JSON (`max_rate`).
nlohmann::ordered_json MaxRateJson(const serve::MaxRateResult& mr, double rel_tol) {
  nlohmann::ordered_json m;
  m["found"] = mr.found;
  m["unbounded"] = mr.unbounded;
  m["rate_rps"] = mr.unbounded ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(mr.rate_rps);
  m["fail_rps"] = mr.fail_rps;
  m["rel_tol"] = rel_tol;
  m["probes"] = mr.probes.size();
  m["requests"] = mr.requests;
  m["burst"] = mr.burst;
  m["burst_rate_rps"] = mr.burst_rate_rps > 0 ? nlohmann::ordered_json(mr.burst_rate_rps)
                                              : nlohmann::ordered_json(nullptr);
  m["burst_requests"] = mr.burst_requests;
  m["summary_at_rate"] = serve::SummaryJson(mr.at.summary);
  return m;
}

// ... and as text ("highest rate within the SLOs: ..." and, for a burst, why it may not hold).
std::string MaxRateText(const serve::MaxRateResult& mr, double rel_tol, size_t requests) {
  if (mr.unbounded)
    return fmt::format("highest rate within the SLOs: unbounded: {} ({} simulations)\n",
                       UnboundedWords(requests), mr.probes.size());
  if (!mr.found)
    return fmt::format("no rate meets the SLOs ({})\n",
                       mr.probes.empty() ? "" : mr.probes.back().why);
  return fmt::format(
      "highest rate within the SLOs: {:.3g} req/s (fails at {:.3g}; tolerance {}%, {} "
      "simulations{})\n{}",
      mr.rate_rps, mr.fail_rps, 100 * rel_tol, mr.probes.size(),
      mr.burst_requests > 0
          ? fmt::format(", the last ones on {} requests: on {} they met the SLOs up to {:.3g} "
                        "req/s only as a burst",
                        Thousands(static_cast<double>(mr.requests)), mr.burst_requests,
                        mr.burst_rate_rps)
          : fmt::format(" of {} requests", mr.requests),
      mr.burst ? "  " + MaxRateBurstWords(mr) + "\n" : std::string());
}

int RunDeployment(const CapacityFlags& f, const Problem& p, const std::vector<serve::Slo>& slos,
                  const std::vector<serve::RequestSpec>& reqs, const serve::ServeOptions& base) {
  StatusOr<Strategy> s = ResolveStrategy(p, f.strategy, "", f.problem.mtp);
  if (!s.ok()) return Fail(s.status());
  if (Status st = CheckRankAssign(f, s->dp); !st.ok()) return Fail(st);
  auto cost = StepCost::Make(p, *s);
  if (!cost.ok()) return Fail(cost.status());
  serve::ServeOptions opt = base;
  opt.instances = f.instances;
  auto sim = serve::ServeSim::Make(cost->get(), opt, p.workload.isl, p.workload.osl);
  if (!sim.ok()) return Fail(sim.status());
  const serve::ServeRun run = (*sim)->Run(reqs, TrafficConcurrency(f.traffic));
  const ServeSummary sum = serve::Summarise(run, slos);
  std::string why;
  const bool meets = serve::MeetsSlos(sum, slos, &why);
  // Highest rate within the SLOs (open loop, lengths of this workload).
  StatusOr<std::optional<serve::MaxRateResult>> given = GivenMaxRate(
      f, p.workload, sim->get(), reqs, slos,
      serve::SteadyStateRps(**cost, p.workload.isl, p.workload.osl) * f.instances);
  if (!given.ok()) return Fail(given.status());
  const std::optional<serve::MaxRateResult>& mr = *given;
  if (!f.svg.empty()) {
    Status st = TimelineSvg(run, fmt::format("{} x [{}] on {}: queue and KV cache", f.instances,
                                             LayoutLabel(p.model, *s), p.cluster.gpu.name),
                            f.svg);
    if (!st.ok()) return Fail(st);
  }
  // What the named engine does not launch of the given layout (simulated under its scheduler
  // all the same), as eval says it.
  const EngineInfo launch = EngineInfoOf(f.problem.engine, p, *s);
  if (f.json) {
    nlohmann::ordered_json j;
    j["model"] = p.model.name;
    j["gpu"] = p.cluster.gpu.name;
    j["engine"] = EngineName(p.workload.engine);
    j["strategy"] = ToText(*s);
    j["unlaunchable"] = launch.unlaunchable;
    j["gpus_per_instance"] = s->gpus();
    j["instances"] = f.instances;
    j["slo"] = serve::SlosText(slos);
    j["summary"] = serve::SummaryJson(sum);
    j["meets_slo"] = slos.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(meets);
    j["cost"] = sum.unstable ? nlohmann::ordered_json(nullptr)
                             : CostJson(ServedCost(p, f.instances * s->gpus(), sum));
    if (mr) j["max_rate"] = MaxRateJson(*mr, f.rate_tol);
    j["timeline"] = serve::TimelineJson(run);
    fmt::print("{}\n", DumpJson(j));
  } else {
    fmt::print("{} x [{}] on {} x {} ({}), engine {}\n", f.instances, LayoutLabel(p.model, *s),
               s->gpus(), p.cluster.gpu.name, p.model.name, EngineName(p.workload.engine));
    for (const std::string& line : NotLaunchedLines(launch)) fmt::print("launch: {}\n", line);
    // Unstated, the limit is DefaultMaxRunning's; say so where it is below the engine's usual.
    const bool engine_cap =
        opt.max_running == 0 && run.max_running != DefaultsOf(p.workload.engine).max_batch;
    fmt::print("KV pool {} tokens per rank, max running {} per rank{}\n",
               Thousands(run.kv_capacity_tokens), run.max_running,
               engine_cap ? fmt::format(" (the engine's cap without --max-running-requests: "
                                        "SGLang with MTP runs {} per server; --max-batch sets "
                                        "another)",
                                        DefaultMaxRunning(p.workload.engine, s->mtp, 1))
                          : "");
    fmt::print("{}", ServeSummaryText(sum));
    if (!slos.empty())
      fmt::print("SLO {}: {}\n", serve::SlosText(slos), meets ? "met" : "missed (" + why + ")");
    if (!sum.unstable) fmt::print("{}", ServedCostLine(ServedCost(p, f.instances * s->gpus(), sum)));
    if (mr) fmt::print("{}", MaxRateText(*mr, f.rate_tol, reqs.size()));
  }
  if (mr && !mr->found) return kExitImpossible;
  return sum.unstable || (!slos.empty() && !meets && !mr) ? kExitImpossible : kExitOk;
}

// The KV link between a gp-GPU prefill and a gd-GPU decode instance (plan::KvLinkBetween) on
// the problems `pf` builds.
StatusOr<KvLink> LinkFor(const ProblemFlags& pf, int gp, int gd) {
  return plan::KvLinkBetween(ProblemOnGpus(pf), pf.engine, gp, gd);
}

int RunDisaggDeployment(const CapacityFlags& f, const ProblemFlags& pf,
                        const std::vector<serve::Slo>& slos,
                        const std::vector<serve::RequestSpec>& reqs,
                        const serve::ServeOptions& base) {
  if (f.strategy.empty()) return Fail("--prefill-strategy needs --strategy (the decode instance)");
  if (f.prefill_instances < 1 || f.prefill_instances > 100000)
    return Fail("--prefill-instances must be in [1, 100000]");
  auto sp0 = FromText(f.prefill_strategy);
  if (!sp0.ok()) return Fail(Status::InvalidArgument("--prefill-strategy: " + sp0.status().message()));
  auto sd0 = FromText(f.strategy);
  if (!sd0.ok()) return Fail(Status::InvalidArgument("--strategy: " + sd0.status().message()));
  ProblemFlags one = pf;
  one.gpus = sp0->gpus();
  one.nodes = 0;
  auto pp = BuildProblem(one);
  if (!pp.ok()) return Fail(pp.status());
  one.gpus = sd0->gpus();
  auto dp = BuildProblem(one);
  if (!dp.ok()) return Fail(dp.status());
  StatusOr<Strategy> sp = ResolveStrategy(*pp, f.prefill_strategy, "", -1);
  if (!sp.ok()) return Fail(sp.status());
  StatusOr<Strategy> sd = ResolveStrategy(*dp, f.strategy, "", f.problem.mtp);
  if (!sd.ok()) return Fail(sd.status());
  if (Status st = CheckRankAssign(f, std::max(sp->dp, sd->dp)); !st.ok()) return Fail(st);
  // Speculation is both sides': the prefill servers of a speculating deployment run the decode
  // side's setting (and the draft's extend over every prompt, whatever the depth).
  if (sp->mtp > 0 && sd->mtp == 0)
    return Fail(Status::InvalidArgument(fmt::format(
        "--prefill-strategy mtp={}: the prefill side speculates only beside a decode side that "
        "does (give mtp in --strategy)",
        sp->mtp)));
  if (sd->mtp > 0) sp->mtp = sd->mtp;
  pp->workload.disagg_pool = dp->workload.disagg_pool = true;
  auto pcost = StepCost::Make(*pp, *sp);
  if (!pcost.ok()) return Fail(Status::Invalid("prefill: " + pcost.status().message()));
  auto dcost = StepCost::Make(*dp, *sd);
  if (!dcost.ok()) return Fail(Status::Invalid("decode: " + dcost.status().message()));
  auto link = LinkFor(pf, sp->gpus(), sd->gpus());
  if (!link.ok()) return Fail(link.status());
  serve::ServeOptions opt = base;
  opt.instances = f.instances;
  serve::DisaggServeOptions d;
  d.prefill_instances = f.prefill_instances;
  d.prefill_router = opt.router;  // one front end routes to both pools
  d.link = *link;
  d.layerwise = f.layerwise;
  auto sim = serve::ServeSim::MakeDisagg(pcost->get(), dcost->get(), opt, d, pp->workload.isl,
                                         pp->workload.osl);
  if (!sim.ok()) return Fail(sim.status());
  const serve::ServeRun run = (*sim)->Run(reqs, TrafficConcurrency(f.traffic));
  const ServeSummary sum = serve::Summarise(run, slos);
  std::string why;
  const bool meets = serve::MeetsSlos(sum, slos, &why);
  // Highest rate within the SLOs, as for an aggregated deployment; first guess: the pool with
  // the lower steady-state capacity.
  StatusOr<std::optional<serve::MaxRateResult>> given = GivenMaxRate(
      f, pp->workload, sim->get(), reqs, slos,
      std::min(serve::SteadyStateRps(**pcost, pp->workload.isl, pp->workload.osl) *
                   f.prefill_instances,
               serve::SteadyStateRps(**dcost, pp->workload.isl, pp->workload.osl) * f.instances));
  if (!given.ok()) return Fail(given.status());
  const std::optional<serve::MaxRateResult>& mr = *given;
  const int gpus = f.prefill_instances * sp->gpus() + f.instances * sd->gpus();
  const std::string label = DisaggLabel(pp->model, *sp, *sd);
  if (!f.svg.empty()) {
    Status st = TimelineSvg(run, fmt::format("{} x {} on {}: queue and KV cache", f.prefill_instances,
                                             label, pp->cluster.gpu.name),
                            f.svg);
    if (!st.ok()) return Fail(st);
  }
  // What the named engine does not launch of either pool's layout, as eval says it.
  std::vector<std::string> unlaunchable;
  for (const auto& [side, q, st] :
       {std::tuple{"prefill", &*pp, &*sp}, std::tuple{"decode", &*dp, &*sd}}) {
    const engine::Role role =
        std::string_view(side) == "prefill" ? engine::Role::kPrefillPool : engine::Role::kDecodePool;
    for (const std::string& line : NotLaunchedLines(EngineInfoOf(f.problem.engine, *q, *st, role)))
      unlaunchable.push_back(fmt::format("{}: {}", side, line));
  }
  if (f.json) {
    nlohmann::ordered_json j;
    j["model"] = pp->model.name;
    j["gpu"] = pp->cluster.gpu.name;
    j["engine"] = EngineName(pp->workload.engine);
    j["serving"] = "disagg";
    j["strategy"] = ToText(*sd);
    j["unlaunchable"] = unlaunchable;
    j["gpus_per_instance"] = sd->gpus();
    j["instances"] = f.instances;
    j["prefill_strategy"] = ToText(*sp);
    j["prefill_gpus_per_instance"] = sp->gpus();
    j["prefill_instances"] = f.prefill_instances;
    j["gpus"] = gpus;
    j["kv_link"] = {{"nvlink", link->nvlink}, {"bw_bytes_per_s", link->bw},
                    {"latency_s", link->latency}, {"layerwise", f.layerwise}};
    j["slo"] = serve::SlosText(slos);
    j["summary"] = serve::SummaryJson(sum);
    j["meets_slo"] = slos.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(meets);
    j["cost"] = sum.unstable ? nlohmann::ordered_json(nullptr) : CostJson(ServedCost(*pp, gpus, sum));
    if (mr) j["max_rate"] = MaxRateJson(*mr, f.rate_tol);
    j["timeline"] = serve::TimelineJson(run);
    fmt::print("{}\n", DumpJson(j));
  } else {
    fmt::print("disaggregated: {} x [{}] prefill + {} x [{}] decode = {} x {} ({}), engine {}\n",
               f.prefill_instances, LayoutLabel(pp->model, *sp), f.instances,
               LayoutLabel(pp->model, *sd), gpus, pp->cluster.gpu.name, pp->model.name,
               EngineName(pp->workload.engine));
    for (const std::string& v : unlaunchable) fmt::print("launch: {}\n", v);
    fmt::print(
        "KV link {} {:.0f} GB/s + {:.1f} us{}; decode KV pool {} tokens per rank, max "
        "running {} per rank\n",
        link->nvlink ? ScaleUpName(pp->cluster.gpu) : "scale-out", link->bw / 1e9,
        link->latency * 1e6, f.layerwise ? " (layerwise)" : "", Thousands(run.kv_capacity_tokens),
        run.max_running);
    fmt::print("{}", ServeSummaryText(sum));
    if (!slos.empty())
      fmt::print("SLO {}: {}\n", serve::SlosText(slos), meets ? "met" : "missed (" + why + ")");
    if (!sum.unstable) fmt::print("{}", ServedCostLine(ServedCost(*pp, gpus, sum)));
    if (mr) fmt::print("{}", MaxRateText(*mr, f.rate_tol, reqs.size()));
  }
  if (mr && !mr->found) return kExitImpossible;
  return sum.unstable || (!slos.empty() && !meets && !mr) ? kExitImpossible : kExitOk;
}

// What a sized disaggregated pair's figures rest on (as plan's disaggregated error band): the
// prefill pool's GPU, the "disagg" regime, the deeper pipeline, the decode side's speculation.
plan::Uncertainty PairUncertainty(const serve::DisaggSizeResult& c) {
  Strategy s = c.layout.prefill;
  s.mtp = c.layout.decode.mtp;
  return plan::UncertaintyOf(c.layout.prefill_problem, s, /*disaggregated=*/true,
                             std::max(c.layout.prefill.pp, c.layout.decode.pp));
}

nlohmann::ordered_json DisaggCapacityJson(const serve::DisaggCapacityResult& r) {
  nlohmann::ordered_json j;
  j["found"] = r.found;
  j["best"] = r.best;
  j["error_band"] = r.found ? ErrorBandJson(PairUncertainty(r.candidates[r.best]))
                            : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json cands = nlohmann::ordered_json::array();
  for (const serve::DisaggSizeResult& c : r.candidates) {
    nlohmann::ordered_json x;
    x["prefill_gpus_per_instance"] = c.layout.prefill.gpus();
    x["prefill_strategy"] = ToText(c.layout.prefill);
    x["decode_gpus_per_instance"] = c.layout.decode.gpus();
    x["decode_strategy"] = ToText(c.layout.decode);
    x["kv_link_bw_bytes_per_s"] = c.layout.link.bw;
    x["meets"] = c.meets;
    x["note"] = c.note;
    x["prefill_instances"] = c.prefill_instances;
    x["decode_instances"] = c.decode_instances;
    x["gpus"] = c.gpus;
    x["simulations"] = c.simulations;
    if (c.meets) x["summary"] = serve::SummaryJson(c.at);
    if (c.has_fewer_prefill) {
      x["fewer_prefill_summary"] = serve::SummaryJson(c.fewer_prefill);
      x["fewer_prefill_misses"] = c.fewer_prefill_why;
    }
    if (c.has_fewer_decode) {
      x["fewer_decode_summary"] = serve::SummaryJson(c.fewer_decode);
      x["fewer_decode_misses"] = c.fewer_decode_why;
    }
    cands.push_back(x);
  }
  j["candidates"] = cands;
  return j;
}

void PrintDisaggCapacity(const serve::DisaggCapacityResult& r) {
  fmt::print("disaggregated: {:>7} {:>7} {:>8} {:>8} {:>10}  {}\n", "P GPUs", "D GPUs", "P inst.",
             "D inst.", "total GPUs", "layouts");
  for (const serve::DisaggSizeResult& c : r.candidates) {
    if (c.meets)
      fmt::print("               {:>7} {:>7} {:>8} {:>8} {:>10}  {}\n", c.layout.prefill.gpus(),
                 c.layout.decode.gpus(), c.prefill_instances, c.decode_instances, c.gpus,
                 c.layout.label);
    else
      fmt::print("               {:>7} {:>7} {:>8} {:>8} {:>10}  {} ({})\n", c.layout.prefill.gpus(),
                 c.layout.decode.gpus(), "-", "-", "-", c.layout.label, c.note);
  }
  if (!r.found) return;
  const serve::DisaggSizeResult& b = r.candidates[r.best];
  fmt::print("\nfewest GPUs disaggregated: {} = {} x {} prefill + {} x {} decode GPUs, {}\n", b.gpus,
             b.prefill_instances, b.layout.prefill.gpus(), b.decode_instances,
             b.layout.decode.gpus(), b.layout.label);
  for (const std::string& line : plan::UncertaintyLines(PairUncertainty(b)))
    fmt::print("{}\n", line);
  fmt::print("{}", ServeSummaryText(b.at));
  if (b.has_fewer_prefill)
    fmt::print("one prefill instance fewer misses: {}\n", b.fewer_prefill_why);
  if (b.has_fewer_decode)
    fmt::print("one decode instance fewer misses: {}\n", b.fewer_decode_why);
}

StatusOr<std::vector<int>> Sizes(const CapacityFlags& f) {
  std::vector<int> out;
  if (f.sizes.empty()) return plan::DefaultInstanceSizes(f.max_gpus);
  size_t pos = 0;
  while (pos <= f.sizes.size()) {
    const size_t c = std::min(f.sizes.find(',', pos), f.sizes.size());
    const std::string item = f.sizes.substr(pos, c - pos);
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > f.max_gpus)
      return Status::InvalidArgument(
          fmt::format("--sizes: '{}' is not a GPU count in [1, --max-gpus {}]", item, f.max_gpus));
    out.push_back(static_cast<int>(v));
    pos = c + 1;
    if (c >= f.sizes.size()) break;
  }
  return out;
}

// --emit DIR: the files that start the answer (launch/emit.h EmitSized*), on its engine, at the
// running-request limit it was sized with; "" without --emit or without an answer.
StatusOr<std::string> EmitAnswer(const CapacityFlags& f, const FewestOutcome& o,
                                 const serve::ServeOptions& base,
                                 const std::vector<serve::Slo>& slos,
                                 const std::vector<serve::RequestSpec>& reqs) {
  if (f.emit.empty() || !o.any_found) return std::string();
  const std::string engine = o.engine == "ideal" ? "" : o.engine;
  const int max_running = SizedServeOptions(base, o.p0.workload.engine, engine).max_running;
  // DEPLOY.md states what the deployment was sized for beside each instance's steady state.
  auto sized_for = [&](const serve::ServeSummary& at) {
    launch::EmitOptions opt;
    opt.plan_lines = {
        fmt::format("sized by l2s capacity for {} requests {}, SLO {}: p99 TTFT {:.0f} ms, p99 "
                    "TPOT {:.1f} ms, {:.2f} requests/s served",
                    reqs.size(), StreamWords(f.traffic, reqs), serve::SlosText(slos),
                    at.ttft.p99 * 1e3, at.tpot.p99 * 1e3, at.request_rate),
        "the figures above are one instance's steady state at the full batch the launch admits, "
        "a load above the sized traffic"};
    return opt;
  };
  if (o.dis_best && o.dres && o.dres->found) {
    const serve::DisaggSizeResult& b = o.dres->candidates[o.dres->best];
    return launch::EmitSizedDisaggregated(f.emit, b.layout.prefill_problem, b.layout.prefill,
                                          b.prefill_instances, b.layout.decode_problem,
                                          b.layout.decode, b.decode_instances, max_running,
                                          b.at.prefill_max_running, engine, sized_for(b.at));
  }
  const serve::SizeResult& b = o.res.candidates[o.res.best];
  return launch::EmitSizedAggregated(f.emit, b.layout.problem, b.layout.strategy, b.instances,
                                     max_running, engine, sized_for(b.at));
}

// --svg of a sizing: the timeline of its answer (the fewest GPUs overall), the whole stream
// simulated on the answer's deployment at the nominal shape the sizing used (MeanLengths).
Status AnswerSvg(const CapacityFlags& f, const FewestOutcome& o, const serve::ServeOptions& base,
                 const std::vector<serve::RequestSpec>& reqs) {
  int64_t isl = 0, osl = 0;
  serve::MeanLengths(reqs, &isl, &osl);
  if (o.dis_best) {
    const serve::DisaggSizeResult& d = o.dres->candidates[o.dres->best];
    const serve::DisaggLayoutOption& lay = d.layout;
    auto pc = StepCost::Make(lay.prefill_problem, lay.prefill);
    auto dc = StepCost::Make(lay.decode_problem, lay.decode);
    if (!pc.ok() || !dc.ok()) return !pc.ok() ? pc.status() : dc.status();
    auto sim = serve::MakeSizedDisagg(
        lay, pc->get(), dc->get(),
        SizedServeOptions(base, lay.decode_problem.workload.engine, o.engine),
        d.prefill_instances, d.decode_instances, isl, osl);
    if (!sim.ok()) return sim.status();
    return TimelineSvg((*sim)->Run(reqs, TrafficConcurrency(f.traffic)),
                       fmt::format("{}: queue and KV cache", o.layout), f.svg);
  }
  if (!o.res.found) return Status::Ok();
  const serve::SizeResult& b = o.res.candidates[o.res.best];
  auto cost = StepCost::Make(b.layout.problem, b.layout.strategy);
  if (!cost.ok()) return cost.status();
  serve::ServeOptions so = SizedServeOptions(base, b.layout.problem.workload.engine, o.engine);
  so.instances = b.instances;
  auto sim = serve::ServeSim::Make(cost->get(), so, isl, osl);
  if (!sim.ok()) return sim.status();
  return TimelineSvg((*sim)->Run(reqs, TrafficConcurrency(f.traffic)),
                     fmt::format("{} x [{}]: queue and KV cache", b.instances, b.layout.label),
                     f.svg);
}

// The summary of a sizing's answer at its size (null when none was found).
const serve::ServeSummary* AnswerSummary(const FewestOutcome& o) {
  if (!o.any_found) return nullptr;
  if (o.dis_best && o.dres && o.dres->found) return &o.dres->candidates[o.dres->best].at;
  if (o.res.found) return &o.res.candidates[o.res.best].at;
  return nullptr;
}

int PrintFewest(const CapacityFlags& f, const FewestOutcome& o, const std::vector<serve::Slo>& slos,
                const std::vector<serve::RequestSpec>& reqs, const serve::ServeOptions& base,
                const std::vector<EngineRow>& engines) {
  const StatusOr<std::string> emitted = EmitAnswer(f, o, base, slos, reqs);
  if (!emitted.ok()) return Fail(emitted.status());
  const serve::CapacityResult& res = o.res;
  const std::optional<serve::DisaggCapacityResult>& dres = o.dres;
  const bool agg = o.agg, any_found = o.any_found, dis_best = o.dis_best;
  const std::vector<std::string>& skipped = o.skipped;
  const Problem& p0 = o.p0;
  if (f.json) {
    nlohmann::ordered_json j;
    j["model"] = p0.model.name;
    j["gpu"] = p0.cluster.gpu.name;
    j["engine"] = o.engine;
    if (!engines.empty()) {
      // No --engine: every serving engine with a build for the GPUs was sized; `engine` is the
      // one needing the fewest GPUs (ties: the higher rate, then table order), and the rest of
      // the object is its.
      nlohmann::ordered_json rows = nlohmann::ordered_json::array();
      for (const EngineRow& e : engines) {
        nlohmann::ordered_json x;
        x["engine"] = e.engine;
        x["found"] = e.found;
        x["gpus"] = e.found ? nlohmann::ordered_json(e.gpus) : nlohmann::ordered_json(nullptr);
        x[e.found ? "layout" : "reason"] = e.layout;
        rows.push_back(x);
      }
      j["engines"] = rows;
      j["engine_chosen_by"] = "fewest_gpus";
    }
    j["slo"] = serve::SlosText(slos);
    j["requests"] = reqs.size();
    j["rate_rps"] = serve::StreamRate(reqs);  // 0 for a closed loop
    j["concurrency"] = TrafficConcurrency(f.traffic);  // 0 for an open loop
    j["found"] = any_found;  // aggregated only: the aggregated answer
    j["serving"] = f.serving;
    nlohmann::ordered_json cands = nlohmann::ordered_json::array();
    for (const serve::SizeResult& c : res.candidates) {
      nlohmann::ordered_json x;
      x["gpus_per_instance"] = c.layout.strategy.gpus();
      x["strategy"] = ToText(c.layout.strategy);
      x["meets"] = c.meets;
      x["note"] = c.note;
      x["instances"] = c.instances;
      x["gpus"] = c.gpus;
      // Unbounded (the whole stream at once meets the SLOs on one instance): null, and
      // max_rate_unbounded true.
      x["instance_max_rps"] = std::isinf(c.instance_max_rps)
                                  ? nlohmann::ordered_json(nullptr)
                                  : nlohmann::ordered_json(c.instance_max_rps);
      x["max_rate_unbounded"] = std::isinf(c.instance_max_rps);
      x["max_rate_burst"] = c.instance_max_rate_burst;
      // Closed loop: the most clients one instance serves within the SLOs (instance_max_rps: the
      // rate they are served at); null for an open loop.
      x["instance_max_clients"] = c.instance_max_clients > 0
                                      ? nlohmann::ordered_json(c.instance_max_clients)
                                      : nlohmann::ordered_json(nullptr);
      if (c.meets) x["summary"] = serve::SummaryJson(c.at);
      if (c.has_smaller) {
        x["smaller_summary"] = serve::SummaryJson(c.smaller);
        x["smaller_misses"] = c.smaller_why;
      }
      cands.push_back(x);
    }
    j["best"] = res.best;
    // The deployment one size below the answer and the SLO it misses (serve::OneSizeSmaller).
    if (const std::optional<serve::SmallerDeployment> sm = serve::OneSizeSmaller(res)) {
      const serve::SizeResult& c = res.candidates[sm->candidate];
      j["smaller"] = {{"gpus", sm->gpus},
                      {"instances", sm->instances},
                      {"strategy", ToText(c.layout.strategy)},
                      {"misses", sm->why},
                      {"summary", serve::SummaryJson(sm->summary)}};
    } else {
      j["smaller"] = nullptr;
    }
    // What the aggregated answer's figures rest on (as plan's best.error_band).
    if (res.found) {
      const serve::SizeResult& b = res.candidates[res.best];
      j["error_band"] = ErrorBandJson(plan::UncertaintyOf(
          b.layout.problem, b.layout.strategy, /*disaggregated=*/false, b.layout.strategy.pp));
    }
    j["candidates"] = cands;
    j["skipped"] = skipped;
    if (dres) {
      j["disagg"] = DisaggCapacityJson(*dres);
      j["best_serving"] = !any_found ? nlohmann::ordered_json(nullptr)
                                     : nlohmann::ordered_json(dis_best ? "disagg" : "agg");
    }
    j["emitted"] =
        emitted->empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(*emitted);
    j["cost"] = any_found ? CostJson(ServedCost(p0, o.gpus, *AnswerSummary(o)))
                          : nlohmann::ordered_json(nullptr);
    fmt::print("{}\n", DumpJson(j));
    return any_found ? kExitOk : kExitImpossible;
  }
  if (!engines.empty()) {
    fmt::print("{} on {}: the fewest GPUs per engine (each sized on the layouts it launches)\n",
               p0.model.name, p0.cluster.gpu.name);
    fmt::print("  {:<8} {:>6}  {}\n", "engine", "GPUs", "deployment");
    for (const EngineRow& e : engines)
      fmt::print("  {:<8} {:>6}  {}\n", e.engine, e.found ? std::to_string(e.gpus) : "-",
                 e.layout);
    fmt::print("below: {}, the fewest GPUs (ties: the highest rate they sustain; --engine E "
               "sizes another)\n",
               o.engine);
    if (base.sglang_recv_interval > 1)
      fmt::print("--scheduler-recv-interval {} applies to SGLang's sizes only (an SGLang "
                 "setting)\n",
                 base.sglang_recv_interval);
    fmt::print("\n");
  }
  fmt::print("{} on {}, engine {}: {} requests {}, SLO {}\n", p0.model.name, p0.cluster.gpu.name,
             o.engine, reqs.size(), StreamWords(f.traffic, reqs), serve::SlosText(slos));
  // Per instance: the highest rate it sustains (open loop), or the most clients it serves
  // (closed loop), within the SLOs.
  const bool closed = TrafficConcurrency(f.traffic) > 0;
  const int w = closed ? 13 : 12;  // the column's width: its header's
  if (agg)
  fmt::print("{:>9} {:>{}} {:>9} {:>10}  {}\n", "GPUs/inst", closed ? "inst. clients" : "inst. req/s",
             w, "instances", "total GPUs", "layout of one instance");
  bool unbounded = false, burst = false;
  for (const serve::SizeResult& c : res.candidates) {
    unbounded = unbounded || (c.meets && std::isinf(c.instance_max_rps));
    burst = burst || (c.meets && c.instance_max_rate_burst);
    if (c.meets)
      fmt::print("{:>9} {:>{}} {:>9} {:>10}  {}\n", c.layout.strategy.gpus(),
                 closed ? std::to_string(c.instance_max_clients)
                 : std::isinf(c.instance_max_rps)
                     ? std::string("unbounded")
                     : fmt::format("{:.3g}{}", c.instance_max_rps,
                                   c.instance_max_rate_burst ? "*" : ""),
                 w, c.instances, c.gpus, c.layout.label);
    else
      fmt::print("{:>9} {:>{}} {:>9} {:>10}  {} ({})\n", c.layout.strategy.gpus(), "-", w, "-",
                 "-", c.layout.label, c.note);
  }
  if (unbounded)
    fmt::print("  unbounded: {}\n", UnboundedWords(reqs.size()));
  if (burst)
    fmt::print("  *: one instance met the SLOs at that rate only with the {} requests as a burst "
               "(they arrive faster than it fills): an upper bound{}\n",
               reqs.size(),
               LongerStream(f.traffic, 1, 1, 0)
                   ? " (a longer stream is drawn only for the layouts that could be the answer, "
                     "on at most the fewest GPUs found)"
                   : "; more requests (--requests N) tell");
  for (const std::string& x : skipped) fmt::print("  skipped {}\n", x);
  // A closed loop's first wave (docs/CAPACITY.md "Sizing for N concurrent clients").
  if (const std::string note = FirstWaveNote(f.traffic, reqs.size(), slos); !note.empty())
    fmt::print("  {}", note);
  if (dres) {
    fmt::print("\n");
    PrintDisaggCapacity(*dres);
  }
  if (!any_found) {
    fmt::print("no size within --max-gpus {} meets the SLOs\n", f.max_gpus);
    return kExitImpossible;
  }
  // Both servings sized: the answer last, after each serving's own.
  auto finish = [&] {
    if (dres && agg)
      fmt::print("\nfewest GPUs overall: {} = {} ({} serving)\n", o.gpus, o.layout,
                 dis_best ? "disaggregated" : "aggregated");
    if (const ServeSummary* at = AnswerSummary(o))
      fmt::print("{}", ServedCostLine(ServedCost(p0, o.gpus, *at)));
    if (!f.svg.empty())
      if (Status st = AnswerSvg(f, o, base, reqs); !st.ok()) return Fail(st);
    if (!emitted->empty()) fmt::print("\n{}\n", *emitted);
    return kExitOk;
  };
  if (!res.found) return finish();
  const serve::SizeResult& b = res.candidates[res.best];
  fmt::print("\nfewest GPUs{}: {} = {} x [{}]\n", dres ? " aggregated" : "", b.gpus,
             b.instances, b.layout.label);
  for (const std::string& line : plan::UncertaintyLines(plan::UncertaintyOf(
           b.layout.problem, b.layout.strategy, /*disaggregated=*/false, b.layout.strategy.pp)))
    fmt::print("{}\n", line);
  fmt::print("{}", ServeSummaryText(b.at));
  // The percentiles one size below the answer (serve::OneSizeSmaller): one instance fewer of
  // its layout, or the largest smaller deployment of another layout.
  if (const std::optional<serve::SmallerDeployment> sm = serve::OneSizeSmaller(res)) {
    const serve::SizeResult& c = res.candidates[sm->candidate];
    if (sm->candidate == res.best)
      fmt::print("one instance fewer ({} GPUs) misses: {}\n", sm->gpus, sm->why);
    else
      fmt::print("one size smaller ({} GPU{} = {} x [{}]) misses: {}\n", sm->gpus,
                 sm->gpus == 1 ? "" : "s", sm->instances, c.layout.label, sm->why);
    fmt::print("{}", ServeSummaryText(sm->summary));
  }
  return finish();
}

int RunFewest(const CapacityFlags& f, const ProblemFlags& pf, const std::vector<serve::Slo>& slos,
              const std::vector<serve::RequestSpec>& reqs, const serve::ServeOptions& base) {
  if (slos.empty())
    return Fail(
        "--slo is required to size a deployment, e.g. --slo p99_ttft_ms=2000,p99_tpot_ms=50 "
        "(or give one with --strategy S to simulate it)");
  if (TrafficConcurrency(f.traffic) == 0 && serve::StreamRate(reqs) <= 0)
    return Fail("sizing needs a traffic: --rate R, --concurrency N, or a --trace whose arrivals are "
                "spread in time");
  if (!f.emit.empty())  // before the sizing, as plan checks it before its search
    if (Status st = launch::CheckEmitDir(f.emit); !st.ok()) return Fail(st);
  auto sizes = Sizes(f);
  if (!sizes.ok()) return Fail(sizes.status());
  plan::CapacityRequest req;
  req.problem_on_gpus = ProblemOnGpus(pf);
  req.engine = pf.engine;
  req.mtp = pf.mtp;
  req.serving = f.serving == "disagg" ? plan::Serving::kDisagg
                : f.serving == "auto" ? plan::Serving::kAuto
                                      : plan::Serving::kAgg;
  req.layerwise = f.layerwise;
  req.sizes_gpus = *sizes;
  req.max_gpus = f.max_gpus;
  req.search = f.search;
  req.budget_calls = f.budget;
  req.seed = static_cast<uint64_t>(f.seed);
  req.layouts_per_size = f.layouts_per_size;
  req.rate_rel_tol = f.rate_tol;
  req.longer_stream = LongerStream(f.traffic, pf.isl, pf.osl, static_cast<uint64_t>(f.seed));
  req.jobs = f.jobs > 0 ? f.jobs : HardwareJobs();
  req.slos = slos;
  req.serve = base;
  req.concurrency = TrafficConcurrency(f.traffic);
  // With --engine that engine is sized; without, every serving engine with a build for the GPUs,
  // each on what it launches, and the answer is the engine needing the fewest GPUs.
  auto size = [&](const std::vector<serve::RequestSpec>& stream) -> StatusOr<plan::EnginesOutcome> {
    req.requests = stream;
    if (pf.engine.empty()) return plan::SizeFewestAllEngines(req);
    StatusOr<FewestOutcome> o = plan::SizeFewest(req);
    if (!o.ok()) return o.status();
    plan::EnginesOutcome one;
    one.best = std::move(*o);
    return one;
  };
  StatusOr<plan::EnginesOutcome> all = size(reqs);
  if (!all.ok()) return Fail(all.status());
  // The default stream (--rate without --requests) is a sizing's own choice: where the answer's
  // run was a burst, it is drawn again long enough for a steady state and the sizing repeated,
  // up to twice (SteadyStream).
  std::vector<serve::RequestSpec> stream = reqs;
  if (Status st = RedrawWhileABurst(
          f.traffic, pf.isl, pf.osl, static_cast<uint64_t>(f.seed), "capacity", &stream,
          [&] { return AnswerSummary(all->best); },
          [&] {
            all = size(stream);
            return all.status();
          });
      !st.ok())
    return Fail(st);
  return PrintFewest(f, all->best, slos, stream, base, pf.engine.empty() ? all->rows
                                                                        : std::vector<EngineRow>{});
}

// The flags of the other question, which it would ignore: a given deployment (--strategy,
// --prefill-strategy) is simulated as it is; sizing (neither) chooses the instances and layouts.
Status CheckQuestionFlags(const CapacityFlags& f, const CLI::App& cmd) {
  const bool given = !f.strategy.empty() || !f.prefill_strategy.empty();
  if (given) {
    for (const char* flag :
         {"--sizes", "--max-gpus", "--search", "--budget", "--layouts-per-size", "--serving",
          "--jobs"})
      if (cmd.count(flag) > 0)
        return Status::InvalidArgument(fmt::format(
            "{} sizes a deployment; with {} the deployment is given (drop {}, or drop {} to size "
            "one)",
            flag, f.prefill_strategy.empty() ? "--strategy" : "--prefill-strategy", flag,
            f.prefill_strategy.empty() ? "--strategy" : "the strategies"));
    // The highest-rate search runs only against SLOs.
    if (cmd.count("--rate-tol") > 0 && f.slo.empty())
      return Status::InvalidArgument(
          "--rate-tol is the tolerance of the highest-rate search, which runs against --slo: add "
          "--slo, or drop --rate-tol");
    // An aggregated deployment has no prefill pool and sends no KV cache.
    if (f.prefill_strategy.empty())
      for (const char* flag : {"--prefill-instances", "--layerwise"})
        if (cmd.count(flag) > 0)
          return Status::InvalidArgument(fmt::format(
              "{} is for a disaggregated deployment: add --prefill-strategy (one prefill "
              "instance's layout; --strategy is then the decode one), or drop it",
              std::string_view(flag) == "--layerwise" ? "--layerwise (--kv-layerwise)" : flag));
  } else {
    if (cmd.count("--layerwise") > 0 && f.serving == "agg")
      return Status::InvalidArgument(
          "--layerwise (--kv-layerwise) is how disaggregated pools send the KV cache: --serving "
          "agg sizes none (drop it, or size with --serving auto or disagg)");
    for (const char* flag : {"--instances", "--prefill-instances"})
      if (cmd.count(flag) > 0)
        return Status::InvalidArgument(fmt::format(
            "{} counts the instances of a given layout (--strategy / --prefill-strategy); sizing "
            "chooses them",
            flag));
  }
  return Status::Ok();
}

int Run(const CapacityFlags& f, const CLI::App& cmd) {
  if (Status st = CheckQuestionFlags(f, cmd); !st.ok()) return Fail(st);
  ProblemFlags pf = f.problem;
  pf.mode = "serve";
  if (pf.isl == 0) pf.isl = 1024;
  if (pf.osl == 0) pf.osl = 1024;
  if (f.instances < 1 || f.instances > 100000) return Fail("--instances must be in [1, 100000]");
  if (!(f.rate_tol > 0 && f.rate_tol < 0.5)) return Fail("--rate-tol must be in (0, 0.5)");
  if (f.max_gpus < 1 || f.max_gpus > kMaxGpusFlag) return Fail("--max-gpus must be >= 1");
  std::vector<serve::Slo> slos;
  if (!f.slo.empty()) {
    auto s = serve::ParseSlos(f.slo);
    if (!s.ok()) return Fail(s.status());
    slos = *s;
  }
  if (!f.traffic.given())
    return Fail(Status::InvalidArgument(
        "capacity simulates a traffic: give --rate R (open loop), --concurrency N (closed loop) "
        "or --trace FILE (with --strategy and --slo it also finds the highest rate the deployment "
        "sustains)"));
  TrafficFlags traffic = f.traffic;
  traffic.engine = f.problem.engine;  // --router default: the engine's front end
  auto base = TrafficServeOptions(traffic, f.problem.max_batch);
  if (!base.ok()) return Fail(base.status());
  auto reqs = TrafficRequests(f.traffic, pf.isl, pf.osl, static_cast<uint64_t>(f.seed));
  if (!reqs.ok()) return Fail(reqs.status());
  if (f.serving != "agg" && f.serving != "disagg" && f.serving != "auto")
    return Fail(fmt::format("--serving must be agg, disagg or auto, got \"{}\"", f.serving));
  if (!f.emit.empty() && (!f.strategy.empty() || !f.prefill_strategy.empty()))
    return Fail(
        "--emit writes the files of a sizing answer; for a given layout: l2s plan "
        "--instance-gpus N ... --emit DIR");
  if (!f.problem.model_id.empty() && f.emit.empty())
    return Fail("--model-id names the checkpoint the --emit files load: add --emit DIR");
  if (!f.prefill_strategy.empty()) {
    if (pf.gpu.empty() && pf.cluster.empty()) pf.gpu = kDefaultGpu;
    return RunDisaggDeployment(f, pf, slos, *reqs, *base);
  }
  if (!f.strategy.empty()) {
    if (pf.gpus == 0) {
      auto s0 = FromText(f.strategy);
      if (!s0.ok()) return Fail(s0.status());
      pf.gpus = s0->gpus();
    }
    auto p = BuildProblem(pf);
    if (!p.ok()) return Fail(p.status());
    return RunDeployment(f, *p, slos, *reqs, *base);
  }
  if (pf.gpu.empty() && pf.cluster.empty()) pf.gpu = kDefaultGpu;
  return RunFewest(f, pf, slos, *reqs, *base);
}

}  // namespace

Runner RegisterCapacity(CLI::App& app) {
  auto f = std::make_shared<CapacityFlags>();
  CLI::App* cmd = app.add_subcommand(
      "capacity", "Request-level serving simulation: percentiles, max rate, fewest GPUs for a load");
  ProblemFlags& p = f->problem;
  cmd->add_option("--model", p.model, "model preset name or HF config.json")->required();
  cmd->add_option("--gpu", p.gpu, "GPU type (default h100)");
  cmd->add_option("--gpus", p.gpus, "GPUs of one instance (default: the strategy's)")
      ->check(CountRange(kMaxGpusFlag));
  cmd->add_option("--gpus-per-node", p.gpus_per_node,
                  "GPUs per NVLink domain (default: the GPU's, 8 on HGX nodes, 72 on GB200/GB300)")
      ->check(CountRange(kMaxGpusPerNode));
  cmd->add_option("--isl", p.isl, "nominal prompt tokens (default 1024)")
      ->check(CountRange(kMaxTokens));
  cmd->add_option("--osl", p.osl, "nominal output tokens (default 1024)")
      ->check(CountRange(kMaxTokens));
  cmd->add_option("--dtype", p.dtype, "weight dtype bf16|fp8|fp4");
  cmd->add_option("--kv-dtype", p.kv_dtype, "KV-cache dtype bf16|fp8");
  cmd->add_option("--max-batch", p.max_batch, "max running requests per rank (default: engine's)")
      ->check(CountRange(kMaxBatchFlag));
  cmd->add_option("--price-per-gpu-hour", p.price_per_gpu_hour,
                  "your price in $ per GPU-hour: the answer's $ per hour and per million tokens "
                  "at the rate it serves (l2s has no built-in prices); with --gpu a,b,... one "
                  "price for all or p1,p2,... one per GPU type")
      ->check(FiniteRange(0.0, 1e6));
  AddEngineFlags(cmd, &p);
  cmd->add_option("--strategy", f->strategy, "one instance's layout, e.g. \"tp=8\" (else: size it)");
  cmd->add_option("--instances", f->instances, "instances of --strategy behind the router (1)");
  cmd->add_option("--prefill-strategy", f->prefill_strategy,
                  "disaggregated: one prefill instance's layout (--strategy: the decode one)");
  cmd->add_option("--prefill-instances", f->prefill_instances,
                  "disaggregated: prefill instances (1; --instances: decode instances)");
  cmd->add_option("--serving", f->serving,
                  "sizing: auto (aggregated and disaggregated, the fewest GPUs answers; "
                  "default), agg (one engine per instance) or disagg (prefill + decode pools)");
  cmd->add_flag("--layerwise,--kv-layerwise", f->layerwise,
                "disaggregated: KV sent layer by layer (plan's --kv-layerwise)");
  AddTrafficFlags(cmd, &f->traffic);
  cmd->add_option("--seed", f->seed, "random seed (default 1)")
      ->check(CLI::Range(int64_t{0}, kMaxSeed));
  cmd->add_option("--slo", f->slo, "percentile SLOs, e.g. p99_ttft_ms=2000,p99_tpot_ms=50");
  cmd->add_option("--sizes", f->sizes, "instance sizes to try (default 1,2,4,...,64)");
  cmd->add_option("--max-gpus", f->max_gpus, "largest total GPU count considered (4096)")
      ->check(CountRange(kMaxGpusFlag));
  cmd->add_option("--search", f->search, "searcher choosing each size's layout (default local)");
  cmd->add_option("--budget", f->budget, "simulator calls per layout search (default 1000)")
      ->check(CountRange(kMaxBudget));
  cmd->add_option("--layouts-per-size", f->layouts_per_size,
                  "layouts sized per instance size: the searcher's best and the runners-up of "
                  "the other degree combinations by steady state (default 3)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--rate-tol", f->rate_tol, "relative tolerance of the rate bisection (0.02)");
  cmd->add_option("--jobs", f->jobs,
                  "sizing: the layouts' one-instance max rates found at once, on threads (default: "
                  "every core); the answer is the same for every N")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--json", f->json, "print one JSON object");
  cmd->add_option("--svg", f->svg, "write the queue / KV-occupancy timeline as SVG");
  cmd->add_option("--emit", f->emit,
                  "sizing: write the answer's launch files to this directory (a script per node, "
                  "DEPLOY.md, router; as plan --emit), on its engine at the limits it was sized "
                  "with");
  cmd->add_option("--model-id", f->problem.model_id,
                  "--emit: the model the files load (a HuggingFace repo id or checkpoint folder; "
                  "default: from the preset or the config)");
  return [f, cmd] { return Run(*f, *cmd); };
}

}  // namespace l2s::cli
