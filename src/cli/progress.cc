#include "cli/progress.h"

#include <fmt/core.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace l2s::cli {

namespace {

volatile sig_atomic_t g_interrupted = 0;

void OnSignal(int sig) { g_interrupted = sig; }

// Redraw period of the bar: at most 10 redraws a second.
constexpr auto kRedrawPeriod = std::chrono::milliseconds(100);
// Budgets above this are "no budget" (budget-free searchers pass INT64_MAX).
constexpr int64_t kNoBudget = 1'000'000'000'000'000;

std::string Elapsed(double s) {
  if (s < 60) return fmt::format("{:.1f}s", s);
  const int total = static_cast<int>(s);
  return fmt::format("{}m{:02d}s", total / 60, total % 60);
}

}  // namespace

void InstallSigintHandler() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // one-shot: a second Ctrl-C terminates as usual
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool InterruptRequested() { return g_interrupted != 0; }
int InterruptExitCode() { return 128 + (g_interrupted != 0 ? static_cast<int>(g_interrupted) : SIGINT); }
void ClearInterruptForTest() { g_interrupted = 0; }
bool StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

std::string ProgressLine(std::string_view label, int64_t calls, int64_t budget,
                         double best_tokens_per_s_per_gpu, double elapsed_s, int width_chars) {
  std::string out(label);
  if (!out.empty()) out += ' ';
  if (budget > 0 && budget < kNoBudget) {
    const double frac = std::clamp(static_cast<double>(calls) / budget, 0.0, 1.0);
    const int w = std::max(1, width_chars);
    const int full = static_cast<int>(frac * w);
    out += '[' + std::string(full, '#') + std::string(w - full, '.') + ']';
    out += fmt::format(" {}/{} calls ({:.0f}%)", calls, budget, frac * 100);
  } else {
    out += fmt::format("{} calls", calls);
  }
  if (best_tokens_per_s_per_gpu > 0)
    out += fmt::format("  best {:.2f} tok/s/GPU", best_tokens_per_s_per_gpu);
  else
    out += "  no valid strategy yet";
  out += "  " + Elapsed(elapsed_s);
  return out;
}

ProgressObserver::ProgressObserver(Options opt, EvalSink sink)
    : opt_(std::move(opt)),
      sink_(std::move(sink)),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_ - kRedrawPeriod) {}

ProgressObserver::~ProgressObserver() { Finish(); }

void ProgressObserver::OnProgress(int64_t calls, int64_t budget, double best) {
  if (!opt_.draw) return;
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < kRedrawPeriod && calls < budget) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  // \r + erase-line: redraw in place.
  fmt::print(stderr, "\r\033[2K{}", ProgressLine(opt_.label, calls, budget, best, elapsed, 30));
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressObserver::OnEvaluation(const Strategy& s, const Evaluation& e) {
  if (!sink_) return;
  std::lock_guard<std::mutex> lock(mu_);
  sink_(s, e);
}

bool ProgressObserver::Cancelled() {
  if (InterruptRequested()) interrupted_.store(true);
  if (opt_.deadline_s > 0 && !deadline_hit_.load()) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed > opt_.deadline_s) deadline_hit_.store(true);
  }
  return interrupted_.load() || deadline_hit_.load();
}

void ProgressObserver::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!drawn_) return;
  fmt::print(stderr, "\r\033[2K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace l2s::cli
