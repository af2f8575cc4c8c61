// Shared pieces of the calibration fitters (tools/fit_kernels.cc, tools/fit_collectives.cc):
// a derivative-free pattern search over named coefficients, the robust objective (mean absolute
// log error, which tracks the median percentage error the tests check), and number formatting
// that round-trips (the printed coefficients are the ones scored).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <fmt/core.h>

namespace l2s::fit {

// One coefficient the search may move. Moves are v +- step * (|v| + scale), clamped to [lo, hi];
// when `choices` is non-empty the coefficient instead takes the best of those values.
struct Param {
  double* v;
  double lo, hi;
  double scale;
  std::vector<double> choices = {};
};

// Mean over rows of |log(pred / meas)| for a predictor `pred(i)` against `meas[i]`; rows whose
// prediction is not positive and finite count as a large error.
inline double MeanAbsLogError(size_t n, const std::function<double(size_t)>& pred,
                              const std::vector<double>& meas) {
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const double p = pred(i);
    sum += (p > 0 && std::isfinite(p)) ? std::fabs(std::log(p / meas[i])) : 10.0;
  }
  return n ? sum / n : 0.0;
}

// Rounds to 6 significant digits, exactly as the coefficient files print (fmt "{:.6g}").
inline double Round6(double v) { return std::strtod(fmt::format("{:.6g}", v).c_str(), nullptr); }
inline std::string Num(double v) { return fmt::format("{:.6g}", v); }

// Coordinate pattern search: for each parameter try +-step moves (or every choice), keep the
// best; halve the step when a sweep improves nothing. `feasible()` (optional) rejects points that
// break a constraint. Returns the final objective. Deterministic.
inline double PatternSearch(std::vector<Param>& ps, const std::function<double()>& f,
                            const std::function<bool()>& feasible = nullptr, double step = 0.5,
                            double min_step = 2e-3, int max_sweeps = 400) {
  auto eval = [&]() { return (feasible && !feasible()) ? 1e300 : f(); };
  double best = eval();
  for (int sweep = 0; sweep < max_sweeps && step >= min_step; ++sweep) {
    bool improved = false;
    for (Param& p : ps) {
      const double old = *p.v;
      double best_v = old;
      if (!p.choices.empty()) {
        for (double c : p.choices) {
          if (c == old) continue;
          *p.v = c;
          const double e = eval();
          if (e < best - 1e-12) {
            best = e;
            best_v = c;
          }
        }
      } else {
        for (int dir : {+1, -1}) {
          const double cand = std::clamp(old + dir * step * (std::fabs(old) + p.scale), p.lo, p.hi);
          if (cand == old) continue;
          *p.v = cand;
          const double e = eval();
          if (e < best - 1e-12) {
            best = e;
            best_v = cand;
          }
        }
      }
      *p.v = best_v;
      if (best_v != old) improved = true;
    }
    if (!improved) step *= 0.5;
  }
  return best;
}

inline void RoundAll(std::vector<Param>& ps) {
  for (Param& p : ps) *p.v = Round6(*p.v);
}

// The largest 6-significant-digit number not above v (v > 0).
inline double FloorTo6(double v) {
  const double r = Round6(v);
  if (r <= v) return r;
  // One unit in the 6th significant digit below the rounded value (which lies above v).
  const double unit = std::pow(10.0, std::floor(std::log10(std::fabs(r))) - 5);
  return Round6(r - unit);
}

// Re-imposes a knot-table constraint after rounding: t[j+1] <= 2 t[j] (rounding can turn an
// active "exactly 2x" into 2.000001x) and, for ramps, t[j+1] >= t[j].
template <int N>
void FixRamp(double (&t)[N], bool ramp) {
  for (int j = 0; j + 1 < N; ++j) {
    if (t[j + 1] > 2.0 * t[j]) t[j + 1] = FloorTo6(2.0 * t[j]);
    if (ramp && t[j + 1] < t[j]) t[j + 1] = t[j];
  }
}

}  // namespace l2s::fit
