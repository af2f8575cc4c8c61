#include "sim/moe_load.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <queue>
#include <utility>
#include <vector>

namespace l2s {

double NormalQuantile(double p) {
  // Acklam's algorithm: rational approximations in the central region and the two tails.
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00, 2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  p = std::clamp(p, 1e-300, 1.0 - 1e-16);
  constexpr double lo = 0.02425, hi = 1 - 0.02425;
  if (p < lo) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > hi) {
    const double q = std::sqrt(-2 * std::log(1 - p));
    return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

namespace {

// Popularity shares p_i (sum 1), descending.
std::vector<double> Popularity(int experts, double sigma) {
  std::vector<double> p(experts);
  for (int i = 0; i < experts; ++i)
    p[i] = std::exp(sigma * NormalQuantile((experts - i - 0.5) / experts));
  const double sum = std::accumulate(p.begin(), p.end(), 0.0);
  for (double& x : p) x /= sum;
  return p;
}

// Checkpoint placement: E/ep consecutive experts per rank, popularity in a shuffled order.
double CheckpointPlacement(const std::vector<double>& p, int ep) {
  const int E = static_cast<int>(p.size());
  const int per = E / ep;
  constexpr int kShuffles = 16;
  std::vector<int> order(E);
  double total = 0;
  for (int s = 0; s < kShuffles; ++s) {
    std::iota(order.begin(), order.end(), 0);
    // Fixed 64-bit LCG Fisher-Yates shuffle: deterministic on every platform.
    uint64_t state = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(s + 1);
    for (int i = E - 1; i > 0; --i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const int j = static_cast<int>((state >> 33) % static_cast<uint64_t>(i + 1));
      std::swap(order[i], order[j]);
    }
    double worst = 0;
    for (int r = 0; r < ep; ++r) {
      double load = 0;
      for (int i = r * per; i < (r + 1) * per; ++i) load += p[order[i]];
      worst = std::max(worst, load);
    }
    total += worst * ep;
  }
  return total / kShuffles;
}

// EPLB placement: redundant replicas to the hottest experts, then greedy packing.
double EplbPlacement(const std::vector<double>& p, int ep, int slots) {
  const int E = static_cast<int>(p.size());
  std::vector<int> rep(E, 1);
  using Item = std::pair<double, int>;  // (load per replica, expert)
  std::priority_queue<Item> hot;
  for (int i = 0; i < E; ++i) hot.push({p[i], i});
  for (int extra = slots - E; extra > 0; --extra) {
    const int i = hot.top().second;
    hot.pop();
    ++rep[i];
    hot.push({p[i] / rep[i], i});
  }
  std::vector<double> items;
  items.reserve(slots);
  for (int i = 0; i < E; ++i)
    for (int r = 0; r < rep[i]; ++r) items.push_back(p[i] / rep[i]);
  std::sort(items.begin(), items.end(), std::greater<double>());
  const int cap = slots / ep;
  using Rank = std::pair<double, int>;  // (load, rank): min-heap of ranks with room
  std::priority_queue<Rank, std::vector<Rank>, std::greater<Rank>> ranks;
  for (int r = 0; r < ep; ++r) ranks.push({0.0, r});
  std::vector<int> used(ep, 0);
  double worst = 0;
  for (double x : items) {
    Rank top = ranks.top();
    ranks.pop();
    top.first += x;
    worst = std::max(worst, top.first);
    if (++used[top.second] < cap) ranks.push(top);
  }
  return worst * ep;
}

}  // namespace

double MoeStaticImbalance(int experts, int ep, int slots, double sigma) {
  if (ep <= 1 || experts <= 0) return 1.0;
  const int S = slots > 0 ? slots : experts;
  if (S % ep != 0 || S < experts || (slots == 0 && experts % ep != 0)) return 1.0;
  if (!(sigma > 0) && slots == 0) return 1.0;
  const std::vector<double> p = Popularity(experts, sigma);
  return std::max(1.0, slots > 0 ? EplbPlacement(p, ep, slots) : CheckpointPlacement(p, ep));
}

double MoeSamplingImbalance(double copies, int ep) {
  if (ep <= 1) return 1.0;
  const double e = static_cast<double>(ep);
  if (!(copies > 0)) return e;
  return 1.0 + std::sqrt(2.0 * std::log(e)) * std::sqrt((1.0 - 1.0 / e) / (copies / e));
}

double CombinedImbalance(double static_factor, double copies, int ep) {
  if (ep <= 1) return 1.0;
  return std::clamp(static_factor * MoeSamplingImbalance(copies, ep), 1.0,
                    static_cast<double>(ep));
}

double MoeImbalance(const MoeLoad& in) {
  if (in.ep <= 1) return 1.0;
  return CombinedImbalance(MoeStaticImbalance(in.experts, in.ep, in.slots, in.sigma), in.copies,
                           in.ep);
}

}  // namespace l2s
