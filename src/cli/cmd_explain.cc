// `l2s explain`: the per-GPU program of one strategy, step by step.
//   l2s explain --model M --gpus N --strategy S [--batch B|auto] [problem flags] [--json]
// One block per layer kind (with how many layers of that kind the model and the slowest stage
// have): each compute step's per-GPU shape, FLOPs, weight MiB and time; each collective's kind,
// group, group size, bytes, whether it crosses NVLink domains, and time. Then the embedding,
// LM-head and pipeline sections, the totals of the evaluation and one sentence saying what
// dominates the slowest stage. With batch auto the simulator's chosen batch is explained.
// Exit: 0 valid, 1 invalid strategy (the program is still printed unless the structure is
// invalid), 2 usage errors.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/output.h"
#include "cli/problem_flags.h"
#include "cli/report.h"
#include "sim/simulator.h"

namespace l2s::cli {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

struct ExplainFlags {
  ProblemFlags problem;
  std::string strategy;
  std::string batch;
  bool json = false;
};

const char* KindName(StepKind k) {
  switch (k) {
    case StepKind::kGemm: return "gemm";
    case StepKind::kAttnDecode: return "attn-decode";
    case StepKind::kAttnPrefill: return "attn-prefill";
    case StepKind::kElementwise: return "elementwise";
    case StepKind::kComm: return "collective";
  }
  return "?";
}

const char* GroupKindName(GroupKind g) {
  switch (g) {
    case GroupKind::kTp: return "tp";
    case GroupKind::kEtp: return "etp";
    case GroupKind::kStage: return "stage";
    case GroupKind::kPipe: return "pipe";
  }
  return "?";
}

// Compact number: integers without decimals, fractions with 4 significant digits.
std::string N(double v) { return fmt::format("{:.6g}", v); }

std::string Shape(const Step& st) {
  switch (st.kind) {
    case StepKind::kGemm:
      return fmt::format("{} x {} x {}{} {}", N(st.m), N(st.n), N(st.k),
                         st.count > 1 ? fmt::format(" (x{})", N(st.count)) : std::string(),
                         DTypeName(st.wdtype));
    case StepKind::kAttnDecode:
    case StepKind::kAttnPrefill: {
      std::string s = fmt::format("{} seqs x {} q x {} kv, {} heads", N(st.seqs), N(st.q_len),
                                  N(st.kv_len), N(st.heads));
      if (st.mla) {
        s += fmt::format(", latent {}+{}", N(st.latent_dim), N(st.rope_dim));
      } else {
        s += fmt::format(" / {} kv, hd {}", N(st.kv_heads), N(st.head_dim));
      }
      if (st.window > 0) s += fmt::format(", window {}", N(st.window));
      return s + fmt::format(", kv {}", DTypeName(st.kvdtype));
    }
    case StepKind::kElementwise: return fmt::format("{:.3f} MiB through HBM", st.bytes / kMiB);
    case StepKind::kComm:
      return fmt::format("{} of {}{}, {:.3f} MiB", GroupKindName(st.group), st.group_size,
                         st.group_domains > 1
                             ? fmt::format(" across {} NVLink domains", st.group_domains)
                             : std::string(" in one NVLink domain"),
                         st.comm_bytes / kMiB);
  }
  return "";
}

nlohmann::ordered_json StepJson(const Step& st, double time_s) {
  nlohmann::ordered_json j;
  j["what"] = st.what;
  j["op"] = std::string(OpName(st.op));
  j["kind"] = KindName(st.kind);
  switch (st.kind) {
    case StepKind::kGemm:
      j["m"] = st.m;
      j["n"] = st.n;
      j["k"] = st.k;
      j["count"] = st.count;
      j["weight_dtype"] = std::string(DTypeName(st.wdtype));
      break;
    case StepKind::kAttnDecode:
    case StepKind::kAttnPrefill:
      j["seqs"] = st.seqs;
      j["q_len"] = st.q_len;
      j["kv_len"] = st.kv_len;
      j["heads"] = st.heads;
      j["kv_heads"] = st.kv_heads;
      j["head_dim"] = st.head_dim;
      j["window"] = st.window;
      j["mla"] = st.mla;
      j["kv_dtype"] = std::string(DTypeName(st.kvdtype));
      break;
    case StepKind::kElementwise: j["bytes"] = st.bytes; break;
    case StepKind::kComm:
      j["collective"] = CommKindName(st.comm);
      j["group"] = GroupKindName(st.group);
      j["group_size"] = st.group_size;
      j["nvlink_domains"] = st.group_domains;
      j["crosses_nvlink"] = st.group_domains > 1;
      j["bytes"] = st.comm_bytes;
      j["from"] = LayoutName(st.from);
      j["to"] = LayoutName(st.to);
      break;
  }
  j["gflops"] = st.flops / 1e9;
  j["weight_mib"] = st.weight_bytes / kMiB;
  j["time_us"] = time_s * 1e6;
  return j;
}

double SectionSeconds(const Section& sec, const std::array<double, Section::kMaxSteps>& t) {
  double s = 0;
  for (int i = 0; i < sec.num_steps; ++i) s += t[i];
  return s;
}

nlohmann::ordered_json SectionJson(const Section& sec,
                                   const std::array<double, Section::kMaxSteps>& t) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (int i = 0; i < sec.num_steps; ++i) steps.push_back(StepJson(sec.steps[i], t[i]));
  j["steps"] = std::move(steps);
  j["time_us"] = SectionSeconds(sec, t) * 1e6;
  j["weight_mib"] = sec.weight_bytes / kMiB;
  j["kv_mib"] = sec.kv_bytes / kMiB;
  j["activation_mib"] = sec.act_bytes / kMiB;
  return j;
}

