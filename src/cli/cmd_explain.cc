// `l2s explain` (placeholder until its issue lands).
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/common.h"

namespace l2s::cli {

Runner RegisterExplain(CLI::App& app) {
  app.add_subcommand("explain", "(not implemented yet)");
  return [] { return Fail(std::string("'explain' is not implemented yet")); };
}

}  // namespace l2s::cli
