#include "serve/bench_client.h"

#include <algorithm>

#include "serve/serve_sim.h"
#include "serve/step_cost.h"
#include "serve/workload.h"

namespace l2s::serve {

namespace {

Status CheckSpec(const BenchClientSpec& spec) {
  if (spec.concurrency < 1 || spec.concurrency > kMaxBenchClients)
    return Status::InvalidArgument("benchmark client: concurrency must be in [1, 10^6]");
  if (spec.prompts_per_client < 1)
    return Status::InvalidArgument("benchmark client: prompts per client must be >= 1");
  if (spec.num_prompts < 0 || spec.num_prompts > int64_t{100} * kMaxBenchClients)
    return Status::InvalidArgument("benchmark client: prompts in all must be in [0, 10^8]");
  if (spec.max_running < 0)
    return Status::InvalidArgument("benchmark client: max running requests must be >= 0");
  return Status::Ok();
}

StatusOr<BenchClientResult> RunClient(ServeSim* sim, const BenchClientSpec& spec) {
  WorkloadSpec w;
  w.num_requests = spec.Prompts();
  // Fewer prompts than clients: the clients with none send nothing.
  const int clients = static_cast<int>(std::min<int64_t>(spec.concurrency, w.num_requests));
  w.concurrency = clients;
  w.isl = spec.isl;
  w.osl = spec.osl;
  w.isl_dist.kind = w.osl_dist.kind = LengthDist::Kind::kUniform;
  w.isl_dist.param = w.osl_dist.param = spec.range_ratio;
  w.seed = spec.seed;
  auto reqs = GenerateRequests(w);
  if (!reqs.ok()) return reqs.status();
  const ServeRun run = sim->Run(*reqs, clients);
  BenchClientResult r;
  r.summary = Summarise(run, {});
  if (r.summary.unstable) return Status::Invalid("benchmark client: " + r.summary.unstable_reason);
  r.mean_ttft_s = r.summary.ttft.mean;
  r.mean_tpot_s = r.summary.tpot.mean;
  r.output_tokens_per_s = r.summary.output_tokens_per_s;
  return r;
}

}  // namespace

StatusOr<BenchClientResult> SimulateBenchmarkClient(const Problem& problem, const Strategy& s,
                                                    const BenchClientSpec& spec) {
  if (Status st = CheckSpec(spec); !st.ok()) return st;
  auto cost = StepCost::Make(problem, s);
  if (!cost.ok()) return cost.status();
  ServeOptions opt;
  opt.instances = spec.instances;
  opt.max_running = spec.max_running;
  opt.router = spec.router;
  opt.sglang_recv_interval = spec.recv_interval;
  auto sim = ServeSim::Make(cost->get(), opt, spec.isl, spec.osl);
  if (!sim.ok()) return sim.status();
  return RunClient(sim->get(), spec);
}

StatusOr<BenchClientResult> SimulateDisaggBenchmarkClient(const Problem& prefill,
                                                          const Strategy& sp,
                                                          const Problem& decode,
                                                          const Strategy& sd,
                                                          const DisaggServeOptions& d,
                                                          const BenchClientSpec& spec) {
  if (Status st = CheckSpec(spec); !st.ok()) return st;
  auto pc = StepCost::Make(prefill, sp);
  if (!pc.ok()) return Status::Invalid("prefill: " + pc.status().message());
  auto dc = StepCost::Make(decode, sd);
  if (!dc.ok()) return Status::Invalid("decode: " + dc.status().message());
  ServeOptions opt;
  opt.instances = spec.instances;
  opt.max_running = spec.max_running;
  opt.router = spec.router;
  opt.sglang_recv_interval = spec.recv_interval;
  auto sim = ServeSim::MakeDisagg(pc->get(), dc->get(), opt, d, spec.isl, spec.osl);
  if (!sim.ok()) return sim.status();
  return RunClient(sim->get(), spec);
}

}  // namespace l2s::serve
