#include "cli/report.h"

#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <cmath>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "engine/restrict.h"
#include "sim/kernels.h"
#include "strategy/space.h"

namespace l2s::cli {
namespace {

constexpr double kMsPerS = 1e3;

double Ms(double seconds) { return seconds * kMsPerS; }
double Gib(double bytes) { return bytes / kGiB; }

// A finite number for JSON (nlohmann writes NaN/inf as null, which breaks arithmetic in scripts
// only silently); non-finite values are reported as null on purpose so that they are noticed.
nlohmann::ordered_json Num(double v) {
  if (!std::isfinite(v)) return nullptr;
  return v;
}

// What a GEMM of operator `op` computes, in words ("expert", "attention projection", ...).
const char* OpFamily(Op op) {
  switch (op) {
    case Op::kEmbed: return "embedding";
    case Op::kAttnQkv:
    case Op::kAttnOut: return "attention projection";
    case Op::kAttnCore: return "attention";
    case Op::kMoeRouter: return "router";
    case Op::kMoeFfn1:
    case Op::kMoeFfn2: return "expert";
    case Op::kSharedFfn1:
    case Op::kSharedFfn2: return "shared-expert";
    case Op::kDenseFfn1:
    case Op::kDenseFfn2: return "FFN";
    case Op::kLmHead: return "LM head";
  }
  return "?";
}

const char* GroupName(GroupKind g) {
  switch (g) {
    case GroupKind::kTp: return "tp";
    case GroupKind::kEtp: return "etp";
    case GroupKind::kStage: return "stage";
    case GroupKind::kPipe: return "pipe";
  }
  return "?";
}

// The cost category of one step (see WhySentence).
std::string Category(const Step& st, const GpuSpec& gpu) {
  switch (st.kind) {
    case StepKind::kGemm: {
      const DType compute = st.wdtype == DType::kBF16 ? DType::kBF16 : DType::kFP8;
      const double weight_s = st.weight_bytes / gpu.hbm_bw;     // weights at peak HBM bandwidth
      const double flop_s = st.flops / gpu.PeakFlops(compute);  // FLOPs at peak tensor rate
      return weight_s >= flop_s ? fmt::format("reading the {} weights", OpFamily(st.op))
                                : fmt::format("the {} matmuls", OpFamily(st.op));
    }
    case StepKind::kAttnDecode: return "attention over the KV cache";
    case StepKind::kAttnPrefill: return "prefill attention";
    case StepKind::kElementwise: return "elementwise kernels (norms, activations, residual adds)";
    case StepKind::kStream: return "recurrent-state / indexer scans";
    case StepKind::kScan: return "the chunked linear-attention / SSM scan";
    case StepKind::kComm:
      if (st.comm == CommKind::kDispatch || st.comm == CommKind::kCombine)
        return fmt::format(
            "MoE token dispatch/combine over the stage's {} GPUs{}", st.group_size,
            st.group_domains > 1 ? fmt::format(" across {} domains", ScaleUpName(gpu)) : "");
      if (st.comm == CommKind::kSendRecv) return "pipeline send/recv between stages";
      return fmt::format(
          "{} over the {} group of {}{}", CommKindName(st.comm), GroupName(st.group), st.group_size,
          st.group_domains > 1 ? fmt::format(" across {} domains", ScaleUpName(gpu)) : "");
  }
  return "?";
}

const char* ModeSubject(Mode m) {
  switch (m) {
    case Mode::kDecode: return "decode";
    case Mode::kPrefill: return "prefill";
    case Mode::kServe: return "the serving step (decode plus chunked prefill)";
  }
  return "?";
}

std::string Pct(double part, double whole) {
  return whole > 0 ? fmt::format("{:.0f}%", 100.0 * part / whole) : std::string("-");
}

}  // namespace

std::string TwoDigits(double v) {
  if (!std::isfinite(v) || v == 0 || std::fabs(v) >= 0.1) return fmt::format("{:.2f}", v);
  const int decimals = std::min(12, 1 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return fmt::format("{:.{}f}", v, decimals);
}

std::string Thousands(double v) {
  if (!std::isfinite(v)) return "nan";
  const bool neg = v < 0;
  std::string digits = fmt::format("{:.0f}", std::fabs(v));
  std::string out;
  const int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    out += digits[i];
    if ((n - 1 - i) % 3 == 0 && i != n - 1) out += ',';
  }
  return neg ? "-" + out : out;
}

nlohmann::ordered_json ErrorBandJson(const plan::Uncertainty& u) {
  auto band = [](const std::optional<plan::ErrorBand>& b) {
    if (!b) return nlohmann::ordered_json();
    nlohmann::ordered_json j;
    j["key"] = b->key;
    j["rows"] = b->rows;
    j["median_abs_pct_error"] = b->median_abs_pct;
    j["share_within_25pct"] = b->share_within_25pct;
    return j;
  };
  nlohmann::ordered_json j;
  j["calibration"] = u.calibration;
  j["gpu"] = band(u.gpu);
  j["regime"] = u.regime;
  j["regime_band"] = band(u.regime_band);
  j["unmeasured"] = u.unmeasured;
  j["unmodelled"] = u.unmodelled;
  return j;
}

nlohmann::ordered_json CostJson(const plan::Cost& c) {
  auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
  };
  nlohmann::ordered_json j;
  j["usd_per_mtok_output"] = opt(c.usd_per_mtok_output);
  j["usd_per_mtok_total"] = opt(c.usd_per_mtok_total);
  j["tokens_per_joule_output"] = opt(c.tokens_per_joule_output);
  j["tokens_per_joule_total"] = opt(c.tokens_per_joule_total);
  j["price_per_gpu_hour"] = opt(c.price_per_gpu_hour);
  j["usd_per_hour"] = opt(c.usd_per_hour);
  j["gpus"] = c.gpus;
  j["power_w"] = opt(c.power_w);
  return j;
}

