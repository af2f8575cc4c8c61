// `l2s plan --gpu a,b,c`: the same problem planned on each GPU type, one table (issue 46). Each
// GPU type is exactly `l2s plan ... --gpu G --json` run in a child process (cli::PlanRunner,
// as sweeps run scenarios), so every row equals that plan; this file only builds the argument
// lists and formats the rows (sweep::Summary reads each plan's JSON).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/gpu_list.h"
#include "cli/common.h"
#include "cli/run.h"
#include "cli/output.h"
#include "cli/report.h"
#include "cli/pareto_report.h"
#include "cli/svg.h"
#include "plan/pareto.h"
#include "sweep/sweep.h"

namespace l2s::cli {
namespace {


// `plan --gpu a,b,c --pareto`: each GPU type's TPOT sweep (`l2s plan --gpu G --pareto --json`, all
// its series), one chart with a series per GPU type: the front of all of its series, x tokens/s
// per user, y $ per million output tokens when every GPU type has a price (each point priced by
// the child plan, plan/cost.h), else output tokens/s per GPU.
int RunPlanHardwarePareto(const std::vector<std::string>& gpus, const std::vector<std::string>& prices,
                          const std::vector<std::string>& base_in, bool want_json,
                          const std::string& out_path) {
  std::vector<std::string> base = base_in;
  const std::string svg = TakeFlag(&base, "--svg", "pareto.svg");
  const std::string x_scale = TakeFlag(&base, "--x-scale", "log");
  const std::string y_scale = TakeFlag(&base, "--y-scale", "log");
  for (const std::string* v : {&x_scale, &y_scale})
    if (*v != "log" && *v != "linear")
      return Fail(fmt::format("--x-scale/--y-scale: log or linear, got {}", *v));
  const bool draw = svg != "none" && !svg.empty();
  if (draw)
    if (Status st = CheckWritable("--svg", svg); !st.ok()) return Fail(st);
  const sweep::Runner run = PlanRunner();
  struct Row {
    std::string gpu;
    int exit_code = 0;
    std::string reason;
    std::vector<ParetoPoint> front;
    std::vector<double> usd;  // per front point; empty: no price
  };
  std::vector<Row> rows;
  nlohmann::json problem;
  bool all_priced = true;
  for (size_t k = 0; k < gpus.size(); ++k) {
    sweep::Scenario s = GpuScenario("plan", k, gpus, prices, base);
    for (const char* a : {"--svg", "none", "--json"}) s.argv.push_back(a);
    if (!JsonMode())
      fmt::print(stderr, "l2s plan --pareto: {} ({} of {})...\n", gpus[k], k + 1, gpus.size());
    const sweep::Outcome o = run(s);
    Row r;
    r.gpu = gpus[k];
    r.exit_code = o.exit_code;
    nlohmann::json plan;
    try {
      plan = nlohmann::json::parse(o.stdout_text);
    } catch (const std::exception&) {
      plan = nullptr;
    }
    if (!plan.is_object() || !plan.contains("pareto") || !plan["pareto"].is_array()) {
      r.reason = plan.is_object() && plan.contains("reason") && plan["reason"].is_string()
                     ? plan["reason"].get<std::string>()
                     : fmt::format("exit code {}", o.exit_code);
      all_priced = false;
      rows.push_back(r);
      continue;
    }
    if (problem.is_null()) problem = plan["problem"];
    // Every series' front points; their front is the best this GPU type reaches.
    std::vector<ParetoPoint> pts;
    for (const nlohmann::json& q : plan["pareto"]) {
      ParetoPoint pt;
      pt.series = q.value("series", "");
      pt.tokens_per_s_per_gpu = q.value("tokens_per_s_per_gpu", 0.0);
      pt.tokens_per_s_per_user = q.value("tokens_per_s_per_user", 0.0);
      pt.tpot_ms = q.value("tpot_ms", 0.0);
      pt.ttft_ms = q.value("ttft_ms", 0.0);
      pt.strategy = q.value("strategy", "");
      pt.usd_per_mtok_output =
          q.contains("usd_per_mtok_output") && q["usd_per_mtok_output"].is_number()
              ? q["usd_per_mtok_output"].get<double>()
              : -1;
      pts.push_back(pt);
    }
    r.front = ParetoFront(pts);
    for (const ParetoPoint& pt : r.front) {
      if (pt.usd_per_mtok_output < 0) all_priced = false;
      r.usd.push_back(pt.usd_per_mtok_output);
    }
    if (r.front.empty()) {
      r.reason = "no valid plan under any TPOT limit";
      all_priced = false;
    }
    rows.push_back(r);
  }
  {
    std::vector<std::pair<int, std::string>> outcomes;
    for (const Row& r : rows) outcomes.emplace_back(r.exit_code, r.reason);
    if (const std::optional<std::string> common = CommonInputError(outcomes)) return Fail(*common);
  }
  bool any = false;
  for (const Row& r : rows) any |= !r.front.empty();
  all_priced = all_priced && any;

  Plot plot;
  const std::string model = problem.is_object() ? problem.value("model", "") : "";
  const int n = problem.is_object() ? problem.value("gpus", 0) : 0;
  plot.title = all_priced
                   ? fmt::format("{} on {} GPUs of each type: cost vs interactivity", model, n)
                   : fmt::format("{} on {} GPUs of each type: throughput vs interactivity", model, n);
  plot.x_label = "tokens/s per user (1000 / TPOT ms)";
  plot.y_label = all_priced ? "$ per million output tokens" : "output tokens/s per GPU";
  plot.log_x = x_scale == "log";
  plot.log_y = y_scale == "log";
  plot.pad = 0.04;
  plot.legend = Plot::Legend::kInside;
  const std::vector<std::string>& colors = ParetoColors();
  for (size_t k = 0; k < rows.size(); ++k) {
    const Row& r = rows[k];
    if (r.front.empty()) continue;
    std::vector<ParetoPoint> front = r.front;
    if (all_priced)
      for (size_t i = 0; i < front.size(); ++i) front[i].tokens_per_s_per_gpu = r.usd[i];
    const std::string price_k =
        !prices.empty() ? prices[k] : FindFlag(base, "--price-per-gpu-hour").value;
    const std::string label =
        all_priced && !price_k.empty()
            ? fmt::format("{} at ${}/GPU-h ({} on the front)", r.gpu, price_k, front.size())
            : fmt::format("{} ({} on the front)", r.gpu, front.size());
    AddStaircase(front, label, colors[k % colors.size()], &plot);
  }
  if (problem.is_object() && problem.contains("slo") && problem["slo"].is_object() &&
      problem["slo"]["tpot_ms"].is_number())
    AddSloRegion(problem["slo"]["tpot_ms"].get<double>(), &plot);
  if (draw) {
    if (Status st = WriteSvg(plot, svg); !st.ok()) return Fail(Status::IoError("--svg " + st.message()));
    fmt::print(stderr, "l2s plan --pareto: wrote {}\n", svg);
  }

  if (want_json || !out_path.empty()) {
    nlohmann::ordered_json j;
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const Row& r : rows) {
      nlohmann::ordered_json e;
      e["gpu"] = r.gpu;
      e["exit_code"] = r.exit_code;
      nlohmann::ordered_json f = nlohmann::ordered_json::array();
      for (size_t i = 0; i < r.front.size(); ++i) {
        nlohmann::ordered_json q;
        q["series"] = r.front[i].series;
        q["tokens_per_s_per_user"] = r.front[i].tokens_per_s_per_user;
        q["tokens_per_s_per_gpu"] = r.front[i].tokens_per_s_per_gpu;
        q["usd_per_mtok_output"] = r.usd[i] >= 0 ? nlohmann::ordered_json(r.usd[i]) : nlohmann::ordered_json();
        q["ttft_ms"] = r.front[i].ttft_ms;
        q["tpot_ms"] = r.front[i].tpot_ms;
        q["strategy"] = r.front[i].strategy;
        f.push_back(q);
      }
      e["front"] = f;
      e["reason"] = r.reason.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.reason);
      a.push_back(e);
    }
    j["hardware_pareto"] = a;
    j["y"] = all_priced ? "usd_per_mtok_output" : "tokens_per_s_per_gpu";
    j["svg"] = draw ? nlohmann::ordered_json(svg) : nlohmann::ordered_json();
    // --out: the comparison's JSON (the children's own --out would all write one file).
    if (!out_path.empty())
      if (Status st = WriteFileAtomic(out_path, DumpJson(j) + "\n"); !st.ok())
        return Fail(Status::IoError("--out " + st.message()));
    if (want_json) fmt::print("{}\n", DumpJson(j));
  }
  if (!want_json) {
    fmt::print("Hardware Pareto fronts (each GPU type swept as `l2s plan --gpu G --pareto` sweeps "
               "it; the front of all its series)\n");
    fmt::print("  {:<8} {:>6} {:>21} {:>14} {:>16}\n", "gpu", "points", "tok/s/user range",
               "max tok/s/GPU", "min $/Mtok out");
    for (const Row& r : rows) {
      if (r.front.empty()) {
        fmt::print("  {:<8} no front: {}\n", r.gpu, r.reason);
        continue;
      }
      double cheapest = -1;
      for (double u : r.usd)
        if (u >= 0 && (cheapest < 0 || u < cheapest)) cheapest = u;
      fmt::print("  {:<8} {:>6} {:>21} {:>14.2f} {:>16}\n", r.gpu, r.front.size(),
                 fmt::format("{:.1f} - {:.1f}", r.front.front().tokens_per_s_per_user,
                             r.front.back().tokens_per_s_per_user),
                 r.front.front().tokens_per_s_per_gpu,
                 cheapest >= 0 ? fmt::format("{:.3f}", cheapest) : std::string("-"));
    }
    if (draw) fmt::print("  chart: {} (y: {})\n", svg, plot.y_label);
  }
  std::vector<std::pair<std::string, std::string>> bad;
  for (const Row& r : rows)
    if (r.exit_code == 2) bad.emplace_back(r.gpu, r.reason);
  ReportBadInputs(bad);
  if (!bad.empty()) return 2;
  return any ? 0 : 1;
}

}  // namespace

