// The benchmark client of a measured serving row (validation, docs/CAPACITY.md): N concurrent
// clients send 10 x N prompts (or a stated count), each sending the next prompt as soon as its
// previous one finished; prompt and output lengths uniform in [0.8, 1.0] x nominal (the "random range ratio" 0.8 of the
// InferenceMAX / SGLang bench_serving clients); figures are means over all prompts.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "serve/serve_sim.h"
#include "serve/stats.h"
#include "sim/simulator.h"
#include "strategy/strategy.h"

namespace l2s::serve {

// The most clients one run simulates (BenchClientSpec::concurrency).
constexpr int kMaxBenchClients = 1'000'000;

struct BenchClientSpec {
  int concurrency = 1;
  int64_t isl = 1024, osl = 1024;  // nominal lengths
  double range_ratio = 0.8;        // lengths uniform in [ratio x nominal, nominal]
  int prompts_per_client = 10;
  int64_t num_prompts = 0;         // > 0: the run's prompts in all, instead of concurrency x
                                   // prompts_per_client (fewer than `concurrency`: that many
                                   // clients)
  int instances = 1;               // replicas of the strategy behind the router
  int max_running = 0;             // per rank (the decode pool's); 0 = the engine's default
  Assign router = Assign::kShortestQueue;  // request -> instance (of the decode pool when
                                           // disaggregated; DisaggServeOptions has the prefill's)
  int recv_interval = 1;           // SGLang's --scheduler-recv-interval (ServeOptions)
  uint64_t seed = 1;

  // The prompts the run sends in all: num_prompts, else concurrency x prompts_per_client.
  int64_t Prompts() const {
    return num_prompts > 0 ? num_prompts : static_cast<int64_t>(concurrency) * prompts_per_client;
  }
};

struct BenchClientResult {
  double mean_ttft_s = 0, mean_tpot_s = 0;
  double output_tokens_per_s = 0;  // over the whole run
  ServeSummary summary;
};

// `problem`: one instance (cluster = strategy.gpus() GPUs), its engine, dtypes and MTP acceptance;
// its lengths are not read. Errors: invalid strategy, no KV room, bad spec.
StatusOr<BenchClientResult> SimulateBenchmarkClient(const Problem& problem, const Strategy& s,
                                                    const BenchClientSpec& spec);

// The same client against a disaggregated deployment (ServeSim::MakeDisagg): `prefill` /
// `decode` are one instance of each pool (cluster = its strategy's GPUs), spec.instances the
// decode instances, `d` the prefill instances and the KV link.
StatusOr<BenchClientResult> SimulateDisaggBenchmarkClient(const Problem& prefill,
                                                          const Strategy& sp,
                                                          const Problem& decode,
                                                          const Strategy& sd,
                                                          const DisaggServeOptions& d,
                                                          const BenchClientSpec& spec);

}  // namespace l2s::serve
