// Capacity answers on top of the request-level simulator (docs/CAPACITY.md):
//   MaxRate     the highest open-loop request rate a deployment (a layout x instances) sustains
//               within percentile SLOs: bisection on the rate with common random numbers (the
//               same unit-rate arrival stream scaled by 1 / rate, the same lengths), to a stated
//               relative tolerance
//   FewestGpus  over candidate instance layouts (one strategy per instance size, chosen by the
//               caller, e.g. with a searcher), the fewest GPUs (instances x layout) whose
//               simulation of the given request stream meets the SLOs, with the figures at that
//               size and at one instance fewer.
//   FewestGpusDisagg  the same for disaggregated deployments: over candidate (prefill layout,
//               decode layout) pairs, the fewest GPUs np x gp + nd x gd whose simulation
//               (ServeSim::MakeDisagg) meets the SLOs. Pool sizes are searched from a first
//               guess (the stream's rate / each role's steady-state requests/s per instance, or
//               each pool's stepping seconds per request on a 1P1D run x the rate), growing the pool the missed SLO blames (TTFT: prefill; TPOT / ITL:
//               decode; E2E or an unstable run: the busier pool) until the SLOs hold, then
//               shrinking either pool while they still hold.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "serve/serve_sim.h"
#include "serve/stats.h"
#include "serve/step_cost.h"
#include "serve/workload.h"

