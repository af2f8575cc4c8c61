// `l2s plan --gpu a,b,c`: the same problem planned on each GPU type, one table (issue 46). Each
// GPU type is exactly `l2s plan ... --gpu G --json` run in a child process (sweep::ProcessRunner,
// as sweeps run scenarios), so every row equals that plan; this file only builds the argument
// lists and formats the rows (sweep::Summary reads each plan's JSON).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/run.h"
#include "cli/output.h"
#include "sweep/sweep.h"

namespace l2s::cli {
namespace {

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t c = s.find(',', start);
    out.push_back(s.substr(start, c == std::string::npos ? std::string::npos : c - start));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  return out;
}

// Where `flag` ("--gpu") takes its value in `args` (the arguments after "plan"): "--flag X" or
// "--flag=X". `index` is -1 when the flag is absent.
struct FlagValue {
  int index = -1;       // the argument holding the value
  bool joined = false;  // "--flag=X" (the value after the '=')
  std::string value;
  // The argument that gives `flag` the value `v`, in the same form.
  std::string With(const std::string& flag, const std::string& v) const {
    return joined ? flag + "=" + v : v;
  }
};

FlagValue FindFlag(const std::vector<std::string>& args, const std::string& flag) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == flag && i + 1 < args.size())
      return {static_cast<int>(i + 1), false, args[i + 1]};
    if (args[i].rfind(flag + "=", 0) == 0)
      return {static_cast<int>(i), true, args[i].substr(flag.size() + 1)};
  }
  return {};
}

std::string Cell(const nlohmann::json& v, const char* fmt_spec) {
  if (!v.is_number()) return "-";
  return fmt::format(fmt::runtime(fmt_spec), v.get<double>());
}

}  // namespace

bool IsHardwareComparison(const std::vector<std::string>& plan_args) {
  const FlagValue gpu = FindFlag(plan_args, "--gpu");
  return gpu.index >= 0 && gpu.value.find(',') != std::string::npos;
}

int RunPlanHardware(const std::vector<std::string>& plan_args) {
  // The child plans print JSON; --json here only chooses this table's form.
  bool want_json = false;
  std::vector<std::string> base;
  for (const std::string& a : plan_args) {
    if (a == "--json") want_json = true;
    else base.push_back(a);
  }
  const FlagValue gpu = FindFlag(base, "--gpu");
  const std::vector<std::string> gpus = SplitCommas(gpu.value);
  for (const std::string& g : gpus)
    if (g.empty()) return Fail(fmt::format("--gpu {}: an empty GPU type in the list", gpu.value));
  // --price-per-gpu-hour p1,p2,...: one price per GPU type, in the order of --gpu.
  const FlagValue price = FindFlag(base, "--price-per-gpu-hour");
  std::vector<std::string> prices;
  if (price.index >= 0 && price.value.find(',') != std::string::npos) {
    prices = SplitCommas(price.value);
    if (prices.size() != gpus.size())
      return Fail(fmt::format("--price-per-gpu-hour {}: {} prices for {} GPU types (give one, or "
                              "one per GPU type in the order of --gpu)",
                              price.value, prices.size(), gpus.size()));
  }
  const sweep::Runner run = PlanRunner();
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::vector<nlohmann::json> summaries;
  for (size_t k = 0; k < gpus.size(); ++k) {
    sweep::Scenario s;
    s.index = k;
    s.gpu = gpus[k];
    s.argv = base;
    s.argv[gpu.index] = gpu.With("--gpu", gpus[k]);
    if (!prices.empty()) s.argv[price.index] = price.With("--price-per-gpu-hour", prices[k]);
    s.argv.push_back("--json");
    if (!JsonMode()) fmt::print(stderr, "l2s plan: {} ({} of {})...\n", gpus[k], k + 1, gpus.size());
    const sweep::Outcome o = run(s);
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
  bool any_bad_input = false;
  for (const auto& r : rows) any_bad_input |= r["exit_code"] == 2;
  if (want_json) {
    nlohmann::ordered_json j;
    j["hardware"] = rows;
    j["fastest_per_gpu"] = fastest >= 0 ? nlohmann::ordered_json(gpus[fastest]) : nlohmann::ordered_json();
    j["cheapest_per_output_token"] =
        cheapest >= 0 ? nlohmann::ordered_json(gpus[cheapest]) : nlohmann::ordered_json();
    fmt::print("{}\n", DumpJson(j));
  } else {
    fmt::print("Hardware (each GPU type planned as `l2s plan --gpu G` plans it)\n");
    fmt::print("  {:<8} {:>10} {:>9} {:>9} {:>11} {:>10}  {:<8} {}\n", "gpu", "tok/s/GPU", "TTFT ms",
               "TPOT ms", "$/Mtok out", "tok/J out", "engine", "plan");
    for (size_t k = 0; k < summaries.size(); ++k) {
      const nlohmann::json& s = summaries[k];
      if (s["valid"] != true) {
        fmt::print("  {:<8} no valid plan: {}\n", gpus[k], s["reason"].is_string() ? s["reason"].get<std::string>() : "");
        continue;
      }
      fmt::print("  {:<8} {:>10} {:>9} {:>9} {:>11} {:>10}  {:<8} {}\n", gpus[k],
                 Cell(s["tokens_per_s_per_gpu"], "{:.2f}"),
                 s["mode"] == "decode" ? std::string("n/a") : Cell(s["ttft_ms"], "{:.1f}"),
                 s["mode"] == "prefill" ? std::string("n/a") : Cell(s["tpot_ms"], "{:.2f}"), Cell(s["usd_per_mtok_output"], "{:.3f}"),
                 Cell(s["tokens_per_joule_output"], "{:.2f}"),
                 s["engine"].is_string() ? s["engine"].get<std::string>() : "-",
                 s["strategy"].is_string() ? s["strategy"].get<std::string>() : "-");
    }
    if (fastest >= 0) fmt::print("  fastest per GPU: {}\n", gpus[fastest]);
    if (cheapest >= 0) fmt::print("  cheapest per output token: {} (at the price given)\n", gpus[cheapest]);
    else fmt::print("  no price given: --price-per-gpu-hour X (one for all) or p1,p2,... (one per GPU type)\n");
  }
  if (any_bad_input) return 2;
  return fastest >= 0 ? 0 : 1;
}

}  // namespace l2s::cli
