// The text and JSON of an aggregated plan (plan_output.h).
#include "cli/plan_output.h"

#include <fmt/core.h>

#include <memory>
#include <optional>

#include "cli/plan_problem.h"
#include "cli/report.h"
#include "engine/restrict.h"
#include "launch/dynamo.h"
#include "plan/cost.h"
#include "plan/error_bands.h"

namespace l2s::cli {

using json = nlohmann::ordered_json;
using launch::DimWords;
using launch::EngineTitle;
using launch::EngineTranslation;
using launch::OpTitle;
using plan::Run;
using plan::RunOf;
using plan::Value;

// ---------------------------------------------------------------- per-operator words

namespace {

std::string CommWords(const Step& st) {
  const char* group = st.group == GroupKind::kTp      ? "tp"
                      : st.group == GroupKind::kEtp   ? "expert-TP"
                      : st.group == GroupKind::kStage ? "stage"
                                                      : "pipeline";
  return fmt::format("{} over {} {}", CommKindName(st.comm), group, st.group_size);
}

}  // namespace

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
  j["loads_model"] = t.loads_model;
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

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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
  if (p.model.can_speculate() && p.workload.mode != Mode::kPrefill)
    fmt::print("  mtp        {}\n",
               s.mtp > 0 ? fmt::format("{} speculative token{} per step drafted by {}, "
                                       "{:.2f} tokens emitted per step",
                                       s.mtp, s.mtp == 1 ? "" : "s",
                                       p.model.has_draft_model()
                                           ? "the draft model " + p.model.draft_model
                                           : std::string("the MTP module"),
                                       e.accept)
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
    if (!t.loads_model) {
      fmt::print("    {}\n", t.unsupported.front());
      continue;
    }
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

}  // namespace l2s::cli
