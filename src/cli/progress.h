// Progress bar and Ctrl-C handling for the long-running subcommands (plan, compare).
//
// SIGINT: InstallSigintHandler() makes the first Ctrl-C set a flag (InterruptRequested()) that
// every ProgressObserver reports through Observer::Cancelled, so the running searcher stops at
// its next simulator call and the command prints what it has, then exits 130. The handler is
// one-shot (SA_RESETHAND): a second Ctrl-C kills the process the usual way. SIGTERM is handled
// the same way (exit 143), so `kill` or a job scheduler's time limit still gets the partial
// result written and marked interrupted instead of stale or missing files.
//
// ProgressObserver draws "label [#####.....] calls/budget  best X tok/s/GPU  elapsed" on stderr,
// redrawn at most every 100 ms, and only when stderr is a terminal (silent in pipes, logs and
// tests). It can also stop a search after a wall-clock deadline and forward every evaluation to
// a sink (compare's Pareto cloud).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "search/search.h"

namespace l2s::cli {

void InstallSigintHandler();
bool InterruptRequested();
// 128 + the signal that interrupted (130 for SIGINT, 143 for SIGTERM).
int InterruptExitCode();
void ClearInterruptForTest();
bool StderrIsTerminal();

// One progress line (no newline, no carriage return), `width_chars` the bar width. A budget of
// 0 or beyond 10^15 (budget-free searchers) prints the call count without a bar or percentage.
std::string ProgressLine(std::string_view label, int64_t calls, int64_t budget,
                         double best_tokens_per_s_per_gpu, double elapsed_s, int width_chars);

class ProgressObserver : public Observer {
 public:
  struct Options {
    std::string label;        // e.g. "rl seed 3/10"
    bool draw = false;        // draw the bar (pass StderrIsTerminal())
    double deadline_s = 0;    // > 0: Cancelled() after this many seconds
  };
  using EvalSink = std::function<void(const Strategy&, const Evaluation&)>;

  explicit ProgressObserver(Options opt, EvalSink sink = nullptr);
  ~ProgressObserver() override;

  void OnProgress(int64_t calls, int64_t budget, double best_tokens_per_s_per_gpu) override;
  void OnEvaluation(const Strategy& s, const Evaluation& e) override;
  bool Cancelled() override;

  // Erases the bar (if drawn). Called by the destructor too.
  void Finish();
  bool deadline_hit() const { return deadline_hit_.load(); }
  bool interrupted() const { return interrupted_.load(); }

 private:
  // Searches on several threads may share one observer (plan --pareto's limits): the bar and
  // the sink are drawn and called under mu_, the stop flags are atomic.
  Options opt_;
  EvalSink sink_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  bool drawn_ = false;
  std::atomic<bool> deadline_hit_{false}, interrupted_{false};
};

}  // namespace l2s::cli
