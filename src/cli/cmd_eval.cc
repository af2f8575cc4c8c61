// `l2s eval` (placeholder until its issue lands).
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/common.h"

namespace l2s::cli {

Runner RegisterEval(CLI::App& app) {
  app.add_subcommand("eval", "(not implemented yet)");
  return [] { return Fail(std::string("'eval' is not implemented yet")); };
}

}  // namespace l2s::cli
