// Sweep grids (grid.h): reading and expansion.
#include "sweep/grid.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "cli/problem_flags.h"
#include "common/text.h"
#include "engine/engine.h"
#include "model/json_fields.h"
#include "hw/hw.h"
#include "sweep/yaml.h"

namespace l2s::sweep {
namespace {

using nlohmann::json;

Status Bad(const std::string& name, const std::string& what) {
  return Status::InvalidArgument(fmt::format("{}: {}", name, what));
}

// An axis: a list, or a single value meaning a one-element list; absent = {null}.
std::vector<json> Axis(const json& j, const char* key) {
  if (!j.contains(key)) return {json(nullptr)};
  const json& v = j.at(key);
  if (v.is_array()) return std::vector<json>(v.begin(), v.end());
  return {v};
}

std::string ScalarText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return v.dump();
}

Status Strings(const json& j, const char* key, const std::string& name, std::vector<std::string>* out) {
  for (const json& v : Axis(j, key)) {
    if (v.is_null()) {
      out->push_back("");
    } else if (v.is_string() && !v.get<std::string>().empty()) {
      out->push_back(v.get<std::string>());
    } else {
      return Bad(name, fmt::format("'{}' must list non-empty strings, got {}", key, v.dump()));
    }
  }
  if (out->empty()) return Bad(name, fmt::format("'{}' is an empty list", key));
  return Status::Ok();
}

StatusOr<std::optional<int64_t>> PositiveInt(const json& v, const std::string& what, const std::string& name) {
  if (v.is_null()) return std::optional<int64_t>();
  if (!v.is_number_integer() || v.get<int64_t>() < 1)
    return Bad(name, fmt::format("{} must be a positive integer, got {}", what, v.dump()));
  return std::optional<int64_t>(v.get<int64_t>());
}

}  // namespace

std::string Workload::Label() const {
  std::string s = mode.empty() ? "default" : mode;
  if (input || output)
    s += fmt::format(" {}/{}", input ? std::to_string(*input) : "-", output ? std::to_string(*output) : "-");
  if (context) s += fmt::format(" ctx {}", *context);
  if (rate) s += fmt::format(" at {} req/s", *rate);
  if (concurrency) s += fmt::format(" x{} clients", *concurrency);
  return s;
}

std::string Scenario::Label() const {
  std::string s = model.empty() ? "(model)" : model;
  s += fmt::format(" {}", gpu.empty() ? std::string_view("(gpu)") : std::string_view(gpu));
  if (count) s += fmt::format(" x{}", *count);
  s += fmt::format(" {}", workload.Label());
  if (!slo.empty()) s += fmt::format(" slo {}", slo);
  if (!engine.empty()) s += fmt::format(" {}", engine);
  if (price) s += fmt::format(" ${}/h", *price);
  return s;
}

