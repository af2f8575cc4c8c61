// `l2s plan`: the main job. Parses the flags, plans one problem (default: gpt-moe-1.6t, decode at
// 16k context on 1,024 H100s) for each engine or the one named, aggregated or disaggregated
// (plan/ runs the searchers, the baselines and the oracle), and prints the plan, its launch
// commands and, with --emit, its launch files. The aggregated plan's text and JSON are
// plan_output.h's, the disaggregated one's disagg_plan.h's; docs/PLAN.md describes the output;
// exit codes are those of commands.h.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/disagg_plan.h"
#include "cli/output.h"
#include "cli/pareto_report.h"
#include "cli/plan_output.h"
#include "cli/plan_problem.h"
#include "cli/plan_replicas.h"
#include "cli/plan_traffic.h"
#include "cli/problem_flags.h"
#include "cli/progress.h"
#include "cli/report.h"
#include "common/parallel.h"
#include "engine/engine.h"
#include "launch/emit.h"
#include "engine/restrict.h"
#include "launch/launch.h"
#include "plan/engines.h"
#include "search/search.h"
#include "strategy/space.h"

namespace l2s::cli {

namespace {

using json = nlohmann::ordered_json;
using launch::EngineTitle;

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
  int jobs = 0;  // --pareto: limits searched at once (threads); 0 = every core
  std::string emit;      // --emit DIR: the plan's launch files (launch/emit.h)
  TrafficFlags traffic;  // with percentile --slo keys: plan for a traffic (cli/plan_traffic.h)
  int instance_gpus = 0;  // --instance-gpus: the aggregated replicas' size (cli/plan_replicas.h)
};

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
  add("--draft-model", f.draft_model);
  return out;
}

// ---------------------------------------------------------------- running searchers

using plan::AggPlan;
using plan::Value;

// The CLI's progress: a bar per step on a terminal, Ctrl-C through InterruptRequested.
plan::PlanProgress CliProgress() {
  plan::PlanProgress p;
  p.observe = [](const std::string& label) -> std::unique_ptr<Observer> {
    return std::make_unique<ProgressObserver>(ProgressObserver::Options{label, StderrIsTerminal(), 0});
  };
  p.interrupted = [] { return InterruptRequested(); };
  return p;
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
  opt.model_id = f.problem.model_id;
  const DisaggSetup& setup = d.models.at(static_cast<size_t>(d.best.model))->setup();
  opt.shared_nodes = setup.shared || (f.prefill_gpus > 0 && setup.serve.cluster.num_gpus <=
                                                                HostGpus(setup.serve.cluster));
  return launch::EmitDisaggregatedPlan(f.emit, *launches,
                                       launch::DisaggEngineOf(LaunchEngineOf(f.problem)), opt);
}
StatusOr<std::string> EmitAgg(const PlanFlags& f, const Problem& p, const PlanOutcome& o) {
  if (f.emit.empty()) return std::string();
  launch::EmitOptions opt;
  opt.model_id = f.problem.model_id;
  opt.replicas = o.Replicas();
  const engine::Capabilities& c = engine::CapabilitiesOf(o.engine);
  opt.dynamo = c.workers != c.id;  // a Dynamo variant: its workers behind its frontend
  return launch::EmitAggregatedPlan(f.emit, p, o.launch, launch::WorkersOf(f.problem.engine), opt);
}

