#include "plan/capacity.h"

#include "common/parallel.h"

#include <cmath>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "engine/model_classes.h"
#include "engine/restrict.h"
#include "plan/aggregated.h"
#include "plan/engines.h"
#include "plan/space.h"
#include "search/search.h"
#include "serve/step_cost.h"
#include "sim/disagg.h"

namespace l2s::plan {

std::vector<int> DefaultInstanceSizes(int max_gpus) {
  std::vector<int> out;
  for (int g = 1; g <= std::min(64, max_gpus); g *= 2) out.push_back(g);
  return out;
}

std::string LayoutLabel(const ModelSpec& /*m*/, const Strategy& s) {
  // The degrees without the per-operator dims, and without the batch when it is auto.
  std::string t = DegreesText(s);
  constexpr std::string_view kAuto = "batch=auto,";
  if (const auto at = t.find(kAuto); at != std::string::npos) t.erase(at, kAuto.size());
  return t;
}

std::string DisaggLabel(const ModelSpec& m, const Strategy& sp, const Strategy& sd) {
  return fmt::format("prefill [{}] | decode [{}]", LayoutLabel(m, sp), LayoutLabel(m, sd));
}

StatusOr<KvLink> KvLinkBetween(const ProblemOnGpusFn& problem_on_gpus, const std::string& engine,
                               int gp, int gd) {
  auto one = problem_on_gpus(std::max(gp, gd), engine);  // a valid size, for the NVLink domain
  if (!one.ok()) return one.status();
  const int dom = std::max(1, one->cluster.gpus_per_domain);
  const int need = std::max(2, gp + gd);
  auto p = problem_on_gpus(need <= dom ? need : (need + dom - 1) / dom * dom, engine);  // domains
  if (!p.ok()) return p.status();
  auto dm = DisaggModel::Make(SharedSetup(*p));
  if (!dm.ok()) return dm.status();
  return (*dm)->Link(gp, gd);
}

serve::ServeOptions SizedServeOptions(serve::ServeOptions base, Engine scheduler,
                                      const std::string& engine) {
  if (base.max_running == 0) base.max_running = DefaultsOf(scheduler).max_batch;
  if (base.router == serve::Assign::kEngineDefault) base.router = FrontEndRouter(engine);
  if (scheduler != Engine::kSglang) base.sglang_recv_interval = 1;  // SGLang's setting only
  return base;
}

serve::Assign FrontEndRouter(const std::string& engine) {
  return engine::RoundRobinFrontEnd(engine) ? serve::Assign::kRoundRobin
                                            : serve::Assign::kShortestQueue;
}

StatusOr<StrategySpace> InstanceSpace(engine::EngineId id, const Problem& p, int gpus, int mtp,
                                      engine::Role role) {
  StatusOr<StrategySpace> space = StrategySpace::Make(p.model, gpus, PlanSpaceOptions(p, mtp));
  if (!space.ok() || id == engine::EngineId::kIdeal) return space;
  StatusOr<SpaceOptions> opt =
      engine::RestrictOptions(engine::CapabilitiesOf(id), p.model, space->options(), role);
  if (!opt.ok()) return opt.status();
  return StrategySpace::Make(p.model, gpus, *opt);
}

std::vector<Strategy> OtherDegrees(const Simulator& sim, const StrategySpace& space,
                                   const Strategy& best, int n) {
  struct Scored {
    Strategy s;
    double v;
  };
  std::vector<Scored> all;
  if (n <= 0) return {};
  const ModelSpec& m = sim.problem().model;
  for (Strategy c : MegatronDegreeCombinations(m, space)) {
    if (c.pp == best.pp && c.tp == best.tp && c.dp == best.dp && c.ep == best.ep) continue;
    Strategy with_mtp = c;
    with_mtp.mtp = best.mtp;
    if (best.mtp != 0 && space.Check(with_mtp).ok()) c = with_mtp;
    const Evaluation e = sim.EvaluateWithoutBreakdown(c);
    if (e.valid()) all.push_back({c, e.tokens_per_s_per_gpu});
  }
  std::stable_sort(all.begin(), all.end(), [](const Scored& a, const Scored& b) { return a.v > b.v; });
  std::vector<Strategy> out;
  for (size_t i = 0; i < all.size() && static_cast<int>(i) < n; ++i) {
    all[i].s.batch = 0;
    out.push_back(all[i].s);
  }
  return out;
}

std::vector<Strategy> HoldingLayouts(const Simulator& sim, const StrategySpace& space,
                                     const Problem& inst, const Strategy& best,
                                     serve::PoolKind kind,
                                     const std::vector<serve::RequestSpec>& requests, int more,
                                     int64_t* largest) {
  int64_t isl = 0, osl = 0, need = 0;
  serve::MeanLengths(requests, &isl, &osl);
  for (const serve::RequestSpec& r : requests) need = std::max(need, serve::RankKvNeed(r, kind));
  if (largest != nullptr) *largest = need;
  auto holds = [&](const Strategy& s) {
    auto cost = StepCost::Make(inst, s);
    return cost.ok() && serve::RankKvTokens(**cost, kind, isl, osl) >= need;
  };
  std::vector<Strategy> out;
  if (holds(best)) out.push_back(best);
  // Every other combination, best first: the first that holds leads when `best` does not.
  for (const Strategy& o : OtherDegrees(sim, space, best, 1 << 20)) {
    if (static_cast<int>(out.size()) > more) break;
    if (holds(o)) out.push_back(o);
  }
  return out;
}

namespace {

// Collects every evaluation's verdict of a layout search, so that a size with no valid layout
// says why (FailureStats::Reason: the binding limit and the nearest miss).
class FailureObserver : public Observer {
 public:
  explicit FailureObserver(FailureStats* stats) : stats_(stats) {}
  void OnEvaluation(const Strategy& s, const Evaluation& e) override { stats_->Add(s, e); }

