// Engines as the simulator knows them, apart from its cost model: their names as people write
// them (ParseEngineName), their scheduler defaults, and the figures fitted on ../shared's
// measurements (engine factors, request overheads); the modes' names. Declared in
// sim/simulator.h.
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "sim/simulator.h"

namespace l2s {

const char* ModeName(Mode m) {
  switch (m) {
    case Mode::kDecode: return "decode";
    case Mode::kPrefill: return "prefill";
    case Mode::kServe: return "serve";
  }
  return "?";
}

bool ParseMode(const std::string& s, Mode* out) {
  if (s == "decode") *out = Mode::kDecode;
  else if (s == "prefill") *out = Mode::kPrefill;
  else if (s == "serve") *out = Mode::kServe;
  else return false;
  return true;
}

namespace {

// The lower-cased words of an engine label (EngineNameWords), releases dropped.
std::vector<std::string> EngineWords(std::string_view s) {
  std::vector<std::string> words;
  for (EngineNameWord& w : EngineNameWords(s))
    if (!w.word.empty()) words.push_back(std::move(w.word));
  return words;
}

// The engine family a word names, "" for none: "tensorrt" (of "TensorRT-LLM"), "trt" (of
// "trt-llm") and "trtllm" are TensorRT-LLM; "megatron" Megatron-LM.
std::string_view EngineOfWord(std::string_view w) {
  if (w == "vllm" || w == "sglang" || w == "atom" || w == "megatron") return w;
  if (w == "trtllm" || w == "tensorrt" || w == "trt" || w == "tensorrtllm") return "trtllm";
  if (w == "megatronlm") return "megatron";
  return "";
}

}  // namespace

std::vector<EngineNameWord> EngineNameWords(std::string_view s) {
  std::vector<EngineNameWord> words;
  std::string w;
  auto flush = [&] {
    EngineNameWord x;
    const bool release = !w.empty() && (std::isdigit(static_cast<unsigned char>(w[0])) ||
                                        (w.size() > 1 && w[0] == 'v' &&
                                         std::isdigit(static_cast<unsigned char>(w[1]))));
    if (release) {
      x.release = w;
    } else {
      size_t cut = w.size();
      while (cut > 0 && (std::isdigit(static_cast<unsigned char>(w[cut - 1])) || w[cut - 1] == '.'))
        --cut;
      x.release = w.substr(cut);
      x.word = w.substr(0, cut);
    }
    if (!x.word.empty() || !x.release.empty()) words.push_back(std::move(x));
    w.clear();
  };
  for (char c : s) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (std::strchr("-_+/,:;() \t", l) != nullptr) flush();
    else w += l;
  }
  flush();
  return words;
}

EngineNameParts ParseEngineName(std::string_view name) {
  EngineNameParts out;
  const size_t paren = name.find('(');
  const std::vector<std::string> words = EngineWords(name.substr(0, paren));
  auto scan = [&](const std::vector<std::string>& ws) {
    for (const std::string& w : ws) {
      if (w == "dynamo") out.dynamo = true;
      else if (w == "ideal" || w == "none") out.ideal = true;
      else if (out.family.empty()) out.family = EngineOfWord(w);
    }
  };
  scan(words);
  // The name outside a parenthesised remark names the engine ("vllm (AITER + MoRI)"); a remark
  // names only the backend of a Dynamo front end that the name leaves out ("Dynamo
  // (TensorRT-LLM)"), never the engine of an unknown name ("tgi (unlike sglang)").
  if (out.dynamo && out.family.empty() && paren != std::string_view::npos)
    scan(EngineWords(name.substr(paren)));
  if (!out.family.empty() || (out.ideal && !out.dynamo)) return out;
  // No engine l2s knows: the name's words, joined ("lmdeploy 0.6" -> "lmdeploy").
  for (const std::string& w : words) out.family += w;
  return out;
}

std::string EngineFamily(std::string_view engine) { return ParseEngineName(engine).family; }

const char* EngineName(Engine e) {
  switch (e) {
    case Engine::kIdeal: return "ideal";
    case Engine::kTrtllm: return "trtllm";
    case Engine::kSglang: return "sglang";
    case Engine::kVllm: return "vllm";
  }
  return "?";
}

