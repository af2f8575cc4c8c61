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
#include "sim/disagg.h"
#include "sim/simulator.h"

namespace l2s::cli {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

struct ExplainFlags {
  ProblemFlags problem;
  std::string strategy;
  std::string batch;
  bool json = false;
  std::string pool;  // serve mode: "prefill" or "decode" instance of a disaggregated plan
};

const char* KindName(StepKind k) {
  switch (k) {
    case StepKind::kGemm: return "gemm";
    case StepKind::kAttnDecode: return "attn-decode";
    case StepKind::kAttnPrefill: return "attn-prefill";
    case StepKind::kElementwise: return "elementwise";
    case StepKind::kComm: return "collective";
    case StepKind::kStream: return "stream";
    case StepKind::kScan: return "scan";
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

std::string Shape(const Step& st, const GpuSpec& gpu) {
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
    case StepKind::kStream:
      return fmt::format("{} seqs, {:.3f} MiB through HBM, {:.3f} GFLOP {}", N(st.seqs),
                         st.bytes / kMiB, st.flops / 1e9, DTypeName(st.wdtype));
    case StepKind::kScan:
      return fmt::format("{} tokens x {} heads, state {} x {} (as {} x {} x {} x{})", N(st.m),
                         N(st.heads), N(st.k), N(st.n), N(st.m), N(st.n), N(st.k), N(st.count));
    case StepKind::kComm:
      return fmt::format("{} of {}{}, {:.3f} MiB", GroupKindName(st.group), st.group_size,
                         st.group_domains > 1 ? fmt::format(" across {} {} domains",
                                                            st.group_domains, ScaleUpName(gpu))
                                              : fmt::format(" in one {} domain", ScaleUpName(gpu)),
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
    case StepKind::kStream:
      j["seqs"] = st.seqs;
      j["bytes"] = st.bytes;
      j["dtype"] = std::string(DTypeName(st.wdtype));
      break;
    case StepKind::kScan:
      j["m"] = st.m;
      j["n"] = st.n;
      j["k"] = st.k;
      j["count"] = st.count;
      j["heads"] = st.heads;
      break;
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

// The section's seconds as the simulator composes them: with two-batch overlap (tbo) the steps
// are one half batch's and the section costs 2 max(compute, comm).
double SectionSeconds(const Simulator& sim, const Section& sec,
                      const std::array<double, Section::kMaxSteps>& t, bool tbo) {
  double compute = 0, comm = 0;
  for (int i = 0; i < sec.num_steps; ++i)
    (sec.steps[i].kind == StepKind::kComm ? comm : compute) += t[i];
  return sim.SectionSeconds(compute, comm, tbo);
}

nlohmann::ordered_json SectionJson(const Simulator& sim, const Section& sec,
                                   const std::array<double, Section::kMaxSteps>& t, bool tbo) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (int i = 0; i < sec.num_steps; ++i) steps.push_back(StepJson(sec.steps[i], t[i]));
  j["steps"] = std::move(steps);
  j["time_us"] = SectionSeconds(sim, sec, t, tbo) * 1e6;
  j["weight_mib"] = sec.weight_bytes / kMiB;
  j["kv_mib"] = (sec.kv_bytes - sec.state_bytes) / kMiB;
  j["state_mib"] = sec.state_bytes / kMiB;
  j["activation_mib"] = sec.act_bytes / kMiB;
  return j;
}

std::string SectionText(const Simulator& sim, const std::string& title, const Section& sec,
                        const std::array<double, Section::kMaxSteps>& t, bool tbo) {
  std::string out = fmt::format("== {} ==\n", title);
  if (sec.num_steps == 0) return out + "  (no steps)\n";
  out += fmt::format("  {:<14} {:<12} {:<56} {:>10} {:>11} {:>10}\n", "step", "op",
                     "per-GPU shape / group", "GFLOP", "weight MiB", "time us");
  for (int i = 0; i < sec.num_steps; ++i) {
    const Step& st = sec.steps[i];
    // A step overlapped with an earlier one (sbo) shows only the time that sticks out of it.
    const std::string what =
        st.hides_under >= 0 ? fmt::format("{}*", st.what) : std::string(st.what);
    out += fmt::format("  {:<14} {:<12} {:<56} {:>10} {:>11} {:>10.2f}\n", what, OpName(st.op),
                       Shape(st, sim.problem().cluster.gpu),
                       st.flops > 0 ? fmt::format("{:.3f}", st.flops / 1e9) : "-",
                       st.weight_bytes > 0 ? fmt::format("{:.2f}", st.weight_bytes / kMiB) : "-",
                       t[i] * 1e6);
  }
  out += fmt::format("  total {:.2f} us{}; weights {:.2f} MiB, KV cache {:.2f} MiB{} per GPU\n",
                     SectionSeconds(sim, sec, t, tbo) * 1e6,
                     tbo ? fmt::format(" (2 half batches: 2 x max({:.3f} x compute, communication))",
                                       sim.OverlapStretch())
                         : std::string(),
                     sec.weight_bytes / kMiB, (sec.kv_bytes - sec.state_bytes) / kMiB,
                     sec.state_bytes > 0
                         ? fmt::format(", recurrent state {:.2f} MiB", sec.state_bytes / kMiB)
                         : std::string());
  for (int i = 0; i < sec.num_steps; ++i) {
    const int j = sec.steps[i].hides_under;
    if (j >= 0)
      out += fmt::format("  * {} runs under {} (single-batch overlap): only what exceeds it counts\n",
                         sec.steps[i].what, sec.steps[j].what);
  }
  return out;
}

std::string KindTitle(const ModelSpec& m, const LayerKind& k) {
  std::string s = k.ffn == FfnKind::kMoe ? "MoE" : k.ffn == FfnKind::kDense ? "dense" : "no FFN";
  if (k.ffn_size > 0) s += fmt::format(" {}", k.ffn_size);
  if (m.compressed_kv() && k.mixer != Mixer::kNone) {
    s += fmt::format(", window {}", k.window);
    if (k.compress_ratio > 0)
      s += fmt::format(" + KV compressed {}x{}", k.compress_ratio,
                       k.mixer == Mixer::kSparse ? fmt::format(" (top-{})", m.index_topk) : "");
    return s;
  }
  switch (k.mixer) {
    case Mixer::kAttention:
      s += k.window > 0 ? fmt::format(", sliding window {}", k.window) : ", full attention";
      if (k.kv_heads > 0) s += fmt::format(" ({} kv heads)", k.kv_heads);
      break;
    case Mixer::kSparse:
      s += fmt::format(", sparse attention (top-{}{})", m.index_topk,
                       k.shared_indexer ? ", shared indexer" : "");
      break;
    case Mixer::kLinear: s += ", linear attention (gated DeltaNet)"; break;
    case Mixer::kMamba: s += m.mamba_version == 1 ? ", Mamba" : ", Mamba2"; break;
    case Mixer::kNone: s += ", no attention"; break;
  }
  return s;
}

int Run(const ExplainFlags& f) {
  StatusOr<Problem> p = BuildProblem(f.problem);
  if (!p.ok()) return Fail(p.status());
  if (!f.pool.empty()) {
    // One instance of a disaggregated plan: --gpus is the instance's size (sim/disagg.h).
    if (f.pool != "prefill" && f.pool != "decode")
      return Fail(fmt::format("--pool must be prefill or decode, got \"{}\"", f.pool));
    if (p->workload.mode != Mode::kServe)
      return Fail(fmt::format("--pool {} explains one instance of a disaggregated serve plan: it "
                              "needs --mode serve (got --mode {})",
                              f.pool, ModeName(p->workload.mode)));
    StatusOr<Problem> role = f.pool == "prefill"
                                 ? PrefillProblem(*p, p->cluster, p->cluster.num_gpus)
                                 : DecodeProblem(*p, p->cluster, p->cluster.num_gpus);
    if (!role.ok()) return Fail(role.status());
    p = std::move(role);
  }
  StatusOr<Strategy> parsed = ResolveStrategy(*p, f.strategy, f.batch, f.problem.mtp);
  if (!parsed.ok()) return Fail(parsed.status());
  if (Status st = CheckStrategyFlags(*p, *parsed, f.problem.max_batch); !st.ok())
    return Fail(st);
  const Strategy s = *parsed;
  const bool tbo = s.overlap == Overlap::kTbo;
  const engine::Role role = f.pool.empty()         ? engine::Role::kServer
                            : f.pool == "prefill" ? engine::Role::kPrefillPool
                                                  : engine::Role::kDecodePool;
  const EngineInfo engine = EngineInfoOf(f.problem.engine, *p, s, role);
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
      nlohmann::ordered_json lj = SectionJson(sim, prog.layers[k], d->layer_step_s[k], tbo);
      lj["kind"] = KindTitle(prob.model, prog.kinds[k]);
      lj["ffn"] = FfnKindName(prog.kinds[k].ffn);
      lj["mixer"] = MixerName(prog.kinds[k].mixer);
      lj["window"] = prog.kinds[k].window;
      lj["layers"] = total_layers[k];
      lj["layers_in_slowest_stage"] = slow.layers[k];
      layers.push_back(std::move(lj));
    }
    j["layer_kinds"] = std::move(layers);
    j["embed"] = SectionJson(sim, prog.embed, d->embed_step_s, tbo);
    j["lm_head"] = SectionJson(sim, prog.lm_head, d->lm_head_step_s, tbo);
    j["pipeline"] = SectionJson(sim, prog.pipe, d->pipe_step_s, tbo);
    if (prog.mtp_passes > 0) {
      nlohmann::ordered_json mj = SectionJson(sim, prog.mtp, d->mtp_step_s, tbo);
      mj["passes"] = prog.mtp_passes;
      mj["accept"] = e.accept;
      j["mtp_draft"] = std::move(mj);
    }
    j["totals"] = EvaluationJson(sim, s, e, engine);
    j["why"] = why;
    fmt::print("{}\n", DumpJson(j));
    return exit_code;
  }

  fmt::print("{} on {} x {}, {}; strategy {}\n", prob.model.name, prob.cluster.num_gpus,
             prob.cluster.gpu.name, ModeName(prob.workload.mode), ToText(s));
  fmt::print("batch {} per attention-dp rank{}: {} tokens per rank per step{}; residual stream {}\n\n",
             e.batch, s.batch == 0 ? " (auto)" : "", N(prog.tokens_per_rank),
             tbo ? " in each of two half batches (two-batch overlap)" : "",
             LayoutName(prog.residual));
  for (int k = 0; k < prog.num_kinds; ++k) {
    const std::string title =
        fmt::format("layer kind {}: {} - {} layers ({} in the slowest stage, stage {} of {})", k,
                    KindTitle(prob.model, prog.kinds[k]), total_layers[k], slow.layers[k], e.slowest_stage,
                    s.pp);
    fmt::print("{}\n", SectionText(sim, title, prog.layers[k], d->layer_step_s[k], tbo));
  }
  fmt::print("{}\n", SectionText(sim, "embed (first stage)", prog.embed, d->embed_step_s, tbo));
  fmt::print("{}\n", SectionText(sim, "lm_head (last stage)", prog.lm_head, d->lm_head_step_s, tbo));
  fmt::print("{}\n", SectionText(sim, s.pp > 1 ? "pipeline (each stage boundary)" : "pipeline (pp=1: none)",
                                 prog.pipe, d->pipe_step_s, tbo));
  if (prog.mtp_passes > 0) {
    const std::string who = prob.model.has_draft_model() ? "draft model " + prob.model.draft_model
                                                         : std::string("MTP module");
    // A prefill step runs the draft once over its prompts (its extend), whatever the depth.
    const std::string title =
        prob.workload.mode == Mode::kPrefill
            ? fmt::format("{} over the prompts (its extend; last stage), once per step whatever "
                          "the depth (mtp={})",
                          who, s.mtp)
            : fmt::format("{} (last stage), run {} times per step; {:.2f} tokens emitted per step",
                          prob.model.has_draft_model() ? "draft pass of " + prob.model.draft_model
                                                       : std::string("MTP draft pass"),
                          N(prog.mtp_passes), e.accept);
    fmt::print("{}\n", SectionText(sim, title, prog.mtp, d->mtp_step_s, tbo));
  }
  fmt::print("== totals ==\n{}", FormatEvaluation(sim, s, e, engine));
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
  cmd->add_option("--pool", f->pool,
                  "serve mode: explain the strategy as one prefill or decode instance of a "
                  "disaggregated plan (--gpus = the instance's GPUs)");
  return [f] { return Run(*f); };
}

}  // namespace l2s::cli
