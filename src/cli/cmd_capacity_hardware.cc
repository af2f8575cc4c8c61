// `l2s capacity --gpu a,b,c`: the same traffic sized on each GPU type, one table - how many GPUs
// of each type the traffic needs, in which deployment, and (with --price-per-gpu-hour, one for all
// or p1,p2,... one per type) what that costs per hour and per million output tokens, as each
// sizing prices its answer (its JSON's "cost"). Each GPU type is exactly `l2s capacity ... --gpu G
// --json` run in a child process (cli::PlanRunner, as `plan --gpu a,b,c` and sweeps run theirs),
// so every row equals that sizing; this file builds the argument lists and reads the answers.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/gpu_list.h"
#include "cli/output.h"
#include "sweep/sweep.h"

namespace l2s::cli {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

// A strategy's text as the table shows it: its degrees and options (WithoutOperatorDims), less
// the batch, which a sizing leaves to the scheduler ("batch=auto").
std::string Degrees(const std::string& strategy) {
  std::string out;
  for (const std::string& f : SplitCommas(WithoutOperatorDims(strategy)))
    if (f.rfind("batch=", 0) != 0) out += (out.empty() ? "" : ",") + f;
  return out;
}

// One GPU type's answer, read from `l2s capacity --gpu G --json` (exit 0: an answer; 1: none
// within --max-gpus; 2: bad input, "reason" the one line).
ojson AnswerRow(const std::string& gpu, const sweep::Outcome& o) {
  ojson r;
  r["gpu"] = gpu;
  r["exit_code"] = o.exit_code;
  json j;
  try {
    j = json::parse(o.stdout_text);
  } catch (const std::exception&) {
    j = nullptr;
  }
  const bool found = o.exit_code == 0 && j.is_object() && j.value("found", false);
  r["found"] = found;
  for (const char* k : {"engine", "serving", "gpus", "deployment", "p99_ttft_ms", "p99_tpot_ms",
                        "output_tokens_per_s", "usd_per_hour", "usd_per_mtok_output"})
    r[k] = nullptr;
  if (!found) {
    r["reason"] = j.is_object() && j.contains("reason") && j["reason"].is_string()
                      ? j["reason"].get<std::string>()
                  : o.exit_code == 1
                      ? std::string("no deployment within --max-gpus meets the SLOs (l2s capacity "
                                    "--gpu ") + gpu + " says why)"
                      : std::string("the sizing did not answer");
    return r;
  }
  r["reason"] = nullptr;
  r["engine"] = j["engine"];
  const bool disagg = j["best_serving"] == "disagg";
  r["serving"] = disagg ? "disagg" : "agg";
  json summary;
  if (disagg) {
    const json& d = j["disagg"]["candidates"][j["disagg"]["best"].get<int>()];
    r["gpus"] = d["gpus"];
    r["deployment"] = fmt::format(
        "{} x prefill [{}] + {} x decode [{}]", d["prefill_instances"].get<int>(),
        Degrees(d["prefill_strategy"].get<std::string>()), d["decode_instances"].get<int>(),
        Degrees(d["decode_strategy"].get<std::string>()));
    summary = d["summary"];
  } else {
    const json& c = j["candidates"][j["best"].get<int>()];
    r["gpus"] = c["gpus"];
    r["deployment"] = fmt::format("{} x [{}]", c["instances"].get<int>(),
                                  Degrees(c["strategy"].get<std::string>()));
    summary = c["summary"];
  }
  r["p99_ttft_ms"] = summary["ttft_ms"]["p99"];
  r["p99_tpot_ms"] = summary["tpot_ms"]["p99"];
  r["output_tokens_per_s"] = summary["output_tokens_per_s"];
  // What it costs at the user's price (the child's cost: plan/cost.h at the rate it served the
  // traffic).
  if (j.contains("cost") && j["cost"].is_object()) {
    r["usd_per_hour"] = j["cost"]["usd_per_hour"];
    r["usd_per_mtok_output"] = j["cost"]["usd_per_mtok_output"];
  }
  return r;
}

}  // namespace