std::string SectionText(const std::string& title, const Section& sec,
                        const std::array<double, Section::kMaxSteps>& t) {
  std::string out = fmt::format("== {} ==\n", title);
  if (sec.num_steps == 0) return out + "  (no steps)\n";
  out += fmt::format("  {:<14} {:<12} {:<56} {:>10} {:>11} {:>10}\n", "step", "op",
                     "per-GPU shape / group", "GFLOP", "weight MiB", "time us");
  for (int i = 0; i < sec.num_steps; ++i) {
    const Step& st = sec.steps[i];
    out += fmt::format("  {:<14} {:<12} {:<56} {:>10} {:>11} {:>10.2f}\n", st.what, OpName(st.op),
                       Shape(st), st.flops > 0 ? fmt::format("{:.3f}", st.flops / 1e9) : "-",
                       st.weight_bytes > 0 ? fmt::format("{:.2f}", st.weight_bytes / kMiB) : "-",
                       t[i] * 1e6);
  }
  out += fmt::format("  total {:.2f} us; weights {:.2f} MiB, KV cache {:.2f} MiB per GPU\n",
                     SectionSeconds(sec, t) * 1e6, sec.weight_bytes / kMiB, sec.kv_bytes / kMiB);
  return out;
}

std::string KindTitle(const LayerKind& k) {
  std::string s = k.ffn == FfnKind::kMoe ? "MoE" : "dense";
  s += k.window > 0 ? fmt::format(", sliding window {}", k.window) : ", full attention";
  return s;
}

