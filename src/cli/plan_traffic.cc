#include "cli/plan_traffic.h"

#include <fmt/core.h>

#include "cli/common.h"
#include "cli/output.h"
#include "cli/plan_problem.h"
#include "cli/report.h"
#include "plan/capacity.h"
#include "serve/serve_sim.h"
#include "serve/step_cost.h"

namespace l2s::cli {

using json = nlohmann::ordered_json;

// Candidates simulated at most (best steady state first).
constexpr int kMaxSimulations = 64;

StatusOr<TrafficPlan> PrepareTrafficPlan(ProblemFlags* f, const TrafficFlags& traffic,
                                         uint64_t seed, bool pareto, std::string* serving) {
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
  auto slos = serve::ParseSlos(pct);
  if (!slos.ok()) return Status::InvalidArgument("--slo: " + slos.status().message());
  if (pareto) return Status::InvalidArgument("--pareto does not take a traffic or percentile SLOs");
  if (f->mode.empty()) f->mode = "serve";
  if (f->mode != "serve")
    return Status::InvalidArgument(fmt::format(
        "--slo {}: percentile SLOs apply to --mode serve (got --mode {})", pct, f->mode));
  t.from_auto = serving->empty() || *serving == "auto";  // empty: plan's default, auto
  if (*serving != "disagg") *serving = "agg";
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

json CandidateJson(const serve::SloCandidate& c) {
  json j;
  j["strategy"] = ToText(c.strategy);
  j["batch"] = c.strategy.batch;
  j["tokens_per_s_per_gpu"] = c.steady.tokens_per_s_per_gpu;
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

int FinishTrafficPlan(const TrafficPlan& t, const Simulator& sim, const plan::AggPlan& o,
                      const std::function<bool(const Strategy&)>& admissible,
                      int max_running, int instances,
                      const std::string& engine, const Problem& deployment, json plan_json,
                      bool json_out, const std::string& out_path) {
  const Problem& p = sim.problem();
  auto reqs = TrafficRequests(t.traffic, p.workload.isl, p.workload.osl, t.seed);
  if (!reqs.ok()) return Fail(reqs.status());
  auto base = TrafficServeOptions(t.traffic, max_running);
  if (!base.ok()) return Fail(base.status());
  base->instances = std::max(1, instances);
  if (base->router == serve::Assign::kEngineDefault && !engine.empty())
    base->router = plan::FrontEndRouter(engine);
  // The candidates: the plan, then every strategy its runs evaluated (PickBySlos sorts them).
  std::vector<std::pair<Strategy, Evaluation>> given;
  auto add = [&](const Strategy& s, const Evaluation& e) {
    if (!e.valid() || (admissible && !admissible(s))) return;
    given.emplace_back(s, sim.EvaluateAtBatch(s, e.batch));
  };
  if (o.have_recommended) add(o.recommended, o.recommended_eval);
  for (const plan::Run* r : {&o.main, &o.oracle, &o.megatron, &o.def})
    for (const auto& [s, e] : r->evaluated.Sorted()) add(s, e);
  if (given.empty()) return Fail(Status::Invalid(o.failures.Reason(p)));
  serve::SloPickOptions opt;
  opt.serve = *base;
  opt.max_simulations = kMaxSimulations;
  auto pick = serve::PickBySlos(sim, given, *reqs, TrafficConcurrency(t.traffic), t.slos, opt);
  if (!pick.ok()) return Fail(pick.status());
  // A default stream the chosen candidate (else the steady-state best) ran as a burst: drawn
  // again long enough for a steady state and the candidates simulated again, up to twice.
  for (int again = 0; again < 2; ++again) {
    const serve::SloCandidate& c =
        pick->found ? pick->simulated[pick->best] : pick->simulated.front();
    auto more = SteadyStream(t.traffic, c.summary, reqs->size(), p.workload.isl, p.workload.osl,
                             t.seed, "plan");
    if (!more.ok()) return Fail(more.status());
    if (more->empty()) break;
    *reqs = std::move(*more);
    pick = serve::PickBySlos(sim, given, *reqs, TrafficConcurrency(t.traffic), t.slos, opt);
    if (!pick.ok()) return Fail(pick.status());
  }
  const std::string traffic_text =
      TrafficText(t.traffic, static_cast<int64_t>(reqs->size()), p.workload.isl, p.workload.osl);
  if (!json_out) {
    fmt::print("l2s plan: {}, with a traffic\n", ProblemSummary(deployment));
    if (instances > 1)
      fmt::print("replicas: {} instances of {} GPUs behind the router, each candidate below one "
                 "instance's layout\n",
                 instances, p.cluster.num_gpus);
    fmt::print("traffic: {}; SLO {}\n\n", traffic_text, t.slo_text);
    fmt::print("candidates by steady-state tokens/s per GPU, best first ({} simulated of {}):\n",
               pick->simulated.size(), pick->candidates);
    fmt::print("  {:>12} {:>6} {:>10} {:>10} {:>10}  {}\n", "tokens/s/GPU", "batch", "p99 TTFT",
               "p99 TPOT", "p99 E2E", "strategy; SLO");
    for (const serve::SloCandidate& c : pick->simulated) {
      const bool u = c.summary.unstable;
      fmt::print("  {:>12.2f} {:>6} {:>10} {:>10} {:>10}  {}; {}\n",
                 c.steady.tokens_per_s_per_gpu, c.strategy.batch,
                 u ? "-" : Ms(c.summary.ttft.p99), u ? "-" : Ms(c.summary.tpot.p99),
                 u ? "-" : Ms(c.summary.e2e.p99), ShortText(p.model, c.strategy),
                 c.meets ? "met" : "misses " + c.why);
    }
  }
  if (!pick->found) {
    const serve::SloCandidate& first = pick->simulated.front();
    return Fail(Status::Invalid(fmt::format(
        "no candidate meets the SLOs {} under the traffic ({} of {} simulated, best first); the "
        "steady-state best {} misses {}{}",
        t.slo_text, pick->simulated.size(), pick->candidates, ShortText(p.model, first.strategy),
        first.why,
        t.from_auto ? " (aggregated serving: with a traffic --serving auto plans it; --serving "
                      "disagg simulates the disaggregated plan, `l2s capacity` sizes both)"
                    : "")));
  }
  const serve::SloCandidate& b = pick->simulated[pick->best];
  json tr;
  tr["description"] = traffic_text;
  tr["requests"] = reqs->size();
  tr["slo"] = t.slo_text;
  tr["candidates"] = pick->candidates;
  tr["simulated"] = pick->simulated.size();
  json tried = json::array();
  for (const serve::SloCandidate& c : pick->simulated) tried.push_back(CandidateJson(c));
  tr["tried"] = tried;
  json best = CandidateJson(b);
  best["found_by"] = "traffic_slo";
  best["instances"] = std::max(1, instances);  // replicas of the layout, the traffic routed over them
  best["gpus_per_instance"] = p.cluster.num_gpus;
  best["tokens_per_s"] = b.steady.tokens_per_s;
  best["ttft_ms"] = b.steady.ttft_s * 1e3;
  best["tpot_ms"] = b.steady.tpot_s * 1e3;
  plan_json["steady_state_best"] = plan_json["best"];
  plan_json["best"] = best;
  plan_json["traffic"] = tr;
  if (const int rc = WritePlanJson(plan_json, out_path, json_out); rc >= 0) return rc;
  fmt::print("\nbest within the SLOs: {:.2f} tokens/s per GPU (steady state), max running {} "
             "per rank\n  {}\n",
             b.steady.tokens_per_s_per_gpu, b.strategy.batch, ToText(b.strategy));
  fmt::print("{}", ServeSummaryText(b.summary));
  if (o.have_recommended && pick->best > 0)
    fmt::print("the steady-state plan ({:.2f} tokens/s per GPU) misses: {}\n",
               o.recommended_eval.tokens_per_s_per_gpu, pick->simulated.front().why);
  return kExitOk;
}

int FinishTrafficPlanDisagg(const TrafficPlan& t, const Problem& serve, const plan::DisaggPlan& d,
                            json plan_json, bool json_out, const std::string& out_path) {
  if (!d.found || d.models.empty())
    return Fail(Status::Invalid("no disaggregated deployment to simulate under the traffic"));
  const DisaggEvaluation& e = d.eval;
  const DisaggModel& m = *d.models[static_cast<size_t>(std::max(0, d.best.model))];
  if (!m.setup().shared)
    return Fail(Status::InvalidArgument(
        "a traffic's percentile SLOs are planned on one GPU type: not on a cluster of GPU pools"));
  const int gp = e.prefill.gpus_per_instance, gd = e.decode.gpus_per_instance;
  auto reqs = TrafficRequests(t.traffic, serve.workload.isl, serve.workload.osl, t.seed);
  if (!reqs.ok()) return Fail(reqs.status());
  auto base = TrafficServeOptions(t.traffic, 0);
  if (!base.ok()) return Fail(base.status());
  Strategy sp = e.prefill.strategy, sd = e.decode.strategy;
  sp.batch = sd.batch = 0;
  // One instance of each role, as `l2s capacity` prices a step.
  const Problem pi = m.PrefillServeProblem(gp), di = m.DecodeServeProblem(gd);
  auto pc = StepCost::Make(pi, sp);
  if (!pc.ok()) return Fail(Status::Invalid("prefill: " + pc.status().message()));
  auto dc = StepCost::Make(di, sd);
  if (!dc.ok()) return Fail(Status::Invalid("decode: " + dc.status().message()));
  serve::DisaggServeOptions dso;
  dso.prefill_instances = e.prefill.instances;
  dso.prefill_router = base->router;  // one front end routes to both pools
  dso.link = e.link;
  dso.layerwise = m.setup().layerwise;
  struct Tried {
    int max_running = 0;
    bool meets = false;
    std::string why;
    serve::ServeSummary summary;
  };
  std::vector<Tried> tried;
  int best = -1;
  for (int b = std::max(1, e.decode.eval.batch), k = 0; b >= 1 && k <= 6; b /= 2, ++k) {
    serve::ServeOptions o = *base;
    o.instances = e.decode.instances;
    o.max_running = b;
    auto sim = serve::ServeSim::MakeDisagg(pc->get(), dc->get(), o, dso, serve.workload.isl,
                                           serve.workload.osl);
    if (!sim.ok()) return Fail(sim.status());
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
  const std::string traffic_text = TrafficText(t.traffic, static_cast<int64_t>(reqs->size()),
                                               serve.workload.isl, serve.workload.osl);
  const std::string deployment = fmt::format(
      "{} x {} prefill GPUs [{}] + {} x {} decode GPUs [{}]", e.prefill.instances, gp,
      ShortText(serve.model, sp), e.decode.instances, gd, ShortText(serve.model, sd));
  if (!json_out) {
    fmt::print("l2s plan: {}, disaggregated serving, with a traffic\n", ProblemSummary(serve));
    fmt::print("traffic: {}; SLO {}\n", traffic_text, t.slo_text);
    fmt::print("deployment (steady-state best, {:.2f} tokens/s per GPU): {}\n\n",
               e.tokens_per_s_per_gpu, deployment);
    fmt::print("  {:>12} {:>10} {:>10} {:>10} {:>12}  {}\n", "decode batch", "p99 TTFT", "p99 TPOT",
               "p99 E2E", "p99 KV xfer", "SLO");
    for (const Tried& x : tried) {
      const bool u = x.summary.unstable;
      fmt::print("  {:>12} {:>10} {:>10} {:>10} {:>12}  {}\n", x.max_running,
                 u ? "-" : Ms(x.summary.ttft.p99), u ? "-" : Ms(x.summary.tpot.p99),
                 u ? "-" : Ms(x.summary.e2e.p99), u ? "-" : Ms(x.summary.kv_transfer.p99),
                 x.meets ? "met" : "misses " + x.why);
    }
  }
  if (best < 0)
    return Fail(Status::Invalid(fmt::format(
        "the disaggregated deployment {} misses the SLOs {} under the traffic at every decode "
        "batch tried ({}): {}",
        deployment, t.slo_text, tried.size(), tried.front().why)));
  const Tried& b = tried[best];
  json tr;
  tr["description"] = traffic_text;
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
  json bj;
  bj["serving"] = "disagg";
  bj["found_by"] = "traffic_slo";
  bj["prefill"] = {{"strategy", ToText(sp)}, {"gpus_per_instance", gp},
                   {"instances", e.prefill.instances}};
  bj["decode"] = {{"strategy", ToText(sd)}, {"gpus_per_instance", gd},
                  {"instances", e.decode.instances}, {"max_running", b.max_running}};
  bj["tokens_per_s_per_gpu"] = e.tokens_per_s_per_gpu;
  bj["meets"] = true;
  bj["serve"] = serve::SummaryJson(b.summary);
  plan_json["steady_state_best"] = plan_json["best"];
  plan_json["best"] = bj;
  plan_json["traffic"] = tr;
  if (const int rc = WritePlanJson(plan_json, out_path, json_out); rc >= 0) return rc;
  fmt::print("\nbest within the SLOs: {}, decode max running {} per rank\n", deployment,
             b.max_running);
  fmt::print("{}", ServeSummaryText(b.summary));
  return kExitOk;
}

}  // namespace l2s::cli
