// How the planning pipeline reports progress and learns it should stop: the caller (the CLI's
// progress bars and Ctrl-C, the Python package, a sweep) passes a PlanProgress; the library never
// draws, reads a signal or exits. A default PlanProgress is silent and never interrupted.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "search/search.h"

namespace l2s::plan {

struct PlanProgress {
  // The observer of one step (the search, a baseline, the oracle), labelled as a progress bar
  // would be ("search rl", "baseline oracle"); null or returning null: a silent observer. The
  // returned observer's Cancelled() is how an interruption reaches the running searcher.
  std::function<std::unique_ptr<Observer>(const std::string& label)> observe;
  // True once the caller wants the plan to stop (Ctrl-C): the steps not yet started are skipped
  // and the result is marked interrupted.
  std::function<bool()> interrupted;

  std::unique_ptr<Observer> Observe(const std::string& label) const;
  bool Interrupted() const { return interrupted && interrupted(); }
};

}  // namespace l2s::plan
