#include "serve/workload.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "common/splitmix.h"
#include "common/text.h"

namespace l2s::serve {

uint64_t ServeRng::NextU64() {
  return SplitMix64Mix(state_ += kSplitMix64Gamma);
}

double ServeRng::Uniform() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }

double ServeRng::UniformOpen() { return (static_cast<double>(NextU64() >> 11) + 0.5) * 0x1.0p-53; }

double ServeRng::Normal() {
  const double u1 = UniformOpen(), u2 = Uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

double ServeRng::Exponential(double mean) { return -mean * std::log(UniformOpen()); }

double ServeRng::Gamma(double shape, double mean) {
  // Marsaglia and Tsang (2000) for shape >= 1; shape < 1 by the boost Gamma(k + 1) U^(1/k).
  if (shape < 1) {
    const double g = Gamma(shape + 1, shape + 1);  // unit scale: mean = shape + 1
    return g * std::pow(UniformOpen(), 1.0 / shape) * (mean / shape);
  }
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = Normal();
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = UniformOpen();
    if (u < 1 - 0.0331 * x * x * x * x || std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v)))
      return d * v * (mean / shape);
  }
}

std::string LengthDist::ToText() const {
  switch (kind) {
    case Kind::kFixed: return "fixed";
    case Kind::kUniform: return fmt::format("uniform:{}", param);
    case Kind::kLognormal: return fmt::format("lognormal:{}", param);
  }
  return "?";
}

StatusOr<LengthDist> ParseLengthDist(std::string_view text) {
  LengthDist d;
  const auto colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  double v = 0;
  if (colon != std::string_view::npos) {
    const std::string num(text.substr(colon + 1));
    char* end = nullptr;
    v = std::strtod(num.c_str(), &end);
    if (num.empty() || end == nullptr || *end != '\0' || !std::isfinite(v))
      return Status::InvalidArgument(
          fmt::format("length distribution '{}': the parameter is not a number", text));
  }
  if (name == "fixed" && colon == std::string_view::npos) return d;
  if (name == "uniform" && colon != std::string_view::npos) {
    if (!(v > 0 && v <= 1))
      return Status::InvalidArgument(
          fmt::format("length distribution '{}': uniform:R needs 0 < R <= 1", text));
    d.kind = LengthDist::Kind::kUniform;
    d.param = v;
    return d;
  }
  if (name == "lognormal" && colon != std::string_view::npos) {
    if (!(v >= 0 && v <= 5))
      return Status::InvalidArgument(
          fmt::format("length distribution '{}': lognormal:S needs 0 <= S <= 5", text));
    d.kind = LengthDist::Kind::kLognormal;
    d.param = v;
    return d;
  }
  return Status::InvalidArgument(fmt::format(
      "length distribution '{}': expected fixed, uniform:R or lognormal:S", text));
}

int64_t SampleLength(const LengthDist& d, int64_t nominal, ServeRng* rng) {
  nominal = std::max<int64_t>(1, nominal);
  switch (d.kind) {
    case LengthDist::Kind::kFixed: return nominal;
    case LengthDist::Kind::kUniform: {
      // Integers lo..nominal with equal probability.
      const int64_t lo = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(d.param * nominal)));
      const uint64_t n = static_cast<uint64_t>(nominal - lo + 1);
      return lo + static_cast<int64_t>(rng->Uniform() * static_cast<double>(n));
    }
    case LengthDist::Kind::kLognormal: {
      const double s = d.param;
      const double mu = std::log(static_cast<double>(nominal)) - s * s / 2;
      const double x = std::exp(mu + s * rng->Normal());
      return std::max<int64_t>(1, std::min<int64_t>(int64_t{1} << 24, std::llround(x)));
    }
  }
  return nominal;
}

Status CheckWorkload(const WorkloadSpec& w) {
  const bool open = w.rate_rps > 0, closed = w.concurrency > 0;
  if (open == closed)
    return Status::InvalidArgument("workload: give exactly one of a rate (> 0) or a concurrency (> 0)");
  if (open && !std::isfinite(w.rate_rps))
    return Status::InvalidArgument("workload: the rate must be finite");
  if (!(w.burstiness > 0 && w.burstiness <= 1e3))
    return Status::InvalidArgument("workload: burstiness must be in (0, 1000]");
  if (w.num_requests < 0 || w.num_requests > kMaxRequests)
    return Status::InvalidArgument("workload: the number of requests must be in [1, 10^8]");
  if (closed && w.concurrency > kMaxConcurrency)
    return Status::InvalidArgument("workload: the concurrency must be in [1, 10^7] clients");
  if (open && w.num_requests == 0)
    return Status::InvalidArgument("workload: an open-loop workload needs a number of requests");
  if (w.isl < 1 || w.osl < 1 || w.isl > (int64_t{1} << 24) || w.osl > (int64_t{1} << 24))
    return Status::InvalidArgument("workload: isl and osl must be in [1, 2^24]");
  if (!(w.prefix_hit >= 0 && w.prefix_hit < 1))
    return Status::InvalidArgument("workload: the prefix-cache hit rate must be in [0, 1)");
  return Status::Ok();
}