int Run(const ExplainFlags& f) {
  StatusOr<Problem> p = BuildProblem(f.problem);
  if (!p.ok()) return Fail(p.status());
  StatusOr<Strategy> parsed = ResolveStrategy(*p, f.strategy, f.batch);
  if (!parsed.ok()) return Fail(parsed.status());
  const Strategy s = *parsed;
  const Simulator sim(std::move(*p));
  const Problem& prob = sim.problem();
  const Evaluation e = sim.Evaluate(s);
  const int exit_code = e.valid() ? kExitOk : kExitImpossible;
  if (e.verdict == Verdict::kStructure) {
    if (f.json) {
      nlohmann::ordered_json j;
      j["valid"] = false;
      j["reason"] = sim.Reason(s, e);
      j["strategy"] = ToText(s);
      fmt::print("{}\n", DumpJson(j));
      return exit_code;
    }
    return Fail(Status::Invalid(sim.Reason(s, e)));
  }
  auto d = std::make_unique<Simulator::Detail>();
  sim.Explain(s, e.batch, d.get());
  const Program& prog = d->program;
  const StageLayers slow = LayersOfStage(prob.model, prog, s.pp, e.slowest_stage);
  std::array<int, Program::kMaxKinds> total_layers{};
  for (int i = 0; i < prob.model.num_layers; ++i) ++total_layers[LayerKindIndex(prob.model, i, prog)];
  const std::string why = WhySentence(sim, s, e);

  if (f.json) {
    nlohmann::ordered_json j;
    j["valid"] = e.valid();
    j["reason"] = sim.Reason(s, e);
    j["model"] = prob.model.name;
    j["gpu"] = prob.cluster.gpu.name;
    j["gpus"] = prob.cluster.num_gpus;
    j["mode"] = ModeName(prob.workload.mode);
    j["strategy"] = ToText(s);
    j["batch"] = e.batch;
    j["tokens_per_rank"] = prog.tokens_per_rank;
    j["residual"] = LayoutName(prog.residual);
    j["slowest_stage"] = e.slowest_stage;
    nlohmann::ordered_json layers = nlohmann::ordered_json::array();
    for (int k = 0; k < prog.num_kinds; ++k) {
      nlohmann::ordered_json lj = SectionJson(prog.layers[k], d->layer_step_s[k]);
      lj["kind"] = KindTitle(prog.kinds[k]);
      lj["ffn"] = prog.kinds[k].ffn == FfnKind::kMoe ? "moe" : "dense";
      lj["window"] = prog.kinds[k].window;
      lj["layers"] = total_layers[k];
      lj["layers_in_slowest_stage"] = slow.layers[k];
      layers.push_back(std::move(lj));
    }
    j["layer_kinds"] = std::move(layers);
    j["embed"] = SectionJson(prog.embed, d->embed_step_s);
    j["lm_head"] = SectionJson(prog.lm_head, d->lm_head_step_s);
    j["pipeline"] = SectionJson(prog.pipe, d->pipe_step_s);
    j["totals"] = EvaluationJson(sim, s, e, EngineInfo{});
    j["why"] = why;
    fmt::print("{}\n", DumpJson(j));
    return exit_code;
  }

  fmt::print("{} on {} x {}, {}; strategy {}\n", prob.model.name, prob.cluster.num_gpus,
             prob.cluster.gpu.name, ModeName(prob.workload.mode), ToText(s));
  fmt::print("batch {} per attention-dp rank{}: {} tokens per rank per step; residual stream {}\n\n",
             e.batch, s.batch == 0 ? " (auto)" : "", N(prog.tokens_per_rank),
             LayoutName(prog.residual));
  for (int k = 0; k < prog.num_kinds; ++k) {
    const std::string title =
        fmt::format("layer kind {}: {} - {} layers ({} in the slowest stage, stage {} of {})", k,
                    KindTitle(prog.kinds[k]), total_layers[k], slow.layers[k], e.slowest_stage,
                    s.pp);
    fmt::print("{}\n", SectionText(title, prog.layers[k], d->layer_step_s[k]));
  }
  fmt::print("{}\n", SectionText("embed (first stage)", prog.embed, d->embed_step_s));
  fmt::print("{}\n", SectionText("lm_head (last stage)", prog.lm_head, d->lm_head_step_s));
  fmt::print("{}\n", SectionText(s.pp > 1 ? "pipeline (each stage boundary)" : "pipeline (pp=1: none)",
                                 prog.pipe, d->pipe_step_s));
  fmt::print("== totals ==\n{}", FormatEvaluation(sim, s, e, EngineInfo{}));
  return exit_code;
}

}  // namespace

Runner RegisterExplain(CLI::App& app) {
  auto f = std::make_shared<ExplainFlags>();
  CLI::App* cmd = app.add_subcommand("explain", "Print the per-GPU program of one strategy");
  AddProblemFlags(cmd, &f->problem);
  cmd->add_option("--strategy", f->strategy, "strategy text (missing dims: Megatron's)");
  cmd->add_option("--batch", f->batch, "sequences per attention-dp rank, or auto (default)");
  cmd->add_flag("--json", f->json, "print one JSON object");
  return [f] { return Run(*f); };
}

}  // namespace l2s::cli
