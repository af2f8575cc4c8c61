// Launch commands of one server of a plan (launch.h: MakeLaunchCommand, ResolveModelId). The
// flag names and choices are the engines' own (src/launch/testdata/flags/ lists them with the
// source each was read from; launch_flags_test checks every emitted flag against those lists).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "engine/model_classes.h"
#include "launch/launch.h"

namespace l2s::launch {

int64_t MaxSequenceLength(const Workload& w) {
  switch (w.mode) {
    case Mode::kDecode: return w.context;
    case Mode::kPrefill: return w.isl;
    case Mode::kServe: return w.isl + w.osl;
  }
  return w.context;
}

namespace {

// HuggingFace repo ids of the presets built from public configs: the file names of
// ../shared/models/hf ("org--name.json" is the config of repo "org/name").
const std::pair<const char*, const char*> kRepoIds[] = {
    {"llama-3.1-8b", "meta-llama/Meta-Llama-3.1-8B"},
    {"llama-3.1-70b", "meta-llama/Meta-Llama-3.1-70B"},
    {"llama-3.1-405b", "meta-llama/Meta-Llama-3.1-405B"},
    {"mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1"},
    {"mixtral-8x22b", "mistralai/Mixtral-8x22B-v0.1"},
    {"qwen3-32b", "Qwen/Qwen3-32B"},
    {"qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B"},
    {"qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B"},
    {"deepseek-v3", "deepseek-ai/DeepSeek-V3"},
    {"kimi-k2", "moonshotai/Kimi-K2-Instruct"},
    {"gpt-oss-120b", "openai/gpt-oss-120b"},
    {"llama-4-maverick", "meta-llama/Llama-4-Maverick-17B-128E-Instruct"},
};

// "org/name" with non-empty parts, no spaces and no leading "/" or "." (a path, not a repo id).
bool IsRepoId(const std::string& s) {
  const size_t slash = s.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 >= s.size()) return false;
  if (s.find('/', slash + 1) != std::string::npos) return false;
  if (s[0] == '.' || s.find(' ') != std::string::npos) return false;
  return true;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Fractions rounded up to hundredths (a fraction flag takes two decimals).
double CeilHundredth(double x) { return std::ceil(x * 100.0 - 1e-9) / 100.0; }

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string MemoryWords(const Evaluation& e) {
  return fmt::format(
      "the plan needs {:.1f} of {:.1f} GiB per GPU (weights {:.1f}, KV cache {:.1f}{}, "
      "activations {:.1f}, runtime reserve {:.1f})",
      e.mem_bytes / kGiB, e.mem_capacity_bytes / kGiB, e.weight_bytes / kGiB, e.kv_bytes / kGiB,
      e.state_bytes > 0 ? fmt::format(", recurrent state {:.1f}", e.state_bytes / kGiB) : "",
      e.act_bytes / kGiB, e.reserve_bytes / kGiB);
}

bool HasMemory(const LaunchOptions& opt) {
  return opt.eval != nullptr && opt.eval->valid() && opt.eval->mem_capacity_bytes > 0;
}

// Memory in use on a GPU before vLLM measures what is free: the CUDA context and the framework's
// first allocations. aiconfigurator measured 551 MB of such "other" memory before raising its
// reserve to 3.5 GiB for safety (../shared/calibration/*/system.yaml, other_mem); the plan's
// runtime reserve (sim/simulator.cc) holds it.
constexpr double kStartupBytes = 551.0 * 1024 * 1024;

double FloorHundredth(double x) { return std::floor(x * 100.0 + 1e-9) / 100.0; }

// vLLM's and ATOM's --gpu-memory-utilization: the share of the GPU that the engine itself must
// allocate (the plan's memory less what is in use before it starts) rounded up to 0.01, at least
// the engines' default 0.90, and at most what is free at startup rounded down: vLLM refuses to
// start when utilization x total exceeds the free memory it finds ("Free memory on device ... on
// startup is less than desired GPU memory utilization"), so 1.00 never starts.
void AddMemoryUtilization(const Evaluation& e, std::string_view engine, LaunchCommand* lc) {
  const double cap = e.mem_capacity_bytes;
  const double share = std::max(0.0, e.mem_bytes - kStartupBytes) / cap;
  const double dflt = DefaultMemFraction(l2s::Engine::kVllm, 1);  // sim/simulator.h
  const double most = FloorHundredth((cap - kStartupBytes) / cap);
  const double util = std::min(most, std::max(dflt, CeilHundredth(share)));
  lc->command += fmt::format(" --gpu-memory-utilization {:.2f}", util);
  std::string words = fmt::format(
      "--gpu-memory-utilization {:.2f}: {}; less the {:.2f} GiB in use before {} starts (the "
      "GPU context) that is {:.3f} of the GPU, rounded up, at least {}'s default {:.2f}",
      util, MemoryWords(e), kStartupBytes / kGiB, engine, share, engine, dflt);
  if (CeilHundredth(share) > most)
    words += fmt::format(
        " and at most {:.2f}, the share free at startup (vLLM refuses to start above it{}; the "
        "plan's runtime reserve covers the {:.1f} GiB difference)",
        most, engine == "vLLM" ? "" : fmt::format(", and {} is held to the same", engine),
        std::max(0.0, share - most) * cap / kGiB);
  lc->notes.push_back(words);
}

std::string NodeRank(const LaunchOptions& opt) {
  return opt.node_rank < 0 ? std::string("${NODE_RANK}") : std::to_string(opt.node_rank);
}

}  // namespace

ModelId ResolveModelId(const ModelSpec& m) {
  ModelId out;
  if (!m.launch_id.empty()) return {m.launch_id, "--model-id", "", false};
  for (const auto& [preset, repo] : kRepoIds)
    if (m.name == preset) return {repo, "preset", "", false};
  const std::string& path = m.name;
  // --model given as a repo id ("deepseek-ai/DeepSeek-R1", resolved offline from
  // ../shared/models/hf or the HuggingFace cache): that id, unless it is also a local path.
  std::error_code ec;
  if (!m.synthetic && IsRepoId(path) && !EndsWith(path, ".json") &&
      !std::filesystem::exists(path, ec))
    return {path, "--model repo id", "", false};
  if (!m.synthetic && EndsWith(path, ".json")) {
    // The config's own name field, when it names a repo.
    std::ifstream in(path);
    if (in) {
      const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
      if (j.is_object())
        for (const char* key : {"_name_or_path", "name_or_path"})
          if (j.contains(key) && j[key].is_string() && IsRepoId(j[key].get<std::string>()))
            return {j[key].get<std::string>(), "config name field", "", false};
    }
    // The "org--name.json" file names of ../shared/models/hf.
    const std::string file = std::filesystem::path(path).filename().string();
    const size_t sep = file.find("--");
    if (sep != std::string::npos && sep > 0 && file.size() > sep + 2 + 5) {
      const std::string repo = file.substr(0, sep) + "/" + file.substr(sep + 2, file.size() - sep - 2 - 5);
      if (IsRepoId(repo)) return {repo, "file name", "", false};
    }
    // A config.json inside a checkpoint folder (weights next to it): the engines load the folder.
    std::error_code ec;
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (file == "config.json") {
      for (const auto& entry : std::filesystem::directory_iterator(dir.empty() ? "." : dir, ec)) {
        if (EndsWith(entry.path().filename().string(), ".safetensors"))
          return {dir.empty() ? std::string(".") : dir.string(), "checkpoint folder", "", false};
      }
    }
  }
  const std::string base =
      m.synthetic ? m.name
                  : std::filesystem::path(path).stem().string().empty()
                        ? std::string("model")
                        : std::filesystem::path(path).stem().string();
  out.id = fmt::format("<{}-checkpoint>", base);
  out.source = "placeholder";
  out.placeholder = true;
  out.note = m.synthetic
                 ? fmt::format("{} is synthetic (no released checkpoint): put the path of your own "
                               "checkpoint in place of {}",
                               m.name, out.id)
                 : fmt::format("{} names no HuggingFace repo (no _name_or_path, not an "
                               "org--name.json file, no weights next to it): pass --model-id "
                               "<org/name or checkpoint folder>, or put it in place of {}",
                               m.name, out.id);
  return out;
}

std::string VisibleDevicesEnv(const std::string& vendor, const std::string& devices) {
  if (devices.empty()) return "";
  if (vendor == "amd")
    return fmt::format("HIP_VISIBLE_DEVICES={0} CUDA_VISIBLE_DEVICES={0} ", devices);
  return fmt::format("CUDA_VISIBLE_DEVICES={} ", devices);
}

int InstanceNodes(const Problem& p, const Strategy& s) {
  const int per_node = HostGpus(p.cluster);
  return std::max(1, (s.gpus() + per_node - 1) / per_node);
}

LaunchCommand MakeLaunchCommand(Engine engine, const Problem& p, const Strategy& s) {
  return MakeLaunchCommand(engine, p, s, LaunchOptions{});
}

LaunchCommand MakeLaunchCommand(Engine engine, const Problem& p, const Strategy& s,
                                const std::string& trtllm_file, const std::string& trtllm_yaml) {
  LaunchOptions opt;
  opt.trtllm_file = trtllm_file;
  opt.trtllm_yaml = trtllm_yaml;
  return MakeLaunchCommand(engine, p, s, opt);
}

LaunchCommand MakeLaunchCommand(Engine engine, const Problem& p, const Strategy& s,
                                const LaunchOptions& opt) {
  LaunchCommand lc;
  const ModelSpec& m = p.model;
  const Workload& w = p.workload;
  const int G = s.tp * s.dp;
  // Sequences per rank and microbatch the server admits (LaunchOptions::max_running).
  const int batch = opt.max_running > 0 ? opt.max_running : std::max(1, s.batch);
  ModelId mid = ResolveModelId(m);
  if (!opt.model_id.empty()) mid = {opt.model_id, "--model-id", "", false};
  const std::string& model = mid.id;
  const int per_node = HostGpus(p.cluster);
  // A dense model's replicas that the engine starts as servers of their own
  // (SeparateReplicaServers): the command is one server's, and the nodes are those it spans.
  const int split = SeparateReplicaServers(engine, /*dynamo=*/false, m, s, per_node);
  Strategy server = s;
  server.dp /= split;
  const int nodes = InstanceNodes(p, server);
  const bool kv_fp8 = w.kv == DType::kFP8;
  const bool moe = m.is_moe();
  const bool decode_side = opt.role != ServeRole::kPrefill && w.mode != Mode::kPrefill;
  const EngineDefaults defaults = DefaultsOf(SchedulerOf(engine));
  // The token budget the simulator priced one rank's step with (Workload::max_num_tokens, else
  // the engine's default), and the CUDA-graph limit: the plan's own, or the batch when it
  // exceeds the engine's default.
  const int token_budget = w.max_num_tokens > 0 ? w.max_num_tokens : defaults.max_num_tokens;
  int graph_max_bs = 0;
  if (decode_side) {
    if (w.cuda_graph_max_batch > 0) graph_max_bs = w.cuda_graph_max_batch;
    else if (defaults.cuda_graph_max_batch > 0 && batch > defaults.cuda_graph_max_batch)
      graph_max_bs = batch;
  }
  std::string& c = lc.command;
  if (!mid.note.empty()) lc.notes.push_back(mid.note);
  if (split > 1)
    lc.notes.push_back(fmt::format(
        "dp = {}: start {} such servers of {} GPUs each behind a router{}", s.dp, s.dp,
        server.gpus(),
        engine == Engine::kSglang
            ? fmt::format(" (SGLang's --dp-size starts its replicas on one node's GPUs; these "
                          "span {} nodes)",
                          InstanceNodes(p, s))
            : std::string()));
  // What the running-request flags below count: the plan's batch, or a prefill pool's limit.
  const char* const per_rank = opt.max_running > 0 ? "running limit" : "batch";
  if (opt.max_running > 0)
    lc.notes.push_back(fmt::format(
        "running limit {} per rank: {} (its steps hold what the token budget holds; the plan's "
        "figures are at batch {})",
        opt.max_running,
        opt.max_running_why.empty() ? "the limit the sizing simulated this pool with"
                                    : opt.max_running_why,
        std::max(1, s.batch)));
  // The engine layer's row of this engine (the same names in both layers).
  const engine::Capabilities& caps =
      engine::CapabilitiesOf(engine::ParseEngineId(EngineName(engine)).value());
  // The engine's own list of model classes, where it keeps one (engine/model_classes.h).
  if (std::string note = engine::ModelClassNote(caps.id, m); !note.empty())
    lc.notes.push_back(note);
  // vLLM and SGLang quantise bf16 weights to FP8 at load time (--quantization fp8); every other
  // change of weight format needs a checkpoint in that format.
  const bool online_fp8 = (engine == Engine::kVllm || engine == Engine::kSglang) &&
                          w.weight == DType::kFP8 && m.weight_dtype == DType::kBF16;
  if (w.weight != m.weight_dtype && !online_fp8)
    lc.notes.push_back(fmt::format("weights in {}: use a {}-quantised checkpoint", DTypeName(w.weight),
                                   DTypeName(w.weight)));
  std::string env = VisibleDevicesEnv(p.cluster.gpu.vendor, opt.cuda_visible_devices);
  // QuickReduce, as priced (sim/simulator.h): the engines read the level from the environment;
  // set where the plan's tensor-parallel group has all-reduces QuickReduce takes.
  const QuickReduce qr = QuickReduceInForce(p);
  if (qr != QuickReduce::kOff && caps.quick_reduce && QuickReduceTakesGroup(s.tp)) {
    const char* level = qr == QuickReduce::kInt4 ? "INT4" : "INT6";
    env += fmt::format("{}ROCM_QUICK_REDUCE_QUANTIZATION={} ",
                       engine == Engine::kVllm ? "VLLM_" : "", level);
    lc.notes.push_back(fmt::format(
        "QuickReduce {}: tensor-parallel all-reduces within a node run quantised to {} bits (AMD "
        "ROCm; priced so)",
        level, qr == QuickReduce::kInt4 ? 4 : 6));
  }
  // A context beyond the model's max_position_embeddings: vLLM and SGLang refuse a longer
  // --max-model-len / --context-length unless their override variable is set (vllm/envs.py
  // VLLM_ALLOW_LONG_MAX_MODEL_LEN, sglang environ SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN).
  if (m.max_context > 0 && MaxSequenceLength(w) > m.max_context &&
      (engine == Engine::kVllm || engine == Engine::kSglang)) {
    const char* var = engine == Engine::kVllm ? "VLLM_ALLOW_LONG_MAX_MODEL_LEN"
                                              : "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN";
    env += fmt::format("{}=1 ", var);
    lc.notes.push_back(fmt::format(
        "{}=1: the sequences reach {} tokens, beyond the model's max_position_embeddings {}, "
        "which {} refuses otherwise; the model was not trained for them",
        var, MaxSequenceLength(w), m.max_context, EngineTitle(engine)));
  } else if (m.max_context > 0 && MaxSequenceLength(w) > m.max_context && engine == Engine::kAtom) {
    // ATOM has no such variable: atom/config.py takes min(--max-model-len, max_position_embeddings).
    lc.notes.push_back(fmt::format(
        "--max-model-len {}: ATOM caps it at the model's max_position_embeddings {} (no override), "
        "so it refuses sequences longer than that; the plan's longer ones need another engine",
        MaxSequenceLength(w), m.max_context));
  }
  // A vLLM server of a disaggregated pool whose model keeps recurrent state (Mamba, Gated
  // DeltaNet): the NIXL connector moves that state only in the DS conv-state layout (its worker
  // asserts "3-read Mamba conv transfer requires DS conv state layout. Set
  // VLLM_SSM_CONV_STATE_LAYOUT=DS") and only with the hybrid KV-cache manager, which
  // --kv-transfer-config turns off unless asked for (--no-disable-hybrid-kv-cache-manager; vLLM
  // pull request 45019's serve command, issue 54387).
  const bool vllm_hybrid_pool =
      engine == Engine::kVllm && opt.role != ServeRole::kAggregated && m.has_recurrent_state();
  if (vllm_hybrid_pool) {
    env += "VLLM_SSM_CONV_STATE_LAYOUT=DS ";
    lc.notes.push_back(
        "VLLM_SSM_CONV_STATE_LAYOUT=DS and --no-disable-hybrid-kv-cache-manager: the KV connector "
        "moves this model's recurrent (conv and SSM) state only in that layout and with the "
        "hybrid KV-cache manager, which --kv-transfer-config turns off otherwise; a vLLM release "
        "of 2026 with the connector's hybrid-state transfer (pull requests 36687 and 41869), "
        "later than the 0.11 of l2s's vLLM rules");
  }
  const std::string host = opt.listen_all ? " --host 0.0.0.0" : "";
  const bool have_mem = HasMemory(opt);
  if (!have_mem && engine != Engine::kMegatron)
    lc.notes.push_back("no simulated memory for this strategy: the memory fraction is left at "
                       "the engine's default");
  if (graph_max_bs > 0)
    lc.notes.push_back(
        w.cuda_graph_max_batch > 0
            ? fmt::format("CUDA graphs up to batch {}: the limit the plan was priced with",
                          graph_max_bs)
            : fmt::format("CUDA graphs up to batch {}: the decode batch {} exceeds {}'s default "
                          "capture limit {}",
                          graph_max_bs, batch, EngineTitle(engine), defaults.cuda_graph_max_batch));
  switch (engine) {
    case Engine::kVllm: {
      c = fmt::format("{}vllm serve {} --tensor-parallel-size {} --pipeline-parallel-size {}", env,
                      model, s.tp, s.pp);
      if (s.dp > 1) c += fmt::format(" --data-parallel-size {}", s.dp);
      if (moe && s.ep > 1) c += " --enable-expert-parallel";
      // A P/D pool's expert parallelism over data-parallel ranks moves tokens with the all-to-all
      // the plan costed: DeepEP's high-throughput kernels on the prefill side, its low-latency
      // (CUDA-graph) kernels on the decode side, as vLLM's expert-parallel deployment guide sets
      // them (docs.vllm.ai serving/expert_parallel_deployment); AMD GPUs have no DeepEP and use
      // MoRI's. An aggregated server keeps vLLM's default (allgather_reducescatter), which
      // works with chunked prefill and which the plan costs as such (Workload::disagg_pool).
      if (moe && s.ep > 1 && s.dp > 1 && opt.role != ServeRole::kAggregated)
        c += fmt::format(" --all2all-backend {}",
                         p.cluster.gpu.vendor == "amd"       ? "mori"
                         : opt.role == ServeRole::kPrefill ? "deepep_high_throughput"
                                                           : "deepep_low_latency");
      if (moe && s.slots > m.num_experts)
        c += fmt::format(" --enable-eplb --eplb-config '{{\"num_redundant_experts\": {}}}'",
                         s.slots - m.num_experts);
      if (s.overlap == Overlap::kTbo) c += " --enable-dbo";
      // vLLM refuses --max-num-batched-tokens below --max-num-seqs (vllm/config/scheduler.py
      // _verify_args). A plan priced under vLLM's scheduler keeps batch x pp within its budget
      // (Simulator::TokenBatchLimit); a prefill pool's running limit is capped at the budget (its
      // steps hold what the budget holds); any other plan's budget is raised to its sequences.
      int seqs = batch * s.pp;
      int budget = token_budget;
      if (token_budget > 0 && seqs > token_budget) {
        if (opt.max_running > 0) {
          seqs = token_budget;
          lc.notes.push_back(fmt::format(
              "--max-num-seqs {}: the running limit {} x pp {} = {} capped at the token budget, "
              "as vLLM requires (--max-num-batched-tokens >= --max-num-seqs)",
              seqs, batch, s.pp, batch * s.pp));
        } else {
          budget = seqs;
          lc.notes.push_back(fmt::format(
              "--max-num-batched-tokens {}: raised from the {} the plan was priced with to "
              "--max-num-seqs, as vLLM requires; its steps may take longer prefill chunks than "
              "priced",
              budget, token_budget));
        }
      }
      c += fmt::format(" --max-num-seqs {} --max-model-len {}", seqs, MaxSequenceLength(w));
      if (budget > 0) c += fmt::format(" --max-num-batched-tokens {}", budget);
      if (graph_max_bs > 0) c += fmt::format(" --max-cudagraph-capture-size {}", graph_max_bs);
      if (have_mem) AddMemoryUtilization(*opt.eval, "vLLM", &lc);
      if (kv_fp8) c += " --kv-cache-dtype fp8";
      if (online_fp8) c += " --quantization fp8";
      if (vllm_hybrid_pool) c += " --no-disable-hybrid-kv-cache-manager";
      if (s.mtp > 0 && m.has_draft_model())
        c += fmt::format(" --speculative-config '{{\"method\":\"eagle3\",\"model\":\"{}\","
                         "\"num_speculative_tokens\":{}}}'",
                         m.draft_model, s.mtp);
      else if (s.mtp > 0)
        c += fmt::format(
            " --speculative-config '{{\"method\":\"deepseek_mtp\",\"num_speculative_tokens\":{}}}'",
            s.mtp);
      c += host;
      c += fmt::format(" --port {}", opt.port > 0 ? opt.port : kVllmDefaultPort);
      if (seqs == batch * s.pp)
        lc.notes.push_back(fmt::format(
            "--max-num-seqs = {} {} x pp {}: sequences in flight per data-parallel engine",
            per_rank, batch, s.pp));
      if (budget > 0 && budget == token_budget)
        lc.notes.push_back(fmt::format(
            "--max-num-batched-tokens {}: the per-step token budget the plan was priced with",
            token_budget));
      if (nodes > 1) {
        const int rank_gpus = s.tp * s.pp;
        const bool dp_nodes = s.dp > 1 && rank_gpus <= per_node && per_node % rank_gpus == 0;
        if (dp_nodes) {
          // Data-parallel ranks spread over the nodes: the head node runs the API server and its
          // local ranks; every other node runs its ranks headless.
          const int local = per_node / rank_gpus;
          c += fmt::format(" --data-parallel-size-local {} --data-parallel-address ${{HEAD_ADDR}} "
                           "--data-parallel-rpc-port {}",
                           local, kVllmDpRpcPort);
          if (opt.node_rank > 0)
            c += fmt::format(" --headless --data-parallel-start-rank {}", opt.node_rank * local);
          else if (opt.node_rank < 0)
            lc.notes.push_back(fmt::format(
                "spans {} nodes: on node i > 0 add --headless --data-parallel-start-rank {}*i",
                nodes, local));
        } else {
          // Tensor/pipeline groups across nodes: a Ray cluster, vLLM on the head node (its
          // data-parallel ranks placed by Ray too).
          c += " --distributed-executor-backend ray";
          if (s.dp > 1) c += " --data-parallel-backend ray";
          if (opt.node_rank > 0)
            c = fmt::format("ray start --address ${{HEAD_ADDR}}:{} --block", kRayPort);
          else if (opt.node_rank == 0)
            c = fmt::format("ray start --head --port {} && ", kRayPort) + c;
          else  // the command as printed: the Ray cluster in a note
            lc.notes.push_back(fmt::format(
                "spans {} nodes: tp x pp = {} GPUs cross nodes, so vLLM runs on a Ray cluster; "
                "first ray start --head --port {} on the head node and ray start --address "
                "${{HEAD_ADDR}}:{} --block on every other node",
                nodes, rank_gpus, kRayPort, kRayPort));
        }
      }
      break;
    }
    case Engine::kSglang: {
      // MoE models: attention data parallelism inside the instance (--tp-size is all G GPUs of a
      // stage, attention TP = tp/dp). Dense models: --dp-size runs dp replicas of tp GPUs.
      const bool dp_attention = moe && s.dp > 1;
      c = fmt::format("{}python -m sglang.launch_server --model-path {} --tp-size {}", env, model,
                      dp_attention ? G : s.tp);
      if (server.dp > 1) c += fmt::format(" --dp-size {}", server.dp);
      if (dp_attention) c += " --enable-dp-attention";
      if (moe && s.ep > 1) {
        c += fmt::format(" --ep-size {}", s.ep);
        // With DP attention the costed expert layers move tokens with DeepEP's all-to-all: normal
        // kernels for prefill, low-latency ones for decode, auto (both) for an aggregated server.
        // Without it every GPU holds every token: each ep rank runs its own experts and the MoE
        // layer ends in one all-reduce (SGLang's default MoE backend), as costed.
        const char* mode = opt.role == ServeRole::kPrefill  ? "normal"
                           : opt.role == ServeRole::kDecode ? "low_latency"
                                                            : "auto";
        // On AMD GPUs the all-to-all is MoRI's (DeepEP is CUDA-only; SGLang's ROCm images run
        // --moe-a2a-backend mori, as the measured MI355X runs do: docs/VALIDATION.md).
        if (dp_attention && p.cluster.gpu.vendor == "amd") c += " --moe-a2a-backend mori";
        else if (dp_attention) c += fmt::format(" --moe-a2a-backend deepep --deepep-mode {}", mode);
      }
      if (moe && s.slots > 0)
        c += fmt::format(" --enable-eplb --ep-num-redundant-experts {}",
                         std::max(0, s.slots - m.num_experts));
      if (s.overlap == Overlap::kTbo) c += " --enable-two-batch-overlap";
      // Single-batch overlap hides DeepEP's combine: without DP attention there is none (the
      // plan's sbo then costs what none costs).
      if (s.overlap == Overlap::kSbo && dp_attention) c += " --enable-single-batch-overlap";
      if (s.pp > 1) c += fmt::format(" --pp-size {}", s.pp);
      if (dp_attention && ModelHasOp(m, Op::kDenseFfn1)) c += " --moe-dense-tp-size 1";
      const int requests = batch * s.pp * (dp_attention ? s.dp : 1);
      c += fmt::format(" --max-running-requests {} --context-length {}", requests, MaxSequenceLength(w));
      // SGLang divides --chunked-prefill-size over the attention-DP ranks. Each rank's prefill
      // batch is also capped by --max-prefill-tokens (server_args.py max_prefill_tokens = 16384,
      // not divided): a larger priced budget raises it.
      if (token_budget > 0)
        c += fmt::format(" --chunked-prefill-size {}", token_budget * (dp_attention ? s.dp : 1));
      constexpr int kSglangMaxPrefillTokens = 16384;
      if (token_budget > kSglangMaxPrefillTokens) {
        c += fmt::format(" --max-prefill-tokens {}", token_budget);
        lc.notes.push_back(fmt::format(
            "--max-prefill-tokens {}: the per-rank token budget the plan was priced with, above "
            "SGLang's default cap of {} prompt tokens per prefill batch",
            token_budget, kSglangMaxPrefillTokens));
      }
      if (graph_max_bs > 0) c += fmt::format(" --cuda-graph-max-bs {}", graph_max_bs);
      if (have_mem) {
        const Evaluation& e = *opt.eval;
        const double cap = e.mem_capacity_bytes;
        // The static pool holds the plan's weights and the KV cache of its batch at full length;
        // everything else stays free for activations, CUDA graphs and communication buffers.
        // At least SGLang's own default, as vLLM's and TensorRT-LLM's fractions are at least
        // theirs: a pool cut to the plan's batch would leave no room for a weight estimate a
        // little short, and none for the prefix cache.
        const double static_share = (e.weight_bytes + e.kv_bytes + e.state_bytes) / cap;
        const int tp_size = dp_attention ? G : s.tp;
        const double dflt = DefaultMemFraction(l2s::Engine::kSglang, tp_size);  // sim/simulator.h
        const double frac = std::min(1.0, std::max(dflt, CeilHundredth(static_share)));
        c += fmt::format(" --mem-fraction-static {:.2f}", frac);
        lc.notes.push_back(fmt::format(
            "--mem-fraction-static {:.2f}: {}; weights + KV cache = {:.3f} of the GPU, rounded up, "
            "at least SGLang's default {:.2f} for --tp-size {} (the KV pool beyond the plan's batch "
            "holds the prefix cache)",
            frac, MemoryWords(e), static_share, dflt, tp_size));
      }
      if (kv_fp8) c += " --kv-cache-dtype fp8_e4m3";
      if (online_fp8) c += " --quantization fp8";
      // SGLang counts the verified token among its draft tokens: mtp K = K + 1 draft tokens.
      if (s.mtp > 0)
        c += fmt::format(" --speculative-algorithm {} --speculative-num-steps {} "
                         "--speculative-eagle-topk 1 --speculative-num-draft-tokens {}",
                         m.has_draft_model() ? "EAGLE3 --speculative-draft-model-path " +
                                                   m.draft_model
                                             : std::string("EAGLE"),
                         s.mtp, s.mtp + 1);
      c += host;
      c += fmt::format(" --port {}", opt.port > 0 ? opt.port : kSglangDefaultPort);
      if (nodes > 1)
        c += fmt::format(" --nnodes {} --node-rank {} --dist-init-addr ${{HEAD_ADDR}}:{}", nodes,
                         NodeRank(opt), kDistInitPort);
      if (dp_attention) {
        lc.notes.push_back(fmt::format(
            "SGLang's --tp-size is all {} GPUs of a stage; attention TP = tp/dp = {}", G, s.tp));
        lc.notes.push_back(fmt::format(
            "--max-running-requests = {} {} x dp {} x pp {}: sequences in flight per instance",
            per_rank, batch, s.dp, s.pp));
      } else {
        lc.notes.push_back(fmt::format(
            "--max-running-requests = {} {} x pp {}: sequences in flight per {}", per_rank, batch,
            s.pp, s.dp > 1 ? "replica" : "instance"));
      }
      if (token_budget > 0)
        lc.notes.push_back(fmt::format(
            "--chunked-prefill-size {}: the per-rank token budget {} the plan was priced with{}",
            token_budget * (dp_attention ? s.dp : 1), token_budget,
            dp_attention ? fmt::format(" x dp {}", s.dp) : ""));
      if (nodes > 1)
        lc.notes.push_back(fmt::format(
            "spans {} nodes of {} GPUs: the same command on every node with its --node-rank",
            nodes, per_node));
      break;
    }
    case Engine::kTrtllm: {
      // MoE models: tp_size is all G GPUs of a stage (attention TP over them, or attention DP with
      // enable_attention_dp). Dense models: dp separate servers of tp_size tp.
      std::string serve = fmt::format("trtllm-serve {} --tp_size {} --pp_size {}", model,
                                      moe ? G : s.tp, s.pp);
      if (moe) serve += fmt::format(" --ep_size {}", s.ep);
      serve += fmt::format(" --max_batch_size {} --max_seq_len {}", batch, MaxSequenceLength(w));
      if (token_budget > 0) serve += fmt::format(" --max_num_tokens {}", token_budget);
      std::string yaml;
      if (moe && s.dp > 1) yaml += "enable_attention_dp: true\n";
      // A prompt longer than the token budget runs in chunks, as the plan priced it
      // (Simulator::TokenBatchLimit); TensorRT-LLM's LLM API leaves chunking off
      // (llm_args.py: enable_chunked_prefill defaults to False) and cannot schedule it otherwise.
      if (w.mode != Mode::kDecode && token_budget > 0 && w.isl > token_budget) {
        yaml += "enable_chunked_prefill: true\n";
        lc.notes.push_back(fmt::format(
            "enable_chunked_prefill: the {}-token prompts exceed --max_num_tokens {}: they run in "
            "chunks, as priced (TensorRT-LLM's default is off)",
            w.isl, token_budget));
      }
      std::string kv_cache;
      if (kv_fp8) kv_cache += "  dtype: fp8\n";
      if (have_mem) {
        // The fraction of the memory left after weights and activations that the KV cache takes.
        const Evaluation& e = *opt.eval;
        const double free = e.mem_capacity_bytes - e.weight_bytes - e.act_bytes - e.reserve_bytes;
        if (free > 0) {
          const double need = (e.kv_bytes + e.state_bytes) / free;
          const double dflt = DefaultMemFraction(l2s::Engine::kTrtllm, 1);  // sim/simulator.h
          const double frac = std::min(1.0, std::max(dflt, CeilHundredth(need)));
          kv_cache += fmt::format("  free_gpu_memory_fraction: {:.2f}\n", frac);
          lc.notes.push_back(fmt::format(
              "kv_cache_config.free_gpu_memory_fraction {:.2f}: {}; the KV cache takes {:.3f} of "
              "the memory left after weights, activations and reserve (at least TensorRT-LLM's "
              "default {:.2f})",
              frac, MemoryWords(e), need, dflt));
        }
      }
      if (!kv_cache.empty()) yaml += "kv_cache_config:\n" + kv_cache;
      if (graph_max_bs > 0)
        yaml += fmt::format("cuda_graph_config:\n  enable_padding: true\n  max_batch_size: {}\n",
                            graph_max_bs);
      if (s.mtp > 0 && m.has_draft_model())
        yaml += fmt::format("speculative_config:\n  decoding_type: Eagle\n  max_draft_len: {}\n"
                            "  speculative_model: {}\n  eagle3_one_model: true\n",
                            s.mtp, m.draft_model);
      else if (s.mtp > 0)
        yaml += fmt::format("speculative_config:\n  decoding_type: MTP\n  num_nextn_predict_layers: {}\n",
                            s.mtp);
      if (moe && s.slots > 0)
        yaml += fmt::format("moe_config:\n  load_balancer:\n    num_slots: {}\n", s.slots);
      yaml += opt.trtllm_yaml;
      if (!yaml.empty()) {
        lc.extra_file_name = opt.trtllm_file;
        lc.extra_file = yaml;
        serve += " --extra_llm_api_options " + opt.trtllm_file;
      }
      serve += host;
      serve += fmt::format(" --port {}", opt.port > 0 ? opt.port : kTrtllmDefaultPort);
      if (nodes > 1) {
        // One MPI job over the nodes, started on the head node.
        if (opt.node_rank > 0) {
          c = "";
        } else {
          c = fmt::format("{}mpirun --allow-run-as-root -H ${{MPI_HOSTS}} -np {} "
                          "trtllm-llmapi-launch {}",
                          env, server.gpus(), serve);
        }
        lc.notes.push_back(fmt::format(
            "spans {} nodes of {} GPUs: one MPI job of {} ranks started on the head node; "
            "MPI_HOSTS lists every node as host:{} and the other nodes must be reachable by "
            "mpirun (ssh)",
            nodes, per_node, server.gpus(), per_node));
      } else {
        c = env + serve;
      }
      if (moe)
        lc.notes.push_back(fmt::format("MoE: ep_size {} x moe tensor parallel {} = tp_size {}", s.ep,
                                       s.etp(), G));
      lc.notes.push_back(
          fmt::format("--max_batch_size = {} {}: sequences per attention rank and microbatch",
                      per_rank, batch));
      break;
    }
    case Engine::kAtom: {
      // ATOM (github.com/ROCm/ATOM; engine.cc's row): a MoE stage with dp > 1 is data-parallel
      // attention, --tensor-parallel-size G --enable-dp-attention (its engine cores become G
      // ranks of attention TP 1, the experts span all G); otherwise -tp inside each of -dp
      // engine cores (dense: replicas). Experts with --enable-expert-parallel (MoRI all-to-all).
      // One server per node. Its defaults differ from vLLM's scheduler limits the plan was
      // priced with (max_num_seqs 512, max_num_batched_tokens 16384), so both are stated.
      const bool dp_attention = moe && s.dp > 1;
      c = fmt::format("{}python -m atom.entrypoints.openai_server --model {} "
                      "--tensor-parallel-size {}",
                      env, model, dp_attention ? G : s.tp);
      if (s.pp > 1) c += fmt::format(" --pipeline-parallel-size {}", s.pp);
      if (dp_attention) {
        c += " --enable-dp-attention";
        lc.notes.push_back(fmt::format(
            "--enable-dp-attention: the {} GPUs of --tensor-parallel-size run attention as {} "
            "data-parallel engine cores (attention TP 1), the experts over all {}",
            G, G, G));
      } else if (s.dp > 1) {
        c += fmt::format(" --data-parallel-size {}", s.dp);
      }
      if (moe && s.ep > 1) c += " --enable-expert-parallel";
      if (moe && s.slots > m.num_experts)
        c += fmt::format(" --eplb-enable --eplb-config '{{\"num_redundant_experts\": {}}}'",
                         s.slots - m.num_experts);
      // Two-batch overlap of prefill and decode steps ("all"; bare --enable-tbo is prefill only).
      if (s.overlap == Overlap::kTbo) c += " --enable-tbo all";
      c += fmt::format(" --max-num-seqs {} --max-model-len {}", batch * s.pp, MaxSequenceLength(w));
      c += fmt::format(" --max-num-batched-tokens {}", token_budget);
      if (graph_max_bs > 0) {
        // ATOM takes the capture sizes as a list: its default ladder up to the limit.
        std::string sizes = "1,2,4,8";
        for (int b = 16; b < graph_max_bs; b += 16) sizes += fmt::format(",{}", b);
        sizes += fmt::format(",{}", graph_max_bs);
        c += fmt::format(" --cudagraph-capture-sizes '[{}]'", sizes);
      }
      if (have_mem) AddMemoryUtilization(*opt.eval, "ATOM", &lc);
      if (kv_fp8) c += " --kv_cache_dtype fp8";
      if (s.mtp > 0)
        c += fmt::format(" --method {} --num-speculative-tokens {}",
                         m.has_draft_model() ? "eagle3 --draft-model " + m.draft_model
                                             : std::string("mtp"),
                         s.mtp);
      c += host;
      c += fmt::format(" --server-port {}", opt.port > 0 ? opt.port : kAtomDefaultPort);
      lc.notes.push_back(fmt::format(
          "--max-num-seqs = {} {} x pp {}: sequences in flight per data-parallel engine core",
          per_rank, batch, s.pp));
      lc.notes.push_back(fmt::format(
          "--max-num-batched-tokens {}: the per-step token budget the plan was priced with",
          token_budget));
      if (nodes > 1)
        lc.notes.push_back(fmt::format(
            "spans {} nodes: ATOM serves from one node; run one server per node of {} GPUs "
            "(a plan of at most {} GPUs per instance), or plan --engine sglang or vllm",
            nodes, per_node, per_node));
      break;
    }
    case Engine::kMegatron:
      c = fmt::format("--tensor-model-parallel-size {} --pipeline-model-parallel-size {}", s.tp,
                      s.pp);
      if (moe)
        c += fmt::format(" --expert-model-parallel-size {} --expert-tensor-parallel-size {}", s.ep,
                         s.etp());
      if (s.sp && s.tp > 1) c += " --sequence-parallel";
      lc.notes.push_back(fmt::format(
          "data-parallel size {} follows from the world size: {} GPUs / (tp {} x pp {})", s.dp,
          s.gpus(), s.tp, s.pp));
      lc.notes.push_back(fmt::format(
          "batch {} sequences per data-parallel rank and microbatch: set it in the inference loop",
          batch));
      if (nodes > 1)
        lc.notes.push_back(fmt::format("spans {} nodes: torchrun --nnodes {} --nproc-per-node {}",
                                       nodes, nodes, per_node));
      break;
  }
  return lc;
}

}  // namespace l2s::launch