bool ParseEngine(const std::string& name, Engine* out) {
  const std::string fam = EngineFamily(name);
  if (fam.empty()) *out = Engine::kIdeal;
  else if (fam == "trtllm") *out = Engine::kTrtllm;
  else if (fam == "sglang") *out = Engine::kSglang;
  else if (fam == "vllm") *out = Engine::kVllm;
  // AMD's ATOM (AiTer Optimized Model) serves with a vLLM-style continuous-batching scheduler.
  else if (fam == "atom") *out = Engine::kVllm;
  else return false;
  return true;
}

EngineDefaults DefaultsOf(Engine e) {
  // The engines' documented defaults (docs/dev/COST_MODEL.md "Engine limits" names the settings):
  //   TensorRT-LLM (LLM API / trtllm-serve): max_batch_size 2048, max_num_tokens 8192, decode
  //     CUDA graphs up to batch 128 when cuda_graph_config gives no sizes;
  //   SGLang: chunked_prefill_size 8192, cuda_graph_max_bs 256, no batch cap of its own
  //     (max_running_requests follows the KV pool);
  //   vLLM (V1, OpenAI server): max_num_seqs 1024, max_num_batched_tokens 8192, CUDA graphs
  //     captured up to 512.
  switch (e) {
    case Engine::kIdeal: return {4096, 0, 0};
    case Engine::kTrtllm: return {2048, 8192, 128};
    case Engine::kSglang: return {4096, 8192, 256};
    case Engine::kVllm: return {1024, 8192, 512};
  }
  return {4096, 0, 0};
}

int DefaultMaxRunning(Engine e, int mtp, int dp) {
  constexpr int kSglangSpeculativeMaxRunning = 48;
  if (e == Engine::kSglang && mtp > 0) return std::max(1, kSglangSpeculativeMaxRunning / std::max(1, dp));
  return DefaultsOf(e).max_batch;
}

double DefaultMemFraction(Engine e, int tp_size) {
  switch (e) {
    case Engine::kIdeal: return 1.0;
    case Engine::kTrtllm: return 0.90;  // kv_cache_config.free_gpu_memory_fraction
    case Engine::kVllm: return 0.90;    // --gpu-memory-utilization
    case Engine::kSglang:               // --mem-fraction-static (sglang 0.4-0.5 ServerArgs)
      return tp_size >= 16 ? 0.79 : tp_size >= 8 ? 0.81 : tp_size >= 4 ? 0.85 : tp_size >= 2 ? 0.87
                                                                                                : 0.88;
  }
  return 1.0;
}

bool QuickReduceTakesGroup(int group) { return group == 2 || group == 4 || group == 8; }

QuickReduce QuickReduceInForce(const Problem& p) {
  return p.cluster.gpu.vendor == "amd" ? p.workload.quick_reduce : QuickReduce::kOff;
}

double QuickReduceWireShare(QuickReduce q, int group, double bytes) {
  constexpr double kMiB = 1024.0 * 1024.0;
  if (q == QuickReduce::kOff || bytes > 2048 * kMiB || !QuickReduceTakesGroup(group)) return 1.0;
  const int i = group == 2 ? 0 : group == 4 ? 1 : 2;
  constexpr double kInt4Min[3] = {1, 2, 2}, kInt6Min[3] = {2, 4, 4};  // MiB, fp16 kernels
  const bool int4 = q == QuickReduce::kInt4;
  if (bytes < (int4 ? kInt4Min[i] : kInt6Min[i]) * kMiB) return 1.0;
  return (int4 ? 4.5 : 6.5) / 16.0;  // bits per value (and its share of a 16-bit block scale)
}

double DefaultMtpAccept(int mtp) {
  // Accepted tokens per step by MTP depth, DeepSeek-R1 on 8 B200s with TensorRT-LLM
  // (../shared/reference/MEASUREMENTS.md, "MTP speculative decoding").
  static constexpr double kCurve[] = {1.0, 1.92, 2.58, 2.82, 2.99, 3.01};
  constexpr int kLast = static_cast<int>(sizeof(kCurve) / sizeof(kCurve[0])) - 1;
  if (mtp <= 0) return 1.0;
  return kCurve[std::min(mtp, kLast)];
}

