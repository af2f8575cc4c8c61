#include "cli/gpu_list.h"

#include <fmt/format.h>

#include <cstdlib>
#include <mutex>

#include "cli/common.h"
#include "cli/progress.h"
#include "cli/run.h"
#include "common/text.h"
#include "common/parallel.h"
#include "strategy/strategy.h"

namespace l2s::cli {

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

FlagValue FindFlag(const std::vector<std::string>& args, const std::string& flag) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == flag && i + 1 < args.size())
      return {static_cast<int>(i + 1), false, args[i + 1]};
    if (args[i].rfind(flag + "=", 0) == 0)
      return {static_cast<int>(i), true, args[i].substr(flag.size() + 1)};
  }
  return {};
}

std::string WithoutOperatorDims(const std::string& text) {
  std::string out, part;
  auto flush_part = [&](const std::string& p) {
    std::string kept, field;
    auto keep = [&](const std::string& f) {
      const std::string key = f.substr(0, f.find('='));
      Op op;
      if (f.find('=') != std::string::npos && ParseOp(key, &op)) return;
      kept += (kept.empty() ? "" : ",") + f;
    };
    for (char c : p) {
      if (c == ',') {
        keep(field);
        field.clear();
      } else {
        field += c;
      }
    }
    if (!field.empty()) keep(field);
    out += (out.empty() ? "" : "; ") + kept;
  };
  size_t start = 0;
  while (true) {
    const size_t semi = text.find("; ", start);
    flush_part(text.substr(start, semi == std::string::npos ? std::string::npos : semi - start));
    if (semi == std::string::npos) break;
    start = semi + 2;
  }
  return out;
}

std::string Cell(const nlohmann::json& v, const char* fmt_spec) {
  if (!v.is_number()) return "-";
  return fmt::format(fmt::runtime(fmt_spec), v.get<double>());
}

std::string TakeFlag(std::vector<std::string>* args, const std::string& flag,
                     const std::string& dflt) {
  const FlagValue v = FindFlag(*args, flag);
  if (v.index < 0) return dflt;
  if (v.joined) args->erase(args->begin() + v.index);
  else args->erase(args->begin() + v.index - 1, args->begin() + v.index + 1);
  return v.value;
}

std::optional<std::string> CommonInputError(const std::vector<std::pair<int, std::string>>& outcomes) {
  if (outcomes.empty()) return std::nullopt;
  for (const auto& [code, reason] : outcomes)
    if (code != 2 || reason.empty() || reason != outcomes.front().second) return std::nullopt;
  return outcomes.front().second;
}

void ReportBadInputs(const std::vector<std::pair<std::string, std::string>>& bad) {
  if (bad.empty() || JsonMode()) return;
  std::string line;
  for (const auto& [gpu, reason] : bad) line += (line.empty() ? "" : "; ") + gpu + ": " + reason;
  fmt::print(stderr, "l2s: error: {}\n", line);
}

sweep::Scenario GpuScenario(const std::string& command, size_t k,
                            const std::vector<std::string>& gpus,
                            const std::vector<std::string>& prices,
                            const std::vector<std::string>& base) {
  sweep::Scenario s;
  s.index = k;
  s.gpu = gpus[k];
  s.command = command;
  s.argv = base;
  const FlagValue gpu = FindFlag(base, "--gpu");
  s.argv[static_cast<size_t>(gpu.index)] = gpu.With("--gpu", gpus[k]);
  if (!prices.empty()) {
    const FlagValue price = FindFlag(base, "--price-per-gpu-hour");
    s.argv[static_cast<size_t>(price.index)] = price.With("--price-per-gpu-hour", prices[k]);
  }
  return s;
}

std::vector<std::string> WithoutJsonFlag(const std::vector<std::string>& args, bool* json) {
  std::vector<std::string> out;
  *json = false;
  for (const std::string& a : args) {
    if (a == "--json") *json = true;
    else out.push_back(a);
  }
  return out;
}

