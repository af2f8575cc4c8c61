// The l2s command line as a function: main() and the Python package (python/) both call RunCli, so
// the package answers exactly what the binary answers for the same arguments.
#pragma once

#include <string>
#include <vector>

#include "sweep/sweep.h"

namespace l2s::cli {

// Runs `l2s args[1..]` in this process (args[0] is the program name, as argv[0]) and returns the
// exit code the binary would return (0 ok, 1 no valid answer, 2 usage, 130/143 interrupted).
// Never throws. With `out` and `err` both null the command writes to the process's stdout/stderr.
// With either non-null, file descriptors 1 and 2 are redirected to temporary files for the duration of
// the call (so every write is captured, whichever stdio/fmt call makes it) and their contents
// are returned in *out / *err (a null one's text is dropped); the SIGINT, SIGTERM and SIGPIPE dispositions the caller had are
// restored afterwards (plan/compare install a one-shot Ctrl-C handler). Calls are serialized by
// a process-wide mutex: fds 1 and 2 are process-wide, so writes by other threads during a
// captured call land in the capture.
int RunCli(const std::vector<std::string>& args, std::string* out, std::string* err);

// What runs the plans of a sweep and of plan --gpu a,b,c: `l2s_binary` (default: this process's
// binary) in child processes, or, where this process is not an l2s binary (the Python package),
// forked children of this process that run the plan with RunCli.
sweep::Runner PlanRunner(const std::string& l2s_binary = "");

}  // namespace l2s::cli