std::string CostLine(const plan::Cost& c, bool hourly) {
  // A prefill's tokens are its prompts' (its one output token each is the first token): priced
  // and counted per prompt token; otherwise per output token, input+output beside.
  std::string out;
  if (c.usd_per_mtok_output && c.usd_per_mtok_total && c.price_per_gpu_hour)
    out = (c.prefill ? fmt::format("${:.3f} per million prompt tokens", *c.usd_per_mtok_total)
                     : fmt::format("${:.3f} per million output tokens (${:.3f} input+output)",
                                   *c.usd_per_mtok_output, *c.usd_per_mtok_total)) +
          fmt::format(" at ${:.2f}/GPU-h", *c.price_per_gpu_hour) +
          (hourly && c.usd_per_hour
               ? fmt::format(", ${:.2f} per hour for {} GPUs", *c.usd_per_hour, c.gpus)
               : std::string());
  if (c.tokens_per_joule_output && c.tokens_per_joule_total && c.power_w && c.gpus > 0) {
    if (!out.empty()) out += "; ";
    out += (c.prefill ? fmt::format("{} prompt tokens per joule",
                                    TwoDigits(*c.tokens_per_joule_total))
                      : fmt::format("{} output tokens per joule ({} input+output)",
                                    TwoDigits(*c.tokens_per_joule_output),
                                    TwoDigits(*c.tokens_per_joule_total))) +
           fmt::format(" at {:.0f} W per GPU (board TDP, an upper bound)", *c.power_w / c.gpus);
  } else if (!c.power_w) {
    // A GPU whose board power no source in ../shared states (MI325X): said, not left out.
    if (!out.empty()) out += "; ";
    out += "no tokens per joule: no board power for this GPU (../shared/reference/HARDWARE.md "
           "states none; a cluster file can give gpu.tdp_w)";
  }
  return out;
}

