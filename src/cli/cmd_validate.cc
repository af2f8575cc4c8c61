// `l2s validate` (placeholder until its issue lands).
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/common.h"

namespace l2s::cli {

Runner RegisterValidate(CLI::App& app) {
  app.add_subcommand("validate", "(not implemented yet)");
  return [] { return Fail(std::string("'validate' is not implemented yet")); };
}

}  // namespace l2s::cli
