#include "cli/plan_traffic.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "cli/common.h"
#include "cli/disagg_plan.h"
#include "cli/output.h"
#include "cli/plan_output.h"
#include "cli/plan_problem.h"
#include "cli/report.h"
#include "engine/engine.h"
#include "launch/dynamo.h"
#include "launch/emit.h"
#include "plan/capacity.h"
#include "plan/cost.h"
#include "serve/serve_sim.h"
#include "serve/step_cost.h"

namespace l2s::cli {

using json = nlohmann::ordered_json;

// Candidates simulated at most (best steady state first).
constexpr int kMaxSimulations = 64;

namespace {

// `steady` (plan's steady-state keys, "ttft_ms=2000,tpot_ms=50") with its `key` ("tpot_ms") at
// most `limit_ms`: lowered, or added when absent. A value that is not a number is kept for the
// SLO parser to name.
std::string WithLimit(const std::string& steady, const std::string& key, double limit_ms) {
  std::string limit = fmt::format("{:.6f}", limit_ms);
  while (limit.back() == '0') limit.pop_back();
  if (limit.back() == '.') limit.pop_back();
  const std::string prefix = key + "=";
  std::string out;
  bool had = false;
  size_t pos = 0;
  while (pos <= steady.size() && !steady.empty()) {
    const size_t c = std::min(steady.find(',', pos), steady.size());
    std::string item = steady.substr(pos, c - pos);
    if (item.rfind(prefix, 0) == 0) {
      had = true;
      const std::string v = item.substr(prefix.size());
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (!v.empty() && end == v.c_str() + v.size() && x > limit_ms) item = prefix + limit;
    }
    out += (pos == 0 ? "" : ",") + item;
    if (c >= steady.size()) break;
    pos = c + 1;
  }
  if (!had) out += (out.empty() ? "" : ",") + prefix + limit;
  return out;
}

}  // namespace

StatusOr<TrafficPlan> PrepareTrafficPlan(ProblemFlags* f, const TrafficFlags& traffic,
                                         uint64_t seed, bool pareto) {
  TrafficPlan t;
  std::string steady, pct;
  SplitSloKeys(f->slo, &steady, &pct);
  if (pct.empty() && !traffic.given()) {
    // A traffic's shape without a traffic: said, not ignored (a value-taking flag also swallows
    // the next one: `--router --json`).
    if (const std::string flag = traffic.FirstDetailFlag(); !flag.empty())
      return Status::InvalidArgument(fmt::format(
          "{} shapes a simulated traffic: plan one with --rate R, --concurrency N or --trace FILE "
          "and percentile SLOs (--slo p99_ttft_ms=2000,p99_tpot_ms=50); without them it changes "
          "nothing",
          flag));
    return t;
  }
  if (pct.empty())
    return Status::InvalidArgument(
        "--rate/--concurrency/--trace: plan simulates a traffic against percentile SLOs; add "
        "them to --slo, e.g. --slo p99_ttft_ms=2000,p99_tpot_ms=50");
  if (!traffic.given())
    return Status::InvalidArgument(fmt::format(
        "--slo {}: percentile SLOs need a traffic: add --rate R (open loop), --concurrency N "
        "(closed loop) or --trace FILE",
        pct));
  // The stream's own errors (a trace that cannot be read, both --rate and --concurrency, a bad
  // length distribution) before the search, not after it.
  if (auto drawn = TrafficRequests(traffic, 1, 1, seed); !drawn.ok()) return drawn.status();
  auto slos = serve::ParseSlos(pct);
  if (!slos.ok()) return Status::InvalidArgument("--slo: " + slos.status().message());
  if (pareto) return Status::InvalidArgument("--pareto does not take a traffic or percentile SLOs");
  if (f->mode.empty()) f->mode = "serve";
  if (f->mode != "serve")
    return Status::InvalidArgument(fmt::format(
        "--slo {}: percentile SLOs apply to --mode serve (got --mode {})", pct, f->mode));
  // The TPOT and inter-token keys bound the steady state the search plans, as capacity's sizing
  // reads them (serve::SteadyLimitsOf): a deployment whose running limit fills decodes every
  // token at its steady-state TPOT, so the tightest of them (or a steady tpot_ms below it) is the
  // search's TPOT limit and the layouts are the best within it (serve/slo_pick.h holds any other
  // candidate's running limit to it as well). TTFT keys bound nothing here: a full deployment's
  // steady-state TTFT is not what a traffic's prompts see (a 2-GPU Llama-3.1-8B at 2 req/s meets
  // P99 TTFT <= 50 ms only with layouts whose steady-state TTFT is above it), and the simulation
  // is their test.
  if (const double tpot_ms = serve::SteadyLimitsOf(*slos).tpot_ms; tpot_ms > 0)
    steady = WithLimit(steady, "tpot_ms", tpot_ms);
  f->slo = steady;
  t.active = true;
  t.slos = *slos;
  t.slo_text = serve::SlosText(*slos);
  t.traffic = traffic;
  t.traffic.engine = f->engine;  // --router default: the engine's front end
  t.seed = seed;
  return t;
}

namespace {

// A pick's cost lines: at its steady state within the SLOs (the plan's figure) and at the rate
// the traffic is served ("" when CostLine has nothing to say).
std::string PickCostLines(const plan::Cost& steady, const plan::Cost& served,
                          const serve::ServeSummary& s) {
  std::string out;
  if (const std::string line = CostLine(steady); !line.empty())
    out += "  cost at its steady state (the running limit full): " + line + "\n";
  if (s.unstable) return out;
  if (const std::string line = CostLine(served, /*hourly=*/true); !line.empty())
    out += fmt::format("  cost at the rate the traffic is served ({} output tokens/s): {}\n",
                       Thousands(s.output_tokens_per_s), line);
  return out;
}

json CandidateJson(const serve::SloCandidate& c) {
  json j;
  j["strategy"] = ToText(c.strategy);
  j["batch"] = c.strategy.batch;
  j["tokens_per_s_per_gpu"] = c.steady.tokens_per_s_per_gpu;
  j["tpot_ms"] = c.steady.tpot_s * 1e3;  // its steady state at that running limit
  j["meets"] = c.meets;
  j["misses"] = c.meets ? json() : json(c.why);
  j["serve"] = serve::SummaryJson(c.summary);
  return j;
}

std::string Ms(double s) { return fmt::format("{:.1f}", s * 1e3); }

// Writes the plan's JSON to --out (when given) and, with --json, to stdout: returns the exit code
// when the command is done (-1: go on to the text output).
int WritePlanJson(const json& plan_json, const std::string& out_path, bool json_out) {
  if (!out_path.empty())
    if (Status st = WriteFileAtomic(out_path, DumpJson(plan_json) + "\n"); !st.ok())
      return Fail(Status::IoError("--out " + st.message()));
  if (json_out) {
    fmt::print("{}\n", DumpJson(plan_json));
    return kExitOk;
  }
  return -1;
}

}  // namespace

// DEPLOY.md's lines for a pick's launch files: what the deployment was planned for beside each
// instance's steady state.
launch::EmitOptions PlannedFor(const TrafficPlan& t, const std::vector<serve::RequestSpec>& reqs,
                               const serve::ServeSummary& at) {
  launch::EmitOptions opt;
  opt.plan_lines = {
      fmt::format("planned by l2s plan for {} requests {}, SLO {}: p99 TTFT {:.0f} ms, p99 TPOT "
                  "{:.1f} ms, {:.2f} requests/s served",
                  reqs.size(), StreamWords(t.traffic, reqs), t.slo_text, at.ttft.p99 * 1e3,
                  at.tpot.p99 * 1e3, at.request_rate),
      "the figures above are one instance's steady state at the full batch the launch admits, a "
      "load above the planned traffic"};
  return opt;
}

StatusOr<TrafficPick> PlanAggUnderTraffic(const TrafficPlan& t, const Simulator& sim,
                                          const plan::AggPlan& o,
                                          const std::function<bool(const Strategy&)>& admissible,
                                          int max_running, int instances,
                                          const std::string& engine, const Problem& deployment) {
  const Problem& p = sim.problem();
  TrafficPick r;
  r.serving = "agg";
  r.problem = ProblemSummary(deployment);
  auto reqs = TrafficRequests(t.traffic, p.workload.isl, p.workload.osl, t.seed);
  if (!reqs.ok()) return reqs.status();
  auto base = TrafficServeOptions(t.traffic, max_running);
  if (!base.ok()) return base.status();
  base->instances = std::max(1, instances);
  if (base->router == serve::Assign::kEngineDefault && !engine.empty())
    base->router = plan::FrontEndRouter(engine);
  r.traffic_text =
      TrafficText(t.traffic, static_cast<int64_t>(reqs->size()), p.workload.isl, p.workload.osl);
  r.requests = reqs->size();
  // The candidates: the plan, then every strategy its runs evaluated (PickBySlos sorts them).
  std::vector<std::pair<Strategy, Evaluation>> given;
  auto add = [&](const Strategy& s, const Evaluation& e) {
    if (!e.valid() || (admissible && !admissible(s))) return;
    given.emplace_back(s, sim.EvaluateAtBatch(s, e.batch));
  };
  if (o.have_recommended) add(o.recommended, o.recommended_eval);
  for (const plan::Run* run : {&o.main, &o.oracle, &o.megatron, &o.def})
    for (const auto& [s, e] : run->evaluated.Sorted()) add(s, e);
  if (given.empty()) {
    r.failure = o.failures.Reason(p);
    return r;
  }
  serve::SloPickOptions opt;
  opt.serve = *base;
  opt.max_simulations = kMaxSimulations;
  auto pick = serve::PickBySlos(sim, given, *reqs, TrafficConcurrency(t.traffic), t.slos, opt);
  if (!pick.ok()) return pick.status();
  // A default stream the chosen candidate (else the steady-state best) ran as a burst: drawn
  // again long enough for a steady state and the candidates simulated again, up to twice.
  if (Status st = RedrawWhileABurst(
          t.traffic, p.workload.isl, p.workload.osl, t.seed, "plan", &*reqs,
          [&]() -> const serve::ServeSummary* {
            if (pick->simulated.empty()) return nullptr;
            return &(pick->found ? pick->simulated[pick->best] : pick->simulated.front()).summary;
          },
          [&] {
            pick = serve::PickBySlos(sim, given, *reqs, TrafficConcurrency(t.traffic), t.slos, opt);
            return pick.status();
          });
      !st.ok())
    return st;
  r.traffic_text =
      TrafficText(t.traffic, static_cast<int64_t>(reqs->size()), p.workload.isl, p.workload.osl);
  r.requests = reqs->size();
  if (instances > 1)
    r.body += fmt::format("replicas: {} instances of {} GPUs behind the router, each candidate "
                          "below one instance's layout\n",
                          instances, p.cluster.num_gpus);
  const double tpot_bound_s = serve::TpotBoundS(t.slos);
  if (pick->simulated.empty()) {
    r.failure = fmt::format(
        "no candidate decodes within the TPOT SLO ({:g} ms) even at a running limit of 1 "
        "request per rank ({} candidate layouts; their steady-state TPOT at batch 1 exceeds it)",
        tpot_bound_s * 1e3, pick->left_out);
    return r;
  }
  r.body += fmt::format(
      "\ncandidates by steady-state tokens/s per GPU, best first ({} simulated of {}):\n",
      pick->simulated.size(), pick->candidates);
  if (pick->lowered + pick->left_out > 0)
    r.body += fmt::format(
        "  (running limits held to the TPOT SLO: {} candidate{} at the largest batch whose "
        "steady-state TPOT is within {:g} ms{})\n",
        pick->lowered, pick->lowered == 1 ? "" : "s", tpot_bound_s * 1e3,
        pick->left_out > 0 ? fmt::format(", {} left out (over it at batch 1)", pick->left_out)
                           : std::string());
  r.body += fmt::format("  {:>12} {:>6} {:>10} {:>10} {:>10}  {}\n", "tokens/s/GPU", "batch",
                        "p99 TTFT", "p99 TPOT", "p99 E2E", "strategy; SLO");
  for (const serve::SloCandidate& c : pick->simulated) {
    const bool u = c.summary.unstable;
    r.body += fmt::format("  {:>12.2f} {:>6} {:>10} {:>10} {:>10}  {}; {}\n",
                          c.steady.tokens_per_s_per_gpu, c.strategy.batch,
                          u ? "-" : Ms(c.summary.ttft.p99), u ? "-" : Ms(c.summary.tpot.p99),
                          u ? "-" : Ms(c.summary.e2e.p99), ShortText(p.model, c.strategy),
                          c.meets ? "met" : "misses " + c.why);
  }
  if (!pick->found) {
    const serve::SloCandidate& first = pick->simulated.front();
    r.failure = fmt::format(
        "no candidate meets the SLOs {} under the traffic ({} of {} simulated, best first); the "
        "steady-state best {} misses {}",
        t.slo_text, pick->simulated.size(), pick->candidates, ShortText(p.model, first.strategy),
        first.why);
    return r;
  }
  const serve::SloCandidate& b = pick->simulated[pick->best];
  r.found = true;
  r.tokens_per_s_per_gpu = b.steady.tokens_per_s_per_gpu;
  json& tr = r.traffic;
  tr["description"] = r.traffic_text;
  tr["requests"] = reqs->size();
  tr["slo"] = t.slo_text;
  tr["candidates"] = pick->candidates;
  tr["simulated"] = pick->simulated.size();
  tr["running_limits_lowered"] = pick->lowered;
  tr["running_limits_left_out"] = pick->left_out;
  json tried = json::array();
  for (const serve::SloCandidate& c : pick->simulated) tried.push_back(CandidateJson(c));
  tr["tried"] = tried;
  json best = CandidateJson(b);
  best["serving"] = "agg";
  best["engine"] = engine.empty() ? "ideal" : engine;
  best["found_by"] = "traffic_slo";
  best["instances"] = std::max(1, instances);  // replicas of the layout, the traffic routed over them
  best["gpus_per_instance"] = p.cluster.num_gpus;
  best["tokens_per_s"] = b.steady.tokens_per_s;
  best["ttft_ms"] = b.steady.ttft_s * 1e3;
  best["tpot_ms"] = b.steady.tpot_s * 1e3;
  // Priced as a plan is (plan/cost.h): the pick's steady state on every GPU of the deployment.
  const plan::Cost cost = plan::CostOf(b.steady.tokens_per_s_per_gpu, p.workload,
                                       deployment.cluster, deployment.cluster.num_gpus);
  best["cost"] = CostJson(cost);
  const plan::Cost served = ServedCost(deployment, deployment.cluster.num_gpus, b.summary);
  best["cost_at_traffic"] = b.summary.unstable ? json(nullptr) : json(CostJson(served));
  r.best = best;
  r.pick = fmt::format("best within the SLOs: {:.2f} tokens/s per GPU (steady state), max running "
                       "{} per rank\n  {}\n",
                       b.steady.tokens_per_s_per_gpu, b.strategy.batch, ToText(b.strategy));
  r.pick += ServeSummaryText(b.summary);
  r.pick += PickCostLines(cost, served, b.summary);
  const std::vector<launch::EngineTranslation> translations =
      launch::TranslatePlan(sim, b.strategy, launch::ExpressibleBest{});
  for (const launch::EngineTranslation& tr : translations)
    r.launch[std::string(launch::EngineName(tr.engine))] = LaunchJson(tr);
  // The pick's engine's translation (a Dynamo variant: its workers' backend).
  const std::optional<launch::Engine> own = launch::WorkersOf(engine);
  const launch::EngineTranslation* mine = nullptr;
  for (const launch::EngineTranslation& tr : translations)
    if (own && tr.engine == *own) mine = &tr;
  // The text names the pick's command on its engine (JSON `launch`: every engine's; --emit DIR
  // writes the files): the server admits the running limit the traffic was simulated with.
  std::string command = mine != nullptr ? mine->command.command : "";
  std::string how = mine != nullptr ? std::string(launch::EngineTitle(mine->engine)) : "";
  int servers = instances;
  const char* server_word = "instances";
  // A Dynamo variant: the pick on Dynamo, its workers running the backend's translation (as the
  // steady-state plan's "launch.dynamo").
  if (StatusOr<engine::EngineId> id = engine::ParseEngineId(engine.empty() ? "ideal" : engine);
      mine != nullptr && id.ok() && engine::CapabilitiesOf(*id).workers != *id) {
    const launch::DynamoAggLaunch d = launch::MakeDynamoAggLaunch(*mine, p, std::max(1, instances));
    r.launch["dynamo"] = DynamoLaunchJson(d, *mine);
    command = d.worker.command;
    how = "Dynamo, " + how;
    servers = d.workers;
    server_word = "workers";
  }
  if (mine != nullptr && mine->runnable)
    r.pick += fmt::format("  launch ({}{}): {}\n", how,
                          servers > 1 ? fmt::format(", each of {} {}", servers, server_word) : "",
                          command);
  if (o.have_recommended && pick->best > 0)
    r.pick += fmt::format("the steady-state plan ({:.2f} tokens/s per GPU) misses: {}\n",
                          o.recommended_eval.tokens_per_s_per_gpu, pick->simulated.front().why);
  // Each instance's server admits the pick's running requests per rank.
  r.emit = [p, s = b.strategy, n = std::max(1, instances), engine,
            opt = PlannedFor(t, *reqs, b.summary)](const std::string& dir,
                                                   const std::string& model_id) {
    launch::EmitOptions o2 = opt;
    o2.model_id = model_id;
    return launch::EmitSizedAggregated(dir, p, s, n, s.batch, engine, o2);
  };
  return r;
}

StatusOr<TrafficPick> PlanDisaggUnderTraffic(const TrafficPlan& t, const Problem& serve,
                                             const plan::DisaggPlan& d,
                                             const std::string& engine) {
  TrafficPick r;
  r.serving = "disagg";
  r.title = "disaggregated serving, ";
  r.problem = ProblemSummary(serve);
  if (!d.found || d.models.empty()) {
    // (PlanDisaggregated fails when no deployment is valid: here it was interrupted.)
    r.failure = "no disaggregated deployment to simulate under the traffic (interrupted)";
    return r;
  }
  const DisaggEvaluation& e = d.eval;
  const DisaggModel& m = *d.models[static_cast<size_t>(std::max(0, d.best.model))];
  if (!m.setup().shared)
    return Status::InvalidArgument(
        "a traffic's percentile SLOs are planned on one GPU type: not on a cluster of GPU pools");
  const int gp = e.prefill.gpus_per_instance, gd = e.decode.gpus_per_instance;
  const int np = e.prefill.instances, nd = e.decode.instances;
  auto reqs = TrafficRequests(t.traffic, serve.workload.isl, serve.workload.osl, t.seed);
  if (!reqs.ok()) return reqs.status();
  r.traffic_text = TrafficText(t.traffic, static_cast<int64_t>(reqs->size()), serve.workload.isl,
                               serve.workload.osl);
  r.requests = reqs->size();
  auto base = TrafficServeOptions(t.traffic, 0);
  if (!base.ok()) return base.status();
  if (base->router == serve::Assign::kEngineDefault && !engine.empty())
    base->router = plan::FrontEndRouter(engine);
  // The pair as `l2s capacity` sizes one (serve::MakeSizedDisagg): one instance of each role
  // prices a step, the plan's link between them.
  serve::DisaggLayoutOption lay;
  lay.prefill_problem = m.PrefillServeProblem(gp);
  lay.decode_problem = m.DecodeServeProblem(gd);
  lay.prefill = e.prefill.strategy;
  lay.decode = e.decode.strategy;
  lay.prefill.batch = lay.decode.batch = 0;
  lay.link = e.link;
  lay.layerwise = m.setup().layerwise;
  const Problem& pi = lay.prefill_problem;
  const Problem& di = lay.decode_problem;
  const Strategy& sp = lay.prefill;
  const Strategy& sd = lay.decode;
  auto pc = StepCost::Make(pi, sp);
  if (!pc.ok()) return Status::Invalid("prefill: " + pc.status().message());
  auto dc = StepCost::Make(di, sd);
  if (!dc.ok()) return Status::Invalid("decode: " + dc.status().message());
  struct Tried {
    int max_running = 0;
    bool meets = false;
    std::string why;
    serve::ServeSummary summary;
  };
  std::vector<Tried> tried;
  int best = -1;
  // The deployment at the decode batch and its halvings, the first meeting every SLO picked (the
  // plan's search already held the decode batch's steady-state TPOT to the TPOT keys:
  // PrepareTrafficPlan).
  auto simulate = [&]() -> Status {
    tried.clear();
    best = -1;
    for (int b = std::max(1, e.decode.eval.batch), k = 0; b >= 1 && k <= 6; b /= 2, ++k) {
      serve::ServeOptions so = *base;
      so.max_running = b;
      auto sim = serve::MakeSizedDisagg(lay, pc->get(), dc->get(), so, np, nd, serve.workload.isl,
                                        serve.workload.osl);
      if (!sim.ok()) return sim.status();
      Tried x;
      x.max_running = b;
      x.summary = serve::Summarise((*sim)->Run(*reqs, TrafficConcurrency(t.traffic)), t.slos);
      x.meets = serve::MeetsSlos(x.summary, t.slos, &x.why);
      tried.push_back(x);
      if (x.meets) {
        best = static_cast<int>(tried.size()) - 1;
        break;
      }
      if (b == 1) break;
    }
    return Status::Ok();
  };
  if (Status st = simulate(); !st.ok()) return st;
  // A default stream the pick (else the full batch) ran as a burst: drawn again, as above.
  if (Status st = RedrawWhileABurst(
          t.traffic, serve.workload.isl, serve.workload.osl, t.seed, "plan", &*reqs,
          [&] { return &(best >= 0 ? tried[best] : tried.front()).summary; }, simulate);
      !st.ok())
    return st;
  r.traffic_text = TrafficText(t.traffic, static_cast<int64_t>(reqs->size()), serve.workload.isl,
                               serve.workload.osl);
  r.requests = reqs->size();
  const std::string deployment =
      fmt::format("{} x {} prefill GPUs [{}] + {} x {} decode GPUs [{}]", np, gp,
                  ShortText(serve.model, sp), nd, gd, ShortText(serve.model, sd));
  r.body = fmt::format("deployment (steady-state best, {:.2f} tokens/s per GPU): {}\n\n",
                       e.tokens_per_s_per_gpu, deployment);
  r.body += fmt::format("  {:>12} {:>10} {:>10} {:>10} {:>12}  {}\n", "decode batch", "p99 TTFT",
                        "p99 TPOT", "p99 E2E", "p99 KV xfer", "SLO");
  for (const Tried& x : tried) {
    const bool u = x.summary.unstable;
    r.body += fmt::format("  {:>12} {:>10} {:>10} {:>10} {:>12}  {}\n", x.max_running,
                          u ? "-" : Ms(x.summary.ttft.p99), u ? "-" : Ms(x.summary.tpot.p99),
                          u ? "-" : Ms(x.summary.e2e.p99), u ? "-" : Ms(x.summary.kv_transfer.p99),
                          x.meets ? "met" : "misses " + x.why);
  }
  if (best < 0) {
    r.failure = fmt::format(
        "the disaggregated deployment {} misses the SLOs {} under the traffic at every decode "
        "batch tried ({}): {}",
        deployment, t.slo_text, tried.size(), tried.front().why);
    return r;
  }
  const Tried& b = tried[best];
  // The pick's steady state: the same instances with the decode pool at its running limit (the
  // matched rate of DisaggModel::Combine at fixed counts: the smaller of the pools' capacities and
  // the KV links').
  const Evaluation ed = m.DecodeSim(gd).EvaluateAtBatch(e.decode.strategy, b.max_running);
  const double osl = static_cast<double>(serve.workload.osl);
  const double rate = std::min({np * e.prefill.capacity_rps, nd * ed.tokens_per_s / osl,
                                e.link_rps > 0 ? e.link_rps
                                               : std::numeric_limits<double>::infinity()});
  r.found = true;
  r.tokens_per_s_per_gpu = rate * osl / e.total_gpus;
  json& tr = r.traffic;
  tr["description"] = r.traffic_text;
  tr["requests"] = reqs->size();
  tr["slo"] = t.slo_text;
  tr["candidates"] = 7;
  tr["simulated"] = tried.size();
  json arr = json::array();
  for (const Tried& x : tried) {
    json c;
    c["decode_max_running"] = x.max_running;
    c["meets"] = x.meets;
    c["misses"] = x.meets ? json() : json(x.why);
    c["serve"] = serve::SummaryJson(x.summary);
    arr.push_back(c);
  }
  tr["tried"] = arr;
  json& bj = r.best;
  bj["serving"] = "disagg";
  bj["engine"] = engine.empty() ? "ideal" : engine;
  bj["found_by"] = "traffic_slo";
  bj["prefill"] = {{"strategy", ToText(sp)}, {"gpus_per_instance", gp}, {"instances", np}};
  bj["decode"] = {{"strategy", ToText(sd)}, {"gpus_per_instance", gd}, {"instances", nd},
                  {"max_running", b.max_running}};
  bj["tokens_per_s_per_gpu"] = r.tokens_per_s_per_gpu;
  bj["tokens_per_s"] = rate * osl;
  // The unloaded latencies at that decode batch (the pair's TTFT: prefill, exposed transfer and
  // a decode step; DisaggModel::Combine).
  const DisaggEvaluation at = m.Combine(gp, e.prefill.strategy, e.prefill.eval, gd,
                                        e.decode.strategy, ed);
  bj["ttft_ms"] = at.ttft_s * 1e3;
  bj["tpot_ms"] = at.tpot_s * 1e3;
  const plan::Cost cost = plan::CostOf(r.tokens_per_s_per_gpu, serve.workload,
                                       m.setup().serve.cluster, e.total_gpus);
  bj["cost"] = CostJson(cost);
  const plan::Cost served = ServedCost(m.setup().serve, e.total_gpus, b.summary);
  bj["cost_at_traffic"] = b.summary.unstable ? json(nullptr) : json(CostJson(served));
  bj["meets"] = true;
  bj["serve"] = serve::SummaryJson(b.summary);
  r.pick = fmt::format("best within the SLOs: {}, decode max running {} per rank ({:.2f} tokens/s "
                       "per GPU, steady state)\n",
                       deployment, b.max_running, r.tokens_per_s_per_gpu);
  r.pick += ServeSummaryText(b.summary);
  r.pick += PickCostLines(cost, served, b.summary);
  if (auto launches = plan::DisaggLaunches(d, b.max_running); launches.ok()) {
    r.launch = DisaggLaunchJson(*launches);
    r.pick += "  launch: --emit DIR writes both pools' servers at these running limits (JSON "
              "`launch`: their commands)\n";
  }
  // The pools' servers on the plan's nodes, each admitting what the simulated one did.
  launch::EmitOptions opt = PlannedFor(t, *reqs, b.summary);
  opt.shared_nodes = true;  // the pools share the cluster (m.setup().shared)
  r.emit = [pi, sp, np, di, sd, nd, mr = b.max_running, pmr = b.summary.prefill_max_running,
            engine, opt](const std::string& dir, const std::string& model_id) {
    launch::EmitOptions o2 = opt;
    o2.model_id = model_id;
    return launch::EmitSizedDisaggregated(dir, pi, sp, np, di, sd, nd, mr, pmr, engine, o2);
  };
  return r;
}

namespace {

// The header of one serving's output: the problem, the traffic and the SLOs.
std::string Header(const TrafficPick& p, const TrafficPlan& t, const std::string& serving) {
  return fmt::format("l2s plan: {}, {}with a traffic\ntraffic: {}; SLO {}\n{}", p.problem, serving,
                     p.traffic_text, t.slo_text, FirstWaveNote(t.traffic, p.requests, t.slos));
}

// --emit: the pick's files, the line for the user ("" without --emit).
StatusOr<std::string> EmitPick(const TrafficPick& p, const TrafficOutput& out) {
  if (out.emit_dir.empty() || !p.emit) return std::string();
  return p.emit(out.emit_dir, out.model_id);
}

// The plan JSON with `p` as its best, the steady-state plan kept beside it.
json WithPick(json j, const TrafficPick& p) {
  j["steady_state_best"] = p.steady_state_best.is_null() ? j["best"] : p.steady_state_best;
  j["best"] = p.best;
  j["traffic"] = p.traffic;
  j["launch"] = p.launch;  // the pick's commands, not the steady-state plan's
  return j;
}

// Prints the JSON and the pick (text), the emitted files' line after it.
int PrintPick(const json& j, const std::string& pick_text, const TrafficOutput& out,
              const std::string& emitted) {
  if (const int rc = WritePlanJson(j, out.out_path, out.json); rc >= 0) {
    if (!emitted.empty()) fmt::print(stderr, "\n{}\n", emitted);
    return rc;
  }
  fmt::print("\n{}", pick_text);
  if (!emitted.empty()) fmt::print("\n{}\n", emitted);
  return kExitOk;
}

}  // namespace

int FinishTrafficPlan(const TrafficPlan& t, const TrafficPick& pick, json plan_json,
                      const TrafficOutput& out) {
  if (!out.json) fmt::print("{}{}{}", Header(pick, t, pick.title), out.engine_line, pick.body);
  if (!pick.found) return Fail(Status::Invalid(pick.failure));
  const StatusOr<std::string> emitted = EmitPick(pick, out);
  if (!emitted.ok()) return Fail(emitted.status());
  return PrintPick(WithPick(std::move(plan_json), pick), pick.pick, out, *emitted);
}

int FinishTrafficAuto(const TrafficPlan& t, const StatusOr<TrafficPick>& agg,
                      const StatusOr<TrafficPick>& disagg, json plan_json,
                      const TrafficOutput& out) {
  auto failure = [](const StatusOr<TrafficPick>& p) {
    return p.ok() ? p->failure : p.status().message();
  };
  const bool a = agg.ok() && agg->found, d = disagg.ok() && disagg->found;
  // The higher steady state at its pick; a tie keeps aggregated serving (one engine).
  const bool disagg_wins = d && (!a || disagg->tokens_per_s_per_gpu > agg->tokens_per_s_per_gpu);
  if (!out.json && (agg.ok() || disagg.ok())) {
    const TrafficPick& first = agg.ok() ? *agg : *disagg;
    fmt::print("{}{}", Header(first, t, "serving auto, "), out.engine_line);
    for (const StatusOr<TrafficPick>* p : {&agg, &disagg}) {
      fmt::print("\n{} serving:\n", p == &agg ? "aggregated" : "disaggregated");
      if (!p->ok()) {
        fmt::print("  not planned: {}\n", p->status().message());
        continue;
      }
      if ((*p)->traffic_text != first.traffic_text)
        fmt::print("traffic: {}\n", (*p)->traffic_text);
      const std::string& body = (*p)->body;  // without the single serving's blank line
      fmt::print("{}", body.substr(std::min(body.find_first_not_of('\n'), body.size())));
      if (!(*p)->found) fmt::print("  no plan: {}\n", (*p)->failure);
    }
  }
  if (!a && !d)
    return Fail(Status::Invalid(fmt::format("aggregated: {}; disaggregated: {}", failure(agg),
                                            failure(disagg))));
  const TrafficPick& win = disagg_wins ? *disagg : *agg;
  const StatusOr<TrafficPick>& other = disagg_wins ? agg : disagg;
  const char* other_name = disagg_wins ? "aggregated" : "disaggregated";
  const StatusOr<std::string> emitted = EmitPick(win, out);
  if (!emitted.ok()) return Fail(emitted.status());
  json j = WithPick(std::move(plan_json), win);
  j["serving"] = "auto";
  j["baselines"][other_name] = other.ok() && other->found ? other->best : json();
  if (!(other.ok() && other->found)) j["baselines"][std::string(other_name) + "_error"] = failure(other);
  std::string text = fmt::format("\nserving auto: {} serving wins, {:.2f} tokens/s per GPU at its "
                                 "pick (steady state)",
                                 disagg_wins ? "disaggregated" : "aggregated",
                                 win.tokens_per_s_per_gpu);
  text += other.ok() && other->found
              ? fmt::format(" against {:.2f} {}\n", other->tokens_per_s_per_gpu, other_name)
              : fmt::format("; no {} plan meets the SLOs\n", other_name);
  return PrintPick(j, text.substr(1) + win.pick, out, *emitted);
}

}  // namespace l2s::cli