nlohmann::ordered_json BreakdownJson(const Evaluation& e) {
  nlohmann::ordered_json j;
  j["step_ms"] = Num(Ms(e.stage_s));
  j["compute_ms"] = Num(Ms(e.compute_s));
  j["comm_ms"] = Num(Ms(e.comm_s));
  nlohmann::ordered_json ops = nlohmann::ordered_json::object();
  for (int i = 0; i < kNumOps; ++i) {
    const double c = e.compute_s_by_op[i], m = e.comm_s_by_op[i];
    if (c == 0 && m == 0) continue;
    ops[std::string(OpName(static_cast<Op>(i)))] = {
        {"compute_ms", Num(Ms(c))}, {"comm_ms", Num(Ms(m))}, {"total_ms", Num(Ms(c + m))}};
  }
  j["by_operator"] = std::move(ops);
  nlohmann::ordered_json coll = nlohmann::ordered_json::object();
  for (int k = 0; k < static_cast<int>(e.comm_s_by_kind.size()); ++k) {
    if (e.comm_s_by_kind[k] == 0) continue;
    coll[CommKindName(static_cast<CommKind>(k))] = Num(Ms(e.comm_s_by_kind[k]));
  }
  j["by_collective"] = std::move(coll);
  if (e.mtp_s > 0) j["mtp_draft_ms"] = Num(Ms(e.mtp_s));
  if (e.adp_imbalance != 1) j["adp_imbalance"] = Num(e.adp_imbalance);
  j["memory_gib"] = {{"weights", Num(Gib(e.weight_bytes))},  {"kv", Num(Gib(e.kv_bytes))},
                     {"state", Num(Gib(e.state_bytes))},
                     {"activations", Num(Gib(e.act_bytes))}, {"reserve", Num(Gib(e.reserve_bytes))},
                     {"total", Num(Gib(e.mem_bytes))},       {"capacity", Num(Gib(e.mem_capacity_bytes))}};
  return j;
}

static nlohmann::ordered_json SchedulerJson(const Simulator& sim, const Strategy& s, const Evaluation& e) {
  const Workload& w = sim.problem().workload;
  nlohmann::ordered_json j;
  j["engine"] = EngineName(w.engine);
  j["adp_balance"] = w.engine == Engine::kTrtllm && w.adp_balance > 0;
  j["max_batch"] = w.max_batch;
  j["max_num_tokens"] = sim.MaxNumTokens();  // 0 = unlimited
  j["token_batch_limit"] = sim.TokenBatchLimit(s) == std::numeric_limits<int>::max()
                               ? nlohmann::ordered_json()
                               : nlohmann::ordered_json(sim.TokenBatchLimit(s));
  j["cuda_graph_max_batch"] = sim.CudaGraphMaxBatch();  // 0 = unlimited
  j["cuda_graph"] = sim.CudaGraphMaxBatch() <= 0 || e.batch <= sim.CudaGraphMaxBatch();
  j["adp_imbalance"] = Num(e.adp_imbalance);
  return j;
}

static std::string SchedulerLine(const Simulator& sim, const Strategy& s, const Evaluation& e) {
  const Workload& w = sim.problem().workload;
  std::string out = EngineName(w.engine);
  if (w.engine == Engine::kTrtllm)
    out += w.adp_balance > 0 ? " (attention-DP balance on)" : " (attention-DP balance off)";
  out += sim.MaxNumTokens() > 0 ? fmt::format("; max_num_tokens {}", sim.MaxNumTokens())
                                : std::string("; no token budget");
  if (sim.TokenBatchLimit(s) != std::numeric_limits<int>::max())
    out += fmt::format(" (batch <= {})", sim.TokenBatchLimit(s));
  if (sim.CudaGraphMaxBatch() > 0)
    out += fmt::format("; CUDA graphs up to batch {}{}", sim.CudaGraphMaxBatch(),
                       e.batch > sim.CudaGraphMaxBatch() ? " (this batch runs eagerly)" : "");
  if (e.adp_imbalance != 1)
    out += fmt::format("; attention-DP imbalance x{:.3f} of the even-prefill step",
                       e.adp_imbalance);
  return out;
}

std::string TtftText(const Simulator& sim, double ttft_s, int decimals) {
  const std::string t = fmt::format("{:.{}f} ms", Ms(ttft_s), decimals);
  if (!(sim.RequestOverheadS() > 0)) return t;
  return fmt::format("{} (with the engine's request overhead, {:.1f} ms)", t,
                     Ms(sim.RequestOverheadS()));
}