 private:
  FailureStats* stats_;
};

// A size (or one role's size) with no layout: where ("2 GPUs", "prefill 64 GPUs"), why in full
// (the sizing's `skipped` line), and for a search that found nothing within the SLOs its nearest
// miss in brief and as a fraction of the limit (FailureStats::Brief, Over).
struct NoLayout {
  NoLayout(std::string w, std::string r, std::string b = "", double o = HUGE_VAL)
      : where(std::move(w)), reason(std::move(r)), brief(std::move(b)), over(o) {}
  std::string where, reason, brief;
  double over;
};

constexpr const char* kNoSizeInBothRoles =
    "no instance size holds the model in both roles within the SLOs' limits: ";

NoLayout SearchMiss(std::string where, const FailureStats& f, const Problem& p) {
  return {std::move(where), f.Reason(p), f.Brief(p), f.Over(p)};
}

// Why no size has a layout, in one line: every reason in full while that stays short; else the
// nearest latency miss in full and each size in brief ("the nearest, prefill 64 GPUs: no
// strategy meets the TTFT SLO of 10 ms: ...; each size: 1 GPUs: does not fit (...); 2 GPUs:
// TTFT 152.3 ms; ...").
std::string JoinSkipped(const std::vector<NoLayout>& skipped) {
  if (skipped.empty()) return "no size was tried";
  std::vector<std::string> full, brief;
  const NoLayout* nearest = nullptr;
  for (const NoLayout& x : skipped) {
    full.push_back(x.where + ": " + x.reason);
    brief.push_back(x.where + ": " + (x.brief.empty() ? x.reason : x.brief));
    if (x.over < HUGE_VAL && (nearest == nullptr || x.over < nearest->over)) nearest = &x;
  }
  std::string all = fmt::format("{}", fmt::join(full, "; "));
  if (all.size() <= 400 || nearest == nullptr) return all;
  return fmt::format("the nearest, {}: {}; each size: {}", nearest->where, nearest->reason,
                     fmt::join(brief, "; "));
}

std::vector<std::string> SkippedLines(const std::vector<NoLayout>& skipped) {
  std::vector<std::string> out;
  for (const NoLayout& x : skipped) out.push_back(x.where + ": " + x.reason);
  return out;
}

// The engine --engine names (kIdeal when none or unknown; the problem callback rejects unknown
// names).
engine::EngineId EngineIdOf(const std::string& name) {
  if (name.empty()) return engine::EngineId::kIdeal;
  StatusOr<engine::EngineId> id = engine::ParseEngineId(name);
  return id.ok() ? *id : engine::EngineId::kIdeal;
}

// The disaggregated candidates: for each size, the best prefill layout (prefill mode within the
// SLOs' TTFT limit `ttft_ms`) and the best decode layout (decode mode within the SLOs' TPOT limit
// `tpot_ms`) by the searcher; pairs of each role's 3 sizes that carry the stream on the fewest
// GPUs in the steady state (ties: tokens/s per GPU), each pair sized by serve::FewestGpusDisagg,
// none grown past `bound_gpus` (> 0: the aggregated answer's GPUs).
StatusOr<serve::DisaggCapacityResult> DisaggFewest(const CapacityRequest& req,
                                                   const std::vector<int>& sizes, double ttft_ms,
                                                   double tpot_ms, int bound_gpus,
                                                   std::vector<NoLayout>* skipped) {
  auto searcher = MakeSearcher(req.search);
  if (!searcher.ok()) return searcher.status();
  const engine::EngineId eid = EngineIdOf(req.engine);
  struct Role {
    int g;
    Problem p;
    Strategy s;
    double per_gpu;
    double rps;  // requests/s of one instance (prefill: / isl, decode: / osl)
  };
  std::vector<Role> pre, dec;
  // A speculating deployment's prefill servers run the draft's extend (its price does not depend
  // on the depth): with speculation open, each prefill size is searched without (mtp 0) and with
  // it (mtp 1), each decode size at its best depth and without speculation, and a pair joins a
  // prefill and a decode layout that agree.
  struct Variant {
    bool prefill;
    int mtp;  // the role space's mtp (-1: the plan's depths)
  };
  std::vector<Variant> variants;
  bool open = false;
  // The prompt a TTFT percentile reads: the stream's uncached prompt tokens at the tightest TTFT
  // key's quantile (mean: the mean). A prefill layout is searched at that prompt (if longer than
  // the nominal one) within the TTFT limit, so that it can prefill it alone in time: with
  // lognormal prompts the P99 prompt is ~4x the mean, and a layout sized on the mean one (one
  // GPU of compute per prompt) missed P99 TTFT at every pool size.
  int64_t ttft_prompt = 0;
  {
    double q = -1;
    for (const serve::Slo& o : req.slos) {
      if (o.metric != serve::Metric::kTtft) continue;
      const double oq = serve::StatQuantile(o.stat);  // 0: the mean
      q = q < 0 ? oq : std::max(q, oq);
    }
    if (q >= 0 && !req.requests.empty()) {
      std::vector<double> uncached;
      double sum = 0;
      for (const serve::RequestSpec& r : req.requests) {
        uncached.push_back(static_cast<double>(r.prompt - r.cached));
        sum += uncached.back();
      }
      ttft_prompt = static_cast<int64_t>(std::ceil(
          q > 0 ? serve::Quantile(uncached, q) : sum / static_cast<double>(uncached.size())));
    }
  }
  for (int g : sizes) {
    auto serve_p = req.problem_on_gpus(g, req.engine);
    if (!serve_p.ok()) return serve_p.status();
    if (variants.empty()) {  // the model is every size's
      open = req.mtp < 0 && serve_p->model.can_speculate();
      variants = open ? std::vector<Variant>{{true, 0}, {true, 1}, {false, -1}, {false, 0}}
                      : std::vector<Variant>{{true, req.mtp > 0 ? 1 : 0}, {false, req.mtp}};
    }
    for (const Variant& v : variants) {
      const bool is_prefill = v.prefill;
      auto rp = is_prefill ? PrefillProblem(*serve_p, serve_p->cluster, g)
                           : DecodeProblem(*serve_p, serve_p->cluster, g);
      if (!rp.ok()) return rp.status();
      // Each role within its limit: a prefill layout whose prompt alone (batch 1) takes longer
      // than the TTFT keys' tightest limit meets it at no pool size (aggregated sizing bounds its
      // serve-mode search alike).
      if (is_prefill) {
        rp->workload.ttft_ms = ttft_ms;
        if (ttft_ms > 0) rp->workload.isl = std::max(rp->workload.isl, ttft_prompt);
      } else {
        rp->workload.tpot_ms = tpot_ms;
      }
      const Simulator sim(*rp);
      auto space = InstanceSpace(eid, *rp, g, v.mtp,
                                 is_prefill ? engine::Role::kPrefillPool : engine::Role::kDecodePool);
      if (!space.ok()) {
        skipped->push_back({fmt::format("{} {} GPUs", is_prefill ? "prefill" : "decode", g),
                            space.status().message()});
        continue;
      }
      FailureStats failures;
      FailureObserver why(&failures);
      const SearchResult r = (*searcher)->Search(sim, *space, req.budget_calls, req.seed, &why);
      if (!r.found) {
        skipped->push_back(SearchMiss(fmt::format("{} {} GPUs{}", is_prefill ? "prefill" : "decode", g,
                                                  !open        ? ""
                                                  : v.mtp > 0  ? " (speculating)"
                                                  : v.mtp == 0 ? " (not speculating)"
                                                               : ""),
                                      failures, *rp));
        continue;
      }
      Strategy s = r.best;
      s.batch = 0;
      Problem inst = *serve_p;  // the step cost reads model, cluster, dtypes, engine
      inst.workload.disagg_pool = true;
      // A rank of the role's pool must hold the stream's largest request (its prompt on a
      // prefill rank): else the searcher's best gives way to the best combination that does.
      int64_t largest = 0;
      const std::vector<Strategy> held = HoldingLayouts(
          sim, *space, inst, s,
          is_prefill ? serve::PoolKind::kPrefill : serve::PoolKind::kDecode, req.requests, 0,
          &largest);
      if (held.empty()) {
        skipped->push_back({fmt::format("{} {} GPUs", is_prefill ? "prefill" : "decode", g),
                            fmt::format("no layout's rank holds the stream's longest {} ({} tokens "
                                        "of KV)",
                                        is_prefill ? "prompt" : "request", largest)});
        continue;
      }
      Evaluation e = r.eval;
      if (!(held.front() == s)) {
        s = held.front();
        e = sim.EvaluateWithoutBreakdown(s);
      }
      // The decode size's best depth may be 0 already: its layout once.
      if (!is_prefill && std::any_of(dec.begin(), dec.end(), [&](const Role& o) {
            return o.g == g && o.s == s;
          }))
        continue;
      // Requests/s of an instance: its tokens/s over the nominal prompt (or output) length.
      const double len =
          static_cast<double>(is_prefill ? serve_p->workload.isl : rp->workload.osl);
      (is_prefill ? pre : dec)
          .push_back({g, inst, s, e.tokens_per_s_per_gpu, e.tokens_per_s / len});
    }
  }
  if (pre.empty() || dec.empty())
    return Status::Invalid(
        std::string(kNoSizeInBothRoles) + JoinSkipped(*skipped));
  // Each role's 3 sizes that carry the stream on the fewest GPUs in the steady state: the sizes
  // most efficient per GPU are not the fewest GPUs when the load fills only part of one large
  // instance.
  int64_t isl = 0, osl = 0;
  serve::MeanLengths(req.requests, &isl, &osl);
  const double rate = req.concurrency > 0
                          ? serve::ClosedLoopRateGuess(req.concurrency, osl, req.slos)
                          : serve::StreamRate(req.requests);
  auto top = [rate](const std::vector<Role>& v) {
    std::vector<RoleSize> est;
    for (const Role& r : v) est.push_back({r.g, r.rps, r.per_gpu});
    std::vector<Role> out;
    for (int i : SizesForFewestGpus(est, rate, 3)) out.push_back(v[i]);
    return out;
  };
  // Per speculation setting (the decode layouts' mtp, the prefill layouts' their own), each
  // role's top sizes paired; the prefill layout takes the decode layout's depth, as launched.
  auto with_spec = [](const std::vector<Role>& v, bool on) {
    std::vector<Role> out;
    for (const Role& r : v)
      if ((r.s.mtp > 0) == on) out.push_back(r);
    return out;
  };
  std::vector<std::pair<Role, Role>> pairs;
  for (bool on : {false, true})
    for (const Role& a : top(with_spec(pre, on)))
      for (const Role& b : top(with_spec(dec, on))) pairs.emplace_back(a, b);
  if (pairs.empty())
    return Status::Invalid(
        "no prefill and decode layouts agree on speculation (a speculating deployment's prefill "
        "servers run the draft): " + JoinSkipped(*skipped));
  std::vector<serve::DisaggLayoutOption> layouts;
  for (auto& [a, b] : pairs) {
    a.s.mtp = b.s.mtp;
    {
      auto link = KvLinkBetween(req.problem_on_gpus, req.engine, a.g, b.g);
      if (!link.ok()) return link.status();
      serve::DisaggLayoutOption o;
      o.prefill_problem = a.p;
      o.decode_problem = b.p;
      o.prefill = a.s;
      o.decode = b.s;
      o.link = *link;
      o.layerwise = req.layerwise;
      o.label = DisaggLabel(a.p.model, a.s, b.s);
      o.prefill_rps_hint = a.rps;
      o.decode_rps_hint = b.rps;
      layouts.push_back(o);
    }
  }
  serve::CapacityOptions co;
  co.max_gpus = req.max_gpus;
  co.concurrency = req.concurrency;
  co.bound_gpus = bound_gpus;
  co.serve = layouts.empty()
                 ? req.serve
                 : SizedServeOptions(req.serve, layouts.front().decode_problem.workload.engine,
                                     req.engine);
  return serve::FewestGpusDisagg(layouts, req.requests, req.slos, co);
}

}  // namespace

std::vector<int> SizesForFewestGpus(const std::vector<RoleSize>& sizes, double rate, int k) {
  auto need = [rate](const RoleSize& r) {
    return r.rps > 0 ? std::ceil(rate / r.rps - 1e-9) * r.gpus : HUGE_VAL;
  };
  std::vector<int> idx(sizes.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int>(i);
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) {
    const double na = need(sizes[a]), nb = need(sizes[b]);
    return na != nb ? na < nb : sizes[a].tokens_per_s_per_gpu > sizes[b].tokens_per_s_per_gpu;
  });
  if (static_cast<int>(idx.size()) > k) idx.resize(std::max(0, k));
  return idx;
}