StatusOr<std::vector<RequestSpec>> GenerateRequests(const WorkloadSpec& w) {
  Status st = CheckWorkload(w);
  if (!st.ok()) return st;
  const int64_t n = w.num_requests > 0 ? w.num_requests : int64_t{10} * w.concurrency;
  std::vector<RequestSpec> out(static_cast<size_t>(n));
  // Separate streams for arrivals and lengths, so that a rate change keeps the lengths.
  ServeRng arr(w.seed * 0x2545F4914F6CDD1DULL + 1), len(w.seed * 0x9E3779B97F4A7C15ULL + 2);
  double t = 0;
  for (RequestSpec& r : out) {
    if (w.rate_rps > 0) {
      t += w.burstiness == 1 ? arr.Exponential(1.0 / w.rate_rps)
                             : arr.Gamma(w.burstiness, 1.0 / w.rate_rps);
      r.arrival_s = t;
    }
    r.prompt = SampleLength(w.isl_dist, w.isl, &len);
    r.output = SampleLength(w.osl_dist, w.osl, &len);
    r.cached = std::min<int64_t>(r.prompt - 1,
                                 static_cast<int64_t>(std::floor(w.prefix_hit * r.prompt)));
  }
  return out;
}

StatusOr<std::vector<RequestSpec>> ParseTraceCsv(std::string_view text, std::string_view source) {
  std::vector<RequestSpec> out;
  std::istringstream in{std::string(text)};
  std::string line;
  int lineno = 0;
  double last = 0;
  bool first = true;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ls(line);
    std::string cell;
    while (std::getline(ls, cell, ',')) f.push_back(cell);
    auto bad = [&](const std::string& why) {
      return Status::InvalidArgument(fmt::format("{}:{}: {}", source, lineno, why));
    };
    // The first line may be a header: its first field a name (a letter, '_' or a quote first, and
    // not a number such as "nan"). Only the first line, so that a data row that does not parse
    // ("nan", "-1", "x") is an error rather than skipped.
    if (first) {
      first = false;
      const std::string f0 = f.empty() ? std::string() : f[0];
      const size_t c = f0.find_first_not_of(" \t");
      char* end = nullptr;
      std::strtod(f0.c_str(), &end);
      if (c != std::string::npos && *end != '\0' &&
          (std::isalpha(static_cast<unsigned char>(f0[c])) || f0[c] == '_' || f0[c] == '"'))
        continue;  // header
    }
    if (f.size() < 3 || f.size() > 4)
      return bad("expected arrival_s,prompt_tokens,output_tokens[,cached_tokens]");
    double v[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < f.size(); ++i) {
      char* end = nullptr;
      v[i] = std::strtod(f[i].c_str(), &end);
      if (f[i].empty() || *end != '\0' || !std::isfinite(v[i]) || v[i] < 0)
        return bad(fmt::format("field {} '{}' is not a non-negative number", i + 1, f[i]));
    }
    if (v[0] < last) return bad("arrival times must not decrease");
    if (v[1] < 1 || v[2] < 1 || v[1] > (1 << 24) || v[2] > (1 << 24) || v[1] != std::floor(v[1]) ||
        v[2] != std::floor(v[2]) || v[3] != std::floor(v[3]))
      return bad("token counts must be whole numbers in [1, 2^24]");
    if (v[3] >= v[1]) return bad("cached tokens must be fewer than the prompt tokens");
    last = v[0];
    out.push_back({v[0], static_cast<int64_t>(v[1]), static_cast<int64_t>(v[2]),
                   static_cast<int64_t>(v[3])});
  }
  if (out.empty()) return Status::InvalidArgument(fmt::format("{}: no requests", source));
  return out;
}

StatusOr<std::vector<RequestSpec>> LoadTrace(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::NotFound(fmt::format("cannot read trace '{}'", path));
  std::stringstream ss;
  ss << f.rdbuf();
  return ParseTraceCsv(ss.str(), path);
}

}  // namespace l2s::serve
