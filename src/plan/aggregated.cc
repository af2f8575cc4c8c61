#include "plan/aggregated.h"

#include <fmt/core.h>

#include <cmath>
#include <memory>
#include <utility>

#include "model/counts.h"
#include "plan/work_bound.h"

namespace l2s::plan {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Records what a run evaluates: its distinct valid strategies and the failure statistics.
class RecordingObserver : public Observer {
 public:
  RecordingObserver(Observer* inner, FailureStats* stats, EvaluatedStrategies* evaluated)
      : inner_(inner), stats_(stats), evaluated_(evaluated) {}
  void OnProgress(int64_t calls, int64_t budget, double best) override {
    inner_->OnProgress(calls, budget, best);
  }
  void OnEvaluation(const Strategy& s, const Evaluation& e) override {
    stats_->Add(s, e);
    evaluated_->Add(s, e);
    inner_->OnEvaluation(s, e);
  }
  bool Cancelled() override { return inner_->Cancelled(); }

 private:
  Observer* inner_;
  FailureStats* stats_;
  EvaluatedStrategies* evaluated_;
};

// Runs `searcher` with the progress observer `label`; oracle_calls > 0 bounds its work.
Run RunSearcher(Searcher& searcher, const Simulator& sim, const StrategySpace& space,
                int64_t budget, uint64_t seed, const std::string& label, int64_t oracle_calls,
                const PlanProgress& progress, FailureStats* stats) {
  Run r;
  std::unique_ptr<Observer> outer = progress.Observe(label);
  WorkBoundObserver bound(outer.get(), oracle_calls);
  RecordingObserver rec(&bound, stats, &r.evaluated);
  r.result = searcher.Search(sim, space, budget, seed, &rec);
  r.ran = true;
  r.bound_hit = bound.bound_hit() && !bound.inner_cancelled();
  return r;
}

}  // namespace

double Value(const Run& r) { return r.ran && r.result.found ? r.result.eval.tokens_per_s_per_gpu : 0.0; }

void FailureStats::Add(const Strategy& s, const Evaluation& e) {
  ++count[static_cast<int>(e.verdict)];
  if (e.verdict == Verdict::kStructure || e.verdict == Verdict::kValid) return;
  if (e.mem_bytes > 0 && (!have_mem || e.mem_bytes < mem_e.mem_bytes)) {
    have_mem = true;
    mem_s = s;
    mem_e = e;
  }
  if (e.verdict == Verdict::kTpot && (!have_tpot || e.tpot_s < tpot_e.tpot_s)) {
    have_tpot = true;
    tpot_s = s;
    tpot_e = e;
  }
  if (e.verdict == Verdict::kTtft && (!have_ttft || e.ttft_s < ttft_e.ttft_s)) {
    have_ttft = true;
    ttft_s = s;
    ttft_e = e;
  }
}

namespace {

// "; its weights alone need at least N x GPU (M with --dtype fp8)" when the weights exceed the
// cluster: their bytes over what one GPU holds beside its runtime reserve, rounded up (at least:
// the KV cache and activations need more); the FP8 count where the weights are wider and the GPU
// has FP8 tensor cores; on a Grace-Blackwell GPU, that CPU-memory offload is not modelled. "" when
// the weights fit (the KV cache or activations are what overflow).
std::string FitHint(const Problem& p, const Evaluation& e) {
  const double per_gpu = e.mem_capacity_bytes - e.reserve_bytes;
  const double w = WeightBytes(p.model, p.workload.weight);
  if (!(per_gpu > 0) || w <= per_gpu * p.cluster.num_gpus) return "";
  auto gpus = [&](double bytes) { return static_cast<long long>(std::ceil(bytes / per_gpu)); };
  std::string fp8;
  if (BytesPerElement(p.workload.weight) > 1 && p.cluster.gpu.fp8_flops > 0)
    fp8 = fmt::format(" ({} with --dtype fp8)", gpus(WeightBytes(p.model, DType::kFP8)));
  // Grace-Blackwell: SGLang and vLLM can keep part of the weights in the Grace CPU's memory
  // (--cpu-offload-gb) and stream them over NVLink-C2C every step; l2s does not price that.
  const std::string grace =
      p.cluster.gpu.grace_host
          ? "; weights offloaded to the Grace CPU's memory (--cpu-offload-gb, streamed over "
            "NVLink-C2C) are not modelled: l2s keeps every weight in HBM"
          : "";
  return fmt::format("; its weights alone need at least {} x {}{}{}", gpus(w), p.cluster.gpu.name,
                     fp8, grace);
}

// A failure's strategy as its degrees at the batch it was evaluated at ("batch=auto" resolved).
std::string AtBatch(Strategy s, const Evaluation& e) {
  if (e.batch > 0) s.batch = e.batch;
  return DegreesText(s);
}

}  // namespace

