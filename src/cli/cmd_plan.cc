// `l2s plan`: the main job. Searches the strategy space of one problem (default: gpt-moe-1.6t,
// decode at 16k context on 1,024 H100s, RL searcher, 4,000 simulator calls), then prints the
// best strategy with every per-operator choice in words, its performance and where the time
// goes, the Megatron heuristic's best, the default layout and the oracle's optimum on the same
// problem, and how to launch it on vLLM, SGLang, TensorRT-LLM and Megatron-LM.
// docs/PLAN.md describes the output; exit codes are those of commands.h.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/disagg_plan.h"
#include "cli/output.h"
#include "cli/pareto_report.h"
#include "cli/plan_problem.h"
#include "cli/plan_replicas.h"
#include "cli/plan_traffic.h"
#include "cli/problem_flags.h"
#include "cli/progress.h"
#include "cli/report.h"
#include "engine/engine.h"
#include "launch/dynamo.h"
#include "launch/emit.h"
#include "engine/restrict.h"
#include "launch/launch.h"
#include "plan/engines.h"
#include "plan/error_bands.h"
#include "plan/refine.h"
#include "search/search.h"
#include "strategy/space.h"

namespace l2s::cli {

namespace {

using json = nlohmann::ordered_json;
using launch::BestExpressible;
using launch::DimWords;
using launch::EngineTitle;
using launch::EngineTranslation;
using launch::ExpressibleBest;
using launch::OpTitle;
using launch::TranslatePlan;

struct PlanFlags {
  ProblemFlags problem;
  std::string search = "local";
  int64_t budget = 4000;
  int64_t seed = 0;  // >= 0 (CLI11 would wrap -1 into a uint64_t)
  bool json = false;
  std::string out;
  bool no_baselines = false;
  int64_t oracle_calls = kDefaultOracleCalls;
  double oracle_seconds = -1;  // deprecated (read as calls, OracleCalls); < 0 = not given
  // Serve mode: aggregated, disaggregated or both (auto); see disagg_plan.h.
  std::string serving;
  int prefill_gpus = 0;
  bool kv_layerwise = false;
  bool pareto = false;  // sweep the TPOT limit instead (cli/pareto_report.h)
  std::string svg = "pareto.svg", x_scale = "log", y_scale = "log";  // --pareto's chart
  std::string emit;      // --emit DIR: the plan's launch files (launch/emit.h)
  std::string model_id;  // --model-id: the model the emitted files load
  TrafficFlags traffic;  // with percentile --slo keys: plan for a traffic (cli/plan_traffic.h)
  int instance_gpus = 0;  // --instance-gpus: the aggregated replicas' size (cli/plan_replicas.h)
};

// ---------------------------------------------------------------- per-operator words

struct OpChoice {
  Op op;
  Dim dim;
  int group = 1;               // GPUs the dim splits over
  std::string group_name;      // "tp" or "expert-TP"
  std::string words;           // DimWords
  std::vector<std::string> before, after;  // collectives around the operator's compute
};

std::string CommWords(const Step& st) {
  const char* group = st.group == GroupKind::kTp      ? "tp"
                      : st.group == GroupKind::kEtp   ? "expert-TP"
                      : st.group == GroupKind::kStage ? "stage"
                                                      : "pipeline";
  return fmt::format("{} over {} {}", CommKindName(st.comm), group, st.group_size);
}

// Every operator the model has, with the collectives the layout algebra inserts around it in the
// program of `s` at `batch` (a conversion belongs to the operator that needs it, or to the one
// after which it is inserted: program.h).
std::vector<OpChoice> DescribeOps(const Simulator& sim, const Strategy& s, int batch) {
  const ModelSpec& m = sim.problem().model;
  auto detail = std::make_unique<Simulator::Detail>();  // ~100 KiB: keep it off the stack
  sim.Explain(s, std::max(1, batch), detail.get());
  const Program& prog = detail->program;
  std::vector<OpChoice> out;
  for (int i = 0; i < kNumOps; ++i) {
    const Op op = static_cast<Op>(i);
    if (!ModelHasOp(m, op)) continue;
    OpChoice c;
    c.op = op;
    c.dim = s.dim(op);
    const bool expert = op == Op::kMoeFfn1 || op == Op::kMoeFfn2;
    c.group = expert ? s.etp() : s.tp;
    c.group_name = expert ? "expert-TP" : "tp";
    c.words = DimWords(op, c.dim);
    // The section holding the operator: embedding, LM head, or the first layer kind with steps
    // of it.
    const Section* sec = nullptr;
    auto has_op = [&](const Section& x) {
      for (int k = 0; k < x.num_steps; ++k)
        if (x.steps[k].op == op) return true;
      return false;
    };
    if (op == Op::kEmbed) sec = &prog.embed;
    else if (op == Op::kLmHead) sec = &prog.lm_head;
    else
      for (int k = 0; k < prog.num_kinds && sec == nullptr; ++k)
        if (has_op(prog.layers[k])) sec = &prog.layers[k];
    if (sec != nullptr) {
      int first_compute = -1;
      for (int k = 0; k < sec->num_steps && first_compute < 0; ++k)
        if (sec->steps[k].op == op && sec->steps[k].kind != StepKind::kComm) first_compute = k;
      for (int k = 0; k < sec->num_steps; ++k) {
        const Step& st = sec->steps[k];
        if (st.op != op || st.kind != StepKind::kComm) continue;
        (first_compute >= 0 && k < first_compute ? c.before : c.after).push_back(CommWords(st));
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::string OpChoiceLine(const OpChoice& c) {
  std::string line = fmt::format("{} ({}): {}", OpTitle(c.op), OpName(c.op), c.words);
  if (c.group <= 1)
    line += fmt::format(" - {} group of 1 GPU, nothing is split", c.group_name);
  else
    line += fmt::format(" over the {}-GPU {} group", c.group, c.group_name);
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  if (!c.before.empty()) line += "; before: " + join(c.before);
  if (!c.after.empty()) line += "; after: " + join(c.after);
  if (c.before.empty() && c.after.empty() && c.group > 1) line += "; no collective";
  return line;
}

// The problem flags as the user could retype them (after plan's defaults), each " --flag value";
// values with characters a shell would split or expand are single-quoted.
std::string ProblemFlagsText(const ProblemFlags& f) {
  auto quote = [](const std::string& v) {
    if (v.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/=,:+") ==
        std::string::npos)
      return v;
    std::string q = "'";
    for (char c : v) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  std::string out;
  auto add = [&](const char* flag, const std::string& v) {
    if (!v.empty()) out += fmt::format(" {} {}", flag, quote(v));
  };
  auto add_n = [&](const char* flag, int64_t v) {
    if (v > 0) out += fmt::format(" {} {}", flag, v);
  };
  add("--model", f.model);
  if (f.cluster.empty()) add("--gpu", f.gpu.empty() ? std::string(kDefaultGpu) : f.gpu);
  add("--cluster", f.cluster);
  add_n("--gpus", f.gpus);
  add_n("--nodes", f.nodes);
  add_n("--gpus-per-node", f.gpus_per_node);
  add("--mode", f.mode);
  add_n("--isl", f.isl);
  add_n("--osl", f.osl);
  add_n("--context", f.context);
  add("--dtype", f.dtype);
  add("--kv-dtype", f.kv_dtype);
  add("--attn-dtype", f.attn_dtype);
  add("--slo", f.slo);
  add_n("--max-batch", f.max_batch);
  add("--engine", f.engine);
  add("--adp-balance", f.adp_balance);
  add_n("--max-num-tokens", f.max_num_tokens);
  add_n("--cuda-graph-max-batch", f.cuda_graph_max_batch);
  if (f.mtp >= 0) out += fmt::format(" --mtp {}", f.mtp);
  if (f.mtp_accept > 0) out += fmt::format(" --mtp-accept {}", f.mtp_accept);
  return out;
}

// ---------------------------------------------------------------- running searchers

using plan::AggPlan;
using plan::Run;
using plan::RunOf;
using plan::Value;
using plan::kRunSources;

// The CLI's progress: a bar per step on a terminal, Ctrl-C through InterruptRequested.
plan::PlanProgress CliProgress() {
  plan::PlanProgress p;
  p.observe = [](const std::string& label) -> std::unique_ptr<Observer> {
    return std::make_unique<ProgressObserver>(ProgressObserver::Options{label, StderrIsTerminal(), 0});
  };
  p.interrupted = [] { return InterruptRequested(); };
  return p;
}

json StrategyEvalJson(const Strategy& s, const Evaluation& e) {
  json j;
  j["strategy"] = ToText(s);
  j["tokens_per_s_per_gpu"] = e.tokens_per_s_per_gpu;
  j["tokens_per_s"] = e.tokens_per_s;
  j["valid"] = e.valid();
  return j;
}

json BestJson(const Simulator& sim, const Strategy& s, const Evaluation& e,
              const std::vector<OpChoice>& ops) {
  json j;
  j["strategy"] = ToText(s);
  j["tokens_per_s_per_gpu"] = e.tokens_per_s_per_gpu;
  j["tokens_per_s"] = e.tokens_per_s;
  j["ttft_ms"] = e.ttft_s * 1e3;
  j["tpot_ms"] = e.tpot_s * 1e3;
  j["batch"] = e.batch;
  j["memory_per_gpu_gib"] = e.mem_bytes / kGiB;
  j["degrees"] = {{"pp", s.pp}, {"tp", s.tp}, {"dp", s.dp}, {"ep", s.ep}, {"etp", s.etp()}};
  j["sp"] = s.sp;
  j["mtp"] = s.mtp;
  j["mtp_accept"] = e.accept;
  json opj = json::array();
  for (const OpChoice& c : ops) {
    json o;
    o["op"] = OpName(c.op);
    o["title"] = OpTitle(c.op);
    o["dim"] = DimName(c.dim);
    o["words"] = c.words;
    o["group_gpus"] = c.group;
    o["collectives_before"] = c.before;
    o["collectives_after"] = c.after;
    opj.push_back(o);
  }
  j["operators"] = opj;
  j["breakdown"] = BreakdownJson(e);
  j["why"] = WhySentence(sim, s, e);
  return j;
}

json LaunchJson(const EngineTranslation& t) {
  json j;
  j["command"] = t.command.command;
  if (!t.command.extra_file_name.empty())
    j["extra_file"] = {{"name", t.command.extra_file_name}, {"contents", t.command.extra_file}};
  j["notes"] = t.command.notes;
  j["exact"] = t.unsupported.empty();
  j["unsupported"] = t.unsupported;
  j["launched"] = t.runnable ? StrategyEvalJson(t.launched, t.launched_eval) : json();
  // The plan was priced under another engine's scheduler: the same command under this one's.
  if (t.other_scheduler && t.runnable) {
    json own = t.own_eval.valid() ? StrategyEvalJson(t.launched, t.own_eval) : json::object();
    own["valid"] = t.own_eval.valid();
    own["reason"] = t.own_eval.valid() ? json() : json(t.own_reason);
    j["own_scheduler"] = own;
  } else {
    j["own_scheduler"] = json();
  }
  if (t.has_best) {
    json b = StrategyEvalJson(t.best, t.best_eval);
    b["command"] = t.best_command.command;
    if (!t.best_command.extra_file_name.empty())
      b["extra_file"] = {{"name", t.best_command.extra_file_name},
                         {"contents", t.best_command.extra_file}};
    j["expressible_best"] = b;
  } else {
    j["expressible_best"] = json();
  }
  return j;
}

// ---------------------------------------------------------------- the plan

// The library's plan (plan/aggregated.h) and what the CLI adds to print it.
struct PlanOutcome : AggPlan {
  const Simulator* sim = nullptr;
  std::string searcher;       // the searcher that ran: --search's, or "oracle" (engine portfolio)
  std::string requested_searcher;  // as given to --search, e.g. "rl" (JSON "searcher")
  uint64_t seed = 0;
  int64_t budget = 0;
  std::string oracle_hint;    // how to run it when skipped
  std::string warning;
  std::vector<OpChoice> ops;  // of the recommended strategy
  double total_wall_s = 0;
  // --engine E: the plan is E's (its space restricted to what E launches); "ideal" otherwise.
  engine::EngineId engine = engine::EngineId::kIdeal;
  // --engine E: the unrestricted plan on the same problem (the headroom a custom engine has).
  bool have_ideal = false;
  Strategy ideal;
  Evaluation ideal_eval;
  std::string ideal_source;
  // No --engine: the best each serving engine launches (plan/engines.h), in TabulatedEngines order.
  std::vector<plan::EnginePlan> engines;
  // No --engine: `engine` is the fastest of `engines`, planned as --engine would plan it.
  bool engine_chosen = false;
  // Aggregated replicas (cli/plan_replicas.h): `deployment` is the problem on every GPU; `sim`'s
  // is one instance's, the same problem when the replicas are not active.
  ReplicaSizing replicas;
  Problem deployment;
  const Problem& Deployment() const { return deployment; }
  int Replicas() const { return replicas.active ? replicas.choice.replicas : 1; }
};

// Whether engine `id` launches `s` as it is (kIdeal: whether any engine tabulated for the GPU's
// vendor does).
bool LaunchableBy(engine::EngineId id, const Problem& p, const Strategy& s) {
  const ModelSpec& m = p.model;
  if (id != engine::EngineId::kIdeal) return engine::Launchable(engine::CapabilitiesOf(id), m, s);
  for (engine::EngineId e : plan::TabulatedEngines(p.cluster))
    if (engine::Launchable(engine::CapabilitiesOf(e), m, s)) return true;
  return false;
}

const EngineTranslation* TranslationOf(const PlanOutcome& o, launch::Engine e) {
  for (const EngineTranslation& t : o.launch)
    if (t.engine == e) return &t;
  return nullptr;
}

// --engine dynamo+E: the plan on Dynamo, its workers running E's translation (launch/dynamo.h);
// nullopt for every other engine or when E's translation is missing.
std::optional<launch::DynamoAggLaunch> DynamoLaunchOf(const PlanOutcome& o) {
  const engine::Capabilities& c = engine::CapabilitiesOf(o.engine);
  if (!o.have_launch || c.workers == c.id) return std::nullopt;
  const std::optional<launch::Engine> backend = launch::WorkersOf(c.name);
  const EngineTranslation* t = backend ? TranslationOf(o, *backend) : nullptr;
  if (t == nullptr) return std::nullopt;
  return launch::MakeDynamoAggLaunch(*t, o.sim->problem(), o.Replicas());
}

json DynamoLaunchJson(const launch::DynamoAggLaunch& d, const EngineTranslation& t) {
  json j;
  j["backend"] = std::string(EngineName(d.backend));
  j["exact"] = t.unsupported.empty();
  j["runnable"] = d.runnable;
  j["workers"] = d.workers;
  j["gpus_per_worker"] = d.gpus_per_worker;
  j["frontend"] = d.runnable ? json(d.frontend) : json();
  json w;
  w["command"] = d.worker.command;
  if (!d.worker.extra_file_name.empty())
    w["extra_file"] = {{"name", d.worker.extra_file_name}, {"contents", d.worker.extra_file}};
  w["notes"] = d.worker.notes;
  j["worker"] = d.runnable ? w : json();
  j["notes"] = d.notes;
  return j;
}

json EnginesJson(const PlanOutcome& o) {
  json a = json::array();
  for (const plan::EnginePlan& e : o.engines) {
    json x;
    x["engine"] = std::string(engine::EngineName(e.id));
    x["version"] = std::string(engine::CapabilitiesOf(e.id).version);
    x["found"] = e.found;
    x["tokens_per_s_per_gpu"] = e.found ? json(e.eval.tokens_per_s_per_gpu) : json();
    x["ttft_ms"] = e.found ? json(e.eval.ttft_s * 1e3) : json();
    x["tpot_ms"] = e.found ? json(e.eval.tpot_s * 1e3) : json();
    x["strategy"] = e.found ? json(ToText(e.best)) : json();
    x["found_by"] = e.found_by;
    x["exact"] = e.exact;
    x["why_none"] = e.found ? json() : json(e.why_none);
    // The engine's command for its own plan (the plan's engine: the same as launch.<engine>).
    if (e.found && !e.command.command.empty()) {
      json l;
      l["command"] = e.command.command;
      if (!e.command.extra_file_name.empty())
        l["extra_file"] = {{"name", e.command.extra_file_name},
                           {"contents", e.command.extra_file}};
      l["notes"] = e.command.notes;
      x["launch"] = l;
    } else {
      x["launch"] = json();
    }
    a.push_back(x);
  }
  return a;
}

// The router command of the plan's replicas ("" without replicas or without a serving engine).
std::string PlanRouter(const PlanOutcome& o) {
  if (!o.replicas.active) return "";
  const std::optional<launch::Engine> e = launch::WorkersOf(engine::EngineName(o.engine));
  return e ? ReplicaRouterCommand(*e, o.Replicas()) : "";
}

json PlanJson(const PlanOutcome& o) {
  const Simulator& sim = *o.sim;
  json j;
  j["problem"] = ProblemJson(o.Deployment());
  // The aggregated replicas' sizing: null when it did not run (a dense model, one size).
  j["replicas"] = o.replicas.active || o.replicas.fixed || !o.replicas.choice.trials.empty()
                      ? ReplicaSizingJson(o.replicas, PlanRouter(o))
                      : json();
  j["searcher"] = o.requested_searcher;
  j["searcher_spec"] = o.searcher_spec;  // what ran: "oracle" where the engine's space is exact
  j["seed"] = o.seed;
  j["budget"] = o.budget;
  j["calls"] = o.main.result.calls;
  j["evaluations"] = o.main.result.calls;
  j["wall_s"] = o.main.result.wall_s;
  j["total_wall_s"] = o.total_wall_s;
  j["interrupted"] = o.interrupted;
  j["note"] = o.main.result.note;
  // best: the plan (the best strategy of everything evaluated) and who found it; search.best:
  // the searcher's own result, so that studies still measure the searcher.
  if (o.have_recommended) {
    json b = BestJson(sim, o.recommended, o.recommended_eval, o.ops);
    b["found_by"] = o.recommended_source;
    // The batch of the candidate before the plan's batch was refined and its tokens/s per GPU
    // there (null: not refined).
    b["batch_refined_from"] = o.refined_from > 0 ? json(o.refined_from) : json();
    b["tokens_per_s_per_gpu_before_refinement"] =
        o.refined_from > 0 ? json(o.unrefined_value) : json();
    // The engine the plan is for ("ideal": the paper's unrestricted space) and whether an engine
    // launches it as it is (with --engine E: E, always; without: any of the tabulated engines).
    b["engine"] = std::string(engine::EngineName(o.engine));
    b["launchable"] = LaunchableBy(o.engine, sim.problem(), o.recommended);
    b["cost"] = CostJson(plan::CostOf(o.recommended_eval.tokens_per_s_per_gpu, sim.problem().workload,
                                      o.Deployment().cluster, o.Deployment().cluster.num_gpus));
    // One instance's figures above; the deployment is `instances` of them.
    b["instances"] = o.Replicas();
    b["gpus_per_instance"] = sim.problem().cluster.num_gpus;
    b["deployment_tokens_per_s"] = o.recommended_eval.tokens_per_s * o.Replicas();
    b["error_band"] = ErrorBandJson(plan::UncertaintyOf(sim.problem(), o.recommended,
                                                        /*disaggregated=*/false, o.recommended.pp));
    // How the engine was chosen: "flag" (--engine), "fastest" (no --engine: the fastest row of
    // `engines`) or null (the unrestricted plan: --engine ideal, or no engine launches one).
    b["engine_chosen_by"] = o.engine == engine::EngineId::kIdeal ? json()
                            : o.engine_chosen                    ? json("fastest")
                                                                 : json("flag");
    j["best"] = b;
  } else {
    j["best"] = json();
  }
  const bool found = o.main.ran && o.main.result.found;
  json search;
  search["best"] = !found ? json()
                   : o.recommended_source == "search" && o.refined_from == 0
                       ? BestJson(sim, o.main.result.best, o.main.result.eval, o.ops)
                       : BestJson(sim, o.main.result.best, o.main.result.eval,
                                  DescribeOps(sim, o.main.result.best, o.main.result.eval.batch));
  j["search"] = search;
  if (o.have_recommended) {
    json r = StrategyEvalJson(o.recommended, o.recommended_eval);
    r["source"] = o.recommended_source;
    j["recommended"] = r;
  } else {
    j["recommended"] = json();
  }
  j["warning"] = o.warning.empty() ? json() : json(o.warning);
  const double best = o.have_recommended ? o.recommended_eval.tokens_per_s_per_gpu : 0;
  auto baseline = [&](const Run& r) {
    if (!r.ran || !r.result.found) return json();
    json b = StrategyEvalJson(r.result.best, r.result.eval);
    b["evaluations"] = r.result.calls;
    b["wall_s"] = r.result.wall_s;
    b["search_over_baseline"] = Value(r) > 0 ? json(Value(o.main) / Value(r)) : json();
    b["recommended_over_baseline"] = Value(r) > 0 ? json(best / Value(r)) : json();
    return b;
  };
  j["baselines"] = {{"megatron", baseline(o.megatron)}, {"default", baseline(o.def)}};
  json oj;
  const bool solved = o.oracle_status == "solved" && o.oracle.result.found;
  oj["status"] = o.oracle_status;
  oj["tokens_per_s_per_gpu"] = solved ? json(Value(o.oracle)) : json();
  oj["strategy"] = solved ? json(ToText(o.oracle.result.best)) : json();
  oj["fraction_reached"] = solved && Value(o.oracle) > 0 ? json(Value(o.main) / Value(o.oracle)) : json();
  oj["recommended_fraction"] = solved && Value(o.oracle) > 0 ? json(best / Value(o.oracle)) : json();
  oj["wall_s"] = o.oracle.ran ? json(o.oracle.result.wall_s) : json();
  oj["how_to_run"] = o.oracle_hint.empty() ? json() : json(o.oracle_hint);
  j["oracle"] = oj;
  json lj;
  if (o.have_launch)
    for (const EngineTranslation& t : o.launch) lj[std::string(EngineName(t.engine))] = LaunchJson(t);
  if (const std::optional<launch::DynamoAggLaunch> d = DynamoLaunchOf(o))
    lj["dynamo"] = DynamoLaunchJson(*d, *TranslationOf(o, d->backend));
  j["launch"] = o.have_launch ? lj : json();
  if (o.have_ideal) {
    json id = StrategyEvalJson(o.ideal, o.ideal_eval);
    id["ttft_ms"] = o.ideal_eval.ttft_s * 1e3;
    id["tpot_ms"] = o.ideal_eval.tpot_s * 1e3;
    id["found_by"] = o.ideal_source;
    id["over_best"] = o.have_recommended && o.recommended_eval.tokens_per_s_per_gpu > 0
                          ? json(o.ideal_eval.tokens_per_s_per_gpu /
                                 o.recommended_eval.tokens_per_s_per_gpu)
                          : json();
    j["ideal"] = id;
  } else {
    j["ideal"] = json();
  }
  j["engines"] = EnginesJson(o);
  return j;
}

// The engines' table and the headroom line (after the plan's text).
std::string EnginesText(const PlanOutcome& o) {
  std::string out;
  if (!o.engines.empty()) {
    out += o.replicas.active
               ? fmt::format("\nEngines (each the best plan it launches on one instance of {} "
                             "GPUs, under its own scheduler)\n",
                             o.sim->problem().cluster.num_gpus)
               : std::string("\nEngines (each the best plan it launches, under its own scheduler)\n");
    out += fmt::format("  {:<14} {:>12} {:>10} {:>10}  {}\n", "engine", "tok/s/GPU", "TTFT ms",
                       "TPOT ms", "plan");
    const plan::EnginePlan* top = nullptr;
    for (const plan::EnginePlan& e : o.engines) {
      const std::string name = fmt::format("{} {}", engine::EngineName(e.id),
                                           engine::CapabilitiesOf(e.id).version);
      if (!e.found) {
        out += fmt::format("  {:<14} {:>12} {:>10} {:>10}  {}\n", name, "-", "-", "-", e.why_none);
        continue;
      }
      if (top == nullptr || e.eval.tokens_per_s_per_gpu > top->eval.tokens_per_s_per_gpu) top = &e;
      const std::string ttft =
          e.eval.ttft_s > 0 ? fmt::format("{:.1f}", e.eval.ttft_s * 1e3) : std::string("n/a");
      out += fmt::format("  {:<14} {:>12.2f} {:>10} {:>10.2f}  {}{}\n", name,
                         e.eval.tokens_per_s_per_gpu, ttft, e.eval.tpot_s * 1e3,
                         ShortText(o.sim->problem().model, e.best),
                         e.exact ? "" : " (searched, not exact)");
    }
    if (o.engine_chosen)
      out += fmt::format(
          "  the plan above is {}'s, the fastest here (--engine E plans another engine; --engine "
          "ideal the paper's unrestricted space)\n",
          engine::EngineTitle(o.engine));
    else if (top == nullptr)
      out += "  no listed engine launches a valid plan: the plan above is the unrestricted one "
             "(--engine ideal)\n";
  }
  if (o.have_ideal && o.have_recommended &&
      o.ideal_eval.tokens_per_s_per_gpu > o.recommended_eval.tokens_per_s_per_gpu * (1 + 1e-9))
    out += fmt::format(
        "\nHeadroom: a custom engine with layout {} would reach {:.2f} tokens/s per GPU ({:.2f}x "
        "this plan, under {}'s scheduler; l2s plan --engine ideal plans the paper's ideal "
        "engine)\n",
        ToText(o.ideal), o.ideal_eval.tokens_per_s_per_gpu,
        o.ideal_eval.tokens_per_s_per_gpu / o.recommended_eval.tokens_per_s_per_gpu,
        engine::EngineTitle(o.engine));
  return out;
}

// Who found the plan, in words ("the Megatron heuristic").
std::string FoundByWords(const std::string& found_by) {
  if (found_by == "oracle") return "the oracle";
  if (found_by == "megatron") return "the Megatron heuristic";
  if (found_by == "default") return "the default layout";
  if (found_by == "expressible_scan") return "the engine-expressible scan";
  if (found_by == "engine_repair") return "an engine's repair of the best plan";
  return "the search";
}

std::string Ratio(double a, double b) { return b > 0 ? fmt::format("{:.2f}x", a / b) : "-"; }

// A command's extra file (TensorRT-LLM's YAML), indented under it.
void PrintExtraFile(const launch::LaunchCommand& c) {
  if (c.extra_file_name.empty()) return;
  fmt::print("    {}:\n", c.extra_file_name);
  const std::string& yaml = c.extra_file;
  for (size_t pos = 0, nl; pos < yaml.size(); pos = nl + 1) {
    nl = yaml.find('\n', pos);
    fmt::print("      {}\n", yaml.substr(pos, nl - pos));
    if (nl == std::string::npos) break;
  }
}

// A command with its extra file and notes.
void PrintCommand(const launch::LaunchCommand& c, std::string_view label) {
  fmt::print("    {} {}\n", label, c.command);
  PrintExtraFile(c);
  for (const std::string& n : c.notes) fmt::print("    note: {}\n", n);
}

// The Engines table's found row of `e` when `e` is not the plan's engine (nullptr otherwise, and
// when there is no table: an --engine plan).
const plan::EnginePlan* OwnPlanOf(const PlanOutcome& o, launch::Engine e) {
  for (const plan::EnginePlan& row : o.engines)
    if (row.found && row.id != o.engine && !row.command.command.empty() &&
        launch::WorkersOf(engine::EngineName(row.id)) == e)
      return &row;
  return nullptr;
}

void PrintPlan(const PlanOutcome& o) {
  const Simulator& sim = *o.sim;
  const Problem& p = sim.problem();
  const SearchResult& r = o.main.result;
  fmt::print("l2s plan: {}\n", ProblemSummary(o.Deployment()));
  if (o.searcher == "oracle")  // exact, not limited by --budget
    fmt::print("search oracle{}: {} simulator calls in {:.1f} s{}{}\n\n",
               o.engine != engine::EngineId::kIdeal
                   ? fmt::format(" ({}'s space, solved within the oracle's work bound)",
                                 engine::EngineTitle(o.engine))
                   : "",
               r.calls, r.wall_s, r.note.empty() ? "" : " - ", r.note);
  else
    fmt::print("search {}, seed {}: {} of {} simulator calls in {:.1f} s{}{}\n\n", o.searcher,
               o.seed, r.calls, o.budget, r.wall_s, r.note.empty() ? "" : " - ", r.note);
  if (o.interrupted) fmt::print("INTERRUPTED: showing the best plan found so far\n\n");
  fmt::print("{}", ReplicaSizingText(o.replicas));
  if (!o.warning.empty()) fmt::print("WARNING: {}\n\n", o.warning);
  if (!o.have_recommended) {
    fmt::print("no valid strategy found before the interruption\n");
    return;
  }
  const Strategy& s = o.recommended;
  const Evaluation& e = o.recommended_eval;
  fmt::print("Best strategy (found by {})\n  {}\n",
             o.recommended_source == "search" ? fmt::format("the {} searcher", o.searcher)
                                              : FoundByWords(o.recommended_source),
             ToText(s));
  fmt::print("  degrees    pp {} x tp {} x dp {} = {} GPUs; {} stage{} of {} GPUs", s.pp, s.tp,
             s.dp, s.gpus(), s.pp, s.pp == 1 ? "" : "s", s.tp * s.dp);
  if (p.model.is_moe()) fmt::print("; experts: ep {} x expert-TP {}", s.ep, s.etp());
  fmt::print("\n  batch      {} sequences per attention-dp rank per microbatch ({} in flight in all)\n",
             e.batch, Thousands(static_cast<double>(e.batch) * s.dp * s.pp));
  if (o.refined_from > 0) {
    fmt::print("             refined from {} ({:.2f} tokens/s per GPU there): the largest batch "
               "within memory{} and the batch limits (the space's batches are powers of two)\n",
               o.refined_from, o.unrefined_value,
               p.workload.ttft_ms > 0 || p.workload.tpot_ms > 0 ? ", the SLOs" : "");
    // A strategy the run evaluated but did not return: its own best was above it on the grid.
    const Run* by = RunOf(o, o.recommended_source);
    if (by != nullptr && by->result.found && o.unrefined_value < Value(*by) * (1 - 1e-12))
      fmt::print("             (on the space's batches {} ranked it below its best, {:.2f}; "
                 "refined, it is above)\n",
                 FoundByWords(o.recommended_source), Value(*by));
  }
  fmt::print("  sp         {}\n", s.sp && s.tp > 1 ? "on: residual stream split on tokens over the tp group"
                                    : s.sp ? "on, but tp = 1: no effect"
                                           : "off: residual stream replicated over the tp group");
  if (p.model.mtp_layers > 0 && p.workload.mode != Mode::kPrefill)
    fmt::print("  mtp        {}\n",
               s.mtp > 0 ? fmt::format("{} speculative token{} per step drafted by the MTP module, "
                                       "{:.2f} tokens emitted per step",
                                       s.mtp, s.mtp == 1 ? "" : "s", e.accept)
                         : std::string("off: no speculative decoding"));
  fmt::print("  operators\n");
  for (const OpChoice& c : o.ops) fmt::print("    {}\n", OpChoiceLine(c));
  for (const std::string& n : StrategyNotes(p.model, s)) fmt::print("  note: {}\n", n);

  fmt::print("\nPerformance (simulated)\n");
  if (o.replicas.active)
    fmt::print("  throughput {:.2f} tokens/s per GPU, {} tokens/s per instance, {} over the {} "
               "instances\n",
               e.tokens_per_s_per_gpu, Thousands(e.tokens_per_s),
               Thousands(e.tokens_per_s * o.Replicas()), o.Replicas());
  else
    fmt::print("  throughput {:.2f} tokens/s per GPU, {} tokens/s in total\n", e.tokens_per_s_per_gpu,
               Thousands(e.tokens_per_s));
  const Mode mode = p.workload.mode;
  fmt::print("  latency    TTFT {}  TPOT {}\n",
             mode == Mode::kDecode ? std::string("n/a (decode)") : TtftText(*o.sim, e.ttft_s, 1),
             mode == Mode::kPrefill ? std::string("n/a (prefill)") : fmt::format("{:.2f} ms", e.tpot_s * 1e3));
  {
    const std::string cost = CostLine(plan::CostOf(e.tokens_per_s_per_gpu, p.workload,
                                                   o.Deployment().cluster,
                                                   o.Deployment().cluster.num_gpus));
    if (!cost.empty()) fmt::print("  cost       {}\n", cost);
  }
  fmt::print("  memory     {:.1f} of {:.1f} GiB per GPU: weights {:.1f}, KV cache {:.1f}, {}"
             "activations {:.1f}, runtime reserve {:.1f}\n",
             e.mem_bytes / kGiB, e.mem_capacity_bytes / kGiB, e.weight_bytes / kGiB,
             e.kv_bytes / kGiB,
             e.state_bytes > 0 ? fmt::format("recurrent state {:.1f}, ", e.state_bytes / kGiB)
                               : std::string(),
             e.act_bytes / kGiB, e.reserve_bytes / kGiB);
  fmt::print("\nError band\n");
  for (const std::string& line :
       plan::UncertaintyLines(plan::UncertaintyOf(p, s, /*disaggregated=*/false, s.pp)))
    fmt::print("  {}\n", line);
  fmt::print("\nWhere the time goes\n{}", FormatBreakdown(e));
  const std::string why = WhySentence(sim, s, e);
  if (!why.empty()) fmt::print("  {}\n", why);

  fmt::print("\nOn the same problem\n");
  fmt::print("  {:<22} {:>14} {:>12}  {}\n", "", "tokens/s/GPU", "plan is", "strategy");
  fmt::print("  {:<22} {:>14.2f} {:>12}  {}\n",
             fmt::format("this plan ({})", o.recommended_source == "search" ? o.searcher
                                                                             : o.recommended_source),
             e.tokens_per_s_per_gpu, "", ShortText(p.model, s));
  const double best = e.tokens_per_s_per_gpu;
  if (o.recommended_source != "search" || o.refined_from > 0) {  // the searcher's own result
    if (o.main.result.found)
      fmt::print("  {:<22} {:>14.2f} {:>12}  {}\n", fmt::format("search {}", o.searcher),
                 Value(o.main), Ratio(best, Value(o.main)), ShortText(p.model, o.main.result.best));
    else
      fmt::print("  {:<22} {:>14} {:>12}  {}\n", fmt::format("search {}", o.searcher),
                 "none valid", "", "");
  }
  auto row = [&](const char* name, const Run& run) {
    if (!run.ran) return;
    if (!run.result.found) {
      fmt::print("  {:<22} {:>14} {:>12}  {}\n", name, "none valid", "", "");
      return;
    }
    fmt::print("  {:<22} {:>14.2f} {:>12}  {}\n", name, Value(run), Ratio(best, Value(run)),
               ShortText(p.model, run.result.best));
  };
  row("Megatron heuristic", o.megatron);
  row("default layout", o.def);
  if (o.oracle_status == "solved" && o.oracle.result.found) {
    fmt::print("  {:<22} {:>14.2f} {:>12}  {}\n", "oracle (optimum)", Value(o.oracle),
               fmt::format("{:.1f}%", 100.0 * best / Value(o.oracle)),
               ShortText(p.model, o.oracle.result.best));
    if (best > Value(o.oracle) * (1 + 1e-9)) {
      if (o.refined_from > 0)
        fmt::print("  note: the oracle's optimum is over the space's batch options (powers of two); "
                   "this plan's batch is between two of them\n");
      else
        fmt::print("  note: this plan beats the oracle, which should be exact: please report it\n");
    }
  } else if (o.oracle_status == "skipped") {
    fmt::print("  oracle: skipped - {}\n", o.oracle_hint);
  } else if (!o.oracle_hint.empty()) {
    fmt::print("  oracle: {}\n", o.oracle_hint);
  } else if (o.oracle_status == "solved") {
    fmt::print("  oracle: no valid strategy\n");
  }
  if (!o.megatron.ran && !o.def.ran && o.oracle_status == "not run")
    fmt::print("  (baselines not run: --no-baselines)\n");

  if (!o.have_launch) return;
  fmt::print("\nLaunch\n");
  if (const std::optional<launch::DynamoAggLaunch> d = DynamoLaunchOf(o)) {
    const EngineTranslation& t = *TranslationOf(o, d->backend);
    fmt::print("  NVIDIA Dynamo (workers: {}):\n", EngineTitle(d->backend));
    if (!d->runnable) {
      fmt::print("    {} cannot run this plan (below)\n", EngineTitle(d->backend));
    } else {
      fmt::print("    {}\n", t.unsupported.empty()
                                 ? std::string("expresses the plan exactly")
                                 : fmt::format("runs {}'s repair of the plan (below)",
                                               EngineTitle(d->backend)));
      fmt::print("    frontend x1: {}\n", d->frontend);
      fmt::print("    worker x{} ({} GPU{} each): {}\n", d->workers, d->gpus_per_worker,
                 d->gpus_per_worker == 1 ? "" : "s", d->worker.command);
      PrintExtraFile(d->worker);
      for (const std::string& n : d->notes) fmt::print("    note: {}\n", n);
      for (const std::string& n : d->worker.notes) fmt::print("    note: {}\n", n);
    }
  }
  if (o.replicas.active) {
    fmt::print("  {} replicas: run the command {} times, each on its own {} GPUs and port (--emit "
               "writes each node's script), behind a router:\n",
               o.Replicas(), o.Replicas(), p.cluster.num_gpus);
    for (const EngineTranslation& t : o.launch) {
      const std::string router = ReplicaRouterCommand(t.engine, o.Replicas());
      if (!router.empty()) fmt::print("    {}: {}\n", EngineTitle(t.engine), router);
    }
  }
  for (const EngineTranslation& t : o.launch) {
    // A tabulated engine other than the plan's: its own best plan (the Engines table's row), not
    // the plan above translated - what a user of that engine launches.
    if (const plan::EnginePlan* own = OwnPlanOf(o, t.engine)) {
      fmt::print("  {}: its own plan, its row in the Engines table below ({:.2f} tokens/s per GPU, {}):\n",
                 EngineTitle(t.engine), own->eval.tokens_per_s_per_gpu,
                 ShortText(p.model, own->best));
      PrintCommand(own->command, "command:");
      continue;
    }
    fmt::print("  {}:\n", EngineTitle(t.engine));
    if (t.unsupported.empty()) {
      fmt::print("    expresses the plan exactly\n");
    } else {
      fmt::print("    cannot express {} choice{} of the plan:\n", t.unsupported.size(),
                 t.unsupported.size() == 1 ? "" : "s");
      for (const std::string& u : t.unsupported) fmt::print("      - {}\n", u);
    }
    if (!t.command.command.empty()) {
      fmt::print("    {} {}\n", t.unsupported.empty() ? "command:" : "runs instead:", t.command.command);
      PrintExtraFile(t.command);
      if (!t.unsupported.empty())
        fmt::print("    simulated as run: {}\n",
                   t.runnable ? fmt::format("{:.2f} tokens/s per GPU ({} of the plan) with {}",
                                            t.launched_eval.tokens_per_s_per_gpu,
                                            Ratio(t.launched_eval.tokens_per_s_per_gpu, best),
                                            ShortText(p.model, t.launched))
                              : std::string("not valid (does not fit or breaks an SLO)"));
      if (t.other_scheduler && t.runnable) {
        if (t.own_eval.valid())
          fmt::print("    under {}'s own scheduler and limits: {:.2f} tokens/s per GPU, TTFT {:.1f} "
                     "ms, TPOT {:.2f} ms\n",
                     EngineTitle(t.engine), t.own_eval.tokens_per_s_per_gpu, t.own_eval.ttft_s * 1e3,
                     t.own_eval.tpot_s * 1e3);
        else
          fmt::print("    under {}'s own scheduler and limits: not valid ({}); --engine {} plans "
                     "for it\n",
                     EngineTitle(t.engine), t.own_reason, EngineName(t.engine));
      }
      for (const std::string& n : t.command.notes) fmt::print("    note: {}\n", n);
    }
    if (t.has_best && !(t.unsupported.empty() && t.best == t.launched))
      fmt::print("    best it can express as-is{}: {:.2f} tokens/s per GPU ({} of the plan): {}\n",
                 t.other_scheduler ? " (under the plan's scheduler)" : "",
                 t.best_eval.tokens_per_s_per_gpu, Ratio(t.best_eval.tokens_per_s_per_gpu, best),
                 t.best_command.command);
    else if (!t.has_best)
      fmt::print("    no strategy it can express is valid on this problem\n");
  }
}

// ---------------------------------------------------------------- disaggregated serving

int64_t OracleCalls(const PlanFlags& f) {
  return OracleCallsOf(f.oracle_calls, f.oracle_seconds);
}

// --serving: "agg", "disagg" or "auto" (the default in serve mode); only serve mode has a choice.
StatusOr<std::string> ResolveServing(const PlanFlags& f, Mode mode) {
  if (!f.serving.empty() && f.serving != "agg" && f.serving != "disagg" && f.serving != "auto")
    return Status::InvalidArgument(
        fmt::format("--serving must be agg, disagg or auto, got \"{}\"", f.serving));
  if (mode != Mode::kServe) {
    if (!f.serving.empty())
      return Status::InvalidArgument(fmt::format(
          "--serving {} applies to --mode serve only (got --mode {})", f.serving, ModeName(mode)));
    if (f.prefill_gpus > 0 || f.kv_layerwise)
      return Status::InvalidArgument(fmt::format(
          "{} applies to --mode serve only (got --mode {})",
          f.prefill_gpus > 0 ? "--prefill-gpus" : "--kv-layerwise", ModeName(mode)));
    return std::string("agg");
  }
  const std::string s = f.serving.empty() ? "auto" : f.serving;
  if (s == "agg" && (f.prefill_gpus > 0 || f.kv_layerwise))
    return Status::InvalidArgument(fmt::format(
        "{} describes a disaggregated deployment: use --serving disagg or auto",
        f.prefill_gpus > 0 ? "--prefill-gpus" : "--kv-layerwise"));
  return s;
}

// Disaggregated serving needs an engine whose prefill/decode deployment l2s launches
// (engine::Capabilities::disaggregation: not ATOM's or Megatron-LM's). With --serving disagg such
// an engine is an error; with auto the plan is aggregated and a warning says why.
Status CheckEngineServing(const PlanFlags& f, std::string* serving) {
  const engine::EngineId id = LaunchEngineOf(f.problem);
  const Status disagg = engine::CheckDisaggregation(id);
  if (*serving == "agg" || disagg.ok()) return Status::Ok();
  const std::string title(engine::EngineTitle(id));
  if (*serving == "disagg") return Status::InvalidArgument("--serving disagg: " + disagg.message());
  Warn(fmt::format("{} plans are aggregated: l2s launches no disaggregated {} deployment "
                   "(--serving agg says so; another --engine plans disaggregated pools)",
                   title, title));
  *serving = "agg";
  return Status::Ok();
}

DisaggPlanRequest MakeDisaggRequest(const PlanFlags& f) {
  DisaggPlanRequest r;
  r.search = f.search;
  r.budget = f.budget;
  r.seed = static_cast<uint64_t>(f.seed);
  r.oracle_calls = OracleCalls(f);
  r.no_baselines = f.no_baselines;
  r.prefill_gpus = f.prefill_gpus;
  r.layerwise = f.kv_layerwise;
  r.mtp = f.problem.mtp;
  r.engine = LaunchEngineOf(f.problem);
  return r;
}

// --emit DIR (launch/emit.h): writes the plan's launch files and returns the line saying where
// they went; "" without --emit.
// The servers share nodes when the plan's pools share its cluster, or split one node
// (--prefill-gpus on a cluster of one host): its KV was priced so.
StatusOr<std::string> EmitDisagg(const PlanFlags& f, const DisaggPlan& d,
                                 const StatusOr<std::vector<launch::DisaggLaunch>>& launches) {
  if (f.emit.empty()) return std::string();
  if (!launches.ok()) return Status::InvalidArgument("--emit: " + launches.status().message());
  launch::EmitOptions opt;
  opt.model_id = f.model_id;
  const DisaggSetup& setup = d.models.at(static_cast<size_t>(d.best.model))->setup();
  opt.shared_nodes = setup.shared || (f.prefill_gpus > 0 && setup.serve.cluster.num_gpus <=
                                                                HostGpus(setup.serve.cluster));
  return launch::EmitDisaggregatedPlan(f.emit, *launches,
                                       launch::DisaggEngineOf(LaunchEngineOf(f.problem)), opt);
}
StatusOr<std::string> EmitAgg(const PlanFlags& f, const Problem& p, const PlanOutcome& o) {
  if (f.emit.empty()) return std::string();
  launch::EmitOptions opt;
  opt.model_id = f.model_id;
  opt.replicas = o.Replicas();
  const engine::Capabilities& c = engine::CapabilitiesOf(o.engine);
  opt.dynamo = c.workers != c.id;  // a Dynamo variant: its workers behind its frontend
  return launch::EmitAggregatedPlan(f.emit, p, o.launch, launch::WorkersOf(f.problem.engine), opt);
}

int Emit(const PlanFlags& f, const json& j, const std::string& text, bool interrupted) {
  if (!f.out.empty())
    if (Status st = WriteFileAtomic(f.out, DumpJson(j) + "\n"); !st.ok())
      return Fail(Status::IoError("--out " + st.message()));
  if (f.json) fmt::print("{}\n", DumpJson(j));
  else fmt::print("{}", text);
  return interrupted ? InterruptExitCode() : kExitOk;
}

json DisaggHeaderJson(const PlanFlags& f, const Problem& p, const DisaggPlan& d) {
  json j;
  j["problem"] = ProblemJson(p);
  j["serving"] = f.serving.empty() ? "auto" : f.serving;
  j["searcher"] = f.search;
  j["seed"] = f.seed;
  j["budget"] = f.budget;
  j["interrupted"] = d.interrupted;
  return j;
}

// No --engine: the disaggregated pools are planned for the engine whose aggregated plan is the
// fastest (the engines' table), one line saying so.
std::string ChosenEngineLine(const PlanFlags& f, const Problem& p) {
  // Engines of the table whose disaggregated deployment l2s does not launch (ATOM) were not
  // candidates for the pools: say so.
  std::string with, without;
  for (engine::EngineId id : plan::TabulatedEngines(p.cluster)) {
    std::string& list = engine::CapabilitiesOf(id).disaggregation ? with : without;
    list += (list.empty() ? "" : ", ") + std::string(engine::EngineTitle(id));
  }
  if (without.empty())
    return fmt::format(
        "  engine   {}, the fastest in the aggregated plans of {} "
        "(--engine E plans another; --engine ideal the unrestricted pools)\n",
        engine::EngineTitle(LaunchEngineOf(f.problem)), plan::TabulatedTitles(p.cluster));
  return fmt::format(
      "  engine   {}: of the engines that launch disaggregated pools ({}; not {}), the one whose "
      "aggregated plan is the fastest (--engine E plans another; --engine ideal the unrestricted "
      "pools)\n",
      engine::EngineTitle(LaunchEngineOf(f.problem)), with, without);
}

int RunDisaggOnly(const PlanFlags& f, const Problem& p, std::chrono::steady_clock::time_point t0,
                  const ClusterPools* pools = nullptr, bool engine_chosen = false,
                  const TrafficPlan* traffic = nullptr) {
  InstallSigintHandler();
  DisaggPlanRequest req = MakeDisaggRequest(f);
  req.pools = pools;
  StatusOr<DisaggPlan> d = PlanDisaggregated(p, req);
  if (!d.ok()) return Fail(d.status());
  if (traffic != nullptr && traffic->active && !d->interrupted) {  // cli/plan_traffic.h
    json j = DisaggHeaderJson(f, p, *d);
    j["best"] = DisaggBestJson(*d);
    return FinishTrafficPlanDisagg(*traffic, p, *d, j, f.json, f.out);
  }
  if (d->found) Warn(NoSloWarning(p, d->eval.ttft_s, d->eval.tpot_s));
  json j = DisaggHeaderJson(f, p, *d);
  j["best"] = DisaggBestJson(*d);
  j["baselines"] = {{"aggregated", json()}};
  StatusOr<std::vector<launch::DisaggLaunch>> launches = DisaggLaunches(*d);
  j["launch"] = launches.ok() ? DisaggLaunchJson(*launches) : json();
  j["total_wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string text = fmt::format("l2s plan: {}, disaggregated serving\n\n", ProblemSummary(p));
  if (pools != nullptr) {
    j["problem"]["pools"] = json::array();
    text = fmt::format("l2s plan: {}, disaggregated serving on {} GPU pools:", ProblemSummary(p),
                       pools->pools.size());
    for (const ClusterSpec& c : pools->pools) {
      j["problem"]["pools"].push_back({{"name", c.name}, {"gpu", c.gpu.name}, {"gpus", c.num_gpus}});
      text += fmt::format(" {} ({} x {})", c.name, c.num_gpus, c.gpu.name);
    }
    j["problem"]["gpus"] = pools->total_gpus();
    text += fmt::format(", KV link {:.0f} GB/s per GPU between pools\n", pools->link_bw / 1e9);
    text += "(the aggregated plan needs one GPU type: not searched)\n\n";
  }
  text += FormatDisaggPlan(p, *d, f.search);
  if (engine_chosen) {
    j["best"]["engine_chosen_by"] = "fastest_aggregated";
    text += ChosenEngineLine(f, p);
  }
  if (launches.ok()) text += FormatDisaggLaunch(*launches);
  StatusOr<std::string> emitted = EmitDisagg(f, *d, launches);
  if (!emitted.ok()) return Fail(emitted.status());
  if (!emitted->empty()) text += "\n" + *emitted + "\n";
  return Emit(f, j, text, d->interrupted);
}

json AggSummaryJson(const PlanOutcome& o) {
  if (!o.have_recommended) return json();
  json b = StrategyEvalJson(o.recommended, o.recommended_eval);
  b["ttft_ms"] = o.recommended_eval.ttft_s * 1e3;
  b["tpot_ms"] = o.recommended_eval.tpot_s * 1e3;
  b["found_by"] = o.recommended_source;
  b["instances"] = o.Replicas();
  b["gpus_per_instance"] = o.sim->problem().cluster.num_gpus;
  return b;
}

// --serving auto: the aggregated plan `o` is done; search the disaggregated one and return the
// better, the other beside it.
int FinishAuto(const PlanFlags& f, const PlanOutcome& o, const std::string& agg_failure,
               std::chrono::steady_clock::time_point t0) {
  const Problem& p = o.Deployment();  // the disaggregated pools share every GPU
  StatusOr<DisaggPlan> d = PlanDisaggregated(p, MakeDisaggRequest(f));
  if (!d.ok() && !o.have_recommended) {
    // A TTFT limit below the engine's request overhead fails both the same way: say it once.
    if (std::string below = Simulator::TtftBelowRequestOverhead(p.workload); !below.empty())
      return Fail(Status::Invalid(below));
    return Fail(Status::Invalid(fmt::format("aggregated: {}; disaggregated: {}", agg_failure,
                                            d.status().message())));
  }
  const bool disagg_best =
      d.ok() && d->found &&
      (!o.have_recommended || d->eval.tokens_per_s_per_gpu > o.recommended_eval.tokens_per_s_per_gpu);
  if (disagg_best || o.have_recommended)
    Warn(disagg_best ? NoSloWarning(p, d->eval.ttft_s, d->eval.tpot_s)
                     : NoSloWarning(p, o.recommended_eval.ttft_s, o.recommended_eval.tpot_s));
  json j = PlanJson(o);
  j["serving"] = "auto";
  std::string text;
  const double agg_v = o.have_recommended ? o.recommended_eval.tokens_per_s_per_gpu : 0.0;
  if (disagg_best) {
    json launch = j["launch"];
    j["best"] = DisaggBestJson(*d);
    j["baselines"]["aggregated"] = AggSummaryJson(o);
    // "launch" translates the recommended (disaggregated) plan; the aggregated plan's commands
    // stay beside it.
    StatusOr<std::vector<launch::DisaggLaunch>> launches = DisaggLaunches(*d);
    j["launch"] = launches.ok() ? DisaggLaunchJson(*launches) : json();
    j["launch_aggregated"] = launch;
    text = fmt::format("l2s plan: {}, serving auto: disaggregated wins\n\n", ProblemSummary(p));
    text += FormatDisaggPlan(p, *d, f.search);
    if (o.engine_chosen) {
      j["best"]["engine_chosen_by"] = "fastest_aggregated";
      text += ChosenEngineLine(f, p);
    }
    const std::string over =
        o.replicas.active ? fmt::format("{} instances x {} GPUs", o.Replicas(),
                                        o.sim->problem().cluster.num_gpus)
                          : std::string("over all GPUs");
    text += o.engine == engine::EngineId::kIdeal
                ? fmt::format("\nAggregated (the unrestricted plan, {})\n", over)
                : fmt::format("\nAggregated ({}, {})\n", engine::EngineTitle(o.engine), over);
    text += o.have_recommended
                ? fmt::format("  {:.2f} tokens/s per GPU, TTFT {:.1f} ms, TPOT {:.2f} ms: {}\n"
                              "  disaggregated is {:.2f}x the aggregated plan\n",
                              agg_v, o.recommended_eval.ttft_s * 1e3,
                              o.recommended_eval.tpot_s * 1e3, ToText(o.recommended),
                              d->eval.tokens_per_s_per_gpu / agg_v)
                : fmt::format("  no valid plan: {}\n", agg_failure);
    // How the aggregated plan was sized into instances (cli/plan_replicas.h).
    const std::string sizing = ReplicaSizingText(o.replicas);
    for (size_t at = 0, nl; at + 1 < sizing.size(); at = nl + 1) {  // indented, no blank line
      nl = sizing.find('\n', at);
      text += "  " + sizing.substr(at, nl - at + 1);
    }
    if (launches.ok()) text += FormatDisaggLaunch(*launches);
    StatusOr<std::string> emitted = EmitDisagg(f, *d, launches);
    if (!emitted.ok()) return Fail(emitted.status());
    if (!emitted->empty()) text += "\n" + *emitted + "\n";
  } else {
    j["best"]["serving"] = "agg";
    StatusOr<std::string> agg_emitted = EmitAgg(f, p, o);
    if (!agg_emitted.ok()) return Fail(agg_emitted.status());
    const std::string emitted = agg_emitted->empty() ? "" : "\n" + *agg_emitted + "\n";
    j["baselines"]["disaggregated"] = d.ok() ? DisaggBestJson(*d) : json();
    if (!d.ok()) j["baselines"]["disaggregated_error"] = d.status().message();
    if (!f.json) {
      PrintPlan(o);
      fmt::print("{}", EnginesText(o));
    }
    text = "\nServing auto: the aggregated plan above beats the disaggregated one below\n";
    if (d.ok()) {
      text += FormatDisaggPlan(p, *d, f.search);
      if (d->found && agg_v > 0)
        text += fmt::format("  disaggregated is {:.2f}x the aggregated plan\n",
                            d->eval.tokens_per_s_per_gpu / agg_v);
    } else {
      text += fmt::format("  not available: {}\n", d.status().message());
    }
    text += emitted;
  }
  j["total_wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return Emit(f, j, text, o.interrupted || (d.ok() && d->interrupted));
}

// The plan's own flags, before any search: budget, seed, --instance-gpus' company, --out and
// --emit writable (and --out not an input).
Status CheckPlanFlags(const PlanFlags& f) {
  if (f.budget <= 0)
    return Status::InvalidArgument(
        fmt::format("--budget must be a positive number of simulator calls, got {}", f.budget));
  if (f.seed < 0) return Status::InvalidArgument(fmt::format("--seed must be >= 0, got {}", f.seed));
  // --instance-gpus sizes the aggregated plan's replicas (cli/plan_replicas.h): not the pools of
  // a disaggregated plan or the sweep's frontier.
  if (f.instance_gpus > 0) {
    const char* other = f.pareto                 ? "--pareto"
                        : f.serving == "disagg"  ? "--serving disagg (its pools size their own "
                                                   "instances)"
                        : !f.problem.cluster.empty() && IsClusterPoolsFile(f.problem.cluster)
                            ? "a cluster of GPU pools"
                            : nullptr;
    if (other != nullptr)
      return Status::InvalidArgument(fmt::format(
          "--instance-gpus sizes an aggregated plan's replicas: not with {}", other));
  }
  // An --out that cannot be written, or that is an input, is found before the search.
  if (!f.out.empty()) {
    if (Status st = CheckWritable("--out", f.out); !st.ok()) return st;
    if (Status st = CheckNotAnInput("--out", f.out, {{"--model", f.problem.model},
                                                     {"--cluster", f.problem.cluster}});
        !st.ok())
      return st;
  }
  if (!f.emit.empty()) return launch::CheckEmitDir(f.emit);
  return Status::Ok();
}

// A cluster file with several GPU pools: only a disaggregated serve plan can use it.
int RunPoolsPlan(const PlanFlags& f, std::chrono::steady_clock::time_point t0,
                 const TrafficPlan& traffic) {
  StatusOr<ClusterPools> pools = LoadClusterPools(f.problem.cluster);
  if (!pools.ok()) return Fail(Status::InvalidArgument("--cluster " + pools.status().message()));
  if (f.problem.gpus > 0 || f.problem.nodes > 0)
    return Fail(fmt::format("--cluster {} declares GPU pools: --gpus/--nodes cannot resize it",
                            f.problem.cluster));
  if (f.serving == "agg")
    return Fail(fmt::format("--cluster {} mixes GPU pools: --serving agg needs one GPU type "
                            "(use disagg or auto)",
                            f.problem.cluster));
  ProblemFlags pf = f.problem;  // the workload flags, on the first pool's GPUs
  pf.cluster.clear();
  pf.gpu = GpuPreset(pools->pools[0].gpu.name).ok() ? pools->pools[0].gpu.name : kDefaultGpu;
  pf.gpus = pools->pools[0].num_gpus;
  StatusOr<Problem> problem = BuildProblem(pf);
  if (!problem.ok()) return Fail(problem.status());
  problem->cluster = pools->pools[0];
  StatusOr<std::string> serving = ResolveServing(f, problem->workload.mode);
  if (!serving.ok()) return Fail(serving.status());
  if (Status d = engine::CheckDisaggregation(LaunchEngineOf(f.problem)); !d.ok())
    return Fail(Status::InvalidArgument(
        fmt::format("--cluster {} mixes GPU pools, which only a disaggregated plan uses: {}",
                    f.problem.cluster, d.message())));
  return RunDisaggOnly(f, *problem, t0, &*pools, false, &traffic);
}

// `plan --pareto`: the frontier's series (cli/pareto_report.h), the disaggregated one too when
// the serving mode allows it.
int RunPareto(const PlanFlags& f, const Problem& problem, const std::string& serving) {
  ParetoPlanArgs a;
  a.search = f.search;
  a.budget = f.budget;
  a.seed = static_cast<uint64_t>(f.seed);
  a.oracle_calls = OracleCalls(f);
  a.json = f.json;
  a.out = f.out;
  a.mtp = f.problem.mtp;
  a.engine = f.problem.engine;
  a.progress = CliProgress();
  a.svg = f.svg;
  a.log_x = f.x_scale == "log";
  a.log_y = f.y_scale == "log";
  if (a.svg != "none")
    for (Status st : {CheckWritable("--svg", a.svg),
                      CheckNotAnInput("--svg", a.svg, {{"--model", f.problem.model},
                                                       {"--cluster", f.problem.cluster}})})
      if (!st.ok()) return Fail(st);
  if (problem.workload.mode == Mode::kServe && serving != "agg") {
    // The disaggregated series: the joint plan (search + oracle, as --serving disagg) under each
    // TPOT limit of the aggregated grid.
    const Problem base = problem;
    const DisaggPlanRequest req = MakeDisaggRequest(f);
    a.more_series = [base, req](const std::vector<double>& limits, Observer*) {
      return std::vector<ParetoSeries>{plan::DisaggregatedParetoSeries(base, req, limits, CliProgress())};
    };
  }
  return RunParetoPlan(problem, a);
}

// What the plan runs on. No --engine: plan what each serving engine launches (the table), and
// plan the fastest of them as `--engine E` would (its launchable plan is the headline, the
// unrestricted one its headroom); `--engine ideal` is the paper's unrestricted plan. Aggregated
// replicas (cli/plan_replicas.h): an MoE model's aggregated plan is sized into independent
// instances, each size planned as below; the rest of the plan runs on one instance of the chosen
// size (with a traffic, the traffic is routed over the instances). Not for the disaggregated
// plan: its pools size their own instances. Sets f->problem.engine to the chosen engine.
struct PlanTarget {
  Problem problem;     // one instance's (every GPU without replicas), under the engine
  Problem deployment;  // every GPU
  ReplicaSizing replicas;
  std::vector<plan::EnginePlan> table;  // no --engine: the engines' table
  bool engine_chosen = false;           // the engine is the table's fastest
};
StatusOr<PlanTarget> ChoosePlanTarget(PlanFlags* f, const Problem& full, std::string* serving,
                                      const plan::AggRequest& req) {
  PlanTarget t;
  ReplicaSizing& replicas = t.replicas;
  if (*serving != "disagg") {
    StatusOr<ReplicaSizing> r =
        SizeReplicas(full, LaunchEngineOf(f->problem), f->problem.engine.empty(),
                     f->instance_gpus, req, f->problem.mtp, CliProgress());
    if (r.ok()) replicas = std::move(*r);
    else if (r.status().code() != Status::Code::kCancelled) return r.status();
  }
  // The problem on every GPU (with the engine once chosen) and, with replicas, one instance's.
  auto on_instance = [&replicas](Problem all) {
    return replicas.active ? plan::InstanceProblem(all, replicas.choice.gpus_per_instance) : all;
  };
  t.deployment = full;
  t.problem = on_instance(t.deployment);
  if (f->problem.engine.empty()) {
    StatusOr<plan::EngineTable> et =
        replicas.table ? StatusOr<plan::EngineTable>(std::move(*replicas.table))
                       : plan::PlanEngines(t.problem, req, f->problem.mtp, CliProgress());
    replicas.table.reset();
    if (!et.ok()) return et.status();
    t.table = std::move(et->rows);
    // --serving disagg: the fastest engine whose disaggregated deployment l2s launches.
    const int fastest = *serving == "disagg" ? plan::FastestPlan(t.table, true) : et->fastest;
    if (fastest >= 0 && !et->interrupted && !InterruptRequested()) {
      f->problem.engine = std::string(engine::EngineName(t.table[fastest].id));
      StatusOr<Problem> problem = BuildProblem(f->problem);
      if (problem.ok()) {
        t.deployment = *problem;
        t.problem = on_instance(t.deployment);
      } else if (replicas.active) {
        // A single-node engine (ATOM) runs replicas of one node on a larger cluster: its problem
        // is built on the instance (the cluster check is the engine's), the deployment is the
        // instances on every GPU.
        ProblemFlags one = f->problem;
        one.gpus = replicas.choice.gpus_per_instance;
        one.nodes = 0;
        problem = BuildProblem(one);
        if (!problem.ok()) return problem.status();
        t.problem = *problem;
        t.deployment = *problem;
        t.deployment.cluster = full.cluster;
      } else {
        return problem.status();
      }
      t.engine_chosen = true;
      if (Status st = CheckEngineServing(*f, serving); !st.ok()) return st;
    }
  }
  return t;
}

int RunPlan(PlanFlags f, const CLI::App& cmd) {
  if (Status st = CheckGivenCounts(cmd, f.problem); !st.ok()) return Fail(st);
  StatusOr<TrafficPlan> traffic = PrepareTrafficPlan(
      &f.problem, f.traffic, static_cast<uint64_t>(f.seed), f.pareto, &f.serving);
  if (!traffic.ok()) return Fail(traffic.status());
  const auto t0 = std::chrono::steady_clock::now();
  if (f.pareto && f.problem.mode.empty()) f.problem.mode = "serve";  // the frontier's mode
  ApplyPlanDefaults(&f.problem);
  f.problem.instance_gpus = f.instance_gpus;  // a single-node engine's instances (ApplyEngineFlags)
  if (Status st = CheckPlanFlags(f); !st.ok()) return Fail(st);
  if (!f.problem.cluster.empty() && IsClusterPoolsFile(f.problem.cluster))
    return RunPoolsPlan(f, t0, *traffic);
  StatusOr<Problem> problem = BuildProblem(f.problem);
  if (!problem.ok()) return Fail(problem.status());
  StatusOr<std::string> serving = ResolveServing(f, problem->workload.mode);
  if (!serving.ok()) return Fail(serving.status());
  if (Status st = CheckEngineServing(f, &*serving); !st.ok()) return Fail(st);
  if (f.pareto) return RunPareto(f, *problem, *serving);
  InstallSigintHandler();
  plan::AggRequest req;
  req.search = f.search;
  req.budget = f.budget;
  req.seed = static_cast<uint64_t>(f.seed);
  req.no_baselines = f.no_baselines;
  req.oracle_calls = OracleCalls(f);
  StatusOr<PlanTarget> target = ChoosePlanTarget(&f, *problem, &*serving, req);
  if (!target.ok()) return Fail(target.status());
  ReplicaSizing replicas = std::move(target->replicas);
  std::vector<plan::EnginePlan> table = std::move(target->table);
  const bool engine_chosen = target->engine_chosen;
  Problem deployment = std::move(target->deployment);
  problem = std::move(target->problem);
  if (*serving == "disagg")
    return RunDisaggOnly(f, *problem, t0, nullptr, engine_chosen, &*traffic);
  const Simulator sim(std::move(*problem));
  const Problem& p = sim.problem();
  StatusOr<StrategySpace> space =
      StrategySpace::Make(p.model, p.cluster.num_gpus, PlanSpaceOptions(p, f.problem.mtp));
  if (!space.ok()) return Fail(space.status());
  // --engine E: the plan searches E's restricted space and recommends only what E launches; the
  // unrestricted plan on the same problem is the headroom beside it (plan::PlanOnEngine). E's
  // plan is the table's row when the engine was chosen from the table, or the replica sizing's.
  const engine::EngineId eid = LaunchEngineOf(f.problem);
  std::optional<plan::EnginePlan> given;
  for (plan::EnginePlan& e : table)
    if (engine_chosen && e.id == eid) given = e;
  if (!given && replicas.engine_plan) given = std::move(*replicas.engine_plan);
  StatusOr<plan::EngineAggPlan> planned =
      plan::PlanOnEngine(sim, *space, eid, std::move(given), req, f.problem.mtp, CliProgress());
  if (!planned.ok()) return Fail(planned.status());
  std::optional<AggPlan> ideal = std::move(planned->ideal);
  // "oracle" where the engine's space is solved exactly
  const std::string searcher_used = planned->exact ? "oracle" : f.search;
  PlanOutcome o;
  static_cast<AggPlan&>(o) = std::move(planned->plan);
  o.engine = eid;
  // The engine portfolio's oracle ran as the searcher: say who found the plan as such.
  if (searcher_used == "oracle" && f.search != "oracle" && o.recommended_source == "search")
    o.recommended_source = "oracle";
  o.interrupted = o.interrupted || InterruptRequested();
  if (ideal && ideal->have_recommended) {
    o.have_ideal = true;
    o.ideal = ideal->recommended;
    o.ideal_eval = ideal->recommended_eval;
    o.ideal_source = ideal->recommended_source;
  }
  // The plan's figures under --engine E are E's (its fitted factor is in the problem's workload,
  // Workload::engine_factor: the same price as `l2s eval --engine E` of the plan's strategy).
  o.engines = std::move(table);
  o.engine_chosen = engine_chosen;
  o.sim = &sim;
  o.replicas = std::move(replicas);
  o.deployment = std::move(deployment);
  o.searcher = searcher_used;
  o.requested_searcher = f.search;
  o.seed = f.seed;
  o.budget = f.budget;
  const std::string spec_name = ParseSearcherSpec(f.search)->name;
  if (!f.no_baselines && req.oracle_calls == 0 && spec_name != "oracle")
    o.oracle_hint = "not run (--oracle-calls 0)";
  if (o.oracle_status == "skipped")
    o.oracle_hint = fmt::format(
        "{} after {} of its simulator calls (--oracle-calls {}); run it alone with: l2s plan{}{} "
        "--search oracle",
        o.interrupted ? "interrupted" : "did not finish", o.oracle.result.calls, req.oracle_calls,
        ProblemFlagsText(f.problem),
        o.replicas.active ? fmt::format(" --instance-gpus {}", p.cluster.num_gpus) : "");
  // (Not when the oracle ran as the searcher: its optimum is over the space's batches, and the
  // plan's refined batch is said where the batch is.)
  if (o.have_recommended && o.recommended_source != "search" && searcher_used != "oracle") {
    const std::string by = FoundByWords(o.recommended_source);
    const std::string refined =
        o.refined_from > 0 ? fmt::format(", its batch refined from {}", o.refined_from) : "";
    o.warning = o.main.result.found
                    ? fmt::format("the {} searcher's best ({:.2f} tokens/s per GPU) is below {}'s "
                                  "({:.2f}{}); the plan is that strategy",
                                  o.searcher, Value(o.main), by,
                                  o.recommended_eval.tokens_per_s_per_gpu, refined)
                    : fmt::format("the {} searcher found no valid strategy; the plan is {}'s best",
                                  o.searcher, by);
  }
  std::string agg_failure;  // auto: the aggregated plan failed, the disaggregated one may not
  if (!o.have_recommended && !o.interrupted) {
    if (*serving != "auto") return Fail(Status::Invalid(o.failures.Reason(p)));
    agg_failure = o.failures.Reason(p);
  }

  if (o.have_recommended) o.ops = DescribeOps(sim, o.recommended, o.recommended_eval.batch);
  o.total_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  if (traffic->active && !o.interrupted) {
    std::function<bool(const Strategy&)> admissible;
    if (eid != engine::EngineId::kIdeal)
      admissible = [eid, &p](const Strategy& s) {
        return engine::Launchable(engine::CapabilitiesOf(eid), p.model, s);
      };
    return FinishTrafficPlan(*traffic, sim, o, admissible, 0, o.Replicas(), f.problem.engine,
                             o.Deployment(), PlanJson(o), f.json, f.out);
  }
  if (*serving == "auto" && !o.interrupted) return FinishAuto(f, o, agg_failure, t0);
  if (o.have_recommended)
    Warn(NoSloWarning(p, o.recommended_eval.ttft_s, o.recommended_eval.tpot_s));
  const json j = PlanJson(o);
  // The file first: a reader of stdout that goes away (`| head`) must not cost the result.
  if (!f.out.empty())
    if (Status st = WriteFileAtomic(f.out, DumpJson(j) + "\n"); !st.ok())
      return Fail(Status::IoError("--out " + st.message()));
  StatusOr<std::string> agg_emitted = EmitAgg(f, p, o);
  if (!agg_emitted.ok()) return Fail(agg_emitted.status());
  const std::string& emitted = *agg_emitted;
  if (f.json) fmt::print("{}\n", DumpJson(j));
  else {
    PrintPlan(o);
    fmt::print("{}", EnginesText(o));
  }
  if (!emitted.empty()) fmt::print(f.json ? stderr : stdout, "\n{}\n", emitted);
  return o.interrupted ? InterruptExitCode() : kExitOk;
}

}  // namespace

Runner RegisterPlan(CLI::App& app) {
  auto f = std::make_shared<PlanFlags>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "search the best sharding strategy (default: gpt-moe-1.6t, decode at 16k context on "
              "1,024 H100s, rl, 4,000 calls) and show how to launch it");
  AddProblemFlags(cmd, &f->problem);
  cmd->add_option("--search", f->search,
                  "searcher spec: local, rl, sa, rw, ga, megatron, default or oracle, with "
                  "options as in \"rl(refine=0.25)\" (default local: iterated local search over "
                  "registered moves; rl is the paper's RL searcher)");
  cmd->add_option("--budget", f->budget, "simulator calls the searcher may use (default 4000)")
      ->check(CLI::Range(int64_t{1}, kMaxBudget));
  cmd->add_option("--seed", f->seed, "random seed (default 0)")->check(CLI::Range(int64_t{0}, kMaxSeed));
  cmd->add_flag("--json", f->json, "print the plan as JSON");
  cmd->add_option("--out", f->out, "also write the JSON plan to this file");
  cmd->add_flag("--no-baselines", f->no_baselines,
                "skip the Megatron heuristic, default layout and oracle comparisons");
  AddOracleFlags(cmd, &f->oracle_calls, &f->oracle_seconds, "skips it");
  cmd->add_option("--serving", f->serving,
                  "serve mode: agg (one engine), disagg (prefill and decode pools) or auto (both "
                  "searched, the better returned; default)");
  cmd->add_option("--prefill-gpus", f->prefill_gpus,
                  "disaggregated: fix the pool split (GPUs of the prefill pool; the rest decode)")
      ->check(CLI::Range(1, static_cast<int>(kMaxGpusFlag)));
  cmd->add_flag("--kv-layerwise", f->kv_layerwise,
                "disaggregated: the KV transfer is pipelined with the prefill layer by layer "
                "(default: sent after the prefill, as SGLang, vLLM and Dynamo do)");
  cmd->add_flag("--pareto", f->pareto,
                "sweep the TPOT limit and print the Pareto front of tokens/s per GPU against "
                "tokens/s per user (serve mode unless --mode says decode)");
  cmd->add_option("--svg", f->svg,
                  "--pareto: write the chart here (default pareto.svg; none: no chart)");
  cmd->add_option("--x-scale", f->x_scale, "--pareto chart's x axis: log (default) or linear")
      ->check(CLI::IsMember({"log", "linear"}));
  cmd->add_option("--y-scale", f->y_scale, "--pareto chart's y axis: log (default) or linear")
      ->check(CLI::IsMember({"log", "linear"}));
  cmd->add_option("--emit", f->emit,
                  "write the plan's launch files to this directory: a script per node, DEPLOY.md "
                  "and, across nodes, Kubernetes manifests (for --engine, else the fastest engine)");
  cmd->add_option("--model-id", f->model_id,
                  "the model the launch files load (a HuggingFace repo id or checkpoint folder; "
                  "default: from the preset or the config)");
  cmd->add_option("--instance-gpus", f->instance_gpus,
                  "GPUs of one aggregated instance: the plan is that many GPUs' plan, replicated "
                  "over the cluster behind a router (default: an MoE model's plan tries every size "
                  "the cluster tiles into; the number of GPUs plans one instance)")
      ->check(CLI::Range(1, static_cast<int>(kMaxGpusFlag)));
  AddTrafficFlags(cmd, &f->traffic);  // with percentile --slo keys (cli/plan_traffic.h)
  return [f, cmd] { return RunPlan(*f, *cmd); };
}

}  // namespace l2s::cli
