// l2s: plan how to shard an LLM across a GPU cluster for inference.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <map>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"

int main(int argc, char** argv) {
  CLI::App app{"l2s - learn to shard: plan the parallelization of an LLM for inference"};
  app.require_subcommand(0, 1);
  std::map<std::string, l2s::cli::Runner> runners;
  auto add = [&](const char* name, l2s::cli::Runner r) { runners[name] = std::move(r); };
  add("describe", l2s::cli::RegisterDescribe(app));
  add("space", l2s::cli::RegisterSpace(app));
  add("explain", l2s::cli::RegisterExplain(app));
  add("eval", l2s::cli::RegisterEval(app));
  add("validate", l2s::cli::RegisterValidate(app));
  add("plan", l2s::cli::RegisterPlan(app));
  add("compare", l2s::cli::RegisterCompare(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "l2s: error: {}\n", e.what());
    return 2;
  }
  for (CLI::App* sub : app.get_subcommands()) {
    return runners.at(sub->get_name())();
  }
  // No subcommand: the main job.
  const char* plan_argv[] = {argv[0], "plan"};
  CLI::App app2;
  auto run_plan = l2s::cli::RegisterPlan(app2);
  try {
    app2.parse(2, const_cast<char**>(plan_argv));
  } catch (const CLI::ParseError& e) {
    return app2.exit(e);
  }
  return run_plan();
}
