#include "launch/launch.h"

#include "engine/engine.h"
#include "engine/model_classes.h"
#include "engine/restrict.h"

#include <fmt/core.h>

#include <algorithm>

#include <utility>

namespace l2s::launch {

namespace {

// The engine layer's row of a launch engine (the same names in both layers).
const engine::Capabilities& Caps(Engine e) {
  return engine::CapabilitiesOf(engine::ParseEngineId(EngineName(e)).value());
}


}  // namespace

std::string_view EngineName(Engine e) {
  switch (e) {
    case Engine::kVllm: return "vllm";
    case Engine::kSglang: return "sglang";
    case Engine::kTrtllm: return "trtllm";
    case Engine::kMegatron: return "megatron";
    case Engine::kAtom: return "atom";
  }
  return "?";
}

std::string_view EngineTitle(Engine e) {
  switch (e) {
    case Engine::kVllm: return "vLLM";
    case Engine::kSglang: return "SGLang";
    case Engine::kTrtllm: return "TensorRT-LLM";
    case Engine::kMegatron: return "Megatron-LM";
    case Engine::kAtom: return "ATOM";
  }
  return "?";
}

int DefaultPort(Engine engine) {
  switch (engine) {
    case Engine::kSglang: return kSglangDefaultPort;
    case Engine::kVllm: return kVllmDefaultPort;
    case Engine::kTrtllm: return kTrtllmDefaultPort;
    case Engine::kAtom: return kAtomDefaultPort;
    case Engine::kMegatron: return 0;
  }
  return 0;
}

std::string ReplicaRouterCommand(Engine e, const std::vector<std::string>& urls) {
  if (e == Engine::kMegatron || urls.size() < 2) return "";
  std::string c = e == Engine::kSglang ? "python -m sglang_router.launch_router --worker-urls"
                                       : "vllm-router --worker-urls";
  for (const std::string& u : urls) c += " " + u;
  if (e == Engine::kTrtllm) c += " --backend trtllm";
  return c + fmt::format(" --host 0.0.0.0 --port {}", kReplicaRouterPort);
}

bool RunsOn(Engine e, std::string_view vendor) {
  return engine::RunsOn(Caps(e), vendor);
}

l2s::Engine SchedulerOf(Engine e) {
  return Caps(e).scheduler;
}

int SeparateReplicaServers(Engine e, bool dynamo, const ModelSpec& m, const Strategy& s,
                           int gpus_per_node) {
  if (m.is_moe() || s.dp <= 1) return 1;
  const bool sglang_nodes = e == Engine::kSglang && s.gpus() > gpus_per_node;
  return e == Engine::kTrtllm || dynamo || sglang_nodes ? s.dp : 1;
}

std::optional<Engine> WorkersOf(std::string_view name) {
  StatusOr<engine::EngineId> id = engine::ParseEngineId(name);
  if (!id.ok() || *id == engine::EngineId::kIdeal) return std::nullopt;
  const std::string_view workers = engine::EngineName(engine::CapabilitiesOf(*id).workers);
  for (Engine e : kAllEngines)
    if (EngineName(e) == workers) return e;
  return std::nullopt;
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

std::vector<std::string> UnsupportedChoices(Engine engine, const ModelSpec& m, const Strategy& s,
                                            engine::Role role) {
  // The rules are the engine layer's capability table (src/engine); here only the words of the
  // per-operator dims (OpTitle, DimWords) are added.
  const engine::Capabilities& caps = Caps(engine);
  std::vector<std::string> out;
  for (engine::Violation& v : engine::FindViolations(caps, m, s, role)) {
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
  return engine::Launchable(Caps(engine), m, s);
}

std::vector<Strategy> EngineAlternatives(Engine engine, const ModelSpec& m, const Strategy& s,
                                         engine::Role role) {
  return engine::Repairs(Caps(engine), m, s, role);
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
                     Evaluation* eval, engine::Role role) {
  bool have = false;
  for (Strategy cand : EngineAlternatives(engine, sim.problem().model, plan, role)) {
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

std::vector<EngineTranslation> TranslatePlan(const Simulator& sim, const Strategy& plan,
                                             const ExpressibleBest& best) {
  std::vector<EngineTranslation> out;
  const Problem& p = sim.problem();
  for (size_t k = 0; k < kAllEngines.size(); ++k) {
    if (!RunsOn(kAllEngines[k], p.cluster.gpu.vendor)) continue;
    EngineTranslation& t = out.emplace_back();
    t.engine = kAllEngines[k];
    // An engine whose registry is a rule (ATOM) and lacks the model's class runs nothing of it.
    const engine::EngineId id = Caps(t.engine).id;
    if (!engine::LoadsModelClass(id, p.model)) {
      t.loads_model = false;
      t.unsupported = {engine::ModelClassNote(id, p.model)};
      continue;
    }
    t.unsupported = UnsupportedChoices(t.engine, p.model, plan);
    const bool have = BestAlternative(sim, t.engine, plan, &t.launched, &t.launched_eval);
    t.runnable = have && t.launched_eval.valid();
    const l2s::Engine own = SchedulerOf(t.engine);
    const std::string name(EngineName(t.engine));
    // ATOM runs vLLM's scheduler but has a factor and a request overhead of its own: a plan
    // priced otherwise (vLLM's) is re-priced for it as for an engine of another scheduler.
    const bool guest = own == p.workload.engine && name != l2s::EngineName(own);
    const bool own_pricing =
        own != p.workload.engine ||
        (guest && (Simulator::EngineFactor(name) != p.workload.engine_factor ||
                   Simulator::RequestOverheadSeconds(name) != Simulator::RequestOverheadOf(p.workload)));
    if (have && own_pricing && t.engine != Engine::kMegatron) {
      // The same strategy under this engine's scheduler and its default batch limit (the plan's
      // limit when the user set one: any other than the plan engine's default).
      Problem q = p;
      q.workload.engine = own;
      SetEngineFigures(name, &q.workload);
      if (!Caps(t.engine).quick_reduce) q.workload.quick_reduce = QuickReduce::kOff;
      if (q.workload.max_batch == DefaultsOf(p.workload.engine).max_batch)
        q.workload.max_batch = DefaultsOf(own).max_batch;
      const Simulator qs(q);
      t.other_scheduler = true;
      t.own_eval = qs.Evaluate(t.launched);
      if (!t.own_eval.valid()) t.own_reason = qs.Reason(t.launched, t.own_eval);
    }
    if (have) {
      LaunchOptions opt;
      opt.eval = &t.launched_eval;
      t.command = MakeLaunchCommand(t.engine, p, t.launched, opt);
    }
    t.has_best = best.found[k];
    if (t.has_best) {
      t.best = best.best[k];
      t.best_eval = best.eval[k];
    }
    // What the engine runs of the plan is itself expressible as-is: the best expressible is never
    // below it (the plan's batch may lie between the searched ones, beyond `best`'s candidates).
    if (t.runnable && (!t.has_best || t.launched_eval.tokens_per_s_per_gpu >
                                          t.best_eval.tokens_per_s_per_gpu)) {
      t.has_best = true;
      t.best = t.launched;
      t.best_eval = t.launched_eval;
    }
    if (t.has_best) {
      LaunchOptions opt;
      opt.eval = &t.best_eval;
      t.best_command = MakeLaunchCommand(t.engine, p, t.best, opt);
    }
  }
  return out;
}

}  // namespace l2s::launch
