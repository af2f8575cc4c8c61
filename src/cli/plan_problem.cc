#include "cli/plan_problem.h"

#include <fmt/core.h>

#include <algorithm>
#include <utility>

#include "cli/report.h"

namespace l2s::cli {

void ApplyPlanDefaults(ProblemFlags* f) {
  if (f->model.empty()) f->model = "gpt-moe-1.6t";
  if (f->gpus == 0 && f->nodes == 0 && f->cluster.empty()) f->gpus = 1024;
  // The asked mode (AskedMode: serve with an output length), else decode; a prompt length alone
  // leaves the mode to BuildProblem, which says that decode does not read it.
  f->mode = AskedMode(*f);
  if (f->mode.empty() && f->isl == 0) f->mode = "decode";
  if (f->context == 0 && f->mode == "decode") f->context = 16384;  // only decode reads it
}

Status CheckGivenCounts(const CLI::App& cmd, const ProblemFlags& f) {
  const std::pair<const char*, int64_t> counts[] = {
      {"--gpus", f.gpus},       {"--nodes", f.nodes},   {"--context", f.context},
      {"--isl", f.isl},         {"--osl", f.osl},       {"--max-batch", f.max_batch}};
  for (const auto& [flag, v] : counts)
    if (cmd.count(flag) > 0 && v <= 0)
      return Status::InvalidArgument(fmt::format("{} must be positive, got {}", flag, v));
  return Status::Ok();
}

nlohmann::ordered_json ProblemJson(const Problem& p) {
  const Workload& w = p.workload;
  nlohmann::ordered_json j;
  j["model"] = p.model.name;
  j["gpu"] = p.cluster.gpu.name;
  j["gpus"] = p.cluster.num_gpus;
  j["gpus_per_node"] = p.cluster.gpus_per_domain;
  j["mode"] = ModeName(w.mode);
  nlohmann::ordered_json len;
  if (w.mode == Mode::kDecode) len["context"] = w.context;
  if (w.mode != Mode::kDecode) len["isl"] = w.isl;
  if (w.mode == Mode::kServe) len["osl"] = w.osl;
  j["lengths"] = len;
  j["weight_dtype"] = DTypeName(w.weight);
  j["kv_dtype"] = DTypeName(w.kv);
  nlohmann::ordered_json slo;
  slo["ttft_ms"] = w.ttft_ms > 0 ? nlohmann::ordered_json(w.ttft_ms) : nlohmann::ordered_json();
  slo["tpot_ms"] = w.tpot_ms > 0 ? nlohmann::ordered_json(w.tpot_ms) : nlohmann::ordered_json();
  j["slo"] = slo;
  j["max_batch"] = w.max_batch;
  j["engine"] = EngineName(w.engine);
  if (w.max_num_tokens > 0) j["max_num_tokens"] = w.max_num_tokens;
  if (w.cuda_graph_max_batch > 0) j["cuda_graph_max_batch"] = w.cuda_graph_max_batch;
  if (w.adp_balance >= 0) j["adp_balance"] = w.adp_balance > 0;
  if (w.mtp_accept > 0) j["mtp_accept"] = w.mtp_accept;
  if (p.model.has_draft_model()) j["draft_model"] = p.model.draft_model;
  return j;
}

std::string NoSloWarning(const Problem& p, double ttft_s, double tpot_s) {
  const Workload& w = p.workload;
  if (w.mode != Mode::kServe || w.ttft_ms > 0 || w.tpot_ms > 0) return "";
  return fmt::format(
      "serving without --slo: the plan maximises tokens/s per GPU whatever its latency: TTFT "
      "{:.1f} ms, TPOT {:.2f} ms; bound them with --slo ttft_ms=X,tpot_ms=Y",
      ttft_s * 1e3, tpot_s * 1e3);
}

std::string ProblemSummary(const Problem& p) {
  const Workload& w = p.workload;
  std::string wl;
  switch (w.mode) {
    case Mode::kDecode: wl = fmt::format("decode at context {}", Thousands(w.context)); break;
    case Mode::kPrefill: wl = fmt::format("prefill of {}-token prompts", Thousands(w.isl)); break;
    case Mode::kServe:
      wl = fmt::format("serving {} in / {} out tokens", Thousands(w.isl), Thousands(w.osl));
      break;
  }
  if (w.ttft_ms > 0) wl += fmt::format(", TTFT <= {} ms", w.ttft_ms);
  if (w.tpot_ms > 0) wl += fmt::format(", TPOT <= {} ms", w.tpot_ms);
  const int nodes = p.cluster.num_domains();
  // An NVLink domain of several hosts (an NVL72 rack of trays of 4) says so.
  const int host = HostGpus(p.cluster);
  return fmt::format("{} ({} weights), {}, {} x {} ({} node{} of {}{})", p.model.name,
                     DTypeName(w.weight), wl, Thousands(p.cluster.num_gpus), p.cluster.gpu.name, nodes,
                     nodes == 1 ? "" : "s", p.cluster.gpus_per_domain,
                     host < p.cluster.gpus_per_domain ? fmt::format(", hosts of {}", host) : "");
}

}  // namespace l2s::cli
