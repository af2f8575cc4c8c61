#include "launch/launch.h"

#include "engine/engine.h"
#include "engine/restrict.h"

#include <fmt/core.h>

#include <algorithm>

#include <utility>

namespace l2s::launch {

namespace {

bool HasDenseFfn(const ModelSpec& m) { return ModelHasOp(m, Op::kDenseFfn1); }

int64_t MaxLen(const Workload& w) {
  switch (w.mode) {
    case Mode::kDecode: return w.context;
    case Mode::kPrefill: return w.isl;
    case Mode::kServe: return w.isl + w.osl;
  }
  return w.context;
}

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

}  // namespace

std::string_view EngineName(Engine e) {
  switch (e) {
    case Engine::kVllm: return "vllm";
    case Engine::kSglang: return "sglang";
    case Engine::kTrtllm: return "trtllm";
    case Engine::kMegatron: return "megatron";
  }
  return "?";
}

std::string_view EngineTitle(Engine e) {
  switch (e) {
    case Engine::kVllm: return "vLLM";
    case Engine::kSglang: return "SGLang";
    case Engine::kTrtllm: return "TensorRT-LLM";
    case Engine::kMegatron: return "Megatron-LM";
  }
  return "?";
}

std::string OpTitle(Op op) {
  switch (op) {
    case Op::kEmbed: return "token embedding";
    case Op::kAttnQkv: return "attention QKV projection";
    case Op::kAttnCore: return "attention core (softmax(QK^T)V)";
    case Op::kAttnOut: return "attention output projection";
    case Op::kMoeRouter: return "MoE router";
    case Op::kMoeFfn1: return "expert up-projection";
    case Op::kMoeFfn2: return "expert down-projection";
    case Op::kSharedFfn1: return "shared-expert up-projection";
    case Op::kSharedFfn2: return "shared-expert down-projection";
    case Op::kDenseFfn1: return "MLP up-projection";
    case Op::kDenseFfn2: return "MLP down-projection";
    case Op::kLmHead: return "LM head";
  }
  return "?";
}

std::string DimWords(Op op, Dim d) {
  // For a matmul Y[T,N] = X[T,K] W[K,N]: dim0 cuts K (the input features), dim1 cuts N (the
  // output features), none keeps W whole and divides the tokens (strategy.h). Name K and N.
  const char* k = "input";
  const char* n = "output";
  switch (op) {
    case Op::kEmbed: k = "vocabulary"; n = "hidden"; break;  // table [vocab, hidden]
    case Op::kAttnQkv: k = "hidden"; n = "heads"; break;
    case Op::kAttnOut: k = "heads"; n = "hidden"; break;
    case Op::kMoeRouter: k = "hidden"; n = "experts"; break;
    case Op::kMoeFfn1: case Op::kSharedFfn1: case Op::kDenseFfn1: k = "hidden"; n = "feed-forward"; break;
    case Op::kMoeFfn2: case Op::kSharedFfn2: case Op::kDenseFfn2: k = "feed-forward"; n = "hidden"; break;
    case Op::kLmHead: k = "hidden"; n = "vocabulary"; break;
    case Op::kAttnCore:
      switch (d) {
        case Dim::kDim0: return "split on heads (dim0)";
        case Dim::kDim1: return "split on each sequence's KV, context parallel (dim1)";
        case Dim::kNone: return "not split: whole heads, sequences divided (none)";
      }
      break;
  }
  switch (d) {
    case Dim::kDim0: return fmt::format("split on {} (dim0)", k);
    case Dim::kDim1: return fmt::format("split on {} (dim1)", n);
    case Dim::kNone:
      return op == Op::kEmbed ? "not split: whole table, tokens divided (none)"
                              : "not split: whole weights, tokens divided (none)";
  }
  return "?";
}

std::string ModelArgument(const ModelSpec& m) {
  for (const auto& [preset, repo] : kRepoIds)
    if (m.name == preset) return repo;
  if (m.synthetic) return fmt::format("<{}-checkpoint>", m.name);
  // A config.json given by path: the engines take the directory holding it.
  const std::string& path = m.name;
  if (path.size() > 5 && path.substr(path.size() - 5) == ".json") {
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  }
  return path.empty() ? "<checkpoint>" : path;
}

std::vector<std::string> UnsupportedChoices(Engine engine, const ModelSpec& m, const Strategy& s) {
  // The rules are the engine layer's capability table (src/engine); here only the words of the
  // per-operator dims (OpTitle, DimWords) are added.
  const engine::Capabilities& caps =
      engine::CapabilitiesOf(engine::ParseEngineId(EngineName(engine)).value());
  std::vector<std::string> out;
  for (engine::Violation& v : engine::FindViolations(caps, m, s)) {
    if (v.kind != engine::Violation::Kind::kDim) {
      out.push_back(std::move(v.text));
      continue;
    }
    out.push_back(fmt::format("{}={} ({}, {}): {} implements only Megatron's layout for it; it runs "
                              "{} instead",
                              OpName(v.op), DimName(s.dim(v.op)), OpTitle(v.op),
                              DimWords(v.op, s.dim(v.op)), EngineTitle(engine),
                              DimWords(v.op, v.runs)));
  }
  return out;
}

bool Expressible(Engine engine, const ModelSpec& m, const Strategy& s) {
  return engine::Launchable(engine::CapabilitiesOf(engine::ParseEngineId(EngineName(engine)).value()),
                            m, s);
}

std::vector<Strategy> EngineAlternatives(Engine engine, const ModelSpec& m, const Strategy& s) {
  return engine::Repairs(engine::CapabilitiesOf(engine::ParseEngineId(EngineName(engine)).value()),
                         m, s);
}

LaunchCommand MakeLaunchCommand(Engine engine, const Problem& p, const Strategy& s) {
  return MakeLaunchCommand(engine, p, s, "extra-llm-api-config.yml", "");
}

LaunchCommand MakeLaunchCommand(Engine engine, const Problem& p, const Strategy& s,
                                const std::string& trtllm_file, const std::string& trtllm_yaml) {
  LaunchCommand lc;
  const ModelSpec& m = p.model;
  const Workload& w = p.workload;
  const int G = s.tp * s.dp;
  const int batch = std::max(1, s.batch);
  const std::string model = ModelArgument(m);
  const int nodes = p.cluster.num_domains();
  const int per_node = p.cluster.gpus_per_domain;
  const bool kv_fp8 = w.kv == DType::kFP8;
  const bool moe = m.is_moe();
  std::string& c = lc.command;
  if (m.synthetic)
    lc.notes.push_back(fmt::format("{} is synthetic (no released checkpoint): put the path of your "
                                   "own checkpoint in place of {}",
                                   m.name, model));
  // vLLM and SGLang quantise bf16 weights to FP8 at load time (--quantization fp8); every other
  // change of weight format needs a checkpoint in that format.
  const bool online_fp8 = (engine == Engine::kVllm || engine == Engine::kSglang) &&
                          w.weight == DType::kFP8 && m.weight_dtype == DType::kBF16;
  if (w.weight != m.weight_dtype && !online_fp8)
    lc.notes.push_back(fmt::format("weights in {}: use a {}-quantised checkpoint", DTypeName(w.weight),
                                   DTypeName(w.weight)));
  switch (engine) {
    case Engine::kVllm:
      c = fmt::format("vllm serve {} --tensor-parallel-size {} --pipeline-parallel-size {}", model,
                      s.tp, s.pp);
      if (s.dp > 1) c += fmt::format(" --data-parallel-size {}", s.dp);
      if (moe && s.ep > 1) c += " --enable-expert-parallel";
      if (moe && s.slots > m.num_experts)
        c += fmt::format(" --enable-eplb --eplb-config '{{\"num_redundant_experts\": {}}}'",
                         s.slots - m.num_experts);
      if (s.overlap == Overlap::kTbo) c += " --enable-dbo";
      c += fmt::format(" --max-num-seqs {} --max-model-len {}", batch * s.pp, MaxLen(w));
      if (kv_fp8) c += " --kv-cache-dtype fp8";
      if (online_fp8) c += " --quantization fp8";
      if (s.mtp > 0)
        c += fmt::format(
            " --speculative-config '{{\"method\":\"deepseek_mtp\",\"num_speculative_tokens\":{}}}'",
            s.mtp);
      lc.notes.push_back(fmt::format(
          "--max-num-seqs = batch {} x pp {}: sequences in flight per data-parallel engine", batch,
          s.pp));
      if (nodes > 1)
        lc.notes.push_back(fmt::format(
            "spans {} nodes of {} GPUs: tp/pp across nodes need a Ray cluster; data-parallel ranks "
            "are started per node with --data-parallel-size-local and --data-parallel-address",
            nodes, per_node));
      break;
    case Engine::kSglang: {
      // MoE models: attention data parallelism inside the instance (--tp is all G GPUs of a
      // stage, attention TP = tp/dp). Dense models: --dp runs dp replicas of --tp tp GPUs.
      const bool dp_attention = moe && s.dp > 1;
      c = fmt::format("python -m sglang.launch_server --model-path {} --tp {}", model,
                      dp_attention ? G : s.tp);
      if (s.dp > 1) c += fmt::format(" --dp {}", s.dp);
      if (dp_attention) c += " --enable-dp-attention";
      if (moe && s.ep > 1) c += fmt::format(" --ep-size {}", s.ep);
      if (moe && s.slots > 0)
        c += fmt::format(" --enable-eplb --ep-num-redundant-experts {}", s.slots - m.num_experts);
      if (s.overlap == Overlap::kTbo) c += " --enable-two-batch-overlap";
      if (s.overlap == Overlap::kSbo) c += " --enable-single-batch-overlap";
      if (s.pp > 1) c += fmt::format(" --pp-size {}", s.pp);
      if (dp_attention && HasDenseFfn(m)) c += " --moe-dense-tp-size 1";
      const int requests = batch * s.pp * (dp_attention ? s.dp : 1);
      c += fmt::format(" --max-running-requests {} --context-length {}", requests, MaxLen(w));
      if (kv_fp8) c += " --kv-cache-dtype fp8_e4m3";
      if (online_fp8) c += " --quantization fp8";
      // SGLang counts the verified token among its draft tokens: mtp K = K + 1 draft tokens.
      if (s.mtp > 0)
        c += fmt::format(" --speculative-algorithm EAGLE --speculative-num-steps {} "
                         "--speculative-eagle-topk 1 --speculative-num-draft-tokens {}",
                         s.mtp, s.mtp + 1);
      if (dp_attention) {
        lc.notes.push_back(fmt::format(
            "SGLang's --tp is all {} GPUs of a stage; attention TP = tp/dp = {}", G, s.tp));
        lc.notes.push_back(fmt::format(
            "--max-running-requests = batch {} x dp {} x pp {}: sequences in flight per instance",
            batch, s.dp, s.pp));
      } else {
        lc.notes.push_back(fmt::format(
            "--max-running-requests = batch {} x pp {}: sequences in flight per {}", batch, s.pp,
            s.dp > 1 ? "replica" : "instance"));
      }
      if (nodes > 1)
        lc.notes.push_back(fmt::format(
            "spans {} nodes of {} GPUs: run the command on every node with --nnodes {} "
            "--node-rank <i> --dist-init-addr <host:port>",
            nodes, per_node, nodes));
      break;
    }
    case Engine::kTrtllm: {
      // MoE models: tp_size is all G GPUs of a stage (attention TP over them, or attention DP with
      // enable_attention_dp). Dense models: dp separate servers of tp_size tp.
      c = fmt::format("trtllm-serve {} --tp_size {} --pp_size {}", model, moe ? G : s.tp, s.pp);
      if (moe) c += fmt::format(" --ep_size {}", s.ep);
      c += fmt::format(" --max_batch_size {} --max_seq_len {}", batch, MaxLen(w));
      std::string yaml;
      if (moe && s.dp > 1) yaml += "enable_attention_dp: true\n";
      if (!moe && s.dp > 1)
        lc.notes.push_back(fmt::format(
            "dp = {}: start {} such servers of {} GPUs each behind a load balancer", s.dp, s.dp,
            s.tp * s.pp));
      if (kv_fp8) yaml += "kv_cache_config:\n  dtype: fp8\n";
      if (s.mtp > 0)
        yaml += fmt::format("speculative_config:\n  decoding_type: MTP\n  num_nextn_predict_layers: {}\n",
                            s.mtp);
      if (moe && s.slots > 0)
        yaml += fmt::format("moe_config:\n  load_balancer:\n    num_slots: {}\n", s.slots);
      yaml += trtllm_yaml;
      if (!yaml.empty()) {
        lc.extra_file_name = trtllm_file;
        lc.extra_file = yaml;
        c += " --extra_llm_api_options " + trtllm_file;
      }
      if (moe)
        lc.notes.push_back(fmt::format("MoE: ep_size {} x moe tensor parallel {} = tp_size {}", s.ep,
                                       s.etp(), G));
      lc.notes.push_back(
          fmt::format("--max_batch_size = batch {}: sequences per attention rank and microbatch",
                      batch));
      if (nodes > 1)
        lc.notes.push_back(fmt::format(
            "spans {} nodes of {} GPUs: launch through mpirun or srun with trtllm-llmapi-launch",
            nodes, per_node));
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

ExpressibleBest BestExpressible(const Simulator& sim, const StrategySpace& space,
                                Observer* observer) {
  ExpressibleBest out;
  const ModelSpec& m = sim.problem().model;
  // Candidate degree triples (structurally valid) first, to know the total for the progress bar.
  const std::vector<Strategy> degrees = MegatronDegreeCombinations(m, space);
  const int64_t num_mtp = static_cast<int64_t>(space.mtp_options().size());
  int64_t total = 0;
  for (const Strategy& d : degrees)
    total += static_cast<int64_t>(space.batch_options().size()) * (d.tp > 1 ? 2 : 1) * num_mtp;
  double best_any = 0;
  for (const Strategy& d : degrees) {
    for (int b : space.batch_options()) {
      for (int sp = 0; sp < (d.tp > 1 ? 2 : 1); ++sp) {
       for (int mtp : space.mtp_options()) {
        Strategy s = d;
        s.batch = b;
        s.sp = sp == 1;
        s.mtp = mtp;
        const Evaluation e = sim.Evaluate(s);
        ++out.evaluated;
        if (e.valid()) {
          s.batch = e.batch;  // the chosen one when the space's batch option is auto
          for (size_t k = 0; k < kAllEngines.size(); ++k) {
            if (out.found[k] && e.tokens_per_s_per_gpu <= out.eval[k].tokens_per_s_per_gpu) continue;
            if (!Expressible(kAllEngines[k], m, s)) continue;
            out.found[k] = true;
            out.best[k] = s;
            out.eval[k] = e;
          }
          best_any = std::max(best_any, e.tokens_per_s_per_gpu);
        }
        if (observer != nullptr) {
          observer->OnProgress(out.evaluated, total, best_any);
          if (observer->Cancelled()) {
            out.cancelled = true;
            return out;
          }
        }
       }
      }
    }
  }
  return out;
}

bool BestAlternative(const Simulator& sim, Engine engine, const Strategy& plan, Strategy* out,
                     Evaluation* eval) {
  bool have = false;
  for (Strategy cand : EngineAlternatives(engine, sim.problem().model, plan)) {
    Evaluation e = sim.Evaluate(cand);
    if (!e.valid() && cand.batch != 0) {
      // The repair may not fit at the plan's batch: let the simulator pick the batch.
      Strategy auto_batch = cand;
      auto_batch.batch = 0;
      const Evaluation ea = sim.Evaluate(auto_batch);
      if (ea.valid()) e = ea;
    }
    if (e.valid()) cand.batch = e.batch;
    const bool better =
        !have || (e.valid() && (!eval->valid() ||
                                e.tokens_per_s_per_gpu > eval->tokens_per_s_per_gpu));
    if (better) {
      *out = cand;
      *eval = e;
      have = true;
    }
  }
  return have;
}

std::array<EngineTranslation, 4> TranslatePlan(const Simulator& sim, const Strategy& plan,
                                               const ExpressibleBest& best) {
  std::array<EngineTranslation, 4> out;
  const Problem& p = sim.problem();
  for (size_t k = 0; k < kAllEngines.size(); ++k) {
    EngineTranslation& t = out[k];
    t.engine = kAllEngines[k];
    t.unsupported = UnsupportedChoices(t.engine, p.model, plan);
    const bool have = BestAlternative(sim, t.engine, plan, &t.launched, &t.launched_eval);
    t.runnable = have && t.launched_eval.valid();
    if (have) t.command = MakeLaunchCommand(t.engine, p, t.launched);
    t.has_best = best.found[k];
    if (t.has_best) {
      t.best = best.best[k];
      t.best_eval = best.eval[k];
      t.best_command = MakeLaunchCommand(t.engine, p, t.best);
    }
  }
  return out;
}

}  // namespace l2s::launch