namespace l2s::serve {

struct RateProbe {
  double rate_rps = 0;
  bool meets = false;
  std::string why;  // first SLO missed, or why the run is unstable
  ServeSummary summary;
};

struct MaxRateOptions {
  double rel_tol = 0.02;   // stop when (fail - pass) <= rel_tol x fail
  int max_probes = 40;     // work limit (simulations) of one search
  // The same traffic drawn again with n requests (any rate: MaxRate takes its unit-rate form),
  // or null: the stream is fixed (a user's --requests, a trace). With it, an answer whose probe
  // ran the stream as a burst (ServeSummary::burst: a finite stream that passes at a rate it
  // cannot sustain, the deployment still filling when the last request arrives) is searched
  // again on SteadyStateRequests of that probe, rounded up to thousands and at most
  // max_requests, up to twice.
  std::function<StatusOr<std::vector<RequestSpec>>(int64_t n)> longer;
  int64_t max_requests = 50000;
};

struct MaxRateResult {
  bool found = false;      // some rate meets the SLOs
  // Every rate meets them: the whole stream arriving at once does (a stream too short to load
  // the deployment). Then rate_rps is +infinity, fail_rps 0 and `at` is that burst's probe.
  bool unbounded = false;
  double rate_rps = 0;     // highest rate found that meets them
  double fail_rps = 0;     // lowest rate found that does not
  RateProbe at;            // the probe at rate_rps
  std::vector<RateProbe> probes;  // in the order run (every search's, when drawn again)
  int64_t requests = 0;    // the stream the answer was searched on
  // The answer's probe ran its stream as a burst (found, not unbounded): the deployment may not
  // sustain rate_rps; SteadyStateRequests(at.summary) requests would tell.
  bool burst = false;
  // Drawn again (MaxRateOptions::longer): the first search's answer, whose probe was a burst,
  // and its stream's length (0: not drawn again).
  double burst_rate_rps = 0;
  int64_t burst_requests = 0;
};

// `unit_requests`: the request stream at a mean rate of 1 request/s (arrival times in seconds at
// rate 1); a probe at rate r sends them at arrival / r. `hint_rps` (> 0): a first guess of the
// capacity (e.g. the steady-state serve-mode figure); the search brackets from it, doubling the
// rate while it passes; after kBurstAfterPasses passes in a row it also probes the whole stream
// at once, and when that passes too the result is `unbounded`. The sim's instances all share
// the load.
// With opt.longer, an answer whose probe ran the stream as a burst is searched again on longer
// streams (SearchPastBurst).
inline constexpr int kBurstAfterPasses = 3;
StatusOr<MaxRateResult> MaxRate(ServeSim* sim, const std::vector<RequestSpec>& unit_requests,
                                const std::vector<Slo>& slos, double hint_rps,
                                const MaxRateOptions& opt);

// Where `res` (MaxRate's, found on a stream of res->requests) ran its answer's stream as a burst
// and opt.longer is set: the search again on the longer stream MaxRateOptions::longer describes,
// from the burst's rate, up to twice; res->burst says whether the last answer still was one.
Status SearchPastBurst(ServeSim* sim, const std::vector<Slo>& slos, const MaxRateOptions& opt,
                       MaxRateResult* res);

// Requests/s one instance of `cost`'s deployment serves in the Simulator's steady state (serve
// mode at isl/osl, its auto batch): a first guess for MaxRate. 0 when the Simulator finds no
// valid batch.
double SteadyStateRps(const StepCost& cost, int64_t isl, int64_t osl);

// Mean rate of a request stream: (n - 1) / (last arrival - first arrival); 0 for n < 2 or when all
// arrive at once.
double StreamRate(const std::vector<RequestSpec>& requests);
// The stream's mean prompt and output lengths (at least 1 each; 0 requests: 1 and 1), added to
// *isl and *osl, which start at 0: the nominal shape its pools are sized at (ServeSim::Make).
void MeanLengths(const std::vector<RequestSpec>& requests, int64_t* isl, int64_t* osl);
// The stream rescaled to a mean rate of 1 request/s (arrivals x StreamRate).
std::vector<RequestSpec> ToUnitRate(const std::vector<RequestSpec>& requests);

// Closed loop: `concurrency` clients, each sending its next request of `requests` when its previous
// one finished (ServeSim::Run's concurrency; benchmark clients, the measured rows' way).
// MaxClients: the most clients, at most `concurrency`, that a deployment (`sim`, all its
// instances) serves within the SLOs, by bisection on the integer count (latencies grow with the
// clients). A probe of c clients runs the first ceil(c x requests.size() / concurrency) requests
// (the stream's prompts per client), so that the probe of `concurrency` clients is the stream.
struct ClientsProbe {
  int clients = 0;
  bool meets = false;
  std::string why;  // first SLO missed
  ServeSummary summary;
};
struct MaxClientsResult {
  bool found = false;     // one client meets the SLOs
  int clients = 0;        // the most clients found that meet them
  int fail_clients = 0;   // the fewest found that do not (0: `concurrency` clients meet them)
  ClientsProbe at;        // the probe at `clients` (its request_rate: the rate they are served at)
  std::vector<ClientsProbe> probes;  // in the order run
};
StatusOr<MaxClientsResult> MaxClients(ServeSim* sim, const std::vector<RequestSpec>& requests,
                                      int concurrency, const std::vector<Slo>& slos);

// A first guess of the request rate at which `concurrency` clients are served when a deployment
// meets the SLOs, for sizing pools by rate: concurrency / the longest end-to-end latency the SLOs
// allow a request of `osl` output tokens (the tightest e2e limit, else the tightest TTFT limit (0
// without one) + (osl - 1) x the tightest TPOT or inter-token limit). Percentile limits bound the
// mean latency from above, so the served rate is at least this. 0 (no guess) when the SLOs bound
// neither the e2e latency nor the TPOT.
double ClosedLoopRateGuess(int concurrency, int64_t osl, const std::vector<Slo>& slos);

struct LayoutOption {
  Problem problem;    // one instance's problem (cluster = its GPUs)
  Strategy strategy;
  std::string label;  // e.g. "tp=8,ep=8"
};

struct SizeResult {
  LayoutOption layout;
  bool meets = false;
  int instances = 0;
  int gpus = 0;                 // instances x GPUs per instance
  double instance_max_rps = 0;  // MaxRate of one instance (closed loop: the rate its max clients
                                // are served at)
  int instance_max_clients = 0; // closed loop: MaxClients of one instance
  bool instance_max_rate_burst = false;  // ... whose probe ran its stream as a burst (MaxRateResult::burst)
  ServeSummary at;              // the request stream on `instances`
  bool has_smaller = false;     // instances - 1 >= 1 simulated
  ServeSummary smaller;         // ... on instances - 1
  std::string smaller_why;      // the SLO instances - 1 misses
  std::string note;             // why this layout gives no answer
  // A layout that never meets: the most instances simulated (their summary is `at`) and the SLO
  // they miss (0 / "": none simulated).
  int missed_instances = 0;
  std::string missed_why;
  int simulations = 0;          // whole-stream runs on some instance count (MaxRate's not counted)
};

struct CapacityOptions {
  int max_gpus = 4096;       // no answer above this many GPUs
  // Closed loop: this many clients send the request stream (0: open loop, at its arrival times).
  int concurrency = 0;
  // A deployment already found on this many GPUs (0: none), e.g. the aggregated answer beside
  // the disaggregated sizing: a candidate is not grown past it (it could not be the answer).
  int bound_gpus = 0;
  MaxRateOptions rate;
  ServeOptions serve;        // instances is set per candidate
  // Layouts whose one-instance max rate (FewestGpus' first step) is found at once, on threads;
  // the result is the same for every value.
  int jobs = 1;
};

struct SmallerDeployment {
  int candidate = -1;  // index into CapacityResult::candidates
  int instances = 0;
  int gpus = 0;
  ServeSummary summary;
  std::string why;     // the SLO it misses
};

struct CapacityResult {
  bool found = false;
  int best = -1;                     // index into candidates
  std::vector<SizeResult> candidates;  // one per layout option, in the given order
  // Deployments below the answer simulated only to report one size smaller (FewestGpus: the
  // most GPUs below the answer any layout reaches, when no search step simulated that size).
  std::vector<SmallerDeployment> below;
};

// `requests`: the stream to serve (open loop; closed loop with opt.concurrency clients: MaxClients
// of one instance and instances = ceil(clients / that) take the place of the rate's, and each
// count's simulation runs the clients). For each layout: MaxRate of one instance on the
// stream's unit-rate form (every layout's at once on opt.jobs threads, each with its own step
// cost; an answer that ran the stream as a burst is searched again past it, SearchPastBurst with
// opt.rate.longer, where the layout could still be the answer: its GPUs at most the fewest
// found so far; elsewhere it stays, SizeResult::instance_max_rate_burst), then instances =
// ceil(stream rate / that); from that first guess, up in doubling steps
// while the simulation of the whole stream misses the SLOs, or down in doubling steps while it
// meets them, then bisected to the count that meets and whose one fewer misses (the guess
// over-counts where one instance alone queues what a pool behind the router absorbs;
// SizeResult::simulations counts the whole-stream runs). A layout stops
// growing at opt.max_gpus or at the GPUs of the best layout before it (it cannot win beyond
// them). The best candidate has the fewest GPUs (ties: the higher per-instance rate). Then one
// size smaller: the most GPUs below the answer that k instances of any layout that fits make
// (ties: the answer's layout, then the higher per-instance rate); when no step above simulated
// that size, it is simulated and kept in `below` (where it meets, against the monotone rule, it
// is not kept).
StatusOr<CapacityResult> FewestGpus(const std::vector<LayoutOption>& layouts,
                                    const std::vector<RequestSpec>& requests,
                                    const std::vector<Slo>& slos, const CapacityOptions& opt);

// The deployment one size below the answer: of every deployment simulated that misses the SLOs
// (one instance fewer of a layout that meets, the most instances of one that never does, or
// CapacityResult::below), the one with the most GPUs below the best candidate's (ties: the
// best's own layout, then the higher per-instance rate). nullopt when none was simulated (no
// layout fits in fewer GPUs than the answer) or there is no answer.
std::optional<SmallerDeployment> OneSizeSmaller(const CapacityResult& r);

struct DisaggLayoutOption {
  Problem prefill_problem, decode_problem;  // one instance of each (cluster = its GPUs)
  Strategy prefill, decode;
  KvLink link;                              // between a prefill and a decode instance
  bool layerwise = false;
  std::string label;                        // e.g. "prefill tp=4 | decode tp=8"
  // Requests/s of one instance of each role in the steady state (the static disaggregated
  // model's capacities, sim/disagg.h), the first guess of the pool sizes; 0: guessed from a 1P1D
  // simulation instead.
  double prefill_rps_hint = 0, decode_rps_hint = 0;
};

// The request-level simulator of `lay` with `np` prefill and `nd` decode instances, as the
// disaggregated sizing runs it: `so` sets the decode pool (its instances become nd), one front end
// routes to both pools (so.router), the layout's link and layer-wise transfer; `prefill` and
// `decode` are the layouts' step costs (owned by the caller). The nominal shape: the stream's
// MeanLengths.
StatusOr<std::unique_ptr<ServeSim>> MakeSizedDisagg(const DisaggLayoutOption& lay,
                                                    const StepCost* prefill,
                                                    const StepCost* decode, ServeOptions so,
                                                    int np, int nd, int64_t isl, int64_t osl);

struct DisaggSizeResult {
  DisaggLayoutOption layout;
  bool meets = false;
  int prefill_instances = 0, decode_instances = 0;
  int gpus = 0;                       // np gp + nd gd
  ServeSummary at;                    // the request stream on (np, nd)
  // One instance fewer in each pool (np - 1 or nd - 1 >= 1), each missing the SLOs (or absent).
  bool has_fewer_prefill = false, has_fewer_decode = false;
  ServeSummary fewer_prefill, fewer_decode;
  std::string fewer_prefill_why, fewer_decode_why;
  int simulations = 0;
  std::string note;                   // why this pair gives no answer
};

struct DisaggCapacityResult {
  bool found = false;
  int best = -1;                            // index into candidates
  std::vector<DisaggSizeResult> candidates;  // one per pair, in the given order
};

// As FewestGpus for disaggregated pairs; opt.serve's max_running / kv_capacity_tokens apply to
// the decode pool (the prefill pool takes the engine's defaults). Best: fewest GPUs, then the
// higher goodput. Closed loop (opt.concurrency): the pools' first guess at ClosedLoopRateGuess's
// rate (none: one instance of each), every simulation running the clients.
StatusOr<DisaggCapacityResult> FewestGpusDisagg(const std::vector<DisaggLayoutOption>& layouts,
                                                const std::vector<RequestSpec>& requests,
                                                const std::vector<Slo>& slos,
                                                const CapacityOptions& opt);

}  // namespace l2s::serve
