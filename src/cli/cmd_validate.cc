// `l2s validate`: predict measured deployments and score the simulator.
//   l2s validate --measurements FILE [--models-dir DIR] [--json | --markdown]
//   l2s validate --measurements FILE --fit-engine-factors [--json]
//   l2s validate --measurements FILE --fit-request-overhead [--json]
// FILE is a CSV of measured deployments, either format of ../shared/reference/MEASUREMENTS.md
// (columns and semantics in validate/validate.h; the logic lives in the l2s_validate library,
// this file only formats). DIR holds the model configs named in its model_config column; by
// default ../shared/models/hf (relative to the current directory), then ../models/hf next to
// FILE's directory, then the shared directory beside the source tree. Every row is predicted and
// printed with its error; rows that cannot be predicted are MISSes (100% error, outside 25%).
// Summary: median absolute percentage error, share within +/-25%, Spearman rank correlation
// across tensor-parallel sizes, and the same scores per engine family and per regime (JSON
// `groups`). --fit-engine-factors predicts for the ideal engine and prints, per engine family,
// the median of measured / predicted: the values committed in Simulator::EngineFactor.
// --fit-request-overhead predicts without the engines' request overhead and prints its fit
// (validate::FitRequestOverhead): the value committed in Simulator::RequestOverheadSeconds.
// --markdown prints the per-row table for docs/dev/VALIDATION.md.
// Exit: 0 (whatever the score); 2 for a missing or malformed file (one line naming the line and
// column), a file without data rows, or a --models-dir that is not a directory.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <chrono>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "common/parallel.h"
#include "sim/simulator.h"
#include "validate/validate.h"

#ifndef L2S_SOURCE_DIR
#define L2S_SOURCE_DIR "."
#endif

