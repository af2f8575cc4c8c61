// The disaggregated half of `l2s plan` (disagg_plan.h).
#include "cli/disagg_plan.h"

#include <fmt/core.h>

#include <algorithm>
#include <tuple>

#include "cli/plan_problem.h"
#include "cli/progress.h"
#include "cli/report.h"
#include "engine/engine.h"
#include "engine/restrict.h"
#include "plan/error_bands.h"
#include "search/oracle.h"
#include "plan/refine.h"

namespace l2s::cli {

namespace {

using json = nlohmann::ordered_json;

std::string StrategyShort(const Strategy& s) {
  std::string out = fmt::format("pp={},tp={},dp={},ep={},batch={}", s.pp, s.tp, s.dp, s.ep, s.batch);
  if (s.slots > 0) out += fmt::format(",slots={}", s.slots);
  if (s.overlap != Overlap::kNone) out += fmt::format(",overlap={}", OverlapName(s.overlap));
  if (s.mtp > 0) out += fmt::format(",mtp={}", s.mtp);
  return out;
}

// `prefill_s`: the prefill pool's steps (DisaggEvaluation::prefill_s; read when `prefill`).
json PoolJson(const DisaggSetup& st, const RolePlan& p, bool prefill, int refined_from,
              double prefill_s) {
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
    j["prefill_latency_ms"] = prefill_s * 1e3;
  } else {
    j["output_tokens_per_s_per_instance"] = p.eval.tokens_per_s;
    j["tpot_ms"] = p.eval.tpot_s * 1e3;
  }
  // Both roles: the speculative setting the servers start with (a speculating deployment's
  // prefill servers run the decode side's, priced with the draft's extend).
  j["mtp"] = p.strategy.mtp;
  j["memory_per_gpu_gib"] = p.eval.mem_bytes / kGiB;
  return j;
}

}  // namespace

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

// What the disaggregated plan rests on (plan/error_bands.h): the prefill pool's GPU (pools of
// one GPU type but for cluster files of several), the "disagg" regime, the deeper pipeline, the
// decode pool's speculation.
plan::Uncertainty DisaggUncertainty(const DisaggPlan& d) {
  const DisaggSetup& st = d.models[d.best.model]->setup();
  Problem p = st.serve;
  p.cluster = st.prefill_pool;
  Strategy s = d.eval.prefill.strategy;
  s.mtp = d.eval.decode.strategy.mtp;
  return plan::UncertaintyOf(p, s, /*disaggregated=*/true,
                             std::max(d.eval.prefill.strategy.pp, d.eval.decode.strategy.pp));
}

// $ and energy of the whole disaggregated deployment (plan/cost.h): its tokens/s per GPU of the
// cluster, at the cluster's price and its GPU's board power.
plan::Cost DisaggCost(const DisaggPlan& d) {
  const DisaggSetup& st = d.models[d.best.model]->setup();
  return plan::CostOf(d.eval.tokens_per_s_per_gpu, st.serve.workload, st.serve.cluster,
                      d.eval.total_gpus);
}

