// The disaggregated half of `l2s plan` (disagg_plan.h).
#include "cli/disagg_plan.h"

#include <fmt/core.h>

#include <tuple>

#include "cli/plan_problem.h"
#include "cli/progress.h"
#include "cli/report.h"
#include "search/oracle.h"
#include "search/refine.h"

namespace l2s::cli {

namespace {

using json = nlohmann::ordered_json;

StatusOr<std::vector<std::unique_ptr<DisaggModel>>> MakeModels(const Problem& serve,
                                                               const DisaggPlanRequest& req) {
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
        StatusOr<std::unique_ptr<DisaggModel>> m = DisaggModel::Make(std::move(st));
        if (!m.ok()) return m.status();
        out.push_back(std::move(*m));
      }
    }
    return out;
  }
  DisaggSetup setup = SharedSetup(serve);
  setup.layerwise = req.layerwise;
  const ClusterSpec& c = serve.cluster;
  if (req.prefill_gpus > 0) {
    // A fixed split: two pools of the cluster's GPUs, the KV crossing the scale-out network
    // (each pool is its own set of NVLink domains).
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
    setup.cross = KvLink{false, c.scaleout_bw, c.scaleout_latency};
  }
  StatusOr<std::unique_ptr<DisaggModel>> m = DisaggModel::Make(std::move(setup));
  if (!m.ok()) return m.status();
  out.push_back(std::move(*m));
  return out;
}

std::string StrategyShort(const Strategy& s) {
  std::string out = fmt::format("pp={},tp={},dp={},ep={},batch={}", s.pp, s.tp, s.dp, s.ep, s.batch);
  if (s.slots > 0) out += fmt::format(",slots={}", s.slots);
  if (s.overlap != Overlap::kNone) out += fmt::format(",overlap={}", OverlapName(s.overlap));
  if (s.mtp > 0) out += fmt::format(",mtp={}", s.mtp);
  return out;
}

json PoolJson(const DisaggSetup& st, const RolePlan& p, bool prefill, int refined_from) {
  json j;
  j["strategy"] = ToText(p.strategy);
  j["instances"] = p.instances;
  j["gpus_per_instance"] = p.gpus_per_instance;
  j["gpu"] = prefill ? st.prefill_pool.gpu.name : st.decode_pool.gpu.name;
  if (!st.prefill_pool_name.empty())
    j["pool"] = prefill ? st.prefill_pool_name : st.decode_pool_name;
  j["batch"] = p.eval.batch;
  // The batch before it was refined between the space's options (null: not refined).
  j["batch_refined_from"] = refined_from > 0 ? json(refined_from) : json();
  j["capacity_requests_per_s"] = p.capacity_rps;
  j["spare_capacity"] = p.spare;
  if (prefill) {
    j["input_tokens_per_s_per_instance"] = p.eval.tokens_per_s;
    j["prefill_latency_ms"] = p.eval.ttft_s * 1e3;
  } else {
    j["output_tokens_per_s_per_instance"] = p.eval.tokens_per_s;
    j["tpot_ms"] = p.eval.tpot_s * 1e3;
    j["mtp"] = p.strategy.mtp;
  }
  j["memory_per_gpu_gib"] = p.eval.mem_bytes / kGiB;
  return j;
}

}  // namespace