std::string FailureStats::Brief(const Problem& p) const {
  if (!Simulator::TtftBelowRequestOverhead(p.workload).empty()) return "TTFT below the request overhead";
  if (have_tpot && have_ttft)
    return fmt::format("TTFT {:.1f} ms within the TPOT SLO", ttft_e.ttft_s * 1e3);
  if (have_tpot) return fmt::format("TPOT {:.3f} ms", tpot_e.tpot_s * 1e3);
  if (have_ttft) return fmt::format("TTFT {:.1f} ms", ttft_e.ttft_s * 1e3);
  if (have_mem)
    return fmt::format("does not fit ({:.1f} of {:.1f} GiB per GPU)", mem_e.mem_bytes / kGiB,
                       mem_e.mem_capacity_bytes / kGiB);
  return "";
}

double FailureStats::Over(const Problem& p) const {
  const Workload& w = p.workload;
  if (!Simulator::TtftBelowRequestOverhead(w).empty()) return HUGE_VAL;
  if (have_ttft && w.ttft_ms > 0) return ttft_e.ttft_s * 1e3 / w.ttft_ms;
  if (have_tpot && w.tpot_ms > 0) return tpot_e.tpot_s * 1e3 / w.tpot_ms;
  return HUGE_VAL;
}

std::string FailureStats::Reason(const Problem& p) const {
  const Workload& w = p.workload;
  if (std::string below = Simulator::TtftBelowRequestOverhead(w); !below.empty()) return below;
  // The simulator checks TPOT before TTFT: a kTtft strategy meets the TPOT SLO, so with both
  // kinds of miss the TPOT SLO alone is met and it is the pair that binds.
  if (have_tpot && have_ttft)
    return fmt::format(
        "no strategy meets both the TTFT SLO of {} ms and the TPOT SLO of {} ms: of those within "
        "the TPOT SLO, the fastest to the first token takes {:.1f} ms ({})",
        w.ttft_ms, w.tpot_ms, ttft_e.ttft_s * 1e3, AtBatch(ttft_s, ttft_e));
  if (have_tpot)
    return fmt::format(
        "no strategy meets the TPOT SLO of {} ms: the fastest that fits in memory takes {:.3f} ms "
        "per token ({})",
        w.tpot_ms, tpot_e.tpot_s * 1e3, AtBatch(tpot_s, tpot_e));
  if (have_ttft)
    return fmt::format(
        "no strategy meets the TTFT SLO of {} ms: the fastest that fits in memory takes {:.1f} ms "
        "to the first token ({})",
        w.ttft_ms, ttft_e.ttft_s * 1e3, AtBatch(ttft_s, ttft_e));
  if (have_mem)
    return fmt::format(
        "{} does not fit on {} x {}: the smallest footprint found needs {:.1f} GiB per GPU of "
        "{:.1f} GiB (weights {:.1f}, KV cache {:.1f}, {}activations {:.1f}, reserve {:.1f}) with "
        "pp={},tp={},dp={},ep={} at batch {}{}",
        p.model.name, p.cluster.num_gpus, p.cluster.gpu.name, mem_e.mem_bytes / kGiB,
        mem_e.mem_capacity_bytes / kGiB, mem_e.weight_bytes / kGiB, mem_e.kv_bytes / kGiB,
        mem_e.state_bytes > 0 ? fmt::format("recurrent state {:.1f}, ", mem_e.state_bytes / kGiB)
                              : std::string(),
        mem_e.act_bytes / kGiB, mem_e.reserve_bytes / kGiB, mem_s.pp, mem_s.tp, mem_s.dp,
        mem_s.ep, mem_e.batch, FitHint(p, mem_e));
  return fmt::format("no structurally valid strategy exists for {} on {} GPUs", p.model.name,
                     p.cluster.num_gpus);
}

