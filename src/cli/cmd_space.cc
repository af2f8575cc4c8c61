// `l2s space` (placeholder until its issue lands).
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/common.h"

namespace l2s::cli {

Runner RegisterSpace(CLI::App& app) {
  app.add_subcommand("space", "(not implemented yet)");
  return [] { return Fail(std::string("'space' is not implemented yet")); };
}

}  // namespace l2s::cli