StatusOr<FewestOutcome> SizeFewest(const CapacityRequest& req) {
  if (!req.problem_on_gpus) return Status::InvalidArgument("capacity: no problem callback");
  if (req.slos.empty()) return Status::InvalidArgument("capacity: sizing needs SLOs");
  if (req.concurrency < 0) return Status::InvalidArgument("capacity: negative concurrency");
  if (req.concurrency > 0 ? req.requests.empty() : serve::StreamRate(req.requests) <= 0)
    return Status::InvalidArgument(
        "capacity: sizing needs a request stream: arrivals spread in time (open loop) or clients "
        "(closed loop)");
  const std::vector<int> sizes =
      req.sizes_gpus.empty() ? DefaultInstanceSizes(req.max_gpus) : req.sizes_gpus;
  for (int g : sizes)
    if (g < 1 || g > req.max_gpus)
      return Status::InvalidArgument(
          fmt::format("capacity: instance size {} is not in [1, max GPUs {}]", g, req.max_gpus));
  if (sizes.empty()) return Status::InvalidArgument("capacity: no instance size");
  auto searcher = MakeSearcher(req.search);
  if (!searcher.ok()) return searcher.status();
  FewestOutcome out;
  const engine::EngineId eid = EngineIdOf(req.engine);
  const engine::Capabilities& caps = engine::CapabilitiesOf(eid);
  out.engine = std::string(engine::EngineName(eid));
  std::vector<serve::LayoutOption> layouts;
  std::vector<NoLayout> skipped;  // out.skipped's lines, structured for the error below
  // The layout search maximises tokens/s per GPU in serve mode within the SLOs' steady-state
  // limits (serve::SteadyLimitsOf, the rule plan with a traffic uses), so that it proposes
  // layouts whose step latency can meet the percentiles.
  const serve::SteadyLimits limits = serve::SteadyLimitsOf(req.slos);
  const double ttft_ms = limits.ttft_ms, tpot_ms = limits.tpot_ms;
  if (Status d = engine::CheckDisaggregation(eid); req.serving == Serving::kDisagg && !d.ok())
    return Status::InvalidArgument("--serving disagg: " + d.message());
  // A TTFT limit the engine's request overhead alone exceeds: no size meets it.
  for (const serve::Slo& o : req.slos) {
    if (o.metric != serve::Metric::kTtft) continue;
    Workload w;
    w.engine = caps.scheduler;
    w.ttft_ms = o.limit_ms;
    if (std::string below = Simulator::TtftBelowRequestOverhead(w); !below.empty())
      return Status::Invalid(fmt::format("--slo {}: {}", serve::SlosText({o}), below));
  }
  const bool agg = req.serving != Serving::kDisagg,
             dis = req.serving != Serving::kAgg && caps.disaggregation;
  out.agg = agg;
  if (Status d = engine::CheckDisaggregation(eid); req.serving == Serving::kAuto && !d.ok())
    skipped.push_back({"disaggregated", d.message()});  // sized aggregated only: said
  // The first size's problem without the engine's cluster check: the GPU, its node size.
  auto p0_or = req.problem_on_gpus(sizes.front(), "");
  if (!p0_or.ok()) return p0_or.status();
  const int node = p0_or->cluster.gpus_per_domain;
  std::vector<int> engine_sizes;
  for (int g : sizes) {
    if (caps.single_node && g > node)
      skipped.push_back({fmt::format("{} GPUs", g),
                         fmt::format("{} serves from one node ({} GPUs)", caps.title, node)});
    else
      engine_sizes.push_back(g);
  }
  if (engine_sizes.empty())
    return Status::InvalidArgument(
        fmt::format("--sizes: {} serves from one node; no size is at most {} GPUs", caps.title,
                    node));
  for (int g : agg ? engine_sizes : std::vector<int>{}) {
    auto p = req.problem_on_gpus(g, req.engine);
    if (!p.ok()) return p.status();
    p->workload.ttft_ms = ttft_ms;
    p->workload.tpot_ms = tpot_ms;
    const Simulator sim(*p);
    auto space = InstanceSpace(eid, *p, g, req.mtp);
    if (!space.ok()) {
      skipped.push_back({fmt::format("{} GPUs", g), space.status().message()});
      continue;
    }
    FailureStats failures;
    FailureObserver why(&failures);
    const SearchResult r = (*searcher)->Search(sim, *space, req.budget_calls, req.seed, &why);
    if (!r.found) {
      skipped.push_back(SearchMiss(fmt::format("{} GPUs", g), failures, *p));
      continue;
    }
    Strategy st = r.best;
    st.batch = 0;
    p->workload.ttft_ms = p->workload.tpot_ms = 0;
    int64_t largest = 0;
    const std::vector<Strategy> held =
        HoldingLayouts(sim, *space, *p, st, serve::PoolKind::kAggregated, req.requests,
                       req.layouts_per_size - 1, &largest);
    if (held.empty()) {
      skipped.push_back({fmt::format("{} GPUs", g),
                         fmt::format("no layout's rank holds the stream's longest request ({} "
                                     "tokens of KV)",
                                     largest)});
      continue;
    }
    for (const Strategy& a : held) layouts.push_back({*p, a, LayoutLabel(p->model, a)});
  }
  if (agg && layouts.empty() && !dis)
    return Status::Invalid("no instance size holds the model within the SLOs' limits: " +
                           JoinSkipped(skipped));
  serve::CapacityOptions co;
  co.max_gpus = req.max_gpus;
  co.concurrency = req.concurrency;
  co.rate.rel_tol = req.rate_rel_tol;
  co.rate.longer = req.longer_stream;
  co.jobs = req.jobs;
  co.serve = layouts.empty() ? req.serve
                             : SizedServeOptions(req.serve, layouts.front().problem.workload.engine,
                                                 req.engine);
  if (agg && !layouts.empty()) {
    StatusOr<serve::CapacityResult> res = serve::FewestGpus(layouts, req.requests, req.slos, co);
    if (!res.ok()) return res.status();
    out.res = std::move(*res);
  }
  if (dis) {
    std::vector<NoLayout> dskipped;
    // The aggregated answer bounds the pairs' growth: one needing more GPUs cannot answer.
    const int agg_gpus = out.res.found ? out.res.candidates[out.res.best].gpus : 0;
    auto d = DisaggFewest(req, engine_sizes, ttft_ms, tpot_ms, agg_gpus, &dskipped);
    if (!d.ok() && agg && layouts.empty()) {  // neither serving has a layout: both reasons
      if (!dskipped.empty() && d.status().message().rfind(kNoSizeInBothRoles, 0) == 0) {
        for (NoLayout& x : dskipped) skipped.push_back(std::move(x));
        return Status::Invalid(fmt::format(
            "no instance size holds the model within the SLOs' limits, aggregated or "
            "disaggregated: {}",
            JoinSkipped(skipped)));
      }
      return Status::Invalid(
          fmt::format("no instance size holds the model within the SLOs' limits: {}; "
                      "disaggregated: {}",
                      JoinSkipped(skipped), d.status().message()));
    }
    if (!d.ok() && !agg) return d.status();
    if (d.ok()) out.dres = std::move(*d);
    else skipped.push_back({"disaggregated", d.status().message()});
    for (NoLayout& x : dskipped) skipped.push_back(std::move(x));
  }
  // Which serving answers with the fewest GPUs (ties: aggregated).
  const serve::CapacityResult& res = out.res;
  const bool dis_found = out.dres && out.dres->found;
  out.dis_best = dis_found && (!res.found || out.dres->candidates[out.dres->best].gpus <
                                                 res.candidates[res.best].gpus);
  out.any_found = res.found || dis_found;
  out.p0 = layouts.empty() ? *p0_or : layouts.front().problem;
  if (out.dis_best) {
    const serve::DisaggSizeResult& d = out.dres->candidates[out.dres->best];
    const ModelSpec& m = d.layout.prefill_problem.model;
    out.gpus = d.gpus;
    out.layout = fmt::format("{} x prefill [{}] + {} x decode [{}]", d.prefill_instances,
                             LayoutLabel(m, d.layout.prefill), d.decode_instances,
                             LayoutLabel(m, d.layout.decode));
  } else if (res.found) {
    const serve::SizeResult& b = res.candidates[res.best];
    out.gpus = b.gpus;
    out.max_rps = b.instances * b.instance_max_rps;
    out.layout = fmt::format("{} x [{}]", b.instances, b.layout.label);
  }
  out.skipped = SkippedLines(skipped);
  return out;
}

