// `l2s describe` (placeholder until its issue lands).
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/common.h"

namespace l2s::cli {

Runner RegisterDescribe(CLI::App& app) {
  app.add_subcommand("describe", "(not implemented yet)");
  return [] { return Fail(std::string("'describe' is not implemented yet")); };
}

}  // namespace l2s::cli
