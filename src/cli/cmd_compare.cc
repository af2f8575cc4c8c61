// `l2s compare` (placeholder until its issue lands).
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/common.h"

namespace l2s::cli {

Runner RegisterCompare(CLI::App& app) {
  app.add_subcommand("compare", "(not implemented yet)");
  return [] { return Fail(std::string("'compare' is not implemented yet")); };
}

}  // namespace l2s::cli