nlohmann::ordered_json EvaluationJson(const Simulator& sim, const Strategy& s,
                                      const Evaluation& e, const EngineInfo& engine) {
  const Problem& p = sim.problem();
  nlohmann::ordered_json j;
  j["valid"] = e.valid();
  j["reason"] = sim.Reason(s, e);
  j["tokens_per_s"] = Num(e.tokens_per_s);
  j["tokens_per_s_per_gpu"] = Num(e.tokens_per_s_per_gpu);
  j["ttft_ms"] = Num(Ms(e.ttft_s));
  j["request_overhead_ms"] = Num(Ms(sim.RequestOverheadS()));  // part of ttft_ms
  j["tpot_ms"] = Num(Ms(e.tpot_s));
  j["batch"] = e.batch;
  j["batch_auto"] = s.batch == 0;
  j["memory_per_gpu_gib"] = Num(Gib(e.mem_bytes));
  j["memory_capacity_gib"] = Num(Gib(e.mem_capacity_bytes));
  j["stage_ms"] = Num(Ms(e.stage_s));
  j["slowest_stage"] = e.slowest_stage;
  j["breakdown"] = BreakdownJson(e);
  j["mtp"] = s.mtp;
  j["mtp_accept"] = Num(e.accept);
  if (p.model.has_draft_model()) j["draft_model"] = p.model.draft_model;
  j["scheduler"] = SchedulerJson(sim, s, e);
  j["strategy"] = ToText(s);
  j["model"] = p.model.name;
  j["gpu"] = p.cluster.gpu.name;
  j["calibration"] = CalibrationNote(p.cluster.gpu);
  j["gpus"] = p.cluster.num_gpus;
  j["gpus_per_node"] = p.cluster.gpus_per_domain;
  const Workload& w = p.workload;
  j["mode"] = ModeName(w.mode);
  j["isl"] = w.isl;
  j["osl"] = w.osl;
  j["context"] = w.context;
  j["dtype"] = std::string(DTypeName(w.weight));
  j["kv_dtype"] = std::string(DTypeName(w.kv));
  j["attn_dtype"] = std::string(DTypeName(w.attn));
  if (w.ttft_ms > 0 || w.tpot_ms > 0) j["slo"] = {{"ttft_ms", w.ttft_ms}, {"tpot_ms", w.tpot_ms}};
  j["engine"] = engine.name.empty() ? std::string("none") : engine.name;
  j["engine_factor"] = engine.factor;
  // Whether the named engine launches the strategy as given (null without one).
  if (engine.title.empty()) {
    j["launchable"] = nullptr;
  } else {
    j["launchable"] = engine.unlaunchable.empty();
  }
  j["unlaunchable"] = engine.unlaunchable;
  j["cost"] = CostJson(plan::CostOf(e.valid() ? e.tokens_per_s_per_gpu : 0, w, p.cluster,
                                    p.cluster.num_gpus));
  j["notes"] = StrategyNotes(p.model, s);
  j["why"] = WhySentence(sim, s, e);
  return j;
}

std::string FormatBreakdown(const Evaluation& e) {
  std::string out;
  const double step = e.stage_s;
  out += fmt::format("{:<30} {:>11} {:>11} {:>11} {:>6}\n", "time per step (slowest stage)",
                     "compute ms", "comm ms", "total ms", "share");
  for (int i = 0; i < kNumOps; ++i) {
    const double c = e.compute_s_by_op[i], m = e.comm_s_by_op[i];
    if (c == 0 && m == 0) continue;
    out += fmt::format("  {:<28} {:>11.3f} {:>11.3f} {:>11.3f} {:>6}\n", OpName(static_cast<Op>(i)),
                       Ms(c), Ms(m), Ms(c + m), Pct(c + m, step));
  }
  if (e.stage_s - e.compute_s - e.comm_s > 1e-6 * e.stage_s) {
    // Pipeline send/recv is attributed to operators; anything left is not (should not happen).
    out += fmt::format("  {:<28} {:>11} {:>11} {:>11.3f} {:>6}\n", "(unattributed)", "", "",
                       Ms(step - e.compute_s - e.comm_s), Pct(step - e.compute_s - e.comm_s, step));
  }
  out += fmt::format("  {:<28} {:>11.3f} {:>11.3f} {:>11.3f} {:>6}\n", "total", Ms(e.compute_s),
                     Ms(e.comm_s), Ms(step), Pct(step, step));
  bool any = false;
  for (int k = 0; k < static_cast<int>(e.comm_s_by_kind.size()); ++k) {
    if (e.comm_s_by_kind[k] == 0) continue;
    if (!any) out += fmt::format("{:<30} {:>11} {:>6}\n", "collectives", "ms", "share");
    any = true;
    out += fmt::format("  {:<28} {:>11.3f} {:>6}\n", CommKindName(static_cast<CommKind>(k)),
                       Ms(e.comm_s_by_kind[k]), Pct(e.comm_s_by_kind[k], step));
  }
  out += fmt::format("{:<30} {:>11}\n", "memory per GPU", "GiB");
  const std::pair<const char*, double> mem[] = {
      {"weights", e.weight_bytes}, {"kv cache", e.kv_bytes},   {"activations", e.act_bytes},
      {"runtime reserve", e.reserve_bytes}, {"total", e.mem_bytes}, {"capacity", e.mem_capacity_bytes}};
  for (const auto& [name, bytes] : mem) {
    out += fmt::format("  {:<28} {:>11.2f}\n", name, Gib(bytes));
    if (name == mem[1].first && e.state_bytes > 0)
      out += fmt::format("  {:<28} {:>11.2f}\n", "recurrent state", Gib(e.state_bytes));
  }
  return out;
}

