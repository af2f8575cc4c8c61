// Scores of predicted rows: medians, Spearman rank correlation, groups per engine, regime, GPU and
// metric, and the fits of the engine factors and request overheads (validate.h).
#include "validate/validate.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <utility>

#include "common/text.h"

namespace l2s::validate {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

// ---------------------------------------------------------------- scoring

double Median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<double> Ranks(const std::vector<double>& v) {
  const size_t n = v.size();
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), size_t{0});
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(n);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double avg = 0.5 * static_cast<double>(i + j) + 1.0;  // positions i..j, 1-based mean
    for (size_t k = i; k <= j; ++k) r[idx[k]] = avg;
    i = j + 1;
  }
  return r;
}

double Pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = x.size();
  if (n < 2 || y.size() != n) return kNaN;
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n;
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx <= 0 || syy <= 0) return kNaN;
  return sxy / std::sqrt(sxx * syy);
}

double Spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return kNaN;
  return Pearson(Ranks(x), Ranks(y));
}

Scores Score(const std::vector<RowResult>& results) {
  Scores s;
  s.rows = static_cast<int>(results.size());
  std::vector<double> abs_err;
  int within = 0;
  for (const RowResult& r : results) {
    const double a = r.pred.ok ? std::fabs(r.error_pct) : kMissAbsPctError;
    abs_err.push_back(a);
    if (r.pred.ok) {
      ++s.predicted;
      if (a <= 25.0) ++within;
    } else {
      ++s.missed;
    }
  }
  s.median_abs_pct_error = Median(abs_err);
  s.mean_abs_pct_error =
      abs_err.empty() ? kNaN : std::accumulate(abs_err.begin(), abs_err.end(), 0.0) / abs_err.size();
  s.share_within_25pct = results.empty() ? kNaN : static_cast<double>(within) / results.size();
  return s;
}

Summary Summarize(const std::vector<RowResult>& results) {
  Summary s;
  static_cast<Scores&>(s) = Score(results);
  std::map<std::string, std::vector<RowResult>> engines, regimes, gpus, metrics;
  struct Group {
    std::set<int64_t> tps;
    std::vector<double> pred, meas, pred_gpu, meas_gpu;
  };
  std::map<std::string, Group> groups;
  for (const RowResult& r : results) {
    const Measurement& m = r.row;
    const std::string fam = EngineFamily(m.engine);
    engines[fam.empty() ? "(none)" : fam].push_back(r);
    regimes[Regime(m)].push_back(r);
    const std::string gpu = GpuOfLabel(m.gpu);
    gpus[gpu].push_back(r);
    metrics[m.metric].push_back(r);
    if (m.metric == "tpot_ms" || KindOfMetric(m.metric) == MetricKind::kThroughput)
      metrics["throughput+tpot"].push_back(r);
    const std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", m.model_config,
                                        gpu, m.mode, m.isl, m.osl, m.context, fam,
                                        AsciiLower(m.weight_dtype), AsciiLower(m.kv_dtype), m.metric);
    Group& g = groups[key];
    g.tps.insert(m.tp);
    g.pred.push_back(r.pred.ok ? r.pred.predicted : 0.0);
    g.meas.push_back(m.value);
    const double gpus = m.gpus > 0 ? static_cast<double>(m.gpus)
                                   : static_cast<double>(std::max<int64_t>(1, m.replicas)) *
                                         static_cast<double>(m.tp) * static_cast<double>(m.pp) *
                                         static_cast<double>(std::max<int64_t>(1, m.dp));
    g.pred_gpu.push_back(g.pred.back() / gpus);
    g.meas_gpu.push_back(m.value / gpus);
  }
  for (const auto& [name, rs] : engines) s.by_engine[name] = Score(rs);
  for (const auto& [name, rs] : regimes) s.by_regime[name] = Score(rs);
  for (const auto& [name, rs] : gpus) s.by_gpu[name] = Score(rs);
  for (const auto& [name, rs] : metrics) s.by_metric[name] = Score(rs);
  double sum = 0, sum_gpu = 0;
  std::vector<double> pooled_p, pooled_m;
  for (const auto& [key, g] : groups) {
    if (g.tps.size() < 3) continue;
    ++s.spearman_groups;
    const double rho = Spearman(g.pred, g.meas);
    sum += std::isfinite(rho) ? rho : 0.0;  // a constant side carries no rank information
    const double rho_gpu = Spearman(g.pred_gpu, g.meas_gpu);
    sum_gpu += std::isfinite(rho_gpu) ? rho_gpu : 0.0;
    const std::vector<double> rp = Ranks(g.pred), rm = Ranks(g.meas);
    const double mean = (static_cast<double>(rp.size()) + 1.0) / 2.0;  // mean of ranks 1..n
    for (size_t i = 0; i < rp.size(); ++i) {
      pooled_p.push_back(rp[i] - mean);
      pooled_m.push_back(rm[i] - mean);
    }
  }
  s.spearman = s.spearman_groups > 0 ? sum / s.spearman_groups : kNaN;
  s.spearman_pooled = s.spearman_groups > 0 ? Pearson(pooled_p, pooled_m) : kNaN;
  s.spearman_per_gpu = s.spearman_groups > 0 ? sum_gpu / s.spearman_groups : kNaN;
  return s;
}

EngineFitResult FitEngineFactors(const std::vector<RowResult>& results) {
  EngineFitResult out;
  std::map<std::string, std::vector<double>> ratios;
  std::vector<double> all;
  for (const RowResult& r : results) {
    if (!r.pred.ok || KindOfMetric(r.row.metric) != MetricKind::kThroughput ||
        !(r.pred.raw > 0))
      continue;
    const double q = r.row.value / r.pred.raw;
    ratios[EngineFamily(r.row.engine)].push_back(q);
    all.push_back(q);
  }
  for (const auto& [fam, q] : ratios) {
    EngineFit f;
    f.family = fam;
    f.rows = static_cast<int>(q.size());
    f.median_ratio = Median(q);
    f.own_factor = f.rows >= kMinRowsPerEngineFit && !fam.empty();
    out.families.push_back(f);
  }
  out.rows = static_cast<int>(all.size());
  out.default_factor = all.empty() ? 1.0 : Median(all);
  return out;
}

bool RequestOverheadFitRow(const Measurement& m) {
  return m.metric == "ttft_ms" && m.mode == "serve" && !EngineFamily(m.engine).empty() &&
         m.concurrency > 0 && m.concurrency <= kRequestOverheadFitConcurrency;
}

double RequestOverheadFit::Of(const std::string& family) const {
  for (const RequestOverheadFamily& f : families)
    if (f.family == family && f.own) return f.overhead_s;
  return 0.0;
}

RequestOverheadFit FitRequestOverhead(const std::vector<RowResult>& results) {
  RequestOverheadFit out;
  std::map<std::string, std::vector<double>> gaps_s;  // by family
  for (const RowResult& r : results) {
    if (!r.pred.ok || !RequestOverheadFitRow(r.row)) continue;
    // The overhead is a time outside the engine's steps (not scaled by its factor): ms -> s.
    gaps_s[EngineFamily(r.row.engine)].push_back((r.row.value - r.pred.predicted) * 1e-3);
    ++out.rows;
  }
  for (const auto& [family, gaps] : gaps_s) {
    RequestOverheadFamily f;
    f.family = family;
    f.rows = static_cast<int>(gaps.size());
    f.overhead_s = Median(gaps);
    f.own = f.rows >= kMinRowsPerEngineFit;
    out.families.push_back(f);
  }
  return out;
}

}  // namespace l2s::validate