json DisaggBestJson(const DisaggPlan& d) {
  if (!d.found) return json();
  const DisaggEvaluation& e = d.eval;
  const DisaggSetup& st = d.models[d.best.model]->setup();
  json j;
  j["serving"] = "disagg";
  j["found_by"] = d.found_by;
  // As the aggregated plan's: the engine the pools are planned for ("ideal": the unrestricted
  // joint space) and whether it launches both pools as they are (ideal: some engine that plans
  // disaggregated pools does).
  j["engine"] = std::string(engine::EngineName(d.engine));
  const ModelSpec& m = st.serve.model;
  auto launches = [&](engine::EngineId id) {
    const engine::Capabilities& c = engine::CapabilitiesOf(id);
    return c.disaggregation && engine::RunsOn(c, st.prefill_pool.gpu.vendor) &&
           engine::RunsOn(c, st.decode_pool.gpu.vendor) &&
           engine::Launchable(c, m, e.prefill.strategy, engine::Role::kPrefillPool) &&
           engine::Launchable(c, m, e.decode.strategy, engine::Role::kDecodePool);
  };
  bool launchable = false;
  if (d.engine != engine::EngineId::kIdeal) {
    launchable = launches(d.engine);
  } else {
    for (engine::EngineId id : engine::kLaunchEngines) launchable = launchable || launches(id);
  }
  j["launchable"] = launchable;
  j["prefill"] = PoolJson(st, e.prefill, true, d.prefill_batch_refined_from, e.prefill_s);
  j["decode"] = PoolJson(st, e.decode, false, d.decode_batch_refined_from, e.prefill_s);
  j["kv_transfer_ms"] = e.kv_exposed_s * 1e3;
  j["kv_transfer_full_ms"] = e.kv_transfer_s * 1e3;
  j["kv_bytes_per_prompt"] = e.kv_bytes_per_prompt;
  j["kv_link"] = e.link.nvlink ? "nvlink" : "scale-out";
  j["kv_layerwise"] = st.layerwise;
  j["ttft_ms"] = e.ttft_s * 1e3;
  j["request_overhead_ms"] = e.request_overhead_s * 1e3;
  j["tpot_ms"] = e.tpot_s * 1e3;
  j["decode_step_ms"] = e.decode_step_s * 1e3;
  j["tokens_per_s_per_gpu"] = e.tokens_per_s_per_gpu;
  j["tokens_per_s"] = e.tokens_per_s;
  j["requests_per_s"] = e.rate_rps;
  j["gpus_used"] = e.gpus_used;
  j["gpus"] = e.total_gpus;
  j["bottleneck"] = e.bottleneck;
  // Both roles speculate or neither (a speculating deployment's prefill servers run the draft's
  // extend); null for a model that cannot.
  j["speculation"] = d.speculation < 0 ? json() : json(d.speculation == 1);
  j["cost"] = CostJson(DisaggCost(d));
  j["error_band"] = ErrorBandJson(DisaggUncertainty(d));
  json s;
  s["searcher"] = d.search.searcher;
  s["calls"] = d.search.calls;
  // A model that can speculate, with the depth searched: the calls spent on the joint space of
  // the other speculation setting (both planned; `calls` counts both).
  s["calls_other_speculation"] = d.other_speculation_calls;
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
      e.prefill.capacity_rps, Thousands(e.prefill.eval.tokens_per_s), e.prefill_s * 1e3,
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
    if (from > 0 && to > from)
      out += fmt::format("  batch    {} {} refined from {}: the largest with which the deployment "
                         "stays within memory and the SLOs (the space's batches are powers of two)\n",
                         role, to, from);
    else if (from > 0)
      out += fmt::format("  batch    {} {} lowered from {}: the smallest with which the deployment "
                         "keeps its throughput (the other pool binds the rate), for a shorter {}\n",
                         role, to, from, std::string_view(role) == "decode" ? "TPOT" : "prefill");
  out += fmt::format("  GPUs     {} used of {}\n", e.gpus_used, e.total_gpus);
  out += fmt::format(
      "  KV       {:.1f} MB per {}-token prompt over {} ({:.0f} GB/s per GPU): {:.2f} ms{}\n",
      e.kv_bytes_per_prompt / 1e6, serve.workload.isl,
      !e.link.nvlink ? "the scale-out network" : ScaleUpName(serve.cluster.gpu),
      e.link.bw / 1e9, e.kv_transfer_s * 1e3,
      st.layerwise ? fmt::format(", {:.2f} ms exposed (layer-wise)", e.kv_exposed_s * 1e3)
                   : std::string(", after the prefill"));
  out += fmt::format(
      "  TTFT     {:.1f} ms = {}prefill {:.1f} + KV transfer {:.2f} + one decode step {:.2f}\n",
      e.ttft_s * 1e3,
      e.request_overhead_s > 0
          ? fmt::format("request overhead {:.1f} + ", e.request_overhead_s * 1e3)
          : std::string(),
      e.prefill_s * 1e3, e.kv_exposed_s * 1e3, e.decode_step_s * 1e3);
  out += fmt::format("  TPOT     {:.2f} ms\n", e.tpot_s * 1e3);
  out += fmt::format(
      "  throughput {:.2f} tokens/s per GPU over all {} GPUs ({} tokens/s, {:.2f} requests/s); "
      "bound by {}\n",
      e.tokens_per_s_per_gpu, e.total_gpus, Thousands(e.tokens_per_s), e.rate_rps, e.bottleneck);
  // --search oracle: the joint oracle is the search (its line below); no separate searcher ran.
  // Planned with both speculation settings: the calls of the joint space that speculates.
  const int64_t speculating_calls = d.speculation == 1
                                        ? d.search.calls - d.other_speculation_calls
                                        : d.other_speculation_calls;
  if (searcher != "oracle")
    out += fmt::format("  search {}: {} calls{}, {}\n", searcher, d.search.calls,
                       d.other_speculation_calls > 0
                           ? fmt::format(" ({} with speculation on both roles, {} without)",
                                         speculating_calls, d.search.calls - speculating_calls)
                           : std::string(),
                       d.search.found ? fmt::format("{:.2f} tokens/s per GPU",
                                                    d.search_eval.tokens_per_s_per_gpu)
                                      : std::string("no valid deployment"));
  if (d.oracle_status == "solved" && d.oracle.found)
    out += fmt::format("  oracle (optimum): {:.2f} tokens/s per GPU in {:.1f} s{}; this plan is {:.1f}%{}\n",
                       d.oracle.eval.tokens_per_s_per_gpu, d.oracle.wall_s,
                       searcher == "oracle"
                           ? fmt::format(" ({} simulator calls, the search: {})", d.search.calls,
                                         d.engine != engine::EngineId::kIdeal
                                             ? "the engine's joint space solved within the oracle's work bound"
                                             : "--search oracle")
                           : std::string(),
                       100 * e.tokens_per_s_per_gpu / d.oracle.eval.tokens_per_s_per_gpu,
                       d.prefill_batch_refined_from > 0 || d.decode_batch_refined_from > 0
                           ? " (the oracle's optimum is over the space's batch options, powers "
                             "of two; this plan's batch is between two of them)"
                           : "");
  else if (d.oracle_status == "skipped")
    out += d.oracle_bound_hit
               ? std::string("  oracle: skipped - it did not finish within its work bound (--oracle-calls)\n")
               : fmt::format("  oracle: interrupted after {:.1f} s\n", d.oracle.wall_s);
  if (d.found) {
    const std::string cost = CostLine(DisaggCost(d));
    if (!cost.empty()) out += "  cost: " + cost + "\n";
  }
  for (const std::string& line : plan::UncertaintyLines(DisaggUncertainty(d)))
    out += "  " + line + "\n";
  return out;
}

json DisaggLaunchJson(const std::vector<launch::DisaggLaunch>& l) {
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

std::string FormatDisaggLaunch(const std::vector<launch::DisaggLaunch>& l) {
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
