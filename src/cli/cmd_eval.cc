// `l2s eval`: simulate one strategy.
//   l2s eval --model NAME_OR_PATH --gpu h100 --gpus N [--gpus-per-node 8]
//            --strategy "tp=8,pp=1,dp=1,ep=1[,...per-op dims]" [--batch B|auto]
//            --mode serve|decode|prefill [--isl I] [--osl O] [--context C] [--dtype bf16|fp8]
//            [--kv-dtype bf16|fp8] [--slo ttft_ms=X,tpot_ms=Y] [--engine NAME] [--json]
// Per-op dims left out are Megatron's; dp defaults to GPUs/(pp*tp); batch defaults to auto.
// --engine NAME (a problem flag: it also selects the scheduler and the engine's default limits,
// docs/dev/COST_MODEL.md "Engines") runs every step 1 / Simulator::EngineFactor(NAME) as long
// (throughput x factor, TPOT and TTFT's steps / factor; not memory); without it the factor is 1
// (the ideal engine the simulator models). --mtp K sets the strategy's speculative tokens. Exit: 0 valid; 1 the strategy is invalid (structure, memory or SLO: with --json the
// object is still printed with valid=false and the reason; otherwise the reason goes to stderr);
// 2 usage errors (one line on stderr).
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

struct EvalFlags {
  ProblemFlags problem;
  std::string strategy;
  std::string batch;
  bool json = false;
};

int Run(const EvalFlags& f) {
  StatusOr<Problem> p = BuildProblem(f.problem);
  if (!p.ok()) return Fail(p.status());
  StatusOr<Strategy> s = ResolveStrategy(*p, f.strategy, f.batch, f.problem.mtp);
  if (!s.ok()) return Fail(s.status());
  if (Status st = CheckStrategyFlags(*p, *s, f.problem.max_batch); !st.ok()) return Fail(st);
  // --engine (a problem flag: it also selects the scheduler, the engine limits and the engine's
  // fitted factor, Workload::engine_factor, under which every step runs).
  const EngineInfo engine = EngineInfoOf(f.problem.engine, *p, *s);
  const Simulator sim(std::move(*p));
  const Evaluation e = sim.Evaluate(*s);
  if (f.json) {
    fmt::print("{}\n", DumpJson(EvaluationJson(sim, *s, e, engine)));
    return e.valid() ? kExitOk : kExitImpossible;
  }
  if (!e.valid()) return Fail(Status::Invalid(sim.Reason(*s, e)));
  fmt::print("{}", FormatEvaluation(sim, *s, e, engine));
  return kExitOk;
}

}  // namespace

Runner RegisterEval(CLI::App& app) {
  auto f = std::make_shared<EvalFlags>();
  CLI::App* cmd = app.add_subcommand("eval", "Simulate one strategy: throughput, latency, memory");
  AddProblemFlags(cmd, &f->problem);
  cmd->add_option("--strategy", f->strategy,
                  "strategy text, e.g. \"tp=8,pp=1,dp=1,ep=1\" (missing dims: Megatron's)");
  cmd->add_option("--batch", f->batch, "sequences per attention-dp rank, or auto (default)");
  cmd->add_flag("--json", f->json, "print one JSON object");
  return [f] { return Run(*f); };
}

}  // namespace l2s::cli