std::string EmitPerGpuType(std::vector<std::string>* args, const std::string& gpu) {
  const FlagValue emit = FindFlag(*args, "--emit");
  if (emit.index < 0) return "";
  std::string dir = emit.value;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  (*args)[static_cast<size_t>(emit.index)] = emit.With("--emit", dir + "/" + gpu);
  return dir;
}

GpuRuns RunPerGpuType(const std::string& command, const std::vector<std::string>& gpus,
                      const std::vector<std::string>& prices, const std::vector<std::string>& base) {
  GpuRuns r;
  for (size_t k = 0; k < gpus.size(); ++k) {
    r.scenarios.push_back(GpuScenario(command, k, gpus, prices, base));
    r.emit_dir = EmitPerGpuType(&r.scenarios.back().argv, gpus[k]);
    r.scenarios.back().argv.push_back("--json");
  }
  const sweep::Runner run = PlanRunner();
  r.outcomes.resize(r.scenarios.size());
  std::mutex progress_mu;
  ParallelFor(static_cast<int>(r.scenarios.size()), HardwareJobs(), [&](int k) {
    const sweep::Scenario& s = r.scenarios[static_cast<size_t>(k)];
    if (!JsonMode() && StderrIsTerminal()) {
      std::lock_guard<std::mutex> lock(progress_mu);
      fmt::print(stderr, "l2s {}: {} ({} of {})...\n", s.command, s.gpu, k + 1,
                 r.scenarios.size());
    }
    r.outcomes[static_cast<size_t>(k)] = run(s);
  });
  return r;
}

std::vector<std::string> FirstGpuTypeArgs(const std::vector<std::string>& args) {
  std::vector<std::string> out = args;
  for (const char* flag : {"--gpu", "--price-per-gpu-hour"}) {
    const FlagValue f = FindFlag(args, flag);
    if (f.index < 0) continue;
    const std::string first = f.value.substr(0, f.value.find(','));
    out[static_cast<size_t>(f.index)] = f.With(flag, first);
  }
  return out;
}

StatusOr<GpuList> ParseGpuList(const std::vector<std::string>& args) {
  GpuList l;
  l.gpu = FindFlag(args, "--gpu");
  l.gpus = SplitCommas(l.gpu.value);
  for (size_t k = 0; k < l.gpus.size(); ++k) {
    if (l.gpus[k].empty())
      return Status::InvalidArgument(
          fmt::format("--gpu {}: an empty GPU type in the list", l.gpu.value));
    for (size_t i = 0; i < k; ++i)
      if (l.gpus[i] == l.gpus[k])
        return Status::InvalidArgument(fmt::format(
            "--gpu {}: {} is listed twice (one row per GPU type)", l.gpu.value, l.gpus[k]));
  }
  // --price-per-gpu-hour p1,p2,...: one price per GPU type, in the order of --gpu.
  l.price = FindFlag(args, "--price-per-gpu-hour");
  if (l.price.index >= 0 && l.price.value.find(',') != std::string::npos) {
    l.prices = SplitCommas(l.price.value);
    if (l.prices.size() != l.gpus.size())
      return Status::InvalidArgument(fmt::format(
          "--price-per-gpu-hour {}: {} prices for {} GPU types (give one, or one per GPU type in "
          "the order of --gpu)",
          l.price.value, l.prices.size(), l.gpus.size()));
    // Each a price, checked before any GPU type is planned (as the flag's one price is).
    for (size_t k = 0; k < l.prices.size(); ++k) {
      const std::string& t = l.prices[k];
      char* end = nullptr;
      const double x = t.empty() ? -1 : std::strtod(t.c_str(), &end);
      if (t.empty() || end != t.c_str() + t.size() || !(x >= 0 && x <= 1e6))
        return Status::InvalidArgument(fmt::format(
            "--price-per-gpu-hour {}: the price of {} must be a number from 0 to 1000000 $ per "
            "GPU-hour, got \"{}\"",
            l.price.value, l.gpus[k], PrintableText(t)));
    }
  }
  return l;
}

}  // namespace l2s::cli
