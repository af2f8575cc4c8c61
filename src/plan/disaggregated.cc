#include "plan/disaggregated.h"

#include <fmt/core.h>

#include <algorithm>
#include <utility>

#include "engine/restrict.h"
#include "plan/space.h"
#include "search/oracle.h"
#include "plan/refine.h"
#include "plan/work_bound.h"
#include "sim/disagg.h"

namespace l2s::plan {

namespace {

StatusOr<std::vector<std::unique_ptr<DisaggModel>>> MakeModels(const Problem& serve,
                                                               const DisaggPlanRequest& req,
                                                               bool speculating) {
  std::vector<std::unique_ptr<DisaggModel>> out;
  if (req.pools != nullptr) {
    if (req.prefill_gpus > 0)
      return Status::InvalidArgument(
          "--prefill-gpus fixes the split of one pool; a cluster with pools is split by its pools");
    const ClusterPools& cp = *req.pools;
    for (size_t i = 0; i < cp.pools.size(); ++i) {
      for (size_t j = 0; j < cp.pools.size(); ++j) {
        DisaggSetup st;
        st.serve = serve;
        st.serve.cluster = cp.pools[i];
        st.prefill_pool = cp.pools[i];
        st.decode_pool = cp.pools[j];
        st.prefill_pool_name = cp.pools[i].name;
        st.decode_pool_name = cp.pools[j].name;
        st.shared = i == j;
        st.cross = KvLink{false, cp.link_bw, cp.link_latency};
        st.total_gpus = cp.total_gpus();
        st.layerwise = req.layerwise;
        st.speculating = speculating;
        StatusOr<std::unique_ptr<DisaggModel>> m = DisaggModel::Make(std::move(st));
        if (!m.ok()) return m.status();
        out.push_back(std::move(*m));
      }
    }
    return out;
  }
  DisaggSetup setup = SharedSetup(serve);
  setup.layerwise = req.layerwise;
  setup.speculating = speculating;
  const ClusterSpec& c = serve.cluster;
  if (req.prefill_gpus > 0) {
    // A fixed split: two pools of the cluster's GPUs, the KV crossing the scale-out network
    // (each pool is its own set of NVLink domains), or NVLink when the whole cluster is one
    // domain (a split of one node: both pools are in it).
    const int decode_gpus = c.num_gpus - req.prefill_gpus;
    if (decode_gpus < 1)
      return Status::InvalidArgument(fmt::format(
          "--prefill-gpus {} leaves no GPU for decode: the cluster has {}", req.prefill_gpus,
          c.num_gpus));
    StatusOr<ClusterSpec> pp = ResizeCluster(c, req.prefill_gpus);
    if (!pp.ok()) return Status::InvalidArgument("--prefill-gpus: " + pp.status().message());
    StatusOr<ClusterSpec> dp = ResizeCluster(c, decode_gpus);
    if (!dp.ok())
      return Status::InvalidArgument(fmt::format("--prefill-gpus {}: the {} decode GPUs: {}",
                                                 req.prefill_gpus, decode_gpus,
                                                 dp.status().message()));
    setup.prefill_pool = *pp;
    setup.decode_pool = *dp;
    setup.shared = false;
    setup.prefill_pool_name = "prefill";
    setup.decode_pool_name = "decode";
    setup.cross = c.num_gpus <= c.gpus_per_domain
                      ? KvLink{true, c.gpu.nvlink_bw, c.nvlink_latency}
                      : KvLink{false, c.scaleout_bw, c.scaleout_latency};
  }
  StatusOr<std::unique_ptr<DisaggModel>> m = DisaggModel::Make(std::move(setup));
  if (!m.ok()) return m.status();
  out.push_back(std::move(*m));
  return out;
}

}  // namespace

StatusOr<DisaggPlan> PrepareDisaggregated(const Problem& serve, const DisaggPlanRequest& req) {
  DisaggPlan d;
  d.engine = req.engine;
  {
    StatusOr<std::vector<std::unique_ptr<DisaggModel>>> models = MakeModels(serve, req, false);
    if (!models.ok()) return models.status();
    d.models = std::move(*models);
  }
  // Strategy-space options of each role, as plan's aggregated space (launch.h).
  const DisaggModel& m0 = *d.models.front();
  StatusOr<Problem> pp = PrefillProblem(serve, m0.setup().prefill_pool, m0.setup().prefill_pool.num_gpus);
  StatusOr<Problem> dp = DecodeProblem(serve, m0.setup().decode_pool, m0.setup().decode_pool.num_gpus);
  if (!pp.ok()) return pp.status();
  if (!dp.ok()) return dp.status();
  const int prefill_pool_gpus = m0.setup().prefill_pool.num_gpus;
  const int decode_pool_gpus = m0.setup().decode_pool.num_gpus;
  const engine::Capabilities& caps = engine::CapabilitiesOf(req.engine);
  // Each role's servers: the engine's rules for a disaggregated pool (vLLM's: pp = 1).
  StatusOr<SpaceOptions> prefill_opt =
      engine::RestrictOptions(caps, serve.model, PlanSpaceOptions(*pp), engine::Role::kPrefillPool);
  if (!prefill_opt.ok()) return prefill_opt.status();
  StatusOr<SpaceOptions> decode_opt =
      engine::RestrictOptions(caps, serve.model, PlanSpaceOptions(*dp, req.mtp),
                              engine::Role::kDecodePool);
  if (!decode_opt.ok()) return decode_opt.status();
  // Speculation is the deployment's, both roles': a speculating deployment's prefill servers run
  // the draft's extend over every prompt (its price does not depend on the depth: prefill
  // strategies carry mtp=1, relabelled to the decode role's depth once the plan is chosen). The
  // joint space fixes it on or off; PlanDisaggregated plans both where both are open.
  if (serve.model.can_speculate()) {
    const SpeculationChoices open = SpeculationOf(*decode_opt);
    const bool on = req.speculation == 1 || (req.speculation < 0 && open.on);
    if (on ? !open.on : !open.off)
      return Status::InvalidArgument(fmt::format(
          "disaggregated plan: speculation {} is not among the decode role's mtp options",
          on ? "on" : "off"));
    std::erase_if(decode_opt->mtp, [&](int k) { return (k > 0) != on; });
    prefill_opt->mtp = {on ? 1 : 0};
    d.speculation = on ? 1 : 0;
    if (on) {  // the draft's KV crosses with the prompt's
      StatusOr<std::vector<std::unique_ptr<DisaggModel>>> models = MakeModels(serve, req, true);
      if (!models.ok()) return models.status();
      d.models = std::move(*models);
    }
  }
  std::vector<const DisaggModel*> raw;
  for (const auto& m : d.models) raw.push_back(m.get());
  StatusOr<std::unique_ptr<JointSpace>> space = JointSpace::Make(raw, *prefill_opt, *decode_opt);
  if (!space.ok()) return Status::InvalidArgument("disaggregated plan: " + space.status().message());
  d.space = std::move(*space);
  {
    std::vector<uint8_t> mask(d.space->head_size(0));
    d.space->Mask({}, 0, mask);
    if (std::find(mask.begin(), mask.end(), 1) == mask.end())
      return Status::InvalidArgument(fmt::format(
          "disaggregated plan: no pool split leaves both pools a structurally valid strategy for "
          "{} (prefill pool {} GPUs, decode pool {} GPUs)",
          serve.model.name, prefill_pool_gpus, decode_pool_gpus));
  }
  return d;
}

SpeculationChoices SpeculationOf(const SpaceOptions& decode) {
  SpeculationChoices c;
  for (int k : decode.mtp) (k > 0 ? c.on : c.off) = true;
  return c;
}

void RelabelPrefillDepth(DisaggPlan* d) {
  if (d->speculation != 1) return;
  auto relabel = [](JointSpace::Point* p, DisaggEvaluation* e) {
    p->prefill.mtp = p->decode.mtp;
    e->prefill.strategy.mtp = e->decode.strategy.mtp;
  };
  if (d->found) relabel(&d->best, &d->eval);
  if (d->search.found) d->search_eval.prefill.strategy.mtp = d->search_eval.decode.strategy.mtp;
  if (d->oracle.found) relabel(&d->oracle.best, &d->oracle.eval);
}

namespace {

// Searches the prepared joint space `d` (PrepareDisaggregated of `req`) and runs its oracle.
StatusOr<DisaggPlan> PlanOneSpeculation(DisaggPlan d, const DisaggPlanRequest& req,
                                        const PlanProgress& progress) {
  JointProblem problem(*d.space);
  StatusOr<std::unique_ptr<Searcher>> searcher = MakeSearcher(req.search);
  if (!searcher.ok()) return Status::InvalidArgument("--search: " + searcher.status().message());
  if (BuildsOneEngineStrategy((*searcher)->name()))
    return Status::InvalidArgument(fmt::format(
        "--search {}: builds a strategy of one engine's space; the disaggregated (joint) space "
        "needs {}",
        (*searcher)->name(), kJointSpaceSearchers));
  // The exact optimum of the joint space (the oracle baseline), under `obs`.
  auto solve_exact = [&](Observer* obs) {
    d.oracle = SolveDisaggExact(*d.space, obs, &d.oracle_stats);
    d.oracle_ran = true;
    d.oracle_status = d.oracle.interrupted ? "skipped" : "solved";
  };
  // --search oracle: the search is the exact optimum of the joint space (no work bound, as the
  // aggregated plan's oracle search), which is then also the oracle baseline.
  bool exact = (*searcher)->name() == "oracle";
  bool answered = false;  // the search is done (the oracle first solved the space)
  d.searcher_spec = req.search;
  // The oracle within `calls` simulator calls (its work bound); returns the calls it made.
  auto solve_bounded = [&](int64_t calls) {
    std::unique_ptr<Observer> outer = progress.Observe("disaggregated oracle");
    WorkBoundObserver bound(outer.get(), calls);
    solve_exact(&bound);
    d.oracle_bound_hit = bound.bound_hit() && !bound.inner_cancelled();
    d.interrupted = progress.Interrupted();
    return bound.calls();
  };
  // A named engine's joint space: the oracle first, within its bound (the portfolio, as the
  // aggregated plan's AggRequest::oracle_first); the searcher runs only where it does not finish.
  if (!exact && req.engine != engine::EngineId::kIdeal) {
    const int64_t calls =
        solve_bounded(req.oracle_calls > 0 ? req.oracle_calls : kDefaultOracleCalls);
    if (d.oracle_status == "solved") {
      exact = answered = true;
      d.search = DisaggOracleAsSearch(d.oracle);
      d.search.calls = calls;  // its simulator calls, as the aggregated portfolio's
    }
  }
  if (exact) d.searcher_spec = "oracle";
  if (!d.interrupted && !answered) {
    std::unique_ptr<Observer> obs = progress.Observe("disaggregated search " + req.search);
    if (exact) {
      WorkBoundObserver counted(obs.get(), 0);  // no bound: counts the calls
      solve_exact(&counted);
      d.search = DisaggOracleAsSearch(d.oracle);
      d.search.calls = counted.calls();
    } else {
      d.search = (*searcher)->SearchEncoded(problem, req.budget, req.seed, obs.get());
    }
  }
  d.interrupted = progress.Interrupted();
  if (d.search.found) d.search_eval = problem.Describe(d.search.best_encoded);
  if (!exact && !d.oracle_ran && !d.interrupted && !req.no_baselines && req.oracle_calls > 0)
    solve_bounded(req.oracle_calls);
  auto consider_one = [&](const char* by, const JointSpace::Point& p, const DisaggEvaluation& e,
                          int prefill_from, int decode_from) {
    if (!e.valid()) return;
    if (d.found && !(e.tokens_per_s_per_gpu > d.eval.tokens_per_s_per_gpu)) return;
    d.found = true;
    d.found_by = by;
    d.best = p;
    d.eval = e;
    d.prefill_batch_refined_from = prefill_from;
    d.decode_batch_refined_from = decode_from;
  };
  // Each candidate also with its instances' batches refined between the spaces' options
  // (plan/refine.h).
  auto consider = [&](const char* by, const JointSpace::Point& p, const DisaggEvaluation& e) {
    consider_one(by, p, e, 0, 0);
    if (!req.refine) return;
    JointSpace::Point q = p;
    DisaggEvaluation eq = e;
    if (RefineDisaggBatches(*d.models[p.model], &q, &eq))
      consider_one(by, q, eq, q.prefill.batch != p.prefill.batch ? p.prefill.batch : 0,
                   q.decode.batch != p.decode.batch ? p.decode.batch : 0);
  };
  if (d.search.found)
    consider(exact ? "oracle" : "search", d.space->Decode(d.search.best_encoded), d.search_eval);
  if (d.oracle_ran && d.oracle.found) consider("oracle", d.oracle.best, d.oracle.eval);
  // Latency at no cost in throughput: the batch of a role with capacity to spare lowered
  // (plan/refine.h; its batch before is reported as the batch refined from).
  if (d.found && req.refine) {
    const int pb = d.best.prefill.batch, db = d.best.decode.batch;
    if (LowerDisaggBatches(*d.models[d.best.model], &d.best, &d.eval)) {
      if (d.best.prefill.batch != pb && d.prefill_batch_refined_from == 0)
        d.prefill_batch_refined_from = pb;
      if (d.best.decode.batch != db && d.decode_batch_refined_from == 0)
        d.decode_batch_refined_from = db;
    }
  }
  // A named engine's figures are under its fitted factor (the problem's Workload::engine_factor,
  // as `l2s eval --engine E` and the aggregated plan): one price for the two serving modes.
  if (!d.found && !d.interrupted) {
    std::string why = d.oracle_ran && d.oracle_status == "solved" ? d.oracle.why_none : "";
    if (why.empty()) why = d.search.note.empty() ? "the search found no valid deployment" : d.search.note;
    return Status::Invalid("no disaggregated deployment is valid: " + why);
  }
  RelabelPrefillDepth(&d);
  return d;
}

}  // namespace

StatusOr<DisaggPlan> PlanDisaggregated(const Problem& serve, const DisaggPlanRequest& req,
                                      const PlanProgress& progress) {
  if (req.oracle_calls < 0)
    return Status::InvalidArgument(
        fmt::format("--oracle-calls must be >= 0, got {}", req.oracle_calls));
  // The joint space of the request: speculating where the decode role's mtp options allow it.
  StatusOr<DisaggPlan> first = PrepareDisaggregated(serve, req);
  if (!first.ok()) return first.status();
  if (req.speculation >= 0 || first->speculation != 1)
    return PlanOneSpeculation(std::move(*first), req, progress);
  // The depth open and 0 among it too: the joint space without speculation is planned first,
  // each with the whole budget (deterministic: work, not time), the better plan returned, the
  // calls of both counted.
  DisaggPlanRequest off = req;
  off.speculation = 0;
  StatusOr<DisaggPlan> second = PrepareDisaggregated(serve, off);
  if (!second.ok()) return PlanOneSpeculation(std::move(*first), req, progress);
  StatusOr<DisaggPlan> a = PlanOneSpeculation(std::move(*second), off, progress);
  if (progress.Interrupted()) return a;
  StatusOr<DisaggPlan> b = PlanOneSpeculation(std::move(*first), req, progress);
  if (!a.ok()) return b.ok() ? std::move(b) : std::move(a);
  if (!b.ok()) return a;
  const bool b_better = b->found && (!a->found || b->eval.tokens_per_s_per_gpu > a->eval.tokens_per_s_per_gpu);
  DisaggPlan& best = b_better ? *b : *a;
  const DisaggPlan& other = b_better ? *a : *b;
  best.search.calls += other.search.calls;
  best.other_speculation_calls = other.search.calls;
  best.interrupted = best.interrupted || other.interrupted;
  // The optimum is claimed only when both joint spaces were solved.
  if (best.oracle_status == "solved" && other.oracle_status != "solved") {
    best.oracle_status = other.oracle_status;
    best.oracle_bound_hit = other.oracle_bound_hit;
  }
  return std::move(best);
}

bool BuildsOneEngineStrategy(const std::string& searcher_name) {
  return searcher_name == "megatron" || searcher_name == "default";
}

SearchResult DisaggOracleAsSearch(const DisaggResult& d) {
  SearchResult r;
  r.searcher = "oracle";
  r.found = d.found;
  if (d.found) r.eval = d.eval.AsEvaluation();
  r.best_encoded = d.best_encoded;
  r.wall_s = d.wall_s;
  r.interrupted = d.interrupted;
  r.note = d.found || d.why_none.empty() ? d.note : d.why_none;
  return r;
}

StatusOr<std::vector<launch::DisaggLaunch>> DisaggLaunches(const DisaggPlan& d,
                                                           int decode_max_running) {
  if (!d.found) return Status::Invalid("no disaggregated plan to launch");
  const DisaggModel& model = *d.models[d.best.model];
  const RolePlan& p = d.eval.prefill;
  const RolePlan& q = d.eval.decode;
  // Each pool's problem is the one its instances were evaluated in (the model's simulators).
  launch::PoolPlan prefill{d.best.prefill, p.instances, p.gpus_per_instance,
                           model.PrefillSim(p.gpus_per_instance).problem()};
  // The prefill servers admit their engine's own running limit, as the engines' P/D recipes
  // leave it (a step holds what its token budget holds; prompts shorter than the nominal fill it
  // with more) and as the request-level simulation runs a prefill pool (serve/serve_sim.h);
  // never fewer than the priced batch, the prompts of nominal length one step's budget holds.
  prefill.engine_running_limit = true;
  Strategy sd = d.best.decode;
  if (decode_max_running > 0) sd.batch = decode_max_running;
  const launch::PoolPlan decode{sd, q.instances, q.gpus_per_instance,
                                model.DecodeSim(q.gpus_per_instance).problem()};
  // --engine E: its launch first; Dynamo's workers run E's backend (dynamo+vllm: vLLM).
  std::optional<launch::Engine> dynamo_backend;
  if (launch::DisaggEngineOf(d.engine) == launch::DisaggEngine::kDynamo)
    dynamo_backend = launch::WorkersOf(engine::EngineName(d.engine));
  return launch::TranslateDisaggPlan(prefill, decode, launch::KvTransfer::kNixl,
                                     launch::DisaggEngineOf(d.engine), dynamo_backend);
}

std::string DisaggRoleText(const RolePlan& r, const Strategy& s) {
  return fmt::format("{} x {} GPUs: {}", r.instances, r.gpus_per_instance, ToText(s));
}

ParetoSeries DisaggregatedParetoSeries(const Problem& base, DisaggPlanRequest req,
                                       const std::vector<double>& limits,
                                       const PlanProgress& progress, int jobs) {
  req.refine = false;  // grid points, as the aggregated series'
  return SweepTpot("disaggregated", limits, [&](double limit_ms) {
    SweepAnswer ans;
    Problem q = base;
    q.workload.tpot_ms = limit_ms;
    StatusOr<DisaggPlan> d = PlanDisaggregated(q, req);
    ans.cancelled = progress.Interrupted();
    if (!d.ok() || !d->found) return ans;
    ParetoPoint pt;
    pt.tokens_per_s_per_gpu = d->eval.tokens_per_s_per_gpu;
    pt.ttft_ms = d->eval.ttft_s * 1e3;
    pt.tpot_ms = d->eval.tpot_s * 1e3;
    pt.tokens_per_s_per_user = TokensPerUser(pt.tpot_ms);
    pt.strategy = fmt::format("prefill {}; decode {}",
                              DisaggRoleText(d->eval.prefill, d->best.prefill),
                              DisaggRoleText(d->eval.decode, d->best.decode));
    pt.found_by = d->found_by == "oracle" ? "oracle" : req.search;
    pt.exact = d->oracle_status == "solved" && d->oracle.found;
    ans.point = pt;
    return ans;
  }, jobs);
}

}  // namespace l2s::plan