StatusOr<DisaggPlan> PrepareDisaggregated(const Problem& serve, const DisaggPlanRequest& req) {
  DisaggPlan d;
  {
    StatusOr<std::vector<std::unique_ptr<DisaggModel>>> models = MakeModels(serve, req);
    if (!models.ok()) return models.status();
    d.models = std::move(*models);
  }
  // Strategy-space options of each role, as plan's aggregated space (launch.h).
  const DisaggModel& m0 = *d.models.front();
  StatusOr<Problem> pp = PrefillProblem(serve, m0.setup().prefill_pool, m0.setup().prefill_pool.num_gpus);
  StatusOr<Problem> dp = DecodeProblem(serve, m0.setup().decode_pool, m0.setup().decode_pool.num_gpus);
  if (!pp.ok()) return pp.status();
  if (!dp.ok()) return dp.status();
  std::vector<const DisaggModel*> raw;
  for (const auto& m : d.models) raw.push_back(m.get());
  StatusOr<std::unique_ptr<JointSpace>> space =
      JointSpace::Make(raw, PlanSpaceOptions(*pp), PlanSpaceOptions(*dp, req.mtp));
  if (!space.ok()) return Status::InvalidArgument("disaggregated plan: " + space.status().message());
  d.space = std::move(*space);
  {
    std::vector<uint8_t> mask(d.space->head_size(0));
    d.space->Mask({}, 0, mask);
    if (std::find(mask.begin(), mask.end(), 1) == mask.end())
      return Status::InvalidArgument(fmt::format(
          "disaggregated plan: no pool split leaves both pools a structurally valid strategy for "
          "{} (prefill pool {} GPUs, decode pool {} GPUs)",
          serve.model.name, m0.setup().prefill_pool.num_gpus, m0.setup().decode_pool.num_gpus));
  }
  return d;
}