namespace l2s::cli {
namespace {

using validate::EngineFit;
using validate::EngineFitResult;
using validate::kMinRowsPerEngineFit;
using validate::kMissAbsPctError;
using validate::Measurement;
using validate::RowResult;
using validate::Scores;
using validate::Summary;

struct ValidateFlags {
  std::string measurements;
  std::string models_dir;
  bool json = false;
  bool markdown = false;
  bool fit = false;
  bool fit_overhead = false;
  int jobs = 0;  // rows predicted at once (threads); 0 = every core
};

nlohmann::ordered_json Num(double v) {
  if (!std::isfinite(v)) return nullptr;
  return v;
}

std::string ModelShort(const std::string& config) {
  std::string s = config;
  if (s.size() > 5 && s.compare(s.size() - 5, 5, ".json") == 0) s.resize(s.size() - 5);
  const size_t dd = s.find("--");
  return dd == std::string::npos ? s : s.substr(dd + 2);
}

std::string Lengths(const Measurement& m) {
  if (m.mode == "decode") return fmt::format("ctx {}", m.context);
  if (m.mode == "prefill") return fmt::format("isl {}", m.isl);
  return fmt::format("{}/{}", m.isl, m.osl);
}

// How a predicted row was run when not at its steady state, in brackets: the benchmark client or
// the offline run it was simulated as (Prediction::lengths), or a note on an ok row (its reason:
// the static model kept above a work limit). "" otherwise.
std::string Simulated(const validate::Prediction& p) {
  std::string s;
  if (!p.lengths.empty()) s += " [" + p.lengths + "]";
  if (p.ok && !p.reason.empty()) s += " [" + p.reason + "]";
  return s;
}

std::string Degrees(const Measurement& m) {
  std::string s = fmt::format("{}/{}/{}/{}", m.tp, m.pp,
                              m.dp == 0 ? std::string("-") : std::to_string(m.dp), m.ep);
  if (m.replicas > 1) s = fmt::format("{}x{}", m.replicas, s);
  return s;
}

// What the row states beyond the degrees: slots, MTP, batch source.
std::string Extras(const Measurement& m) {
  std::string s;
  auto add = [&](const std::string& x) { s += (s.empty() ? "" : " ") + x; };
  if (m.expert_slots > 0) add(fmt::format("slots={}", m.expert_slots));
  if (m.mtp > 0) add(m.mtp_accept > 0 ? fmt::format("mtp={}@{:g}", m.mtp, m.mtp_accept)
                                      : fmt::format("mtp={}", m.mtp));
  if (!m.noted.Text().empty()) add(m.noted.Text());
  return s;
}

std::vector<std::string> ModelDirs(const ValidateFlags& f) {
  if (!f.models_dir.empty()) return {f.models_dir};
  std::vector<std::string> dirs = {"../shared/models/hf"};
  const std::filesystem::path mdir = std::filesystem::path(f.measurements).parent_path();
  dirs.push_back(((mdir.empty() ? std::filesystem::path(".") : mdir) / ".." / "models" / "hf").string());
  dirs.push_back(std::string(L2S_SOURCE_DIR) + "/../shared/models/hf");
  return dirs;
}

nlohmann::ordered_json ScoresJson(const Scores& s) {
  nlohmann::ordered_json j;
  j["rows"] = s.rows;
  j["predicted"] = s.predicted;
  j["missed"] = s.missed;
  j["median_abs_pct_error"] = Num(s.median_abs_pct_error);
  j["mean_abs_pct_error"] = Num(s.mean_abs_pct_error);
  j["share_within_25pct"] = Num(s.share_within_25pct);
  return j;
}

void PrintGroupsText(const Summary& s) {
  // The group column as wide as its longest label ("metric output_tokens_per_s" is 26), at least 24.
  std::vector<std::pair<std::string, const Scores*>> rows;
  for (const auto& [name, g] : s.by_engine) rows.emplace_back("engine " + name, &g);
  for (const auto& [name, g] : s.by_regime) rows.emplace_back("regime " + name, &g);
  for (const auto& [name, g] : s.by_gpu) rows.emplace_back("gpu " + name, &g);
  for (const auto& [name, g] : s.by_metric) rows.emplace_back("metric " + name, &g);
  size_t w = 24;
  for (const auto& r : rows) w = std::max(w, r.first.size());
  fmt::print("{:<{}} {:>5} {:>6} {:>9} {:>9}\n", "group", w, "rows", "missed", "median", "within25");
  for (const auto& [name, g] : rows)
    fmt::print("{:<{}} {:>5} {:>6} {:>8.1f}% {:>8.1f}%\n", name, w, g->rows, g->missed,
               g->median_abs_pct_error, 100.0 * g->share_within_25pct);
}

void PrintSummaryText(const Summary& s) {
  fmt::print("rows {}: {} predicted, {} missed (a miss counts as {:.0f}% error)\n", s.rows,
             s.predicted, s.missed, kMissAbsPctError);
  fmt::print("median |error|      {:.1f}%   (mean {:.1f}%)\n", s.median_abs_pct_error,
             s.mean_abs_pct_error);
  fmt::print("within +/-25%       {:.1f}% of rows\n", 100.0 * s.share_within_25pct);
  if (s.spearman_groups > 0) {
    fmt::print("spearman over tp    {:.3f} (mean of {} groups), pooled {:.3f}; per GPU {:.3f}\n",
               s.spearman, s.spearman_groups, s.spearman_pooled, s.spearman_per_gpu);
  } else {
    fmt::print("spearman over tp    n/a (no group with >= 3 tensor-parallel sizes)\n");
  }
  fmt::print("\n");
  PrintGroupsText(s);
}

// "validate: row 12 of 149 (8%)  3.1 s" on stderr while rows are predicted (a row simulated
// request by request takes seconds), redrawn at most every 100 ms and erased after the last row;
// only when stderr is a terminal.
std::function<void(size_t, size_t)> RowProgress() {
  if (!StderrIsTerminal()) return {};
  const auto start = std::chrono::steady_clock::now();
  auto last = start - std::chrono::seconds(1);
  return [start, last](size_t done, size_t total) mutable {
    const auto now = std::chrono::steady_clock::now();
    if (done < total && now - last < std::chrono::milliseconds(100)) return;
    last = now;
    if (done >= total) {
      std::fprintf(stderr, "\r\033[K");
    } else {
      std::fprintf(stderr, "\r\033[Kvalidate: row %zu of %zu (%.0f%%)  %.1f s", done + 1, total,
                   100.0 * static_cast<double>(done) / static_cast<double>(total),
                   std::chrono::duration<double>(now - start).count());
    }
    std::fflush(stderr);
  };
}

int RunFit(const std::vector<Measurement>& rows, const std::vector<std::string>& dirs, bool json,
           int jobs) {
  validate::Predictor pred(dirs, /*apply_engine_factor=*/false);
  const std::vector<RowResult> res = validate::PredictAll(rows, &pred, RowProgress(), jobs);
  const EngineFitResult fit = validate::FitEngineFactors(res);
  if (json) {
    nlohmann::ordered_json j;
    nlohmann::ordered_json fams = nlohmann::ordered_json::array();
    for (const EngineFit& f : fit.families)
      fams.push_back({{"family", f.family},
                      {"rows", f.rows},
                      {"median_ratio", Num(f.median_ratio)},
                      {"own_factor", f.own_factor},
                      {"factor", Num(f.own_factor ? f.median_ratio : fit.default_factor)}});
    j["families"] = std::move(fams);
    j["default_factor"] = Num(fit.default_factor);
    j["rows"] = fit.rows;
    j["min_rows_per_family"] = kMinRowsPerEngineFit;
    fmt::print("{}\n", DumpJson(j));
    return kExitOk;
  }
  fmt::print("engine factors = median of measured / predicted (ideal engine), {} predicted rows\n",
             fit.rows);
  fmt::print("{:<12} {:>5} {:>13}  {}\n", "family", "rows", "median ratio", "factor");
  for (const EngineFit& f : fit.families)
    fmt::print("{:<12} {:>5} {:>13.4f}  {}\n", f.family.empty() ? "(none)" : f.family, f.rows,
               f.median_ratio,
               f.own_factor ? fmt::format("{:.4f}", f.median_ratio)
                            : fmt::format("default (fewer than {} rows)", kMinRowsPerEngineFit));
  fmt::print("{:<12} {:>5} {:>13.4f}  (unknown engines and small families)\n", "default", fit.rows,
             fit.default_factor);
  return kExitOk;
}

int RunFitOverhead(const std::vector<Measurement>& rows, const std::vector<std::string>& dirs,
                   bool json, int jobs) {
  validate::Predictor pred(dirs, /*apply_engine_factor=*/true);
  pred.set_request_overhead(false);
  // Only the rows the fit reads are predicted (each costs a benchmark-client run).
  std::vector<Measurement> fit_rows;
  for (const Measurement& m : rows)
    if (validate::RequestOverheadFitRow(m)) fit_rows.push_back(m);
  const validate::RequestOverheadFit fit =
      validate::FitRequestOverhead(validate::PredictAll(fit_rows, &pred, {}, jobs));
  if (fit.rows == 0)
    return Fail(fmt::format(
        "--fit-request-overhead: no serve ttft_ms row with a concurrency of at most {} could be "
        "predicted (../shared/reference/measurements-frontier.csv has them)",
        validate::kRequestOverheadFitConcurrency));
  if (json) {
    nlohmann::ordered_json j;
    j["rows"] = fit.rows;
    j["max_concurrency"] = validate::kRequestOverheadFitConcurrency;
    j["min_rows_per_family"] = validate::kMinRowsPerEngineFit;
    j["families"] = nlohmann::ordered_json::array();
    for (const validate::RequestOverheadFamily& f : fit.families)
      j["families"].push_back({{"family", f.family},
                               {"rows", f.rows},
                               {"request_overhead_ms", Num(f.overhead_s * 1e3)},
                               {"own", f.own}});
    fmt::print("{}\n", DumpJson(j));
    return kExitOk;
  }
  fmt::print("request overhead = per engine family, the median of measured - predicted mean TTFT "
             "over its serve rows at concurrency <= {} ({} rows; a family needs {})\n",
             validate::kRequestOverheadFitConcurrency, fit.rows, validate::kMinRowsPerEngineFit);
  for (const validate::RequestOverheadFamily& f : fit.families)
    fmt::print("{:<8} {:>2} rows  {:.1f} ms{}\n", f.family, f.rows, f.overhead_s * 1e3,
               f.own ? "" : "  (too few rows: 0)");
  return kExitOk;
}

nlohmann::ordered_json RowJson(const RowResult& r) {
  const Measurement& m = r.row;
  nlohmann::ordered_json o;
  o["id"] = m.id;
  o["line"] = m.line;
  o["engine"] = m.engine;
  o["engine_family"] = validate::EngineFamily(m.engine);
  o["regime"] = validate::Regime(m);
  o["model"] = m.model_config;
  o["gpu"] = m.gpu;
  o["gpus"] = m.gpus;
  o["replicas"] = r.pred.replicas;
  o["tp"] = m.tp;
  o["pp"] = m.pp;
  o["dp"] = m.dp;
  o["ep"] = m.ep;
  o["expert_slots"] = m.expert_slots;
  o["mtp"] = m.mtp;
  o["mtp_accept"] = m.mtp_accept > 0 ? Num(m.mtp_accept) : nullptr;
  o["mode"] = m.mode;
  o["isl"] = m.isl;
  o["osl"] = m.osl;
  o["context"] = m.context;
  o["batch_stated"] = m.batch;
  o["concurrency"] = m.concurrency;
  o["max_batch"] = m.max_batch;
  o["max_num_tokens"] = m.max_num_tokens;
  o["from_notes"] = m.noted.Text();
  o["metric"] = m.metric;
  o["measured"] = m.value;
  o["predicted"] = r.pred.ok ? Num(r.pred.predicted) : nullptr;
  o["predicted_ideal_engine"] = r.pred.ok ? Num(r.pred.raw) : nullptr;
  o["engine_factor"] = r.pred.factor;
  o["error_pct"] = r.pred.ok ? Num(r.error_pct) : nullptr;
  o["abs_error_pct_scored"] = r.pred.ok ? std::fabs(r.error_pct) : kMissAbsPctError;
  o["status"] = r.pred.ok ? "ok" : "miss";
  o["reason"] = r.pred.reason;
  o["batch"] = r.pred.batch;
  o["strategy"] = r.pred.strategy;
  o["limits"] = r.pred.limits;
  o["chosen"] = r.pred.chosen;
  o["lengths"] = r.pred.lengths;
  return o;
}

int Run(const ValidateFlags& f) {
  if (f.measurements.empty()) return Fail(std::string("--measurements FILE is required"));
  if (f.json && f.markdown) return Fail(std::string("--json and --markdown are exclusive"));
  std::error_code ec;
  if (!f.models_dir.empty() && !std::filesystem::is_directory(f.models_dir, ec))
    return Fail(Status::NotFound(fmt::format("--models-dir '{}': no such directory", f.models_dir)));
  std::ifstream in(f.measurements, std::ios::binary);
  if (!in) return Fail(Status::NotFound(fmt::format("cannot open '{}'", f.measurements)));
  std::stringstream buf;
  buf << in.rdbuf();
  StatusOr<std::vector<Measurement>> rows = validate::ParseMeasurements(buf.str(), f.measurements);
  if (!rows.ok()) return Fail(rows.status());
  if (rows->empty())
    return Fail(Status::ParseError(
        fmt::format("{}: no data rows (only a header): nothing to validate", f.measurements)));
  const std::vector<std::string> dirs = ModelDirs(f);
  const int jobs = f.jobs > 0 ? f.jobs : HardwareJobs();
  if (f.fit) return RunFit(*rows, dirs, f.json, jobs);
  if (f.fit_overhead) return RunFitOverhead(*rows, dirs, f.json, jobs);

  validate::Predictor pred(dirs, /*apply_engine_factor=*/true);
  const std::vector<RowResult> res = validate::PredictAll(*rows, &pred, RowProgress(), jobs);
  const Summary s = validate::Summarize(res);

  if (f.json) {
    nlohmann::ordered_json j;
    j["measurements"] = f.measurements;
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const RowResult& r : res) arr.push_back(RowJson(r));
    j["rows"] = std::move(arr);
    j["num_rows"] = s.rows;
    j["num_predicted"] = s.predicted;
    j["num_missed"] = s.missed;
    j["median_abs_pct_error"] = Num(s.median_abs_pct_error);
    j["mean_abs_pct_error"] = Num(s.mean_abs_pct_error);
    j["share_within_25pct"] = Num(s.share_within_25pct);
    j["spearman"] = Num(s.spearman);
    j["spearman_pooled"] = Num(s.spearman_pooled);
    j["spearman_per_gpu"] = Num(s.spearman_per_gpu);
    j["spearman_groups"] = s.spearman_groups;
    nlohmann::ordered_json groups;
    groups["engine"] = nlohmann::ordered_json::object();
    for (const auto& [name, g] : s.by_engine) groups["engine"][name] = ScoresJson(g);
    groups["regime"] = nlohmann::ordered_json::object();
    for (const auto& [name, g] : s.by_regime) groups["regime"][name] = ScoresJson(g);
    groups["gpu"] = nlohmann::ordered_json::object();
    for (const auto& [name, g] : s.by_gpu) groups["gpu"][name] = ScoresJson(g);
    groups["metric"] = nlohmann::ordered_json::object();
    for (const auto& [name, g] : s.by_metric) groups["metric"][name] = ScoresJson(g);
    j["groups"] = std::move(groups);
    fmt::print("{}\n", DumpJson(j));
    return kExitOk;
  }