std::string FormatEvaluation(const Simulator& sim, const Strategy& s, const Evaluation& e,
                             const EngineInfo& engine) {
  const Problem& p = sim.problem();
  const Workload& w = p.workload;
  auto row = [](const char* key, const std::string& value) {
    return fmt::format("{:<12} {}\n", key, value);
  };
  std::string out;
  out += row("model", fmt::format("{} ({} weights, {} KV cache{})", p.model.name,
                                  DTypeName(w.weight), DTypeName(w.kv),
                                  w.attn == DType::kBF16 ? "" : ", fp8 attention"));
  out += row("cluster", fmt::format("{} x {} ({} {} domain(s) of {})", p.cluster.num_gpus,
                                    p.cluster.gpu.name, p.cluster.num_domains(),
                                    ScaleUpName(p.cluster.gpu), p.cluster.gpus_per_domain));
  // Where the efficiencies come from, for every GPU but the Hopper sets the tool was built on
  // (no tables of its own, or a Blackwell set, which names itself and any borrowed sub-model).
  const std::string& cal = p.cluster.gpu.calibration;
  if (cal != "h100_sxm" && cal != "h200_sxm") out += row("calibration", CalibrationNote(p.cluster.gpu));
  std::string wl = ModeName(w.mode);
  if (w.mode == Mode::kDecode) wl += fmt::format(", context {}", w.context);
  if (w.mode == Mode::kPrefill) wl += fmt::format(", isl {}", w.isl);
  if (w.mode == Mode::kServe) wl += fmt::format(", isl {}, osl {}", w.isl, w.osl);
  if (w.ttft_ms > 0) wl += fmt::format(", TTFT SLO {} ms", w.ttft_ms);
  if (w.tpot_ms > 0) wl += fmt::format(", TPOT SLO {} ms", w.tpot_ms);
  out += row("workload", wl);
  out += row("strategy", ToText(s));
  // The fitted factor f (docs/VALIDATION.md): every step takes 1/f of the ideal engine's time.
  const double slower_pct = engine.factor > 0 ? (1 / engine.factor - 1) * 100 : 0;
  out += row("engine",
             engine.name.empty()
                 ? std::string("none (ideal engine, factor 1)")
                 : fmt::format("{} (fitted factor {:.3f}: every step {:.1f}% {} than the ideal "
                               "engine's)",
                               engine.name, engine.factor, std::abs(slower_pct),
                               slower_pct >= 0 ? "longer" : "shorter"));
  // What the named engine cannot launch of this strategy: priced under its scheduler and factor
  // all the same, but no command of it runs this.
  for (const std::string& line : NotLaunchedLines(engine)) out += row("launch", line);
  if (!engine.unlaunchable.empty())
    out += row("launch", fmt::format("`l2s plan --engine {}` plans what it launches", engine.name));
  out += row("verdict", e.valid() ? std::string("valid")
                                  : fmt::format("INVALID: {}", sim.Reason(s, e)));
  for (const std::string& n : StrategyNotes(p.model, s)) out += row("note", n);
  if (e.verdict == Verdict::kStructure) return out;
  out += row("batch", fmt::format("{} sequences per attention-dp rank{}", e.batch,
                                  s.batch == 0 ? " (auto)" : ""));
  out += row("throughput", fmt::format("{} {} tokens/s ({} per GPU)", Thousands(e.tokens_per_s),
                                       w.mode == Mode::kPrefill ? "input" : "output",
                                       Thousands(e.tokens_per_s_per_gpu)));
  if (w.mode != Mode::kDecode) out += row("TTFT", TtftText(sim, e.ttft_s, 2));
  if (w.mode != Mode::kPrefill) out += row("TPOT", fmt::format("{:.3f} ms", Ms(e.tpot_s)));
  if (e.valid()) {
    const std::string cost =
        CostLine(plan::CostOf(e.tokens_per_s_per_gpu, w, p.cluster, p.cluster.num_gpus));
    if (!cost.empty()) out += row("cost", cost);
  }
  out += row("step", fmt::format("{:.3f} ms (slowest stage {} of {})", Ms(e.stage_s),
                                 e.slowest_stage, s.pp));
  out += row("memory", fmt::format("{:.1f} of {:.1f} GiB per GPU", Gib(e.mem_bytes),
                                   Gib(e.mem_capacity_bytes)));
  if (s.mtp > 0 && w.mode != Mode::kPrefill)
    out += row(p.model.has_draft_model() ? "draft" : "MTP",
               fmt::format("{} draft tokens per step{}, {:.2f} tokens emitted per step ({}); "
                           "draft passes {:.3f} ms of the step",
                           s.mtp,
                           p.model.has_draft_model() ? " by " + p.model.draft_model : "",
                           e.accept,
                           w.mtp_accept > 0                ? "stated"
                           : p.model.has_draft_model() ? "DeepSeek's published MTP acceptance "
                                                         "curve, no draft-model measurement: "
                                                         "state yours with --mtp-accept"
                                                       : "published acceptance curve",
                           Ms(e.mtp_s)));
  if (s.mtp > 0 && w.mode == Mode::kPrefill)
    out += row(p.model.has_draft_model() ? "draft" : "MTP",
               fmt::format("a prefill server of a speculating deployment ({} draft tokens per "
                           "decode step): every prompt token runs once through the {} (its extend), "
                           "{:.3f} ms of the step, whatever the depth",
                           s.mtp,
                           p.model.has_draft_model() ? "draft " + p.model.draft_model
                                                     : std::string("MTP module"),
                           Ms(e.mtp_s)));
  if (w.engine != Engine::kIdeal || sim.MaxNumTokens() > 0 || sim.CudaGraphMaxBatch() > 0)
    out += row("scheduler", SchedulerLine(sim, s, e));
  out += "\n";
  out += FormatBreakdown(e);
  const std::string why = WhySentence(sim, s, e);
  if (!why.empty()) out += "\nwhy: " + why + "\n";
  return out;
}