std::string HashArgs(const std::vector<std::string>& args) {
  uint64_t h = 14695981039346656037ULL;
  for (const std::string& a : args) {
    for (unsigned char c : a) {
      h ^= c;
      h *= 1099511628211ULL;
    }
    h ^= 0;
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

StatusOr<Grid> GridFromJson(const json& j, const std::string& name) {
  if (!j.is_object()) return Bad(name, "a sweep grid is a mapping (models:, gpus:, counts:, ...)");
  if (j.empty())
    return Bad(name, "an empty grid: give at least one axis (models:, gpus:, counts:, ...)");
  static const std::vector<std::string> kKeys = {"models", "gpus",    "counts", "workloads",
                                                  "slos",   "engines", "prices", "plan"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find(kKeys.begin(), kKeys.end(), it.key()) == kKeys.end()) {
      const std::string& key = it.key();
      const int at = NearestIndex(kKeys.size(), std::max(1, MaxTypoDistance(key.size())),
                                  [&](size_t i) { return EditDistance(key, kKeys[i]); });
      std::string keys;
      for (const std::string& k : kKeys) keys += (keys.empty() ? "" : ", ") + k;
      return Bad(name, fmt::format("unknown key '{}' ({}expected {})", key,
                                   at < 0 ? std::string()
                                          : fmt::format("did you mean {}?; ",
                                                        kKeys[static_cast<size_t>(at)]),
                                   keys));
    }
  Grid g;
  Status s = Strings(j, "models", name, &g.models);
  if (s.ok()) s = Strings(j, "gpus", name, &g.gpus);
  if (s.ok()) s = Strings(j, "engines", name, &g.engines);
  if (!s.ok()) return s;
  // Names every scenario would reject: the grid's mistake, said once before anything runs.
  // (An absent axis is one empty name: plan's default.)
  for (const std::string& gpu : g.gpus)
    if (StatusOr<GpuSpec> p = GpuPreset(gpu); !gpu.empty() && !p.ok())
      return Bad(name, fmt::format("'gpus': {}", p.status().message()));
  for (const std::string& e : g.engines)
    if (StatusOr<engine::EngineId> id = engine::ParseEngineId(e); !e.empty() && !id.ok())
      return Bad(name, fmt::format("'engines': {} (leave 'engines' out to plan every engine, "
                                   "as plan does without --engine)",
                                   id.status().message()));
  for (const std::string& e : g.engines)
    if (Status r = engine::CheckRelease(e); !e.empty() && !r.ok())
      return Bad(name, fmt::format("'engines': {}", r.message()));
  for (const json& v : Axis(j, "counts")) {
    auto c = PositiveInt(v, "each of 'counts'", name);
    if (!c.ok()) return c.status();
    // plan's --gpus bound, said once here rather than by every scenario.
    if (*c && **c > (int64_t{1} << 24))
      return Bad(name, fmt::format("each of 'counts' must be at most 16777216 GPUs (plan's --gpus), "
                                   "got {}",
                                   **c));
    g.counts.push_back(*c);
  }
  for (const json& v : Axis(j, "slos")) {
    if (v.is_null() || (v.is_string() && (v == "none" || v == ""))) {
      g.slos.push_back("");
    } else if (v.is_string()) {
      g.slos.push_back(v.get<std::string>());
    } else if (v.is_object()) {
      std::string t;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!it->is_number()) return Bad(name, fmt::format("slo '{}' must be a number, got {}", it.key(), it->dump()));
        t += fmt::format("{}{}={}", t.empty() ? "" : ",", it.key(), ScalarText(*it));
      }
      g.slos.push_back(t);
    } else {
      return Bad(name, fmt::format("each of 'slos' is a string like \"ttft_ms=2000,tpot_ms=50\", a mapping or none, got {}", v.dump()));
    }
  }
  for (const json& v : Axis(j, "workloads")) {
    Workload w;
    if (v.is_string()) {
      w.mode = v.get<std::string>();
    } else if (v.is_object()) {
      for (auto it = v.begin(); it != v.end(); ++it) {
        const std::string& k = it.key();
        if (k == "mode") {
          if (!it->is_string()) return Bad(name, fmt::format("workload mode must be a string, got {}", it->dump()));
          w.mode = it->get<std::string>();
        } else if (k == "input" || k == "output" || k == "context") {
          auto n = PositiveInt(*it, fmt::format("workload '{}'", k), name);
          if (!n.ok()) return n.status();
          (k == "input" ? w.input : k == "output" ? w.output : w.context) = *n;
        } else if (k == "rate") {
          if (!it->is_number() || !(it->get<double>() > 0 && it->get<double>() <= 1e6))
            return Bad(name, fmt::format("workload 'rate' is requests/s in (0, 1e6] (plan's --rate), got {}",
                                         it->dump()));
          w.rate = it->get<double>();
        } else if (k == "concurrency") {
          auto n = PositiveInt(*it, "workload 'concurrency'", name);
          if (!n.ok()) return n.status();
          w.concurrency = *n;
        } else {
          // The CLI's spellings of the same lengths: name the grid's.
          const std::string hint = k == "isl"   ? "; the prompt length is 'input' here"
                                   : k == "osl" ? "; the output length is 'output' here"
                                                : "";
          return Bad(name, fmt::format("unknown workload key '{}' (expected mode, input, output, "
                                       "context, rate, concurrency{})",
                                       k, hint));
        }
      }
    } else if (!v.is_null()) {
      return Bad(name, fmt::format("each of 'workloads' is a mapping {{mode, input, output, context, rate, concurrency}}, got {}", v.dump()));
    }
    // The lengths the mode reads, by plan's own rule (cli::UnreadLength: serve input and output,
    // prefill input, decode context; no mode: serve with an output, else decode), said once for
    // the grid instead of failing each of the workload's scenarios. An unknown mode is each
    // scenario's error.
    cli::ProblemFlags pf;
    pf.mode = w.mode;
    pf.isl = w.input.value_or(0);
    pf.osl = w.output.value_or(0);
    pf.context = w.context.value_or(0);
    const std::string asked = cli::AskedMode(pf);
    l2s::Mode mode = l2s::Mode::kDecode;
    if (asked.empty() || ParseMode(asked, &mode))
      if (const char* flag = cli::UnreadLength(pf, mode)) {
        const std::string_view f = flag;
        return Bad(name, fmt::format("workload {}: mode {} does not read '{}' (serve: input and "
                                     "output; prefill: input; decode: context)",
                                     v.dump(), ModeName(mode),
                                     f == "--isl" ? "input" : f == "--osl" ? "output" : "context"));
      }
    // A traffic is served: plan simulates --rate/--concurrency for serving only, one of the two.
    if (w.rate && w.concurrency)
      return Bad(name, fmt::format("workload {}: rate (open loop) and concurrency (closed loop) are "
                                   "two traffics; give one",
                                   v.dump()));
    if ((w.rate || w.concurrency) && !asked.empty() && asked != "serve")
      return Bad(name, fmt::format("workload {}: a traffic (rate or concurrency) is served: mode "
                                   "serve, with input and output",
                                   v.dump()));
    if ((w.rate || w.concurrency) && asked.empty() && !w.output)
      return Bad(name, fmt::format("workload {}: a traffic (rate or concurrency) is served: give "
                                   "its output length ('output')",
                                   v.dump()));
    g.workloads.push_back(w);
  }
  auto is_price = [](const json& v) {
    return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0;
  };
  if (j.contains("prices") && j.at("prices").is_object()) {
    // One price per GPU type: each scenario's price is its GPU's.
    const json& m = j.at("prices");
    for (auto it = m.begin(); it != m.end(); ++it) {
      if (std::find(g.gpus.begin(), g.gpus.end(), it.key()) == g.gpus.end())
        return Bad(name, fmt::format("'prices' names GPU '{}', which is not one of 'gpus'", it.key()));
      if (!it->is_null() && !is_price(*it))
        return Bad(name, fmt::format("the price of '{}' is a price per GPU-hour >= 0 or null, got {}",
                                     it.key(), it->dump()));
      g.price_by_gpu[it.key()] = it->is_null() ? std::nullopt : std::optional<double>(it->get<double>());
    }
    for (const std::string& gpu : g.gpus)
      if (!g.price_by_gpu.count(gpu))
        return Bad(name, fmt::format("'prices' has no price for GPU '{}' (give it null for none)", gpu));
    g.prices.push_back(std::nullopt);  // one value per scenario: its GPU's
  } else {
    for (const json& v : Axis(j, "prices")) {
      if (v.is_null()) {
        g.prices.push_back(std::nullopt);
      } else if (is_price(v)) {
        g.prices.push_back(v.get<double>());
      } else {
        return Bad(name, fmt::format("each of 'prices' is a price per GPU-hour >= 0 (or 'prices' "
                                     "is a mapping of GPU to price), got {}",
                                     v.dump()));
      }
    }
  }
  if (g.counts.empty() || g.slos.empty() || g.workloads.empty() || g.prices.empty())
    return Bad(name, "an axis is an empty list");
  if (j.contains("plan")) {
    const json& p = j.at("plan");
    if (!p.is_object()) return Bad(name, "'plan' is a mapping of plan flags, e.g. {budget: 200, seed: 0}");
    static const std::set<std::string> kOwned = {"model", "gpu", "gpus", "mode", "isl", "osl", "context",
                                                 "slo", "engine", "json", "out", "pareto", "emit"};
    const bool workload_traffic = std::any_of(g.workloads.begin(), g.workloads.end(), [](const Workload& w) {
      return w.rate.has_value() || w.concurrency.has_value();
    });
    for (auto it = p.begin(); it != p.end(); ++it) {
      const std::string& k = it.key();
      if (kOwned.count(k))
        return Bad(name, fmt::format("plan flag '{}' is set by the grid's axes or the sweep itself", k));
      if (workload_traffic && (k == "rate" || k == "concurrency" || k == "trace"))
        return Bad(name, fmt::format("plan flag '{}' and a workload's rate or concurrency are two "
                                     "traffics; give the traffic in one place",
                                     k));
      if (it->is_boolean()) {
        if (it->get<bool>()) g.plan_flags.push_back({"--" + k, ""});
      } else if (it->is_string() || it->is_number()) {
        g.plan_flags.push_back({"--" + k, ScalarText(*it)});
      } else {
        return Bad(name, fmt::format("plan flag '{}' must be a scalar, got {}", k, it->dump()));
      }
    }
  }
  return g;
}