StatusOr<EnginesOutcome> SizeFewestAllEngines(const CapacityRequest& req) {
  if (!req.problem_on_gpus) return Status::InvalidArgument("capacity: no problem callback");
  // Every serving engine with a build for the GPUs (TabulatedEngines on one node).
  auto p1 = req.problem_on_gpus(1, "");
  if (!p1.ok()) return p1.status();
  ClusterSpec node = p1->cluster;
  node.num_gpus = node.gpus_per_domain;
  EnginesOutcome out;
  std::optional<FewestOutcome> best;
  Status first_error = Status::Ok();
  // Every engine's sizing is its own: all at once (req.jobs threads shared between the engines
  // and their layouts), then read in table order.
  const std::vector<engine::EngineId> ids = TabulatedEngines(node);
  const int n = static_cast<int>(ids.size());
  const int inner = std::max(1, req.jobs / std::max(1, std::min(req.jobs, n)));
  std::vector<std::optional<StatusOr<FewestOutcome>>> sized(ids.size());
  ParallelFor(n, req.jobs, [&](int i) {
    const engine::EngineId id = ids[static_cast<size_t>(i)];
    if (!engine::LoadsModelClass(id, p1->model)) return;
    CapacityRequest e = req;
    e.engine = std::string(engine::EngineName(id));
    e.jobs = inner;
    sized[static_cast<size_t>(i)] = SizeFewest(e);
  });
  for (size_t i = 0; i < ids.size(); ++i) {
    const engine::EngineId id = ids[i];
    EngineRow row;
    row.engine = std::string(engine::EngineName(id));
    // An engine that does not load the model's class (ATOM's registry) sized nothing: its row
    // says why, as the plan's engine table does.
    if (!sized[i]) {
      row.layout = engine::ModelClassNote(id, p1->model);
      out.rows.push_back(row);
      continue;
    }
    StatusOr<FewestOutcome>& o = *sized[i];
    if (!o.ok()) {
      if (first_error.ok()) first_error = o.status();
      row.layout = o.status().message();
    } else if (!o->any_found) {
      row.layout = fmt::format("no size within --max-gpus {} meets the SLOs", req.max_gpus);
    } else {
      row.found = true;
      row.gpus = o->gpus;
      row.layout = o->layout;
    }
    out.rows.push_back(row);
    // Fewest GPUs; ties: the higher rate those GPUs sustain (aggregated), then table order.
    if (o.ok() && (!best || (o->any_found && (!best->any_found || o->gpus < best->gpus ||
                                              (o->gpus == best->gpus &&
                                               o->max_rps > best->max_rps)))))
      best = std::move(*o);
  }
  if (!best)
    return first_error.ok() ? Status::Invalid("no serving engine has a build for the GPUs")
                            : first_error;
  out.best = std::move(*best);
  return out;
}

}  // namespace l2s::plan