StageLayers LayersOfStage(const ModelSpec& m, const Program& p, int pp, int stage) {
  StageLayers out;
  const int L = m.num_layers;
  pp = std::max(1, pp);
  const int lo = static_cast<int>(static_cast<long long>(stage) * L / pp);
  const int hi = static_cast<int>(static_cast<long long>(stage + 1) * L / pp);
  for (int i = lo; i < hi; ++i) ++out.layers[LayerKindIndex(m, i, p)];
  out.has_embed = stage == 0;
  out.has_lm_head = stage == pp - 1;
  return out;
}

std::vector<std::string> NotLaunchedLines(const EngineInfo& e) {
  std::vector<std::string> out;
  for (const std::string& v : e.unlaunchable)
    out.push_back(fmt::format("{} does not run this as given: {}", e.title, v));
  return out;
}

EngineInfo EngineInfoOf(const std::string& flag, const Problem& p, const Strategy& s,
                        engine::Role role) {
  EngineInfo engine;
  if (flag.empty()) return engine;
  engine.name = flag;
  engine.factor = p.workload.engine_factor;
  StatusOr<engine::EngineId> id = engine::ParseEngineId(flag);
  if (!id.ok() || *id == engine::EngineId::kIdeal) return engine;
  const engine::Capabilities& caps = engine::CapabilitiesOf(*id);
  engine.title = std::string(caps.title);
  if (CheckStrategy(p.model, p.cluster.num_gpus, s).ok())
    engine.unlaunchable = engine::Violations(caps, p.model, s, role);
  return engine;
}

