// Shared checks of the fuzz targets: a parser's error is ONE line; any violation aborts (the
// driver or libFuzzer then saves the input).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/status.h"

namespace l2s_fuzz {

inline void Require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
  std::abort();
}

// An error must say something, on one line.
inline void CheckError(const l2s::Status& s) {
  Require(!s.ok(), "an error status");
  Require(!s.message().empty(), "error message is not empty");
  Require(s.message().find('\n') == std::string::npos, "error message is one line");
}

}  // namespace l2s_fuzz
