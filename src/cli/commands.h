// Subcommands of the `l2s` executable. Each lives in its own cmd_*.cc and registers itself on the
// CLI11 app; it returns the process exit code through *exit_code once the app has parsed.
// Exit codes: 0 ok, 1 the request is impossible (invalid strategy, nothing fits), 2 usage or
// input error (unknown flag, bad file), 130 interrupted.
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace l2s::cli {

// Registers a subcommand; the returned callback runs it after parsing and returns the exit code.
using Runner = std::function<int()>;
Runner RegisterDescribe(CLI::App& app);
Runner RegisterSpace(CLI::App& app);
Runner RegisterExplain(CLI::App& app);
Runner RegisterEval(CLI::App& app);
Runner RegisterValidate(CLI::App& app);
Runner RegisterPlan(CLI::App& app);
Runner RegisterCompare(CLI::App& app);
Runner RegisterCapacity(CLI::App& app);
Runner RegisterSweep(CLI::App& app);
// `plan --gpu a,b,c` (cmd_plan_hardware.cc): `plan_args` are the arguments after "plan".
bool IsHardwareComparison(const std::vector<std::string>& plan_args);
int RunPlanHardware(const std::vector<std::string>& plan_args);
// `l2s capacity --gpu a,b,c` (the arguments after "capacity"): each GPU type sized, one table.
int RunCapacityHardware(const std::vector<std::string>& capacity_args);

}  // namespace l2s::cli