bool IsHardwareComparison(const std::vector<std::string>& plan_args) {
  const FlagValue gpu = FindFlag(plan_args, "--gpu");
  return gpu.index >= 0 && gpu.value.find(',') != std::string::npos;
}

int RunPlanHardware(const std::vector<std::string>& plan_args) {
  bool want_json = false;
  std::vector<std::string> base = WithoutJsonFlag(plan_args, &want_json);
  // --out is the comparison's file, not each child plan's.
  const std::string out_path = TakeFlag(&base, "--out", "");
  if (!out_path.empty())
    if (Status st = CheckWritable("--out", out_path); !st.ok()) return Fail(st);
  StatusOr<GpuList> list = ParseGpuList(base);
  if (!list.ok()) return Fail(list.status());
  const std::vector<std::string>& gpus = list->gpus;
  const std::vector<std::string>& prices = list->prices;
  for (const std::string& a : base)
    if (a == "--pareto") return RunPlanHardwarePareto(gpus, prices, base, want_json, out_path);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::vector<nlohmann::json> summaries;
  // Every GPU type's plan at once (child plans, as a sweep runs its scenarios), read in order.
  const GpuRuns runs = RunPerGpuType("plan", gpus, prices, base);
  const std::vector<sweep::Outcome>& outcomes = runs.outcomes;
  const std::string& emit_dir = runs.emit_dir;  // --emit DIR: each GPU type's files in DIR/<gpu>
  for (size_t k = 0; k < gpus.size(); ++k) {
    const sweep::Scenario& s = runs.scenarios[k];
    const sweep::Outcome& o = outcomes[k];
    nlohmann::json entry = {{"exit_code", o.exit_code}, {"stdout", o.stdout_text}};
    nlohmann::json sum = sweep::Summary(s, entry);
    nlohmann::json plan;
    try {
      plan = nlohmann::json::parse(o.stdout_text);
    } catch (const std::exception&) {
      plan = nullptr;
    }
    nlohmann::ordered_json r;
    r["gpu"] = gpus[k];
    r["exit_code"] = o.exit_code;
    r["valid"] = sum["valid"];
    r["engine"] = sum["engine"];
    r["tokens_per_s_per_gpu"] = sum["tokens_per_s_per_gpu"];
    r["ttft_ms"] = sum["ttft_ms"];
    r["tpot_ms"] = sum["tpot_ms"];
    r["serving"] = sum["serving"];
    r["strategy"] = sum["strategy"];
    r["cost"] = plan.is_object() && plan.contains("best") && plan["best"].is_object() &&
                        plan["best"].contains("cost")
                    ? plan["best"]["cost"]
                    : nlohmann::json();
    r["reason"] = sum["reason"];
    // With a traffic: the pick's simulated P99s beside the steady-state latencies.
    const bool served = plan.is_object() && plan.contains("best") && plan["best"].is_object() &&
                        plan["best"].contains("serve");
    r["p99_ttft_ms"] = served ? plan["best"]["serve"]["ttft_ms"]["p99"] : nlohmann::json();
    r["p99_tpot_ms"] = served ? plan["best"]["serve"]["tpot_ms"]["p99"] : nlohmann::json();
    rows.push_back(r);
    // The workload's mode (decode has no TTFT, prefill no TPOT: "n/a" in the table, as plan says).
    sum["mode"] = plan.is_object() && plan.contains("problem") ? plan["problem"].value("mode", "") : "";
    summaries.push_back(sum);
  }
  // The fastest per GPU and, with a price, the cheapest per output token.
  int fastest = -1, cheapest = -1;
  for (size_t k = 0; k < summaries.size(); ++k) {
    const nlohmann::json& s = summaries[k];
    if (s["valid"] != true || !s["tokens_per_s_per_gpu"].is_number()) continue;
    if (fastest < 0 || s["tokens_per_s_per_gpu"].get<double>() >
                           summaries[fastest]["tokens_per_s_per_gpu"].get<double>())
      fastest = static_cast<int>(k);
    if (s["usd_per_mtok_output"].is_number() &&
        (cheapest < 0 || s["usd_per_mtok_output"].get<double>() <
                             summaries[cheapest]["usd_per_mtok_output"].get<double>()))
      cheapest = static_cast<int>(k);
  }
  {
    std::vector<std::pair<int, std::string>> outcomes;
    for (const auto& r : rows)
      outcomes.emplace_back(r["exit_code"].get<int>(),
                            r["reason"].is_string() ? r["reason"].get<std::string>() : "");
    if (const std::optional<std::string> common = CommonInputError(outcomes)) return Fail(*common);
  }
  // The GPU types whose plan stopped on their own input (exit 2), with the reason.
  std::vector<std::pair<std::string, std::string>> bad;
  for (size_t k = 0; k < rows.size(); ++k)
    if (rows[k]["exit_code"] == 2)
      bad.emplace_back(gpus[k], rows[k]["reason"].is_string() ? rows[k]["reason"].get<std::string>()
                                                              : std::string("bad input"));
  if (want_json || !out_path.empty()) {
    nlohmann::ordered_json j;
    j["hardware"] = rows;
    j["fastest_per_gpu"] = fastest >= 0 ? nlohmann::ordered_json(gpus[fastest]) : nlohmann::ordered_json();
    j["cheapest_per_output_token"] =
        cheapest >= 0 ? nlohmann::ordered_json(gpus[cheapest]) : nlohmann::ordered_json();
    // --out: the comparison's JSON (the children's own --out would all write one file).
    if (!out_path.empty())
      if (Status st = WriteFileAtomic(out_path, DumpJson(j) + "\n"); !st.ok())
        return Fail(Status::IoError("--out " + st.message()));
    if (want_json) fmt::print("{}\n", DumpJson(j));
  }
  if (!want_json) {
    // A prefill's tokens are its prompts': its cost columns count prompt tokens (its "output"
    // tokens are the first tokens, one per prompt), as its cost line does.
    bool prefill = false;
    for (const nlohmann::json& s : summaries) prefill = prefill || s["mode"] == "prefill";
    const char* usd_key = prefill ? "usd_per_mtok_total" : "usd_per_mtok_output";
    const char* joules_key = prefill ? "tokens_per_joule_total" : "tokens_per_joule_output";
    auto cost = [&](size_t k, const char* key) -> nlohmann::json {  // null: not priced
      const nlohmann::ordered_json& c = rows[k]["cost"];
      return c.is_object() && c.contains(key) ? nlohmann::json(c[key]) : nlohmann::json();
    };
    // A traffic's plans: their simulated P99s too (the SLO's percentiles), after the steady state's.
    bool traffic = false;
    for (const auto& r : rows) traffic = traffic || r["p99_ttft_ms"].is_number();
    auto p99 = [&](size_t k) {
      return traffic ? fmt::format(" {:>9} {:>9}", Cell(rows[k]["p99_ttft_ms"], "{:.1f}"),
                                   Cell(rows[k]["p99_tpot_ms"], "{:.2f}"))
                     : std::string();
    };
    fmt::print("Hardware (each GPU type planned as `l2s plan --gpu G` plans it)\n");
    fmt::print("  {:<8} {:>10} {:>9} {:>9}{} {:>11} {:>10}  {:<8} {}\n", "gpu", "tok/s/GPU",
               "TTFT ms", "TPOT ms",
               traffic ? fmt::format(" {:>9} {:>9}", "p99 TTFT", "p99 TPOT") : std::string(),
               prefill ? "$/Mtok in" : "$/Mtok out", prefill ? "tok/J in" : "tok/J out", "engine",
               "plan");
    bool shortened = false;
    for (size_t k = 0; k < summaries.size(); ++k) {
      const nlohmann::json& s = summaries[k];
      if (s["valid"] == true && s["strategy"].is_string() && s["engine"] != "ideal") shortened = true;
      if (s["valid"] != true) {
        fmt::print("  {:<8} no valid plan: {}\n", gpus[k], s["reason"].is_string() ? s["reason"].get<std::string>() : "");
        continue;
      }
      fmt::print("  {:<8} {:>10} {:>9} {:>9}{} {:>11} {:>10}  {:<8} {}\n", gpus[k],
                 Cell(s["tokens_per_s_per_gpu"], "{:.2f}"),
                 s["mode"] == "decode" ? std::string("n/a") : Cell(s["ttft_ms"], "{:.1f}"),
                 s["mode"] == "prefill" ? std::string("n/a") : Cell(s["tpot_ms"], "{:.2f}"), p99(k),
                 Cell(cost(k, usd_key), "{:.3f}"),
                 cost(k, joules_key).is_number() ? TwoDigits(cost(k, joules_key).get<double>())
                                                 : std::string("-"),
                 s["engine"].is_string() ? s["engine"].get<std::string>() : "-",
                 !s["strategy"].is_string() ? std::string("-")
                 : s["engine"] == "ideal"   ? s["strategy"].get<std::string>()
                                            : WithoutOperatorDims(s["strategy"].get<std::string>()));
    }
    if (shortened)
      fmt::print("  plan: degrees and options; a named engine runs its own operator layout (the full strategy: --json)\n");
    // A "-" of tok/J: the GPU's board power is not stated anywhere l2s reads (MI325X).
    std::string no_power;
    for (size_t k = 0; k < summaries.size(); ++k)
      if (summaries[k]["valid"] == true && !cost(k, joules_key).is_number())
        no_power += (no_power.empty() ? "" : ", ") + gpus[k];
    if (!no_power.empty())
      fmt::print("  tok/J -: no board power stated for {} (../shared/reference/HARDWARE.md; a "
                 "cluster file's gpu.tdp_w)\n",
                 no_power);
    if (fastest >= 0) fmt::print("  fastest per GPU: {}\n", gpus[fastest]);
    if (cheapest >= 0)
      fmt::print("  cheapest per {} token: {} (at the price given)\n", prefill ? "prompt" : "output",
                 gpus[cheapest]);
    else fmt::print("  no price given: --price-per-gpu-hour X (one for all) or p1,p2,... (one per GPU type)\n");
    if (!emit_dir.empty())
      fmt::print("  launch files: {}/<gpu> for each GPU type with a plan (start with its DEPLOY.md)\n",
                 emit_dir);
  }
  ReportBadInputs(bad);
  if (!bad.empty()) return 2;
  return fastest >= 0 ? 0 : 1;
}

}  // namespace l2s::cli
