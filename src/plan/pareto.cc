#include "plan/pareto.h"

#include "common/parallel.h"
#include "plan/replicas.h"
#include "plan/work_bound.h"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <utility>

namespace l2s {

namespace {

ParetoPoint PointOf(const Strategy& s, const Evaluation& e, std::string found_by, bool exact) {
  ParetoPoint p;
  p.tokens_per_s_per_gpu = e.tokens_per_s_per_gpu;
  p.tpot_ms = e.tpot_s * 1e3;
  p.ttft_ms = e.ttft_s * 1e3;
  p.tokens_per_s_per_user = TokensPerUser(p.tpot_ms);
  p.strategy = ToText(s);
  p.found_by = std::move(found_by);
  p.exact = exact;
  return p;
}

}  // namespace

double TokensPerUser(double tpot_ms) { return tpot_ms > 0 ? 1000.0 / tpot_ms : 0.0; }

bool Dominates(const ParetoPoint& a, const ParetoPoint& b) {
  return a.tokens_per_s_per_gpu >= b.tokens_per_s_per_gpu &&
         a.tokens_per_s_per_user >= b.tokens_per_s_per_user &&
         (a.tokens_per_s_per_gpu > b.tokens_per_s_per_gpu ||
          a.tokens_per_s_per_user > b.tokens_per_s_per_user);
}

std::vector<ParetoPoint> ParetoFront(std::vector<ParetoPoint> points) {
  // By tokens/s per user descending (ties: per GPU descending, then input order); a point is on
  // the front when its throughput per GPU beats every point at least as interactive.
  std::vector<size_t> order(points.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const ParetoPoint& x = points[a];
    const ParetoPoint& y = points[b];
    if (x.tokens_per_s_per_user != y.tokens_per_s_per_user)
      return x.tokens_per_s_per_user > y.tokens_per_s_per_user;
    return x.tokens_per_s_per_gpu > y.tokens_per_s_per_gpu;
  });
  std::vector<ParetoPoint> front;
  for (size_t i : order) {
    if (!front.empty() && !(points[i].tokens_per_s_per_gpu > front.back().tokens_per_s_per_gpu))
      continue;
    front.push_back(std::move(points[i]));
  }
  std::reverse(front.begin(), front.end());
  return front;
}

std::vector<double> TpotLimitGrid(double fastest_ms, double slowest_ms, int n) {
  if (!(fastest_ms > 0) || !(fastest_ms < slowest_ms) || n < 2) return {slowest_ms};
  std::vector<double> out;
  const double ratio = slowest_ms / fastest_ms;
  for (int i = 0; i < n; ++i)
    out.push_back(i == 0       ? fastest_ms
                  : i == n - 1 ? slowest_ms
                               : fastest_ms * std::pow(ratio, static_cast<double>(i) / (n - 1)));
  return out;
}

ParetoSeries SweepTpot(const std::string& name, const std::vector<double>& limits,
                       const BestAtTpot& best, int jobs, const std::vector<ParetoPoint>& known) {
  ParetoSeries s;
  s.name = name;
  // Each limit's answer; once one is cancelled, the limits not yet started are skipped (as
  // cancelled: the walk below stops at the first).
  std::vector<SweepAnswer> answers(limits.size());
  std::atomic<bool> stop{false};
  ParallelFor(static_cast<int>(limits.size()), jobs, [&](int i) {
    SweepAnswer& a = answers[static_cast<size_t>(i)];
    if (stop.load()) {
      a.cancelled = true;
      return;
    }
    a = best(limits[static_cast<size_t>(i)]);
    if (a.cancelled) stop.store(true);
  });
  for (size_t i = 0; i < limits.size(); ++i) {
    const double limit = limits[i];
    SweepAnswer a = std::move(answers[i]);
    // A plan found under one limit is valid under every looser one: an answer below a known
    // point or an earlier limit's point that meets this limit is replaced by that point (exact:
    // false), so that an inexact search never makes a series fall as its limit loosens.
    auto take_better = [&](const ParetoPoint& k) {
      if (k.tpot_ms <= limit * (1 + 1e-9) &&
          (!a.point || k.tokens_per_s_per_gpu > a.point->tokens_per_s_per_gpu)) {
        a.point = k;
        a.point->exact = false;
      }
    };
    for (const ParetoPoint& k : known) take_better(k);
    for (const ParetoPoint& k : s.sweep) take_better(k);
    if (a.point) {
      a.point->series = name;
      a.point->tpot_limit_ms = limit;
      s.sweep.push_back(*a.point);
    }
    if (a.cancelled) {
      s.cancelled = true;
      break;
    }
  }
  s.front = ParetoFront(s.sweep);
  return s;
}