std::string WhySentence(const Simulator& sim, const Strategy& s, const Evaluation& e) {
  if (e.verdict == Verdict::kStructure || e.batch < 1) return "";
  const Problem& p = sim.problem();
  auto d = std::make_unique<Simulator::Detail>();  // ~100 KiB: keep it off the stack
  sim.Explain(s, e.batch, d.get());
  const Program& prog = d->program;
  const StageLayers sl = LayersOfStage(p.model, prog, s.pp, e.slowest_stage);
  std::map<std::string, double> cost;  // category -> seconds per step of the stage
  // Each step's seconds as the breakdown table shows them (Simulator::Detail::*_shown_s): under
  // two-batch overlap hidden communication is not named as a cost; with attention-DP imbalance
  // the step is the imbalanced rank's mix of the program and its decode-only counterpart.
  const Program& dec = d->dec_program;
  auto add = [&](const Section& sec, const std::array<double, Section::kMaxSteps>& t,
                 const Section& dsec, const std::array<double, Section::kMaxSteps>& dt, double w) {
    if (w <= 0) return;
    for (int i = 0; i < sec.num_steps; ++i) cost[Category(sec.steps[i], p.cluster.gpu)] += t[i] * w;
    for (int i = 0; i < dsec.num_steps; ++i)
      cost[Category(dsec.steps[i], p.cluster.gpu)] += dt[i] * w;
  };
  for (int k = 0; k < prog.num_kinds; ++k)
    add(prog.layers[k], d->layer_shown_s[k], dec.layers[k], d->layer_dec_shown_s[k],
        sl.layers[k]);
  if (sl.has_embed) add(prog.embed, d->embed_shown_s, dec.embed, d->embed_dec_shown_s, 1);
  if (sl.has_lm_head)
    add(prog.lm_head, d->lm_head_shown_s, dec.lm_head, d->lm_head_dec_shown_s, 1);
  if (s.pp > 1) add(prog.pipe, d->pipe_shown_s, dec.pipe, d->pipe_dec_shown_s, 1);
  if (sl.has_lm_head)
    add(prog.mtp, d->mtp_shown_s, dec.mtp, d->mtp_dec_shown_s, prog.mtp_passes);
  double total = 0;
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& [name, t] : cost) {
    total += t;
    ranked.emplace_back(t, name);
  }
  if (ranked.empty() || !(total > 0)) return "";
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::string out = fmt::format("{} is dominated by {} ({} of the step)",
                                ModeSubject(p.workload.mode), ranked[0].second,
                                Pct(ranked[0].first, total));
  if (ranked.size() > 1)
    out += fmt::format(", then {} ({})", ranked[1].second, Pct(ranked[1].first, total));
  return out;
}

Status CheckStrategyFlags(const Problem& p, const Strategy& s, int max_batch_flag) {
  if (p.workload.mtp_accept > 0 && s.mtp == 0)
    return Status::InvalidArgument(fmt::format(
        "--mtp-accept {}: the strategy speculates no tokens (mtp=0); give --mtp K or mtp=K in "
        "--strategy",
        p.workload.mtp_accept));
  if (max_batch_flag > 0 && s.batch > max_batch_flag)
    return Status::InvalidArgument(fmt::format(
        "batch {} exceeds --max-batch {}: the engine runs at most {} sequences per rank "
        "(evaluate a batch <= {}, or auto)",
        s.batch, max_batch_flag, max_batch_flag, max_batch_flag));
  return Status::Ok();
}