namespace {

// Per engine family: the median, over the family's aggregated (serve) rows of
// ../shared/reference/measurements-frontier.csv at concurrency <= 16 (where one prompt's prefill
// is most of its TTFT), of measured - predicted mean TTFT, predicted without this term:
//   l2s validate --measurements ../shared/reference/measurements-frontier.csv
//     --fit-request-overhead
// (docs/VALIDATION.md "Request overhead"; validate_test checks the committed values). A family
// needs >= 3 such rows; the others (vLLM, TensorRT-LLM: no aggregated TTFT row in ../shared)
// have 0.
struct FittedOverhead {
  const char* family;
  double seconds;
};
constexpr FittedOverhead kRequestOverheads[] = {
    {"sglang", 0.1323},  // 7 rows: 132.3 ms
    {"atom", 0.0298},    // 6 rows: 29.8 ms (ATOM on MI355X)
};

// The fitted overhead of engine family `fam`; nullptr when the family has none of its own.
const FittedOverhead* FittedOverheadOf(std::string_view fam) {
  for (const FittedOverhead& f : kRequestOverheads)
    if (fam == f.family) return &f;
  return nullptr;
}

}  // namespace

double Simulator::RequestOverheadSeconds(Engine e) {
  // A scheduler's own engine (SGLang's for kSglang, vLLM's for kVllm, ...): its family's value.
  const FittedOverhead* f = FittedOverheadOf(EngineName(e));
  return f != nullptr ? f->seconds : 0.0;
}

double Simulator::RequestOverheadSeconds(const std::string& engine) {
  if (const FittedOverhead* f = FittedOverheadOf(EngineFamily(engine))) return f->seconds;
  Engine e = Engine::kIdeal;
  return ParseEngine(engine, &e) ? RequestOverheadSeconds(e) : 0.0;
}

void SetEngineFigures(const std::string& name, Workload* w) {
  w->engine_factor = Simulator::EngineFactor(name);
  w->request_overhead_s = Simulator::RequestOverheadSeconds(name);
}

double Simulator::RequestOverheadOf(const Workload& w) {
  if (!w.request_overhead) return 0.0;
  return w.request_overhead_s >= 0 ? w.request_overhead_s : RequestOverheadSeconds(w.engine);
}

std::string Simulator::TtftBelowRequestOverhead(const Workload& w) {
  const double h_ms = RequestOverheadOf(w) * 1e3;
  if (!(w.ttft_ms > 0) || w.ttft_ms > h_ms) return "";
  return fmt::format(
      "the TTFT SLO of {} ms is below {}'s request overhead, {:.1f} ms per request outside the GPU "
      "steps (a fitted constant: docs/VALIDATION.md \"Request overhead\"): no deployment "
      "meets it",
      w.ttft_ms,
      w.request_overhead_s >= 0 && w.request_overhead_s != RequestOverheadSeconds(w.engine)
          ? "the engine"
          : EngineName(w.engine),
      h_ms);
}

double Simulator::EngineFactor(const std::string& engine) {
  // Measured / simulated throughput, one factor per engine family, fitted as the median over that
  // family's rows of ../shared/reference/measurements.csv by
  //   l2s validate --measurements ../shared/reference/measurements.csv --fit-engine-factors
  // (docs/dev/VALIDATION.md). A family needs >= 3 rows for a factor of its own; smaller families
  // and unknown engines get kDefault, the median over every predicted row. No engine ("", "none",
  // "ideal") is the ideal engine the simulator models: 1.
  struct Fitted {
    const char* family;
    double factor;
  };
  static constexpr Fitted kFitted[] = {
      {"trtllm", 0.9769},  // 79 rows: TensorRT-LLM v0.17 perf-overview, H100, FP8
      // 11 throughput rows of ../shared/reference/measurements-frontier.csv (AMD ATOM on MI355X,
      // DeepSeek-R1 FP8/MXFP4; l2s validate --fit-engine-factors on that file).
      {"atom", 0.9066},
      // 27 throughput rows of the same file (SGLang on MI300X, MI355X, B300 and GB300, aggregated
      // and disaggregated; DeepSeek-R1 FP8/FP4; the same command on that file).
      {"sglang", 0.8973},
  };
  constexpr double kDefault = 0.9808;  // 80 rows (79 trtllm + 1 sglang)
  // Family: EngineFamily (the same rule as cli::EngineFamily).
  const std::string fam = EngineFamily(engine);
  if (fam.empty()) return 1.0;
  for (const Fitted& f : kFitted)
    if (fam == f.family) return f.factor;
  return kDefault;
}

}  // namespace l2s
