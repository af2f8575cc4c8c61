// Request streams for the request-level serving simulator (serve/serve_sim.h): open-loop arrivals
// at a rate (Poisson, or gamma inter-arrival times with a burstiness), closed-loop clients (N in
// flight, a new request when one finishes, a stated number of prompts, as benchmark clients run),
// prompt and output length distributions, a prefix-cache hit rate, and trace files.
// Deterministic for a seed: the random numbers come from ServeRng (a fixed generator and fixed
// conversions, no std:: distributions, whose algorithms differ between standard libraries).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace l2s::serve {

// splitmix64: a fixed 64-bit generator; doubles from the top 53 bits.
class ServeRng {
 public:
  explicit ServeRng(uint64_t seed) : state_(seed) {}
  uint64_t NextU64();
  double Uniform();                       // [0, 1)
  double UniformOpen();                   // (0, 1)
  double Normal();                        // standard normal (Box-Muller, one value per call)
  double Exponential(double mean);        // mean > 0
  double Gamma(double shape, double mean);  // shape > 0, mean > 0 (Marsaglia-Tsang)

 private:
  uint64_t state_;
};

// One request as the client sends it.
struct RequestSpec {
  double arrival_s = 0;    // open loop / trace: send time; closed loop: ignored (set when sent)
  int64_t prompt = 0;      // prompt tokens (>= 1)
  int64_t output = 0;      // output tokens to generate (>= 1)
  int64_t cached = 0;      // of the prompt: tokens found in the prefix cache (< prompt)
};

// Length distribution around a nominal length.
//   fixed              every request the nominal length
//   uniform:R          uniform integer in [R x nominal, nominal], 0 < R <= 1 (benchmark clients'
//                      "random range ratio")
//   lognormal:S        lognormal with mean = nominal and log-space sigma S >= 0
struct LengthDist {
  enum class Kind { kFixed, kUniform, kLognormal } kind = Kind::kFixed;
  double param = 0;  // R or S
  std::string ToText() const;
};
StatusOr<LengthDist> ParseLengthDist(std::string_view text);
int64_t SampleLength(const LengthDist& d, int64_t nominal, ServeRng* rng);  // >= 1

struct WorkloadSpec {
  // Open loop: rate_rps > 0. Closed loop: concurrency > 0 (rate ignored).
  double rate_rps = 0;
  double burstiness = 1;   // gamma shape of inter-arrival times: 1 = Poisson, < 1 burstier
  int concurrency = 0;
  int64_t num_requests = 0;  // 0 = 10 x concurrency (closed loop); open loop: must be > 0
  int64_t isl = 1024, osl = 1024;
  LengthDist isl_dist, osl_dist;
  double prefix_hit = 0;   // fraction of each prompt found in the prefix cache, [0, 1)
  uint64_t seed = 1;
};
// The largest stream a workload draws (num_requests, or 10 x concurrency) and the most clients
// of a closed loop.
inline constexpr int64_t kMaxRequests = 100'000'000;
inline constexpr int kMaxConcurrency = 10'000'000;
// Checks ranges; one line naming the field on error.
Status CheckWorkload(const WorkloadSpec& w);
// The requests of `w` in send order: arrival times from 0 for open loop (the first at its first
// inter-arrival time), 0 for closed loop.
StatusOr<std::vector<RequestSpec>> GenerateRequests(const WorkloadSpec& w);

// A trace: CSV with columns arrival_s, prompt_tokens, output_tokens and optionally cached_tokens
// (a header line naming them is allowed). Arrival times must not decrease. Errors name the line.
StatusOr<std::vector<RequestSpec>> ParseTraceCsv(std::string_view text, std::string_view source);
StatusOr<std::vector<RequestSpec>> LoadTrace(const std::string& path);

}  // namespace l2s::serve
