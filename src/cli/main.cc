// l2s: plan how to shard an LLM across a GPU cluster for inference.
#include <string>
#include <vector>

#include "cli/output.h"
#include "cli/run.h"

int main(int argc, char** argv) {
  // A closed pipe is a write error the command reports (exit 2), not a silent death by SIGPIPE.
  l2s::cli::IgnoreSigpipe();
  return l2s::cli::RunCli(std::vector<std::string>(argv, argv + argc), nullptr, nullptr);
}