  if (f.markdown) {
    fmt::print("| id | engine | model | GPUs | tp/pp/dp/ep | stated | mode | lengths | batch | "
               "metric | measured | predicted | error |\n");
    fmt::print("|---|---|---|---:|---|---|---|---|---:|---|---:|---:|---:|\n");
    for (const RowResult& r : res) {
      const Measurement& m = r.row;
      fmt::print("| {} | {} | {} | {} {} | {} | {} | {} | {} | {} | {} | {:.0f} | {} | {} |\n",
                 m.id, m.engine, ModelShort(m.model_config), m.gpus, m.gpu, Degrees(m),
                 r.pred.limits.empty() ? Extras(m)
                                       : fmt::format("{}{}({})", Extras(m),
                                                     Extras(m).empty() ? "" : " ", r.pred.limits),
                 m.mode, Lengths(m) + Simulated(r.pred),
                 r.pred.batch > 0 ? std::to_string(r.pred.batch) : "-",
                 m.metric, m.value, r.pred.ok ? fmt::format("{:.0f}", r.pred.predicted) : "MISS",
                 r.pred.ok ? fmt::format("{:+.1f}%", r.error_pct) : r.pred.reason);
    }
    fmt::print("\n");
    PrintSummaryText(s);
    return kExitOk;
  }

