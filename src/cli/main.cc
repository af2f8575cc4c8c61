// l2s: plan how to shard an LLM across a GPU cluster for inference.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <exception>
#include <map>
#include <new>
#include <string>
#include <string_view>
#include <system_error>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/output.h"

#ifndef L2S_VERSION
#define L2S_VERSION "unknown"
#endif

namespace {

// Whether the command line asks for JSON output: --json (or --json=true / 1) before any "--".
bool WantsJson(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--") break;
    if (a == "--json" || a == "--json=true" || a == "--json=1") return true;
  }
  return false;
}

int Main(int argc, char** argv) {
  CLI::App app{"l2s - learn to shard: plan the parallelization of an LLM for inference"};
  app.require_subcommand(0, 1);
  // "l2s 0.1.0 (git <describe>)": the CMake project version and `git describe` at configure time.
  app.set_version_flag("--version", std::string("l2s ") + L2S_VERSION);
  // Every exit prints a JSON object under --json, parse errors included (common.h Fail).
  l2s::cli::SetJsonMode(WantsJson(argc, argv));
  std::map<std::string, l2s::cli::Runner> runners;
  auto add = [&](const char* name, l2s::cli::Runner r) { runners[name] = std::move(r); };
  add("describe", l2s::cli::RegisterDescribe(app));
  add("space", l2s::cli::RegisterSpace(app));
  add("explain", l2s::cli::RegisterExplain(app));
  add("eval", l2s::cli::RegisterEval(app));
  add("validate", l2s::cli::RegisterValidate(app));
  add("plan", l2s::cli::RegisterPlan(app));
  add("compare", l2s::cli::RegisterCompare(app));
  add("capacity", l2s::cli::RegisterCapacity(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return l2s::cli::Fail(l2s::Status::InvalidArgument(e.what()));
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

}  // namespace

int main(int argc, char** argv) {
  // A closed pipe is a write error the command reports (exit 2), not a silent death by SIGPIPE.
  l2s::cli::IgnoreSigpipe();
  int code = 0;
  try {
    code = Main(argc, argv);
  } catch (const std::system_error& e) {
    // fmt::print throws when a write to stdout fails (closed pipe, full disk).
    std::fprintf(stderr, "l2s: error: cannot write to standard output (%s)\n",
                 e.code().message().c_str());
    return l2s::cli::kExitUsage;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "l2s: error: out of memory\n");
    return l2s::cli::kExitUsage;
  } catch (const std::exception& e) {
    return l2s::cli::Fail(l2s::Status::InvalidArgument(fmt::format("internal error: {}", e.what())));
  }
  return l2s::cli::FinishStdout(code);
}
