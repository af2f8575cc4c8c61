// Helpers shared by the subcommands: one-line errors and warnings, status -> exit code.
#pragma once

#include <fmt/core.h>

#include <string>

#include "common/status.h"

namespace l2s::cli {

constexpr int kExitOk = 0;
constexpr int kExitImpossible = 1;  // valid request, but no valid answer (strategy invalid...)
constexpr int kExitUsage = 2;       // bad flag, bad file, unknown model
constexpr int kExitInterrupted = 130;

// Prints "l2s: error: <message>" on one line to stderr and returns the exit code for `s`. In JSON
// mode (SetJsonMode) it also prints {"valid": false, "reason": <message>, "exit_code": <code>} on
// one line to stdout, so that a script reading --json output gets an object on every exit.
int Fail(const Status& s);
inline int Fail(const std::string& msg) { return Fail(Status::InvalidArgument(msg)); }
// The exit code Fail returns for `s`: 1 kInvalid (no valid answer), 130 kCancelled, else 2.
int ExitCodeOf(const Status& s);

// JSON mode: set by main() when the command line holds --json (before parsing, so that a bad
// flag value is reported as JSON too).
void SetJsonMode(bool on);
bool JsonMode();

// Prints "l2s: warning: <message>" on one line to stderr, once per distinct message per process
// (a model loaded twice warns once); "" prints nothing.
void Warn(const std::string& message);

}  // namespace l2s::cli