// `engine_chosen`: the engine is the fastest of the aggregated plans (no --engine), said so.
TrafficOutput TrafficOut(const PlanFlags& f, const Problem& p, bool engine_chosen) {
  TrafficOutput o;
  o.json = f.json;
  o.out_path = f.out;
  o.emit_dir = f.emit;
  o.model_id = f.problem.model_id;
  const engine::EngineId id = LaunchEngineOf(f.problem);
  o.engine_line =
      engine_chosen
          ? fmt::format("engine: {}, the fastest in the aggregated plans of {} (--engine E plans "
                        "another)\n",
                        engine::EngineTitle(id), plan::TabulatedTitles(p.cluster))
      : id == engine::EngineId::kIdeal
          ? std::string("engine: none (the paper's unrestricted space; --engine E plans what E "
                        "launches)\n")
          : fmt::format("engine: {}\n", engine::EngineTitle(id));
  return o;
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
    StatusOr<TrafficPick> pick = PlanDisaggUnderTraffic(*traffic, p, *d, f.problem.engine);
    if (!pick.ok()) return Fail(pick.status());
    TrafficOutput out = TrafficOut(f, p, false);
    if (engine_chosen)  // the pools' engine: the fastest of those that launch pools
      out.engine_line = "engine: " + ChosenEngineLine(f, p).substr(std::string("  engine   ").size());
    return FinishTrafficPlan(*traffic, *pick, j, out);
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
  text += FormatDisaggPlan(p, *d, d->searcher_spec);
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
    text += FormatDisaggPlan(p, *d, d->searcher_spec);
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
      text += FormatDisaggPlan(p, *d, d->searcher_spec);
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
  a.jobs = f.jobs > 0 ? f.jobs : HardwareJobs();
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
    const int jobs = a.jobs;
    a.more_series = [base, req, jobs](const std::vector<double>& limits, Observer*) {
      return std::vector<ParetoSeries>{
          plan::DisaggregatedParetoSeries(base, req, limits, CliProgress(), jobs)};
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
  // A frontier is many plans: no one plan's launch files or commands.
  if (f.pareto)
    for (const char* flag : {"--emit", "--model-id"})
      if (cmd.count(flag) > 0)
        return Fail(fmt::format(
            "{} is for one plan's launch commands: --pareto answers with a frontier of plans (plan "
            "one of its points with --slo tpot_ms=X and {})",
            flag, flag));
  // The chart's flags draw --pareto's chart, --jobs runs its limits; without it they would be
  // ignored.
  if (!f.pareto) {
    for (const char* flag : {"--svg", "--x-scale", "--y-scale"})
      if (cmd.count(flag) > 0)
        return Fail(fmt::format("{} shapes the chart of plan --pareto: add --pareto", flag));
    if (cmd.count("--jobs") > 0)
      return Fail("--jobs sets the threads of plan --pareto: add --pareto");
  }
  StatusOr<TrafficPlan> traffic = PrepareTrafficPlan(
      &f.problem, f.traffic, static_cast<uint64_t>(f.seed), f.pareto);
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
    StatusOr<TrafficPick> agg = PlanAggUnderTraffic(*traffic, sim, o, admissible, 0, o.Replicas(),
                                                    f.problem.engine, o.Deployment());
    if (!agg.ok()) return Fail(agg.status());  // the traffic's own error (a trace unread)
    const TrafficOutput out = TrafficOut(f, o.Deployment(), engine_chosen);
    if (*serving != "auto") return FinishTrafficPlan(*traffic, *agg, PlanJson(o), out);
    // --serving auto: the disaggregated plan on every GPU, under the same traffic.
    const Problem& all = o.Deployment();
    StatusOr<DisaggPlan> d = PlanDisaggregated(all, MakeDisaggRequest(f));
    StatusOr<TrafficPick> dis = d.status();
    if (d.ok()) {
      dis = PlanDisaggUnderTraffic(*traffic, all, *d, f.problem.engine);
      if (dis.ok()) dis->steady_state_best = DisaggBestJson(*d);
    }
    return FinishTrafficAuto(*traffic, agg, dis, PlanJson(o), out);
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
      "plan", "Plan the deployment with the most tokens/s per GPU within the SLOs, per engine, and "
              "how to launch it (default: gpt-moe-1.6t decoding at 16k context on 1,024 H100s)");
  AddProblemFlags(cmd, &f->problem);
  cmd->add_option("--search", f->search,
                  "searcher spec: local, rl, sa, rw, ga, megatron, default or oracle, with "
                  "options as in \"rl(refine=0.25)\" (default local: iterated local search over "
                  "registered moves; rl is the paper's RL searcher)");
  cmd->add_option("--budget", f->budget, "simulator calls the searcher may use (default 4000)")
      ->check(CountRange(kMaxBudget));
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
  cmd->add_option("--jobs", f->jobs,
                  "--pareto: TPOT limits searched at once, on threads (default: every core); the "
                  "front is the same for every N")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--emit", f->emit,
                  "write the plan's launch files to this directory: a script per node, DEPLOY.md "
                  "and, across nodes, Kubernetes manifests (for --engine, else the fastest engine)");
  cmd->add_option("--model-id", f->problem.model_id,
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