StatusOr<Strategy> ResolveStrategy(const Problem& p, const std::string& text,
                                   const std::string& batch_flag, int mtp_flag) {
  if (text.empty()) return Status::InvalidArgument("--strategy is required (e.g. \"tp=8,pp=1\")");
  const int gpus = p.cluster.num_gpus;
  StatusOr<Strategy> parsed = FromText(text, gpus);
  if (!parsed.ok()) {
    // FromText's non-divisible dp is a usage error like a malformed entry.
    return Status::InvalidArgument(fmt::format("--strategy: {}", parsed.status().message()));
  }
  Strategy s = *parsed;
  if (!batch_flag.empty()) {
    if (batch_flag == "auto") {
      s.batch = 0;
    } else {
      size_t used = 0;
      long long b = 0;
      try {
        b = std::stoll(batch_flag, &used);
      } catch (...) {
        used = 0;
      }
      if (used != batch_flag.size() || b < 1 || b > (1 << 30))
        return Status::InvalidArgument(
            fmt::format("--batch: expected a positive integer or auto, got \"{}\"", batch_flag));
      s.batch = static_cast<int>(b);
    }
    // The text's own batch and --batch must not disagree (one of them would be ignored).
    if (parsed->batch > 0 && s.batch != parsed->batch)
      return Status::InvalidArgument(fmt::format(
          "--batch {} disagrees with the strategy's batch={} (give the batch once)", batch_flag,
          parsed->batch));
  }
  // Degrees are ints, so pp*tp fits int64; the full product is formed only when it cannot
  // overflow (pp*tp <= GPUs <= 2^24).
  const int64_t pp_tp = int64_t{s.pp} * s.tp;
  if (pp_tp > gpus || pp_tp * s.dp != gpus) {
    // A strategy of fewer GPUs that divide the cluster is likely one replica of a replicated
    // plan (plan's "Replicas"): say how to evaluate it.
    const int64_t used = pp_tp <= gpus ? pp_tp * s.dp : 0;
    const std::string replica =
        used > 0 && used < gpus && gpus % used == 0
            ? fmt::format(" (one instance of a plan's {} replicas is evaluated on its own GPUs: "
                          "--gpus {})",
                          gpus / used, used)
            : "";
    return Status::InvalidArgument(fmt::format(
        "--strategy: pp*tp*dp = {}*{}*{} = {} but the cluster has {} GPUs{}", s.pp, s.tp, s.dp,
        pp_tp > gpus ? fmt::format("more than {}", gpus) : std::to_string(pp_tp * s.dp), gpus,
        replica));
  }
  // A dim for an operator the model does not have is an error (the strategy space rejects it
  // too), not something to drop silently; `none` is what such an operator holds (ClearAbsentOps)
  // and what plan prints for it, so a printed strategy reads back. FromText accepted the text,
  // so every entry is key=value.
  for (size_t pos = 0; pos <= text.size();) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string key = text.substr(pos, std::min(text.find('=', pos), comma) - pos);
    key.erase(0, key.find_first_not_of(" \t"));
    key.erase(key.find_last_not_of(" \t") + 1);
    Op op{};
    if (ParseOp(key, &op) && !ModelHasOp(p.model, op) && s.dim(op) != Dim::kNone)
      return Status::InvalidArgument(fmt::format(
          "--strategy: the model {} has no {} operator; leave its dim out (or write {}=none)",
          p.model.name, key, key));
    pos = comma + 1;
  }
  if (mtp_flag >= 0) {
    if (s.mtp != 0 && s.mtp != mtp_flag)
      return Status::InvalidArgument(fmt::format(
          "--mtp {} disagrees with the strategy's mtp={}", mtp_flag, s.mtp));
    s.mtp = mtp_flag;
  }
  ClearAbsentOps(p.model, &s);
  return s;
}

std::string ShortText(const ModelSpec& m, const Strategy& s) {
  std::string out = fmt::format("pp={},tp={},dp={},ep={},batch={},sp={}", s.pp, s.tp, s.dp, s.ep,
                                s.batch, s.sp ? "on" : "off");
  if (s.slots > 0) out += fmt::format(",slots={}", s.slots);
  if (s.overlap != Overlap::kNone) out += fmt::format(",overlap={}", OverlapName(s.overlap));
  if (s.mtp > 0) out += fmt::format(",mtp={}", s.mtp);
  Strategy meg;
  meg.dims = MegatronDims();
  ClearAbsentOps(m, &meg);
  std::string diff;
  for (int i = 0; i < kNumOps; ++i)
    if (s.dims[i] != meg.dims[i])
      diff += fmt::format("{}{}={}", diff.empty() ? "" : ",", OpName(static_cast<Op>(i)),
                          DimName(s.dims[i]));
  return out + (diff.empty() ? "; Megatron dims" : "; differs from Megatron: " + diff);
}

}  // namespace l2s::cli