const Run* RunOf(const AggPlan& o, const std::string& source) {
  if (source == "search") return &o.main;
  if (source == "oracle") return &o.oracle;
  if (source == "megatron") return &o.megatron;
  if (source == "default") return &o.def;
  return nullptr;
}

StatusOr<AggPlan> PlanAggregated(const Simulator& sim, const StrategySpace& space,
                                 const AggRequest& req, const PlanProgress& progress) {
  if (req.budget <= 0)
    return Status::InvalidArgument(
        fmt::format("--budget must be a positive number of simulator calls, got {}", req.budget));
  if (req.oracle_calls < 0)
    return Status::InvalidArgument(
        fmt::format("--oracle-calls must be >= 0, got {}", req.oracle_calls));
  StatusOr<std::unique_ptr<Searcher>> searcher = MakeSearcher(req.search);
  if (!searcher.ok())
    return Status::InvalidArgument("--search: " + searcher.status().message());
  // MakeSearcher accepted the spec, so it parses; its bare name decides which baseline it is.
  std::string spec_name = ParseSearcherSpec(req.search)->name;

  AggPlan o;
  o.searcher_spec = (*searcher)->name();
  bool searched = false;
  if (req.oracle_first && spec_name != "oracle") {
    StatusOr<std::unique_ptr<Searcher>> oracle = MakeSearcher("oracle");
    if (!oracle.ok()) return oracle.status();
    Run exact = RunSearcher(**oracle, sim, space, req.budget, req.seed, "oracle",
                            req.oracle_calls > 0 ? req.oracle_calls : kDefaultOracleCalls,
                            progress, &o.failures);
    o.interrupted = progress.Interrupted();
    if (!exact.result.interrupted) {
      o.main = std::move(exact);
      o.searcher_spec = "oracle";
      spec_name = "oracle";  // the oracle baseline is this run
      searched = true;
    } else if (!o.interrupted) {
      o.oracle = std::move(exact);  // beyond its bound: reported, not run again
      o.oracle_status = "skipped";
    }
  }
  if (!searched && !o.interrupted) {
    o.main = RunSearcher(**searcher, sim, space, req.budget, req.seed, "search " + req.search, 0,
                         progress, &o.failures);
    o.interrupted = progress.Interrupted();
  }

  // Baselines on the same problem (reusing the main run when it IS that baseline).
  auto baseline = [&](const char* name, int64_t oracle_calls, Run* out) {
    if (o.interrupted) return;
    if (spec_name == name) {
      *out = o.main;
      return;
    }
    StatusOr<std::unique_ptr<Searcher>> b = MakeSearcher(name);
    if (!b.ok()) return;
    *out = RunSearcher(**b, sim, space, req.budget, req.seed, std::string("baseline ") + name,
                       oracle_calls, progress, &o.failures);
    o.interrupted = progress.Interrupted();
  };
  if (!req.no_baselines) {
    baseline("megatron", 0, &o.megatron);
    baseline("default", 0, &o.def);
    if ((req.oracle_calls > 0 || spec_name == "oracle") && !o.oracle.ran) {
      baseline("oracle", req.oracle_calls, &o.oracle);
      if (o.oracle.ran) o.oracle_status = o.oracle.result.interrupted ? "skipped" : "solved";
    }
  }
  // Nothing found by the search: the Megatron heuristic is the fallback (and tells why nothing
  // fits, being exhaustive over the degrees and batches).
  if (!o.interrupted && !o.main.result.found && !o.megatron.ran) baseline("megatron", 0, &o.megatron);

  // The engine-expressible scan evaluates strategies too: run it before choosing the plan.
  launch::ExpressibleBest eb;
  bool have_eb = false;
  if (!o.interrupted) {
    std::unique_ptr<Observer> obs = progress.Observe("engine-expressible plans");
    eb = launch::BestExpressible(sim, space, obs.get());
    o.interrupted = eb.cancelled || progress.Interrupted();
    have_eb = !o.interrupted;
  }

  // The plan is the best strategy among everything evaluated - the searcher's result, the
  // baselines, the oracle, every other strategy they evaluated and the engine-expressible scan,
  // each also at its refined batch, and the engines' repairs of it - so it is never below a
  // figure the output shows (issue 14). Ties go to the searcher, then the oracle, Megatron,
  // default, scan.
  auto consider_one = [&](const std::string& by, const Strategy& s, const Evaluation& e,
                          const Evaluation* unrefined) {
    if (!e.valid()) return;
    if (o.have_recommended && !(e.tokens_per_s_per_gpu > o.recommended_eval.tokens_per_s_per_gpu))
      return;
    if (req.admissible && !req.admissible(s)) return;
    o.have_recommended = true;
    o.recommended_source = by;
    o.recommended = s;
    o.recommended_eval = e;
    o.refined_from = unrefined != nullptr ? unrefined->batch : 0;
    o.unrefined_value = unrefined != nullptr ? unrefined->tokens_per_s_per_gpu : 0;
  };
  // Each candidate also with its batch refined between the space's options (plan/refine.h:
  // an engine takes any batch, and its translation below is simulated at one).
  auto consider = [&](const std::string& by, const Strategy& s, const Evaluation& e) {
    consider_one(by, s, e, nullptr);
    Strategy a = s;
    Evaluation ea = e;
    if (RefineBatch(sim, &a, &ea)) consider_one(by, a, ea, &e);
  };
  for (const char* by : kRunSources) {
    const Run& run = *RunOf(o, by);
    if (run.ran && run.result.found) consider(by, run.result.best, run.result.eval);
  }
  // ... and every other distinct strategy the runs evaluated, refined: the best on the space's
  // batches is not always the best refined (EvaluatedStrategies).
  for (const char* by : kRunSources) {
    const Run& run = *RunOf(o, by);
    if (!run.ran) continue;
    for (const auto& [s, e] : run.evaluated.Sorted())
      if (!(run.result.found && s == run.result.best)) consider(by, s, e);
  }
  if (have_eb)
    for (size_t k = 0; k < eb.found.size(); ++k)
      if (eb.found[k]) consider("expressible_scan", eb.best[k], eb.eval[k]);
  // The engines' translations of the plan are simulated too (an engine that cannot express a
  // choice runs a repair of it, at a batch of its own): a repair above the plan becomes the plan
  // (engine_repair), translated again. Each round raises the plan's value, so this ends; the
  // bound only caps the work.
  for (int round = 0; o.have_recommended && have_eb; ++round) {
    o.launch = launch::TranslatePlan(sim, o.recommended, eb);
    o.have_launch = true;
    const launch::EngineTranslation* above = nullptr;
    for (const launch::EngineTranslation& t : o.launch)
      if (t.runnable && t.launched_eval.valid() &&
          t.launched_eval.tokens_per_s_per_gpu >
              (above != nullptr ? above->launched_eval : o.recommended_eval).tokens_per_s_per_gpu)
        above = &t;
    if (above == nullptr || round == 8) break;
    const Strategy repair = above->launched;
    const Evaluation repair_eval = above->launched_eval;
    consider("engine_repair", repair, repair_eval);
  }
  return o;
}

}  // namespace l2s::plan
