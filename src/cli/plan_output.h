// The text and JSON of an aggregated `l2s plan` (cmd_plan.cc runs the plan, this file prints it):
// the per-operator words of a strategy, the plan as JSON (`--json`, `--out`; the fields are public
// contracts, docs/PLAN.md) and as text, with the engines' table, the baselines and the launch
// commands.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cli/plan_replicas.h"
#include "engine/engine.h"
#include "launch/dynamo.h"
#include "launch/launch.h"
#include "plan/aggregated.h"
#include "plan/engines.h"
#include "sim/simulator.h"
#include "strategy/strategy.h"

namespace l2s::cli {

// One operator of a strategy in words: its sharding dim, the GPUs it splits over and the
// collectives the layout algebra inserts around it.
struct OpChoice {
  Op op;
  Dim dim;
  int group = 1;               // GPUs the dim splits over
  std::string group_name;      // "tp" or "expert-TP"
  std::string words;           // DimWords
  std::vector<std::string> before, after;  // collectives around the operator's compute
};

// Every operator the model has, with the collectives around it in the program of `s` at `batch`.
std::vector<OpChoice> DescribeOps(const Simulator& sim, const Strategy& s, int batch);
// "Attention QKV (attn_qkv): ... over the 8-GPU tp group; after: all-gather over tp 8".
std::string OpChoiceLine(const OpChoice& c);

// The library's plan (plan/aggregated.h) and what the CLI adds to print it.
struct PlanOutcome : plan::AggPlan {
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

// {"strategy", "tokens_per_s_per_gpu", "tokens_per_s", "valid"} of one evaluated strategy.
nlohmann::ordered_json StrategyEvalJson(const Strategy& s, const Evaluation& e);
// The `best` object: figures, degrees, operators (`ops`), breakdown and the why-sentence.
nlohmann::ordered_json BestJson(const Simulator& sim, const Strategy& s, const Evaluation& e,
                                const std::vector<OpChoice>& ops);
// One engine's `launch.<engine>` object.
nlohmann::ordered_json LaunchJson(const launch::EngineTranslation& t);
// A Dynamo variant's aggregated launch (its workers running translation `t`), as "launch.dynamo".
nlohmann::ordered_json DynamoLaunchJson(const launch::DynamoAggLaunch& d,
                                        const launch::EngineTranslation& t);
// The whole aggregated plan as `l2s plan --json` prints it.
nlohmann::ordered_json PlanJson(const PlanOutcome& o);
// The engines' table and the headroom line (printed after the plan's text).
std::string EnginesText(const PlanOutcome& o);
// Who found the plan, in words ("the Megatron heuristic").
std::string FoundByWords(const std::string& found_by);
// The plan as text on stdout (without EnginesText).
void PrintPlan(const PlanOutcome& o);

}  // namespace l2s::cli