StatusOr<Grid> LoadGrid(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("cannot open sweep grid '{}'", path));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const size_t first = text.find_first_not_of(" \t\r\n");
  json j;
  if (first != std::string::npos && text[first] == '{') {
    // jsonio::Parse: a line and column for malformed text, and a key given twice is an error.
    auto parsed = jsonio::Parse(text, path);
    if (!parsed.ok()) return parsed.status();
    j = std::move(parsed).value();
  } else {
    auto y = ParseYamlSubset(text, path);
    if (!y.ok()) return y.status();
    j = std::move(y).value();
  }
  return GridFromJson(j, path);
}

std::vector<Scenario> Expand(const Grid& g) {
  std::vector<Scenario> out;
  for (const auto& model : g.models)
    for (const auto& gpu : g.gpus)
      for (const auto& count : g.counts)
        for (const auto& w : g.workloads)
          for (const auto& slo : g.slos)
            for (const auto& engine : g.engines)
              for (const auto& axis_price : g.prices) {
                const std::optional<double> price =
                    g.price_by_gpu.empty() ? axis_price : g.price_by_gpu.at(gpu);
                Scenario s;
                s.index = out.size();
                s.model = model;
                s.gpu = gpu;
                s.count = count;
                s.workload = w;
                s.slo = slo;
                s.engine = engine;
                s.price = price;
                auto add = [&](const char* flag, const std::string& v) {
                  if (v.empty()) return;
                  s.argv.push_back(flag);
                  s.argv.push_back(v);
                };
                add("--model", model);
                add("--gpu", gpu);
                if (count) add("--gpus", std::to_string(*count));
                add("--mode", w.mode);
                if (w.input) add("--isl", std::to_string(*w.input));
                if (w.output) add("--osl", std::to_string(*w.output));
                if (w.context) add("--context", std::to_string(*w.context));
                if (w.rate) add("--rate", fmt::format("{}", *w.rate));
                if (w.concurrency) add("--concurrency", std::to_string(*w.concurrency));
                add("--slo", slo);
                add("--engine", engine);
                if (kPlanTakesPrice && price) add("--price-per-gpu-hour", fmt::format("{}", *price));
                for (const auto& [flag, value] : g.plan_flags) {
                  s.argv.push_back(flag);
                  if (!value.empty()) s.argv.push_back(value);
                }
                s.argv.push_back("--json");
                // The id covers the price too, so two price rows are two scenarios.
                std::vector<std::string> key = s.argv;
                key.push_back(price ? fmt::format("price={}", *price) : "price=");
                s.id = HashArgs(key);
                out.push_back(std::move(s));
              }
  return out;
}

}  // namespace l2s::sweep
