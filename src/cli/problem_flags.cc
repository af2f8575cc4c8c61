#include "cli/problem_flags.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "cli/common.h"
#include "common/text.h"
#include "engine/engine.h"
#include "engine/model_classes.h"
#include "hw/hw.h"
#include "launch/launch.h"
#include "model/model_source.h"
#include "model/presets.h"

namespace l2s::cli {

void AddOracleFlags(CLI::App* cmd, int64_t* calls, double* seconds, const char* zero_means) {
  cmd->add_option("--oracle-calls", *calls,
                  fmt::format("work bound of the oracle in its simulator calls (default {}; 0 {}): "
                              "an oracle that cannot finish within it is reported as skipped",
                              *calls, zero_means))
      ->check(CLI::Range(int64_t{0}, kMaxOracleCalls));
  cmd->add_option("--oracle-seconds", *seconds,
                  fmt::format("deprecated: read as --oracle-calls SECONDS x {} (a bound in seconds "
                              "made the answer depend on the machine's load)",
                              kOracleCallsPerSecond))
      ->check(FiniteRange(0.0, kMaxOracleSeconds));
}

int64_t OracleCallsOf(int64_t calls, double seconds) {
  if (!(seconds >= 0)) return calls;
  if (seconds == 0) return 0;
  // Any positive time is at least one call (0 alone skips the oracle).
  return std::max<int64_t>(
      1, static_cast<int64_t>(std::llround(seconds * static_cast<double>(kOracleCallsPerSecond))));
}

void AddProblemFlags(CLI::App* cmd, ProblemFlags* f) {
  // Counts are checked as they are parsed: a value out of its range (0 included) is a usage error
  // naming the flag, whichever command reads it (docs/LIMITS.md).
  cmd->add_option("--model", f->model, "model preset name or path to a HuggingFace config.json");
  // The preset table's names, so the help cannot fall behind it.
  cmd->add_option("--gpu", f->gpu,
                  fmt::format("GPU type (default h100): {}", fmt::join(GpuPresetNames(), ", ")));
  cmd->add_option("--gpus", f->gpus, "number of GPUs")->check(CountRange(kMaxGpusFlag));
  cmd->add_option("--nodes", f->nodes, "number of nodes (x --gpus-per-node GPUs)")
      ->check(CountRange(kMaxGpusFlag));
  cmd->add_option("--gpus-per-node", f->gpus_per_node,
                  "GPUs per NVLink domain (default: the GPU's, 8 on HGX nodes, 72 on GB200/GB300)")
      ->check(CountRange(kMaxGpusPerNode));
  cmd->add_option("--cluster", f->cluster, "cluster preset (gb200-nvl72) or cluster JSON file");
  cmd->add_option("--mode", f->mode, "workload: serve, decode or prefill");
  cmd->add_option("--isl", f->isl, "prompt (input) length in tokens")
      ->check(CountRange(kMaxTokens));
  cmd->add_option("--osl", f->osl, "output length in tokens (serve)")
      ->check(CountRange(kMaxTokens));
  cmd->add_option("--context", f->context, "KV length attended per decoded token (decode)")
      ->check(CountRange(kMaxTokens));
  cmd->add_option("--dtype", f->dtype, "weight dtype: bf16, fp8, fp4 (default: the model's)");
  cmd->add_option("--kv-dtype", f->kv_dtype, "KV-cache dtype: bf16 or fp8 (default bf16)");
  cmd->add_option("--attn-dtype", f->attn_dtype,
                  "precision of the attention math: bf16 (default) or fp8 (FP8 attention kernels, "
                  "e.g. FlashMLA's FP8 path)");
  cmd->add_option("--slo", f->slo, "latency limits, e.g. ttft_ms=2000,tpot_ms=50");
  cmd->add_option("--max-batch", f->max_batch,
                  "largest batch per attention-dp rank (default: the engine's, else 4096)")
      ->check(CountRange(kMaxBatchFlag));
  cmd->add_option("--price-per-gpu-hour", f->price_per_gpu_hour,
                  "your price in $ per GPU-hour: plans then report $ per million tokens "
                  "(l2s has no built-in prices; default: the cluster file's price_per_gpu_hour); "
                  "with --gpu a,b,... one price for all or p1,p2,... one per GPU type")
      ->check(FiniteRange(0.0, 1e6));
  AddEngineFlags(cmd, f);
}

void AddEngineFlags(CLI::App* cmd, ProblemFlags* f) {
  cmd->add_option("--engine", f->engine,
                  "the engine to plan for: vllm, sglang, trtllm, dynamo+vllm, dynamo+sglang, "
                  "dynamo+trtllm, megatron, atom (AMD GPUs; a release may follow, e.g. "
                  "trtllm-1.1: the release each engine's rules were read from or a later one, "
                  "docs/PLAN.md \"Engine rules\") - plan then "
                  "searches only what that engine launches, under its scheduler and limits - or "
                  "ideal (the unrestricted space of the paper)");
  cmd->add_option("--adp-balance", f->adp_balance,
                  "TensorRT-LLM attention-DP balancing (attention_dp_config.enable_balance): on "
                  "or off (default off)");
  cmd->add_option("--max-num-tokens", f->max_num_tokens,
                  "tokens per attention-dp rank per step, the chunked-prefill budget (default: "
                  "the engine's)")
      ->check(CountRange(kMaxTokens));
  cmd->add_option("--cuda-graph-max-batch", f->cuda_graph_max_batch,
                  "largest decode batch the engine captures as a CUDA graph (default: the "
                  "engine's)")
      ->check(CountRange(kMaxBatchFlag));
  cmd->add_option("--mtp", f->mtp,
                  "speculative tokens per decode step, 0..8; models with MTP layers, or with "
                  "--draft-model (plan: default searches 0..3)");
  cmd->add_option("--mtp-accept", f->mtp_accept,
                  "mean tokens emitted per decode step incl. the verified one (default: the "
                  "published acceptance curve)");
  cmd->add_option("--draft-model", f->draft_model,
                  "speculative decoding for a model without MTP layers: the EAGLE-3 draft model "
                  "(HF repo id or folder) the launch commands load; priced as one dense layer");
  cmd->add_option("--quick-reduce", f->quick_reduce,
                  "AMD GPUs, --engine sglang or vllm: QuickReduce, the quantised all-reduce "
                  "(ROCM_QUICK_REDUCE_QUANTIZATION): off (the engines' default), int6 or int4");
}

engine::EngineId LaunchEngineOf(const ProblemFlags& f) {
  if (f.engine.empty()) return engine::EngineId::kIdeal;
  StatusOr<engine::EngineId> id = engine::ParseEngineId(f.engine);
  return id.ok() ? *id : engine::EngineId::kIdeal;
}

Status ApplyEngineFlags(const ProblemFlags& f, Problem* p) {
  Workload& w = p->workload;
  // The engines of the capability table (engine/engine.h); any other name is an error, never
  // silently the ideal engine. The scheduler is the engine's (Dynamo's is its backend's).
  if (!f.engine.empty()) {
    StatusOr<engine::EngineId> id = engine::ParseEngineId(f.engine);
    if (!id.ok()) return Status::InvalidArgument("--engine: " + id.status().message());
    // A release older than the one the engine's row describes: its flags and limits differ.
    if (Status r = engine::CheckRelease(f.engine); !r.ok())
      return Status::InvalidArgument("--engine: " + r.message());
    // An engine that has no build for the cluster's GPUs (TensorRT-LLM on AMD, ATOM on NVIDIA),
    // or a single-node engine (ATOM) on more than one node - unless its instances are smaller:
    // --instance-gpus, or an MoE model's replicas (plan/replicas.h), which are sized over the
    // instance sizes that fit the engine (a node and below for ATOM).
    if (!p->cluster.gpu.vendor.empty()) {
      const int instance = f.instance_gpus > 0 ? f.instance_gpus
                           : p->model.is_moe()
                               ? std::min(p->cluster.num_gpus, p->cluster.gpus_per_domain)
                               : p->cluster.num_gpus;
      Status v = engine::CheckCluster(*id, p->cluster.gpu.vendor, p->cluster.gpu.name, instance,
                                      p->cluster.gpus_per_domain);
      if (!v.ok()) return Status::InvalidArgument("--engine: " + v.message());
    }
    // An engine whose registry is a rule (ATOM) and lacks the model's class cannot start it.
    if (!engine::LoadsModelClass(*id, p->model))
      return Status::InvalidArgument("--engine: " + engine::ModelClassNote(*id, p->model));
    w.engine = engine::SchedulerOf(*id);
    SetEngineFigures(f.engine, &w);
  }
  if (!f.adp_balance.empty()) {
    if (f.adp_balance != "on" && f.adp_balance != "off")
      return Status::InvalidArgument(
          fmt::format("--adp-balance: expected on or off, got \"{}\"", f.adp_balance));
    if (w.engine != Engine::kTrtllm)
      return Status::InvalidArgument(
          "--adp-balance: attention-DP balancing is a TensorRT-LLM setting (add --engine trtllm)");
    w.adp_balance = f.adp_balance == "on" ? 1 : 0;
  }
  if (f.max_num_tokens < 0)
    return Status::InvalidArgument(
        fmt::format("--max-num-tokens must be positive, got {}", f.max_num_tokens));
  if (f.cuda_graph_max_batch < 0)
    return Status::InvalidArgument(fmt::format("--cuda-graph-max-batch must be positive, got {}",
                                               f.cuda_graph_max_batch));
  w.max_num_tokens = f.max_num_tokens;
  w.cuda_graph_max_batch = f.cuda_graph_max_batch;
  if (f.max_batch == 0 && !f.engine.empty()) w.max_batch = DefaultsOf(w.engine).max_batch;
  if (f.mtp != -1) {
    if (f.mtp < 0 || f.mtp > kMaxMtpTokens)
      return Status::InvalidArgument(
          fmt::format("--mtp: expected 0..{} speculative tokens per step, got {}", kMaxMtpTokens,
                      f.mtp));
    if (f.mtp > 0 && !p->model.can_speculate())
      return Status::InvalidArgument(fmt::format(
          "--mtp {}: model '{}' has no MTP (next-token-prediction) layers to draft with; give "
          "its EAGLE-3 draft model with --draft-model ID",
          f.mtp, p->model.name));
    // Prefill mode with --mtp K > 0: a prefill server of a speculating deployment, which runs
    // the draft's extend over every prompt (whatever K).
  }
  if (!f.quick_reduce.empty() && f.quick_reduce != "off") {
    if (f.quick_reduce != "int4" && f.quick_reduce != "int6")
      return Status::InvalidArgument(
          fmt::format("--quick-reduce: expected off, int6 or int4, got \"{}\"", f.quick_reduce));
    if (p->cluster.gpu.vendor != "amd")
      return Status::InvalidArgument(fmt::format(
          "--quick-reduce: QuickReduce is AMD's all-reduce (ROCm); {} is not an AMD GPU",
          p->cluster.gpu.name));
    // Without --engine the plan's engine table prices it for the engines that run it (SGLang,
    // vLLM) and not for the others (plan::EngineProblem); a named engine must run it.
    const engine::EngineId id = LaunchEngineOf(f);
    if (id != engine::EngineId::kIdeal && !engine::CapabilitiesOf(id).quick_reduce)
      return Status::InvalidArgument(fmt::format(
          "--quick-reduce: {} does not turn QuickReduce on; SGLang and vLLM do (--engine sglang "
          "or --engine vllm, or no --engine to compare the engines)",
          engine::EngineTitle(id)));
    w.quick_reduce = f.quick_reduce == "int4" ? QuickReduce::kInt4 : QuickReduce::kInt6;
  }
  if (f.mtp_accept != 0) {
    const int k = f.mtp > 0 ? f.mtp : kMaxMtpTokens;
    if (!(f.mtp_accept >= 1 && f.mtp_accept <= k + 1))
      return Status::InvalidArgument(fmt::format(
          "--mtp-accept: expected 1..{} tokens per step (the verified token plus at most {} "
          "accepted drafts), got {}",
          k + 1, k, f.mtp_accept));
    if (f.mtp == 0)
      return Status::InvalidArgument("--mtp-accept needs speculative tokens (--mtp 0 turns MTP off)");
    if (w.mode == Mode::kPrefill)
      return Status::InvalidArgument(fmt::format(
          "--mtp-accept {}: prefill mode has no decode steps to accept drafts in", f.mtp_accept));
    w.mtp_accept = f.mtp_accept;
  }
  return Status::Ok();
}

namespace {

// A plain decimal number of milliseconds: digits, an optional fraction and exponent. No sign, no
// hex, no inf/nan, no spaces (std::stod would take all of them).
bool ParseMs(const std::string& v, double* out) {
  size_t i = 0;
  const auto digits = [&] {
    const size_t from = i;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
    return i - from;
  };
  size_t n = digits();
  if (i < v.size() && v[i] == '.') {
    ++i;
    n += digits();
  }
  if (n == 0) return false;
  if (i < v.size() && (v[i] == 'e' || v[i] == 'E')) {
    ++i;
    if (i < v.size() && (v[i] == '+' || v[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  if (i != v.size()) return false;
  *out = std::strtod(v.c_str(), nullptr);
  return std::isfinite(*out);
}

}  // namespace

Status ParseSlo(const std::string& text, Workload* w) {
  const auto bad = [](const std::string& why) {
    return Status::InvalidArgument("--slo: " + why);
  };
  if (text.empty()) return bad("empty (expected e.g. ttft_ms=2000,tpot_ms=50)");
  bool seen_ttft = false, seen_tpot = false;
  size_t pos = 0;
  for (int entry = 1;; ++entry) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    if (item.empty())
      return bad(fmt::format("entry {} is empty (a stray comma?) in \"{}\"", entry, text));
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      return bad(fmt::format("expected key=value, got \"{}\"", item));
    const std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    const bool ttft = key == "ttft_ms", tpot = key == "tpot_ms";
    if (!ttft && !tpot)
      return bad(fmt::format("unknown limit \"{}\" (expected ttft_ms or tpot_ms)", key));
    if ((ttft && seen_ttft) || (tpot && seen_tpot))
      return bad(fmt::format("{} is given twice", key));
    (ttft ? seen_ttft : seen_tpot) = true;
    double v = 0;
    if (!ParseMs(val, &v))
      return bad(fmt::format("{} expects a number of milliseconds such as 50 or 0.5, got \"{}\"",
                             key, val));
    if (!(v > 0) || v > kMaxSloMs)
      return bad(fmt::format("{} must be in (0, {:.0f}] ms, got {}", key, kMaxSloMs, val));
    (ttft ? w->ttft_ms : w->tpot_ms) = v;
    if (comma == text.size()) break;
    pos = comma + 1;
  }
  return Status::Ok();
}

std::string AskedMode(const ProblemFlags& f) {
  if (!f.mode.empty()) return f.mode;
  return f.osl > 0 ? "serve" : "";
}

const char* UnreadLength(const ProblemFlags& f, Mode mode) {
  if (mode == Mode::kDecode) return f.isl > 0 ? "--isl" : f.osl > 0 ? "--osl" : nullptr;
  if (mode == Mode::kPrefill && f.osl > 0) return "--osl";
  return f.context > 0 ? "--context" : nullptr;
}

Status CheckLengthsOfMode(const ProblemFlags& f, Mode mode) {
  const char* flag = UnreadLength(f, mode);
  if (flag == nullptr) return Status::Ok();
  const std::string which = f.mode.empty() ? std::string("decode mode (the default)")
                                           : fmt::format("--mode {}", f.mode);
  if (mode == Mode::kDecode)
    return Status::InvalidArgument(fmt::format(
        "{}: {} reads --context, the KV length per sequence, not prompt and output lengths; give "
        "--mode serve for prompts and outputs (or --mode prefill for prompts only)",
        flag, which));
  if (std::string_view(flag) == "--osl")
    return Status::InvalidArgument(fmt::format(
        "--osl: {} has no outputs; --mode serve serves prompts and outputs", which));
  return Status::InvalidArgument(fmt::format(
      "--context: the KV length of --mode decode; {}'s follows {}", which,
      mode == Mode::kServe ? "--isl and --osl" : "--isl"));
}

StatusOr<ModelSpec> LoadModelWithWarnings(const std::string& name_or_path) {
  std::vector<std::string> warnings;
  StatusOr<ModelSpec> m = LoadModelFrom(name_or_path, DefaultModelSearchPaths(), &warnings);
  if (m.ok())
    for (const std::string& w : warnings) Warn(w);
  return m;
}

StatusOr<Problem> BuildProblem(const ProblemFlags& f) {
  Problem p;
  if (f.model.empty()) return Status::InvalidArgument("--model is required");
  auto model = LoadModelWithWarnings(f.model);
  if (!model.ok()) return model.status();
  p.model = std::move(*model);
  p.model.launch_id = f.model_id;
  if (!f.draft_model.empty())
    if (Status st = AttachDraftModelFrom(f.draft_model, DefaultModelSearchPaths(), &p.model);
        !st.ok())
      return st;

  // The same bounds as the parse-time checks, for callers that fill ProblemFlags themselves.
  if (f.gpus < 0 || f.gpus > kMaxGpusFlag)
    return Status::InvalidArgument(fmt::format("--gpus must be in [1, {}], got {}", kMaxGpusFlag, f.gpus));
  if (f.nodes < 0 || f.nodes > kMaxGpusFlag)
    return Status::InvalidArgument(fmt::format("--nodes must be in [1, {}], got {}", kMaxGpusFlag, f.nodes));
  if (f.gpus_per_node < 0 || f.gpus_per_node > kMaxGpusPerNode)
    return Status::InvalidArgument(fmt::format("--gpus-per-node must be in [1, {}], got {}",
                                               kMaxGpusPerNode, f.gpus_per_node));
  // A node is one NVLink domain: --gpus-per-node, else the cluster's or the GPU's own (so that
  // `--gpu gb200 --gpus 144` and `--cluster gb200-144` are the same two NVL72 racks).
  int per_node = f.gpus_per_node;
  if (per_node == 0 && !f.cluster.empty() && f.nodes > 0) {
    StatusOr<ClusterSpec> c = LoadCluster(f.cluster);
    per_node = c.ok() ? c->gpus_per_domain : 8;  // a bad file fails below, in one line
  }
  if (per_node == 0)  // an unknown GPU fails below, in one line
    per_node = DefaultGpusPerDomain(f.gpu.empty() ? std::string(kDefaultGpu) : f.gpu);
  const int64_t node_gpus = int64_t{f.nodes} * per_node;  // both bounded: no overflow
  if (f.gpus > 0 && f.nodes > 0 && f.gpus != node_gpus)
    return Status::InvalidArgument(fmt::format(
        "--gpus {} and --nodes {} disagree ({} nodes x {} GPUs = {})", f.gpus, f.nodes, f.nodes,
        per_node, node_gpus));
  if (f.gpus == 0 && node_gpus > kMaxGpusFlag)
    return Status::InvalidArgument(fmt::format(
        "--nodes {} x --gpus-per-node {} = {} GPUs, more than the {} l2s models", f.nodes,
        per_node, node_gpus, kMaxGpusFlag));
  const int gpus = f.gpus > 0 ? f.gpus : static_cast<int>(node_gpus);
  if (!f.cluster.empty() && !f.gpu.empty())
    return Status::InvalidArgument(fmt::format(
        "--gpu {} cannot be combined with --cluster {}: the cluster defines its GPU", f.gpu,
        f.cluster));
  if (!f.cluster.empty()) {
    auto c = LoadCluster(f.cluster);
    if (!c.ok()) return c.status();
    p.cluster = std::move(*c);
    if (gpus > 0) {
      auto r = ResizeCluster(p.cluster, gpus);
      if (!r.ok()) return r.status();
      p.cluster = std::move(*r);
    }
  } else {
    if (gpus <= 0) return Status::InvalidArgument("give the cluster size with --gpus N or --nodes N (or --cluster FILE)");
    // A partial NVLink domain after whole ones is not a cluster l2s prices (one link figure per
    // domain): say so in the flags' words.
    if (gpus > per_node && gpus % per_node != 0)
      return Status::InvalidArgument(fmt::format(
          "--gpus {}: not a whole number of {}-GPU NVLink domains ({} x {} + {}); use a multiple "
          "of {}, at most {}, or --gpus-per-node N for nodes of N GPUs",
          gpus, per_node, gpus / per_node, per_node, gpus % per_node, per_node, per_node));
    auto c = MakeCluster(f.gpu.empty() ? std::string(kDefaultGpu) : f.gpu, gpus, f.gpus_per_node);
    if (!c.ok()) return c.status();
    p.cluster = std::move(*c);
  }
  if (f.price_per_gpu_hour >= 0) p.cluster.price_per_gpu_hour = f.price_per_gpu_hour;

  Workload& w = p.workload;
  // Without --mode: serving when an output length is given, else decode (the Workload's
  // default). A length the mode does not read is an error, not ignored.
  if (const std::string mode = AskedMode(f); !mode.empty() && !ParseMode(mode, &w.mode))
    return Status::InvalidArgument(fmt::format("--mode: expected serve, decode or prefill, got \"{}\"", f.mode));
  if (Status st = CheckLengthsOfMode(f, w.mode); !st.ok()) return st;
  if (f.isl < 0 || f.osl < 0 || f.context < 0 || f.isl > kMaxTokens || f.osl > kMaxTokens ||
      f.context > kMaxTokens)
    return Status::InvalidArgument(
        fmt::format("--isl, --osl and --context must be in [1, {}] tokens", kMaxTokens));
  if (f.isl > 0) w.isl = f.isl;
  if (f.osl > 0) w.osl = f.osl;
  if (f.context > 0) w.context = f.context;
  w.weight = p.model.weight_dtype;
  if (!f.dtype.empty()) {
    auto d = ParseDType(f.dtype);
    if (!d) return Status::InvalidArgument(fmt::format("--dtype: expected bf16, fp8 or fp4, got \"{}\"", f.dtype));
    if (*d == DType::kFP4 && p.cluster.gpu.fp4_flops <= 0)
      return Status::InvalidArgument(fmt::format(
          "--dtype fp4: {} has no FP4 tensor cores (FP4 GEMMs need Blackwell or CDNA4: b200, "
          "gb200, b300, gb300, mi355x)",
          p.cluster.gpu.name));
    w.weight = *d;
  }
  if (!f.kv_dtype.empty()) {
    auto d = ParseDType(f.kv_dtype);
    if (!d || *d == DType::kFP4)
      return Status::InvalidArgument(fmt::format("--kv-dtype: expected bf16 or fp8, got \"{}\"", f.kv_dtype));
    w.kv = *d;
  }
  if (!f.attn_dtype.empty()) {
    auto d = ParseDType(f.attn_dtype);
    if (!d || *d == DType::kFP4)
      return Status::InvalidArgument(
          fmt::format("--attn-dtype: expected bf16 or fp8, got \"{}\"", f.attn_dtype));
    if (*d == DType::kFP8 && p.cluster.gpu.fp8_flops <= 0)
      return Status::InvalidArgument(
          fmt::format("--attn-dtype fp8: {} has no FP8 tensor cores", p.cluster.gpu.name));
    w.attn = *d;
  }
  if (w.weight == DType::kFP8 && p.cluster.gpu.fp8_flops <= 0) {
    // Blame what asked for FP8: the flag, or the checkpoint when no --dtype was given.
    if (!f.dtype.empty())
      return Status::InvalidArgument(
          fmt::format("--dtype fp8: {} has no FP8 tensor cores", p.cluster.gpu.name));
    return Status::InvalidArgument(fmt::format(
        "{}: the checkpoint's weights are FP8 (quantization_config) and {} has no FP8 tensor "
        "cores; pass --dtype bf16 to plan it with BF16 weights",
        f.model, p.cluster.gpu.name));
  }
  if (!f.slo.empty()) {
    Status s = ParseSlo(f.slo, &w);
    if (!s.ok()) return s;
    // A limit the mode has no use for would be printed but never applied.
    if (w.mode == Mode::kDecode && w.ttft_ms > 0)
      return Status::InvalidArgument(
          "--slo: ttft_ms does not apply to --mode decode (no prompt is processed); use tpot_ms, "
          "or --mode serve");
    if (w.mode == Mode::kPrefill && w.tpot_ms > 0)
      return Status::InvalidArgument(
          "--slo: tpot_ms does not apply to --mode prefill (no token is decoded); use ttft_ms, "
          "or --mode serve");
  }
  if (f.max_batch < 0 || f.max_batch > kMaxBatchFlag)
    return Status::InvalidArgument(fmt::format("--max-batch must be in [1, {}]", kMaxBatchFlag));
  if (f.max_batch > 0) w.max_batch = f.max_batch;
  if (Status st = ApplyEngineFlags(f, &p); !st.ok()) return st;
  if (const int64_t len = launch::MaxSequenceLength(w);
      p.model.max_context > 0 && len > p.model.max_context)
    Warn(fmt::format(
        "{}: the workload's sequences reach {} tokens, beyond its max_position_embeddings {}: the "
        "model was not trained for them, and vLLM and SGLang start only with their override "
        "variable (the launch commands set it)",
        p.model.name, len, p.model.max_context));
  return p;
}

}  // namespace l2s::cli
