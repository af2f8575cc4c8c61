// `l2s space`: the size of the strategy space of a problem.
//   l2s space --model M --gpu G --gpus N [--max-batch B] [--engine E] [--json]
// Prints the number of combinations (StrategySpace::Size), how many are structurally valid
// (CountValid, exact), and each head's options; with --engine E the space E launches (the
// restriction `plan --engine E` searches, engine/restrict.h), its rules on an "engine" line.
// JSON: {"model", "gpu", "gpus", "max_batch", "engine", "engine_rules", "size", "valid",
// "log10_size", "log10_valid", "heads": [{"name", "size", "options": [...]}]}.
// Memory and SLO validity need the simulator and are not counted here.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/plan_problem.h"
#include "cli/output.h"
#include "cli/problem_flags.h"
#include "engine/engine.h"
#include "engine/restrict.h"
#include "strategy/space.h"

namespace l2s::cli {
namespace {

// Default largest batch option of the space when --max-batch is not given (SpaceOptions).
constexpr int kDefaultMaxBatch = SpaceOptions{}.max_batch;

struct SpaceFlags {
  ProblemFlags problem;
  bool json = false;
};

std::string Big(double v) {
  if (v < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:.4e}", v);
}

// The rules of an engine's restriction, in words ("" when it is inactive); those of the expert
// slots and overlap heads only for a model that has them (MoE), that of speculative decoding only
// for a model that speculates (MTP layers or a draft model).
std::string RulesText(const EngineRestriction& r, bool moe, bool speculates) {
  if (!r.active) return "";
  std::vector<std::string> rules;
  if (r.megatron_dims_only) rules.push_back("Megatron's dims only");
  if (r.ep_one_or_stage) rules.push_back("ep 1 or the whole stage");
  if (r.ep_one_or_stage_with_dp) rules.push_back("with dp > 1, ep 1 or the whole stage");
  if (r.tp_one_or_stage) rules.push_back("attention all tp or all dp (tp 1 or dp 1)");
  if (speculates && r.mtp_needs_one_stage) rules.push_back("speculative decoding only with pp = 1");
  if (r.stages_need_one_dp) rules.push_back("pipeline stages only with dp = 1");
  if (moe) {
    if (r.slots_need_ep) rules.push_back("redundant expert slots only with ep > 1");
    if (r.tbo_needs_dp) rules.push_back("two-batch overlap only with dp > 1");
    std::string overlaps;
    for (Overlap o : {Overlap::kNone, Overlap::kTbo, Overlap::kSbo})
      if (r.overlaps[static_cast<int>(o)])
        overlaps += (overlaps.empty() ? "" : ", ") + std::string(OverlapName(o));
    rules.push_back("overlaps: " + overlaps);
  }
  std::string out;
  for (const std::string& x : rules) out += (out.empty() ? "" : "; ") + x;
  return out;
}

int Run(const SpaceFlags& f) {
  StatusOr<Problem> p = BuildProblem(f.problem);
  if (!p.ok()) return Fail(p.status());
  SpaceOptions opt;
  opt.max_batch = f.problem.max_batch > 0 ? f.problem.max_batch : kDefaultMaxBatch;
  opt.mtp = PlanSpaceOptions(*p, f.problem.mtp).mtp;  // the mtp head plan searches
  // --engine E: the space E launches, as plan --engine E searches it.
  const engine::EngineId id = LaunchEngineOf(f.problem);
  StatusOr<StrategySpace> space =
      engine::RestrictedSpace(engine::CapabilitiesOf(id), p->model, p->cluster.num_gpus, opt);
  if (!space.ok()) return Fail(space.status());
  const std::string engine_name = id == engine::EngineId::kIdeal ? "ideal" : f.problem.engine;
  const std::string rules = RulesText(space->restriction(), p->model.is_moe(), p->model.can_speculate());
  const double size = space->Size(), valid = space->CountValid();
  if (f.json) {
    nlohmann::ordered_json j;
    j["model"] = p->model.name;
    j["gpu"] = p->cluster.gpu.name;
    j["gpus"] = p->cluster.num_gpus;
    j["max_batch"] = opt.max_batch;
    j["engine"] = engine_name;
    j["engine_rules"] = rules;
    j["size"] = size;
    j["valid"] = valid;
    j["log10_size"] = std::log10(size);
    j["log10_valid"] = valid > 0 ? std::log10(valid) : 0.0;
    nlohmann::ordered_json heads = nlohmann::ordered_json::array();
    for (int h = 0; h < space->num_heads(); ++h) {
      nlohmann::ordered_json options = nlohmann::ordered_json::array();
      for (int i = 0; i < space->head_size(h); ++i) options.push_back(space->option_name(h, i));
      heads.push_back({{"name", space->head_name(h)}, {"size", space->head_size(h)},
                       {"options", std::move(options)}});
    }
    j["heads"] = std::move(heads);
    fmt::print("{}\n", DumpJson(j));
    return kExitOk;
  }
  fmt::print("{} on {} x {} (batch options up to {})\n", p->model.name, p->cluster.num_gpus,
             p->cluster.gpu.name, opt.max_batch);
  if (space->restriction().active)
    fmt::print("engine            {}: the space it launches ({})\n", engine_name, rules);
  fmt::print("size              {} (10^{:.2f})\n", Big(size), std::log10(size));
  fmt::print("structurally valid {} (10^{:.2f}, {:.3g}% of all)\n", Big(valid),
             valid > 0 ? std::log10(valid) : 0.0, size > 0 ? 100.0 * valid / size : 0.0);
  fmt::print("heads ({}):\n", space->num_heads());
  for (int h = 0; h < space->num_heads(); ++h) {
    std::string opts;
    for (int i = 0; i < space->head_size(h); ++i)
      opts += (i ? " " : "") + space->option_name(h, i);
    fmt::print("  {:<12} {:>3}  {}\n", space->head_name(h), space->head_size(h), opts);
  }
  return kExitOk;
}

}  // namespace

Runner RegisterSpace(CLI::App& app) {
  auto f = std::make_shared<SpaceFlags>();
  CLI::App* cmd = app.add_subcommand("space", "Size and options of the strategy space");
  AddProblemFlags(cmd, &f->problem);
  cmd->add_flag("--json", f->json, "print one JSON object");
  return [f] { return Run(*f); };
}

}  // namespace l2s::cli
