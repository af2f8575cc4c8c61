#include "launch/launch.h"

#include <fmt/core.h>

#include <algorithm>

#include <utility>

namespace l2s::launch {

namespace {

// Which group an operator's dim splits over: the attention-TP group (tp) or, for the routed
// expert FFNs, the expert-TP group (etp = tp*dp/ep). With a group of one GPU every dim is the
// same computation, so a differing dim is not a real difference.
int GroupOf(Op op, const Strategy& s) {
  return (op == Op::kMoeFfn1 || op == Op::kMoeFfn2) ? s.etp() : s.tp;
}

bool HasDenseFfn(const ModelSpec& m) { return ModelHasOp(m, Op::kDenseFfn1); }

std::string Degrees(const Strategy& s) {
  return fmt::format("pp={},tp={},dp={},ep={}", s.pp, s.tp, s.dp, s.ep);
}

// Megatron dims with the operators the model lacks set to none.
std::array<Dim, kNumOps> EngineDims(const ModelSpec& m) {
  Strategy t;
  t.dims = MegatronDims();
  ClearAbsentOps(m, &t);
  return t.dims;
}

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

std::string ModelArgument(const ModelSpec& m) { return ResolveModelId(m).id; }

std::vector<std::string> UnsupportedChoices(Engine engine, const ModelSpec& m, const Strategy& s) {
  std::vector<std::string> out;
  const std::string_view E = EngineTitle(engine);
  const std::array<Dim, kNumOps> meg = EngineDims(m);
  const int G = s.tp * s.dp;
  // Per-operator dims: every engine implements Megatron's layouts only.
  for (int i = 0; i < kNumOps; ++i) {
    const Op op = static_cast<Op>(i);
    if (!ModelHasOp(m, op) || s.dims[i] == meg[i] || GroupOf(op, s) <= 1) continue;
    out.push_back(fmt::format("{}={} ({}, {}): {} implements only Megatron's layout for it; it runs "
                              "{} instead",
                              OpName(op), DimName(s.dims[i]), OpTitle(op), DimWords(op, s.dims[i]),
                              E, DimWords(op, meg[i])));
  }
  // Residual-stream sequence parallelism: only Megatron-LM has it (--sequence-parallel).
  if (s.sp && s.tp > 1 && engine != Engine::kMegatron)
    out.push_back(fmt::format("sp=on (residual stream split on tokens over the tp group): {} has no "
                              "sequence-parallel residual stream; it runs sp=off (replicated "
                              "residual stream)",
                              E));
  // Speculative decoding: vLLM, SGLang and TensorRT-LLM draft with DeepSeek's MTP module.
  if (s.mtp > 0 && engine == Engine::kMegatron)
    out.push_back(fmt::format("mtp={} (speculative tokens per step): Megatron-LM's inference has no "
                              "MTP speculative decoding; it runs mtp=0",
                              s.mtp));
  // Redundant experts and MoE overlap (docs/PLAN.md "Engine rules"): SGLang has EPLB with
  // redundant experts (--enable-eplb --ep-num-redundant-experts) and both overlaps
  // (--enable-two-batch-overlap, --enable-single-batch-overlap); vLLM has EPLB
  // (--enable-eplb, num_redundant_experts) and a two-batch overlap (--enable-dbo) but no
  // single-batch overlap; TensorRT-LLM has redundant slots (moe_load_balancer num_slots) and
  // no overlap switch; Megatron-LM neither.
  const bool has_slots = engine != Engine::kMegatron;
  const bool has_tbo = engine == Engine::kSglang || engine == Engine::kVllm;
  const bool has_sbo = engine == Engine::kSglang;
  if (s.slots > 0 && !has_slots)
    out.push_back(fmt::format("slots={} (redundant experts, EPLB placement): {} has no redundant "
                              "expert slots; it runs one slot per expert",
                              s.slots, E));
  if ((s.overlap == Overlap::kTbo && !has_tbo) || (s.overlap == Overlap::kSbo && !has_sbo))
    out.push_back(fmt::format("overlap={} ({}): {} cannot overlap the MoE all-to-all this way; it "
                              "runs overlap=none",
                              OverlapName(s.overlap),
                              s.overlap == Overlap::kTbo ? "two-batch overlap"
                                                         : "single-batch overlap",
                              E));
  // Degree combinations.
  auto alternatives = [&](std::vector<std::pair<int, int>> tp_dp, std::vector<int> eps) {
    std::vector<std::string> alts;
    for (auto [tp, dp] : tp_dp) {
      Strategy t = s;
      t.tp = tp;
      t.dp = dp;
      for (int ep : eps) {
        t.ep = ep;
        if (CheckStrategy(m, s.gpus(), t).ok()) alts.push_back(Degrees(t));
      }
    }
    if (alts.empty()) return std::string("no repair of the degrees is valid for this model");
    std::string list;
    for (const std::string& a : alts) list += (list.empty() ? "" : " or ") + a;
    return "it can run " + list + " instead";
  };
  if (engine == Engine::kVllm && m.is_moe() && s.ep != 1 && s.ep != G) {
    out.push_back(fmt::format(
        "ep={} (expert-TP {}): vLLM's expert parallelism spans all tp*dp = {} GPUs of a stage "
        "(--enable-expert-parallel) or is off (experts tensor-parallel over the {} GPUs); {}",
        s.ep, s.etp(), G, G, alternatives({{s.tp, s.dp}}, {1, G})));
  }
  // Attention data parallelism inside a stage matters only for MoE models (their expert layers
  // span the whole stage); for dense models dp is plain replication, which every engine does.
  if (engine == Engine::kSglang && m.is_moe() && HasDenseFfn(m) && s.dp > 1 && s.tp > 1) {
    out.push_back(fmt::format(
        "tp={} with dp={} on a model with dense FFN layers: with --enable-dp-attention SGLang runs "
        "dense FFN layers over all --tp {} GPUs or unsharded on each GPU (--moe-dense-tp-size 1), "
        "not over an attention-TP group of {}; {}",
        s.tp, s.dp, G, s.tp, alternatives({{1, G}, {G, 1}}, {s.ep})));
  }
  if (engine == Engine::kTrtllm && m.is_moe() && s.dp > 1 && s.tp > 1) {
    out.push_back(fmt::format(
        "tp={} with dp={}: TensorRT-LLM runs attention either tensor-parallel over all tp_size = {} "
        "GPUs or data-parallel over them (enable_attention_dp); {}",
        s.tp, s.dp, G, alternatives({{1, G}, {G, 1}}, {s.ep})));
  }
  return out;
}

bool Expressible(Engine engine, const ModelSpec& m, const Strategy& s) {
  return UnsupportedChoices(engine, m, s).empty();
}

std::vector<Strategy> EngineAlternatives(Engine engine, const ModelSpec& m, const Strategy& s) {
  Strategy base = s;
  base.dims = EngineDims(m);
  if (engine != Engine::kMegatron || s.tp <= 1) base.sp = false;
  if (engine == Engine::kMegatron) base.mtp = 0;
  if (engine == Engine::kMegatron) base.slots = 0;
  if ((s.overlap == Overlap::kTbo && engine != Engine::kSglang && engine != Engine::kVllm) ||
      (s.overlap == Overlap::kSbo && engine != Engine::kSglang))
    base.overlap = Overlap::kNone;
  const int G = s.tp * s.dp;
  std::vector<Strategy> cands;
  auto add = [&](int tp, int dp, int ep) {
    Strategy t = base;
    t.tp = tp;
    t.dp = dp;
    t.ep = ep;
    if (t.tp <= 1) t.sp = false;
    if (t.ep <= 1) t.overlap = Overlap::kNone;  // overlap hides the expert all-to-all only
    if (!CheckStrategy(m, s.gpus(), t).ok()) return;
    if (std::find(cands.begin(), cands.end(), t) == cands.end()) cands.push_back(t);
  };
  if (engine == Engine::kVllm && m.is_moe() && s.ep != 1 && s.ep != G) {
    add(s.tp, s.dp, 1);
    add(s.tp, s.dp, G);
  } else if (m.is_moe() && s.dp > 1 && s.tp > 1 &&
             (engine == Engine::kTrtllm || (engine == Engine::kSglang && HasDenseFfn(m)))) {
    add(1, G, s.ep);
    add(G, 1, s.ep);
  } else {
    add(s.tp, s.dp, s.ep);
  }
  return cands;
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
    if (have) {
      LaunchOptions opt;
      opt.eval = &t.launched_eval;
      t.command = MakeLaunchCommand(t.engine, p, t.launched, opt);
    }
    t.has_best = best.found[k];
    if (t.has_best) {
      t.best = best.best[k];
      t.best_eval = best.eval[k];
      LaunchOptions opt;
      opt.eval = &t.best_eval;
      t.best_command = MakeLaunchCommand(t.engine, p, t.best, opt);
    }
  }
  return out;
}

}  // namespace l2s::launch