int RunCapacityHardware(const std::vector<std::string>& capacity_args) {
  bool want_json = false;
  std::vector<std::string> base = WithoutJsonFlag(capacity_args, &want_json);
  StatusOr<GpuList> list = ParseGpuList(base);
  if (!list.ok()) return Fail(list.status());
  // One answer's timeline has no meaning for a table of them (--emit writes each type's files in
  // a folder of its own).
  if (FindFlag(base, "--svg").index >= 0)
    return Fail("--svg is for one GPU type's answer: size it with --gpu G");
  const std::vector<std::string>& gpus = list->gpus;
  const std::vector<std::string>& prices = list->prices;
  const GpuRuns runs = RunPerGpuType("capacity", gpus, prices, base);
  const std::vector<sweep::Outcome>& outcomes = runs.outcomes;
  const std::string& emit_dir = runs.emit_dir;  // --emit DIR: each GPU type's files in DIR/<gpu>
  ojson rows = ojson::array();
  std::vector<std::pair<int, std::string>> codes;
  for (size_t k = 0; k < gpus.size(); ++k) {
    rows.push_back(AnswerRow(gpus[k], outcomes[k]));
    codes.emplace_back(outcomes[k].exit_code, rows.back()["reason"].is_string()
                                                  ? rows.back()["reason"].get<std::string>()
                                                  : "");
  }
  if (const std::optional<std::string> common = CommonInputError(codes)) return Fail(*common);
  // The fewest GPUs (ties: the lower p99 TTFT) and, with prices, the cheapest per hour (ties: the
  // lower $ per million output tokens, i.e. the higher rate those dollars serve: a closed loop's
  // clients are served faster on faster GPUs).
  int fewest = -1, cheapest = -1;
  auto usd_per_mtok = [](const ojson& r) {
    return r["usd_per_mtok_output"].is_number() ? r["usd_per_mtok_output"].get<double>() : HUGE_VAL;
  };
  for (size_t k = 0; k < rows.size(); ++k) {
    const ojson& r = rows[k];
    if (!r["found"].get<bool>()) continue;
    const int n = r["gpus"].get<int>();
    if (fewest < 0 || n < rows[fewest]["gpus"].get<int>() ||
        (n == rows[fewest]["gpus"].get<int>() &&
         r["p99_ttft_ms"].get<double>() < rows[fewest]["p99_ttft_ms"].get<double>()))
      fewest = static_cast<int>(k);
    if (r["usd_per_hour"].is_number() &&
        (cheapest < 0 ||
         r["usd_per_hour"].get<double>() < rows[cheapest]["usd_per_hour"].get<double>() ||
         (r["usd_per_hour"].get<double>() == rows[cheapest]["usd_per_hour"].get<double>() &&
          usd_per_mtok(r) < usd_per_mtok(rows[cheapest]))))
      cheapest = static_cast<int>(k);
  }
  std::vector<std::pair<std::string, std::string>> bad;
  for (size_t k = 0; k < rows.size(); ++k)
    if (rows[k]["exit_code"] == 2) bad.emplace_back(gpus[k], rows[k]["reason"].get<std::string>());
  if (want_json) {
    ojson j;
    j["hardware"] = rows;
    j["fewest_gpus"] = fewest >= 0 ? ojson(gpus[fewest]) : ojson();
    j["cheapest_per_hour"] = cheapest >= 0 ? ojson(gpus[cheapest]) : ojson();
    fmt::print("{}\n", DumpJson(j));
  } else {
    fmt::print("Hardware (each GPU type sized as `l2s capacity --gpu G` sizes it)\n");
    fmt::print("  {:<8} {:>5}  {:<7} {:>9} {:>9} {:>9} {:>11}  {:<8} {}\n", "gpu", "GPUs",
               "serving", "p99 TTFT", "p99 TPOT", "$/hour", "$/Mtok out", "engine", "deployment");
    for (const ojson& r : rows) {
      const std::string g = r["gpu"].get<std::string>();
      if (!r["found"].get<bool>()) {
        fmt::print("  {:<8} no answer: {}\n", g, r["reason"].get<std::string>());
        continue;
      }
      fmt::print("  {:<8} {:>5}  {:<7} {:>9} {:>9} {:>9} {:>11}  {:<8} {}\n", g,
                 r["gpus"].get<int>(), r["serving"].get<std::string>(),
                 Cell(r["p99_ttft_ms"], "{:.1f}"), Cell(r["p99_tpot_ms"], "{:.1f}"),
                 Cell(r["usd_per_hour"], "{:.2f}"), Cell(r["usd_per_mtok_output"], "{:.3f}"),
                 r["engine"].is_string() ? r["engine"].get<std::string>() : "-",
                 r["deployment"].get<std::string>());
    }
    if (fewest >= 0) fmt::print("  fewest GPUs: {}\n", gpus[fewest]);
    if (cheapest >= 0)
      fmt::print("  cheapest per hour: {} (at the price given; $/Mtok out at the rate the traffic "
                 "is served)\n",
                 gpus[cheapest]);
    else
      fmt::print("  no price given: --price-per-gpu-hour X (one for all) or p1,p2,... (one per GPU "
                 "type)\n");
    if (!emit_dir.empty())
      fmt::print("  launch files: {}/<gpu> for each GPU type with an answer (start with its "
                 "DEPLOY.md)\n",
                 emit_dir);
  }
  ReportBadInputs(bad);
  if (!bad.empty()) return 2;
  return fewest >= 0 ? 0 : 1;
}

}  // namespace l2s::cli