std::optional<FastestTpot> FastestTpotScan(const Simulator& sim, const StrategySpace& space) {
  Problem p = sim.problem();
  p.workload.tpot_ms = 0;
  const Simulator free(std::move(p));
  const ModelSpec& m = free.problem().model;
  std::optional<FastestTpot> best;
  for (Strategy s : MegatronDegreeCombinations(m, space)) {
    s.batch = 1;
    for (int sp = 0; sp < (s.tp > 1 ? 2 : 1); ++sp)
      for (int mtp : space.mtp_options()) {
        s.sp = sp == 1;
        s.mtp = mtp;
        const Evaluation e = free.Evaluate(s);
        if (e.valid() && e.tpot_s > 0 && (!best || e.tpot_s < best->eval.tpot_s))
          best = FastestTpot{s, e};
      }
  }
  return best;
}

SweepAnswer BestAggregatedAtTpot(const Problem& base, const StrategySpace& space,
                                 double tpot_limit_ms, const AggregatedSweepOptions& opt,
                                 Observer* observer) {
  SweepAnswer out;
  Problem p = base;
  // A relative tolerance of 1e-9: the grid's ends are TPOTs of actual plans, which must meet them.
  if (tpot_limit_ms > 0) p.workload.tpot_ms = tpot_limit_ms * (1 + 1e-9);
  const Simulator sim(std::move(p));
  StatusOr<std::unique_ptr<Searcher>> oracle = MakeSearcher("oracle");
  if (!oracle.ok()) return out;
  WorkBoundObserver bound(observer, opt.oracle_calls);
  const SearchResult r = (*oracle)->Search(sim, space, opt.budget, opt.seed, &bound);
  if (bound.inner_cancelled()) {
    out.cancelled = true;
    if (r.found) out.point = PointOf(r.best, r.eval, "oracle", false);
    return out;
  }
  if (!r.interrupted) {
    if (r.found) out.point = PointOf(r.best, r.eval, "oracle", true);
    return out;
  }
  // The oracle reached its work bound: the configured searcher, and the oracle's partial best.
  StatusOr<std::unique_ptr<Searcher>> fallback = MakeSearcher(opt.searcher);
  SearchResult f;
  if (fallback.ok()) {
    WorkBoundObserver pass(observer, 0);
    f = (*fallback)->Search(sim, space, opt.budget, opt.seed, &pass);
    out.cancelled = pass.inner_cancelled();
  }
  const bool use_f = f.found && (!r.found || f.eval.tokens_per_s_per_gpu >
                                                 r.eval.tokens_per_s_per_gpu);
  if (use_f) out.point = PointOf(f.best, f.eval, (*fallback)->name(), false);
  else if (r.found) out.point = PointOf(r.best, r.eval, "oracle (partial)", false);
  return out;
}

StatusOr<ParetoSeries> AggregatedParetoSeries(const Problem& base, const StrategySpace& space,
                                              const AggregatedSweepOptions& opt,
                                              Observer* observer, std::vector<double>* limits) {
  if (base.workload.mode == Mode::kPrefill)
    return Status::InvalidArgument("the TPOT sweep needs decode or serve mode (prefill has no TPOT)");
  // The slow end: the best plan under the problem's own SLOs.
  const SweepAnswer top = BestAggregatedAtTpot(base, space, 0, opt, observer);
  if (top.cancelled) {
    ParetoSeries s;
    s.name = "aggregated";
    s.cancelled = true;
    return s;
  }
  if (!top.point && base.workload.tpot_ms > 0) {
    // The TPOT SLO may be what no plan meets: say how fast the fastest plan is.
    const std::optional<FastestTpot> f = FastestTpotScan(Simulator(base), space);
    if (f && f->eval.tpot_s * 1e3 > base.workload.tpot_ms)
      return Status::Invalid(fmt::format(
          "no strategy meets the TPOT SLO of {} ms: the fastest found takes {:.3f} ms per token "
          "({})",
          base.workload.tpot_ms, f->eval.tpot_s * 1e3, ToText(f->strategy)));
  }
  if (!top.point)
    return Status::Invalid(fmt::format("no strategy of {} on {} x {} is valid, so there is no "
                                       "frontier to sweep",
                                       base.model.name, base.cluster.num_gpus,
                                       base.cluster.gpu.name));
  const double slowest = top.point->tpot_ms;
  const Simulator sim(base);
  const std::optional<FastestTpot> fast = FastestTpotScan(sim, space);
  // The scan holds the same limits as the problem except its TPOT SLO; its fastest strategy
  // meets that SLO whenever the top point does (it is at least as fast).
  const double fastest = fast ? std::min(fast->eval.tpot_s * 1e3, slowest) : slowest;
  *limits = TpotLimitGrid(fastest, slowest, opt.points);
  // A plan found under one limit is valid under every looser one: each limit's answer is the
  // better of its own search and every plan known so far that meets it (the scan's fastest, the
  // unconstrained search's best, earlier limits' answers). Exact answers cannot be beaten; this
  // keeps inexact sweeps monotone and gives the fastest limit at least the scan's plan.
  std::vector<ParetoPoint> known = {*top.point};
  if (fast) known.push_back(PointOf(fast->strategy, fast->eval, "batch-1 scan", false));
  return SweepTpot(
      "aggregated", *limits,
      [&](double limit) { return BestAggregatedAtTpot(base, space, limit, opt, observer); },
      opt.jobs, known);
}