  fmt::print("{:<5} {:<12} {:<22} {:>4} {:<5} {:<12} {:<7} {:<10} {:>5} {:>11} {:>11} {:>8}  {}\n",
             "id", "engine", "model", "gpus", "gpu", "tp/pp/dp/ep", "mode", "lengths", "batch",
             "measured", "predicted", "error", "status");
  for (const RowResult& r : res) {
    const Measurement& m = r.row;
    fmt::print("{:<5} {:<12} {:<22} {:>4} {:<5} {:<12} {:<7} {:<10} {:>5} {:>11.1f} {:>11} {:>8}  {}\n",
               m.id, m.engine.substr(0, 12), ModelShort(m.model_config).substr(0, 22), m.gpus,
               m.gpu, Degrees(m), m.mode, Lengths(m),
               r.pred.batch > 0 ? std::to_string(r.pred.batch) : "-", m.value,
               r.pred.ok ? fmt::format("{:.1f}", r.pred.predicted) : "-",
               r.pred.ok ? fmt::format("{:+.1f}%", r.error_pct) : "-",
               r.pred.ok ? "ok " + m.metric + (r.pred.chosen.empty() ? "" : " (best: " + r.pred.chosen + ")") +
                               Simulated(r.pred)
                         : "MISS: " + r.pred.reason);
  }
  fmt::print("\n");
  PrintSummaryText(s);
  return kExitOk;
}

}  // namespace

Runner RegisterValidate(CLI::App& app) {
  auto f = std::make_shared<ValidateFlags>();
  CLI::App* cmd =
      app.add_subcommand("validate", "Predict measured deployments and score the simulator");
  cmd->add_option("--measurements", f->measurements, "CSV of measured deployments");
  cmd->add_option("--models-dir", f->models_dir,
                  "directory of the model_config files (default ../shared/models/hf)");
  cmd->add_flag("--json", f->json, "print one JSON object");
  cmd->add_flag("--markdown", f->markdown, "print the per-row table as Markdown");
  cmd->add_flag("--fit-engine-factors", f->fit,
                "fit one factor per engine family (median of measured / predicted)");
  cmd->add_flag("--fit-request-overhead", f->fit_overhead,
                "fit each engine family's request overhead (its low-concurrency ttft_ms rows)");
  cmd->add_option("--jobs", f->jobs,
                  "rows predicted at once, on threads (default: every core); the same figures for "
                  "every N")
      ->check(CLI::Range(1, 4096));
  return [f] { return Run(*f); };
}

}  // namespace l2s::cli
