// Helpers shared by the subcommands: one-line errors and status -> exit code.
#pragma once

#include <fmt/core.h>

#include <string>

#include "common/status.h"

namespace l2s::cli {

constexpr int kExitOk = 0;
constexpr int kExitImpossible = 1;  // valid request, but no valid answer (strategy invalid...)
constexpr int kExitUsage = 2;       // bad flag, bad file, unknown model
constexpr int kExitInterrupted = 130;

// Prints "l2s: error: <message>" on one line to stderr and returns the exit code for `s`.
inline int Fail(const Status& s) {
  // Status messages are one printable line whatever they quote (common/status.h).
  fmt::print(stderr, "l2s: error: {}\n", s.message());
  return s.code() == Status::Code::kInvalid ? kExitImpossible
         : s.code() == Status::Code::kCancelled ? kExitInterrupted
                                                : kExitUsage;
}
inline int Fail(const std::string& msg) { return Fail(Status::InvalidArgument(msg)); }

}  // namespace l2s::cli
