// `l2s plan` (placeholder until its issue lands).
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/common.h"

namespace l2s::cli {

Runner RegisterPlan(CLI::App& app) {
  app.add_subcommand("plan", "(not implemented yet)");
  return [] { return Fail(std::string("'plan' is not implemented yet")); };
}

}  // namespace l2s::cli