ParetoSeries WithReplicas(ParetoSeries series, const Problem& base,
                          const std::function<StatusOr<StrategySpace>(const Problem&)>& space_of,
                          const AggregatedSweepOptions& opt, Observer* observer) {
  if (!base.model.is_moe() || series.cancelled || series.sweep.empty()) return series;
  const int n = base.cluster.num_gpus;
  struct Size {
    int gpus;
    Problem problem;
    StrategySpace space;
  };
  std::vector<Size> sizes;  // largest first: a tie keeps the larger instance
  const std::vector<int> all = plan::ReplicaInstanceSizes(base.cluster);
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (*it == n || !plan::PlannedSize(base, *it)) continue;
    Problem q = plan::InstanceProblem(base, *it);
    StatusOr<StrategySpace> space = space_of(q);
    if (space.ok()) sizes.push_back({*it, std::move(q), std::move(*space)});
  }
  StatusOr<std::unique_ptr<Searcher>> searcher = MakeSearcher(opt.searcher);
  if (sizes.empty() || !searcher.ok()) return series;
  // Every (point, size) search on its own thread's searcher; then applied in order.
  struct Run {
    SearchResult r;
    bool cancelled = false;
  };
  const size_t nz = sizes.size();
  std::vector<Run> runs(series.sweep.size() * nz);
  std::atomic<bool> stop{false};  // once a search is cancelled, the rest are skipped
  ParallelFor(static_cast<int>(runs.size()), opt.jobs, [&](int k) {
    Run& run = runs[static_cast<size_t>(k)];
    if (stop.load()) {
      run.cancelled = true;
      return;
    }
    const ParetoPoint& pt = series.sweep[static_cast<size_t>(k) / nz];
    const Size& z = sizes[static_cast<size_t>(k) % nz];
    StatusOr<std::unique_ptr<Searcher>> own = MakeSearcher(opt.searcher);
    Problem q = z.problem;
    q.workload.tpot_ms = pt.tpot_limit_ms * (1 + 1e-9);
    const Simulator sim(std::move(q));
    WorkBoundObserver pass(observer, 0);
    run.r = (*own)->Search(sim, z.space, opt.budget, opt.seed, &pass);
    run.cancelled = pass.inner_cancelled();
    if (run.cancelled) stop.store(true);
  });
  for (size_t i = 0; i < series.sweep.size(); ++i) {
    ParetoPoint& pt = series.sweep[i];
    for (size_t j = 0; j < nz; ++j) {
      const Size& z = sizes[j];
      const Run& run = runs[i * nz + j];
      if (run.cancelled) {
        series.cancelled = true;
        break;
      }
      const SearchResult& r = run.r;
      if (!r.found || !(r.eval.tokens_per_s_per_gpu > pt.tokens_per_s_per_gpu * (1 + 1e-9)))
        continue;
      ParetoPoint x = PointOf(r.best, r.eval, (*searcher)->name(), false);
      x.series = pt.series;
      x.tpot_limit_ms = pt.tpot_limit_ms;
      x.strategy = plan::ReplicatedText(n / z.gpus, x.strategy);
      pt = std::move(x);
    }
    if (series.cancelled) break;
  }
  // Monotone in the limit: a better point of a tighter limit meets every looser one.
  for (size_t i = 1; i < series.sweep.size(); ++i) {
    const ParetoPoint& prev = series.sweep[i - 1];
    ParetoPoint& cur = series.sweep[i];
    if (prev.tokens_per_s_per_gpu > cur.tokens_per_s_per_gpu &&
        prev.tpot_ms <= cur.tpot_limit_ms * (1 + 1e-9)) {
      const double limit = cur.tpot_limit_ms;
      cur = prev;
      cur.tpot_limit_ms = limit;
      cur.exact = false;
    }
  }
  series.front = ParetoFront(series.sweep);
  return series;
}

}  // namespace l2s