StatusOr<DisaggPlan> PlanDisaggregated(const Problem& serve, const DisaggPlanRequest& req) {
  StatusOr<DisaggPlan> prepared = PrepareDisaggregated(serve, req);
  if (!prepared.ok()) return prepared.status();
  DisaggPlan d = std::move(*prepared);
  JointProblem problem(*d.space);
  StatusOr<std::unique_ptr<Searcher>> searcher = MakeSearcher(req.search);
  if (!searcher.ok()) return Status::InvalidArgument("--search: " + searcher.status().message());
  if (BuildsOneEngineStrategy((*searcher)->name()))
    return Status::InvalidArgument(fmt::format(
        "--search {}: builds a strategy of one engine's space; the disaggregated (joint) space "
        "needs {}",
        (*searcher)->name(), kJointSpaceSearchers));
  // The exact optimum of the joint space (the oracle baseline), under `obs`.
  auto solve_exact = [&](ProgressObserver* obs) {
    d.oracle = SolveDisaggExact(*d.space, obs, &d.oracle_stats);
    d.oracle_ran = true;
    d.oracle_status = d.oracle.interrupted ? "skipped" : "solved";
  };
  // --search oracle: the search is the exact optimum of the joint space (no time limit, as the
  // aggregated plan's oracle search), which is then also the oracle baseline.
  const bool exact = (*searcher)->name() == "oracle";
  {
    ProgressObserver obs({"disaggregated search " + req.search, StderrIsTerminal(), 0});
    if (exact) {
      solve_exact(&obs);
      d.search = DisaggOracleAsSearch(d.oracle);
    } else {
      d.search = (*searcher)->SearchEncoded(problem, req.budget, req.seed, &obs);
    }
    obs.Finish();
  }
  d.interrupted = InterruptRequested();
  if (d.search.found) d.search_eval = problem.Describe(d.search.best_encoded);
  if (!exact && !d.interrupted && !req.no_baselines && req.oracle_seconds > 0) {
    ProgressObserver obs({"disaggregated oracle", StderrIsTerminal(), req.oracle_seconds});
    solve_exact(&obs);
    obs.Finish();
    d.interrupted = InterruptRequested();
  }
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
  // (search/refine.h).
  auto consider = [&](const char* by, const JointSpace::Point& p, const DisaggEvaluation& e) {
    consider_one(by, p, e, 0, 0);
    if (!req.refine) return;
    JointSpace::Point q = p;
    DisaggEvaluation eq = e;
    if (RefineDisaggBatches(*d.models[p.model], &q, &eq))
      consider_one(by, q, eq, q.prefill.batch != p.prefill.batch ? p.prefill.batch : 0,
                   q.decode.batch != p.decode.batch ? p.decode.batch : 0);
  };
  if (d.search.found) consider("search", d.space->Decode(d.search.best_encoded), d.search_eval);
  if (d.oracle_ran && d.oracle.found) consider("oracle", d.oracle.best, d.oracle.eval);
  if (!d.found && !d.interrupted) {
    std::string why = d.oracle_ran && d.oracle_status == "solved" ? d.oracle.why_none : "";
    if (why.empty()) why = d.search.note.empty() ? "the search found no valid deployment" : d.search.note;
    return Status::Invalid("no disaggregated deployment is valid: " + why);
  }
  return d;
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

std::string DisaggRoleText(const RolePlan& r, const Strategy& s) {
  return fmt::format("{} x {} GPUs: {}", r.instances, r.gpus_per_instance, ToText(s));
}

json DisaggSummaryJson(const DisaggPlan& d) {
  if (!d.found) return json();
  json j;
  j["prefill"] = DisaggRoleText(d.eval.prefill, d.best.prefill);
  j["decode"] = DisaggRoleText(d.eval.decode, d.best.decode);
  j["tokens_per_s_per_gpu"] = d.eval.tokens_per_s_per_gpu;
  j["ttft_ms"] = d.eval.ttft_s * 1e3;
  j["tpot_ms"] = d.eval.tpot_s * 1e3;
  return j;
}

json DisaggBestJson(const DisaggPlan& d) {
  if (!d.found) return json();
  const DisaggEvaluation& e = d.eval;
  const DisaggSetup& st = d.models[d.best.model]->setup();
  json j;
  j["serving"] = "disagg";
  j["found_by"] = d.found_by;
  j["prefill"] = PoolJson(st, e.prefill, true, d.prefill_batch_refined_from);
  j["decode"] = PoolJson(st, e.decode, false, d.decode_batch_refined_from);
  j["kv_transfer_ms"] = e.kv_exposed_s * 1e3;
  j["kv_transfer_full_ms"] = e.kv_transfer_s * 1e3;
  j["kv_bytes_per_prompt"] = e.kv_bytes_per_prompt;
  j["kv_link"] = e.link.nvlink ? "nvlink" : "scale-out";
  j["kv_layerwise"] = st.layerwise;
  j["ttft_ms"] = e.ttft_s * 1e3;
  j["tpot_ms"] = e.tpot_s * 1e3;
  j["decode_step_ms"] = e.decode_step_s * 1e3;
  j["tokens_per_s_per_gpu"] = e.tokens_per_s_per_gpu;
  j["tokens_per_s"] = e.tokens_per_s;
  j["requests_per_s"] = e.rate_rps;
  j["gpus_used"] = e.gpus_used;
  j["gpus"] = e.total_gpus;
  j["bottleneck"] = e.bottleneck;
  json s;
  s["searcher"] = d.search.searcher;
  s["calls"] = d.search.calls;
  s["wall_s"] = d.search.wall_s;
  s["tokens_per_s_per_gpu"] = d.search.found ? json(d.search_eval.tokens_per_s_per_gpu) : json();
  s["note"] = d.search.note;
  j["search"] = s;
  json o;
  o["status"] = d.oracle_status;
  const bool solved = d.oracle_status == "solved" && d.oracle.found;
  o["tokens_per_s_per_gpu"] = solved ? json(d.oracle.eval.tokens_per_s_per_gpu) : json();
  o["search_fraction"] = solved && d.search.found
                             ? json(d.search_eval.tokens_per_s_per_gpu / d.oracle.eval.tokens_per_s_per_gpu)
                             : json();
  o["wall_s"] = d.oracle_ran ? json(d.oracle.wall_s) : json();
  o["pool_solves"] = d.oracle_stats.pool_solves;
  o["note"] = d.oracle_ran ? json(d.oracle.note) : json();
  j["oracle"] = o;
  return j;
}

std::string FormatDisaggPlan(const Problem& serve, const DisaggPlan& d, const std::string& searcher) {
  if (!d.found) return "no valid disaggregated deployment found before the interruption\n";
  const DisaggEvaluation& e = d.eval;
  const DisaggSetup& st = d.models[d.best.model]->setup();
  std::string out = fmt::format("Disaggregated plan (found by {})\n",
                                d.found_by == "oracle" ? std::string("the oracle")
                                                       : fmt::format("the {} searcher", searcher));
  auto pool = [&](const char* role, const RolePlan& p, const ClusterSpec& c, const std::string& name) {
    return fmt::format("  {:<8} {} instance{} x {} {} GPUs{}: {}\n", role, p.instances,
                       p.instances == 1 ? "" : "s", p.gpus_per_instance, c.gpu.name,
                       name.empty() ? "" : fmt::format(" (pool {})", name), StrategyShort(p.strategy));
  };
  out += pool("prefill", e.prefill, st.prefill_pool, st.prefill_pool_name);
  out += fmt::format(
      "           {:.3f} requests/s per instance ({} input tokens/s), prefill latency {:.1f} ms, "
      "{:.1f}% capacity spare\n",
      e.prefill.capacity_rps, Thousands(e.prefill.eval.tokens_per_s), e.prefill.eval.ttft_s * 1e3,
      100 * e.prefill.spare);
  out += pool("decode", e.decode, st.decode_pool, st.decode_pool_name);
  out += fmt::format(
      "           {:.3f} requests/s per instance ({} output tokens/s), TPOT {:.2f} ms, {:.1f}% "
      "capacity spare\n",
      e.decode.capacity_rps, Thousands(e.decode.eval.tokens_per_s), e.decode.eval.tpot_s * 1e3,
      100 * e.decode.spare);
  for (const auto& [role, from, to] :
       {std::tuple<const char*, int, int>{"prefill", d.prefill_batch_refined_from, e.prefill.eval.batch},
        {"decode", d.decode_batch_refined_from, e.decode.eval.batch}})
    if (from > 0)
      out += fmt::format("  batch    {} {} refined from {}: the largest with which the deployment "
                         "stays within memory and the SLOs (the space's batches are powers of two)\n",
                         role, to, from);
  out += fmt::format("  GPUs     {} used of {}\n", e.gpus_used, e.total_gpus);
  out += fmt::format(
      "  KV       {:.1f} MB per {}-token prompt over {} ({:.0f} GB/s per GPU): {:.2f} ms{}\n",
      e.kv_bytes_per_prompt / 1e6, serve.workload.isl, e.link.nvlink ? "NVLink" : "the scale-out network",
      e.link.bw / 1e9, e.kv_transfer_s * 1e3,
      st.layerwise ? fmt::format(", {:.2f} ms exposed (layer-wise)", e.kv_exposed_s * 1e3)
                   : std::string(", after the prefill"));
  out += fmt::format("  TTFT     {:.1f} ms = prefill {:.1f} + KV transfer {:.2f} + one decode step {:.2f}\n",
                     e.ttft_s * 1e3, e.prefill.eval.ttft_s * 1e3, e.kv_exposed_s * 1e3,
                     e.decode_step_s * 1e3);
  out += fmt::format("  TPOT     {:.2f} ms\n", e.tpot_s * 1e3);
  out += fmt::format(
      "  throughput {:.2f} tokens/s per GPU over all {} GPUs ({} tokens/s, {:.2f} requests/s); "
      "bound by {}\n",
      e.tokens_per_s_per_gpu, e.total_gpus, Thousands(e.tokens_per_s), e.rate_rps, e.bottleneck);
  out += fmt::format("  search {}: {} calls, {}\n", searcher, d.search.calls,
                     d.search.found ? fmt::format("{:.2f} tokens/s per GPU", d.search_eval.tokens_per_s_per_gpu)
                                    : std::string("no valid deployment"));
  if (d.oracle_status == "solved" && d.oracle.found)
    out += fmt::format("  oracle (optimum): {:.2f} tokens/s per GPU in {:.1f} s; this plan is {:.1f}%{}\n",
                       d.oracle.eval.tokens_per_s_per_gpu, d.oracle.wall_s,
                       100 * e.tokens_per_s_per_gpu / d.oracle.eval.tokens_per_s_per_gpu,
                       d.prefill_batch_refined_from > 0 || d.decode_batch_refined_from > 0
                           ? " (the oracle's optimum is over the space's batch options)"
                           : "");
  else if (d.oracle_status == "skipped")
    out += fmt::format("  oracle: skipped after {:.1f} s (--oracle-seconds)\n", d.oracle.wall_s);
  return out;
}

StatusOr<std::array<launch::DisaggLaunch, 4>> DisaggLaunches(const DisaggPlan& d) {
  if (!d.found) return Status::Invalid("no disaggregated plan to launch");
  const DisaggModel& model = *d.models[d.best.model];
  const RolePlan& p = d.eval.prefill;
  const RolePlan& q = d.eval.decode;
  // Each pool's problem is the one its instances were evaluated in (the model's simulators).
  const launch::PoolPlan prefill{d.best.prefill, p.instances, p.gpus_per_instance,
                                 model.PrefillSim(p.gpus_per_instance).problem()};
  const launch::PoolPlan decode{d.best.decode, q.instances, q.gpus_per_instance,
                                model.DecodeSim(q.gpus_per_instance).problem()};
  return launch::TranslateDisaggPlan(prefill, decode);
}

json DisaggLaunchJson(const std::array<launch::DisaggLaunch, 4>& l) {
  json out = json::object();
  for (const launch::DisaggLaunch& x : l) {
    json j;
    j["backend"] = std::string(launch::EngineName(x.backend));
    j["exact"] = x.unsupported.empty();
    j["unsupported"] = x.unsupported;
    j["runnable"] = x.runnable;
    j["prefill"] = x.runnable ? json(ToText(x.prefill)) : json();
    j["decode"] = x.runnable ? json(ToText(x.decode)) : json();
    json procs = json::array();
    for (const launch::DisaggProcess& p : x.processes) {
      json q;
      q["role"] = p.role;
      q["count"] = p.count;
      q["gpus"] = p.gpus;
      q["command"] = p.command;
      q["file"] = p.file_name.empty() ? json()
                                      : json({{"name", p.file_name}, {"contents", p.file}});
      q["notes"] = p.notes;
      procs.push_back(q);
    }
    j["processes"] = procs;
    j["notes"] = x.notes;
    out[std::string(launch::DisaggEngineName(x.engine))] = j;
  }
  return out;
}

std::string FormatDisaggLaunch(const std::array<launch::DisaggLaunch, 4>& l) {
  std::string out = "\nLaunch (disaggregated)\n";
  for (const launch::DisaggLaunch& x : l) {
    out += fmt::format("  {}{}:\n", launch::DisaggEngineTitle(x.engine),
                       x.engine == launch::DisaggEngine::kDynamo
                           ? fmt::format(" (workers: {})", launch::EngineTitle(x.backend))
                           : std::string());
    if (x.unsupported.empty()) {
      out += "    expresses the plan exactly\n";
    } else {
      out += fmt::format("    cannot express {} choice{} of the plan:\n", x.unsupported.size(),
                         x.unsupported.size() == 1 ? "" : "s");
      for (const std::string& u : x.unsupported) out += fmt::format("      - {}\n", u);
    }
    if (!x.runnable) {
      out += "    no repair of both pools is valid on this problem\n";
      continue;
    }
    if (!x.unsupported.empty()) {
      out += fmt::format("    runs instead: prefill {}; decode {}\n", ToText(x.prefill),
                         ToText(x.decode));
    }
    for (const launch::DisaggProcess& p : x.processes) {
      out += fmt::format("    {} x{}{}: {}\n", p.role, p.count,
                         p.gpus > 0 ? fmt::format(" ({} GPUs each)", p.gpus) : std::string(),
                         p.command);
      if (!p.file_name.empty()) {
        out += fmt::format("      {}:\n", p.file_name);
        size_t pos = 0;
        while (pos < p.file.size()) {
          const size_t nl = p.file.find('\n', pos);
          out += fmt::format("        {}\n", p.file.substr(pos, nl - pos));
          if (nl == std::string::npos) break;
          pos = nl + 1;
        }
      }
      for (const std::string& n : p.notes) out += fmt::format("      note: {}\n", n);
    }
    for (const std::string& n : x.notes) out += fmt::format("    note: {}\n", n);
  }
  return out;
}

}  // namespace l2s::cli
