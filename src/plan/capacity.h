// Capacity sizing as a library (`l2s capacity` without a deployment, docs/CAPACITY.md): the
// fewest GPUs (instances x one instance's layout) that serve a request stream within percentile
// SLOs. For each instance size it chooses layouts with a searcher on the serve-mode problem (the
// searcher's best and the runners-up of the other degree combinations), then sizes them with the
// request-level simulator (serve::FewestGpus); with disaggregated serving it pairs each size's
// best prefill and decode layouts and sizes both pools (serve::FewestGpusDisagg). A request in, a
// result out; the CLI parses the flags, builds the problems (through CapacityRequest's callback)
// and prints the result as text, JSON or SVG. docs/dev/PLANNER.md "Capacity sizing".
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "engine/engine.h"
#include "serve/capacity.h"
#include "serve/serve_sim.h"
#include "serve/stats.h"
#include "serve/workload.h"
#include "sim/simulator.h"
#include "strategy/space.h"

namespace l2s::plan {

// The serve-mode problem on `gpus` GPUs of the deployment's GPU type (one instance, or a pool of
// that many GPUs), under the engine named `engine` (a name engine::ParseEngineId reads, as
// --engine takes it; "": no engine, the ideal one). The caller builds it from its inputs (the
// CLI: BuildProblem on the command's flags with --gpus gpus, --engine engine); errors are its.
using ProblemOnGpusFn = std::function<StatusOr<Problem>(int gpus, const std::string& engine)>;

enum class Serving { kAgg, kDisagg, kAuto };  // aggregated, disaggregated, both (fewest wins)

struct CapacityRequest {
  ProblemOnGpusFn problem_on_gpus;  // required
  std::string engine;               // --engine's name; "": the ideal engine (SizeFewest)
  int mtp = -1;                     // MTP depth of the layouts (-1: searched, plan/space.h)
  Serving serving = Serving::kAuto;  // both, as `l2s capacity` and `l2s plan` default to
  bool layerwise = false;           // disaggregated: KV sent layer by layer
  // Instance sizes tried, in GPUs, each in [1, max_gpus]; empty: DefaultInstanceSizes(max_gpus).
  std::vector<int> sizes_gpus;
  int max_gpus = 4096;              // largest total GPU count considered
  std::string search = "local";     // searcher spec choosing each size's layout (MakeSearcher)
  int64_t budget_calls = 1000;      // simulator calls per layout search
  uint64_t seed = 1;                // the searches' seed
  int layouts_per_size = 3;         // the searcher's best + (n - 1) runners-up (OtherDegrees)
  double rate_rel_tol = 0.02;       // relative tolerance of the rate bisection, in (0, 0.5)
  std::vector<serve::Slo> slos;     // required (not empty)
  std::vector<serve::RequestSpec> requests;  // the stream to serve (open loop: StreamRate > 0)
  // Closed loop: this many clients send `requests`, each its next when its previous finished
  // (0: open loop). Sized as serve::CapacityOptions::concurrency says.
  int concurrency = 0;
  // The same traffic drawn with n requests, or null (a user's --requests, a trace): one
  // instance's max rate is searched again on a longer stream where `requests` ran as a burst at
  // the rate found (serve::MaxRateOptions::longer).
  std::function<StatusOr<std::vector<serve::RequestSpec>>(int64_t n)> longer_stream;
  serve::ServeOptions serve;        // running-request / KV limits of the workload (instances: set)
  int jobs = 1;                     // threads for the layouts' one-instance rates (same answer)
};

// One engine's sizing: the aggregated and disaggregated answers.
struct FewestOutcome {
  std::string engine;                     // engine::EngineName of the engine ("ideal": none)
  bool agg = true;                        // the aggregated serving was sized
  serve::CapacityResult res;              // aggregated (empty when !agg or no layout)
  std::optional<serve::DisaggCapacityResult> dres;  // disaggregated (when sized)
  std::vector<std::string> skipped;       // sizes / roles with no layout, one line each
  Problem p0;                             // the first layout's problem (else the first size's)
  bool any_found = false;                 // either serving meets the SLOs
  bool dis_best = false;                  // the answer is disaggregated (ties: aggregated)
  int gpus = 0;                           // the answer's GPUs (0: none found)
  double max_rps = 0;                     // aggregated: instances x one instance's max rate
  std::string layout;                     // the answer's layout, in short
};

// One line per engine of the all-engines sizing.
struct EngineRow {
  std::string engine;
  bool found = false;
  int gpus = 0;
  std::string layout;  // the answer's layout, or the reason none was found
};

struct EnginesOutcome {
  std::vector<EngineRow> rows;  // plan::TabulatedEngines order
  FewestOutcome best;           // the engine needing the fewest GPUs
};

// 1, 2, 4, ... up to min(64, max_gpus).
std::vector<int> DefaultInstanceSizes(int max_gpus);

// A layout in short: ShortText's degrees and wide-EP fields without the batch (the engine's
// scheduler sets it) and without the per-operator dims, e.g. "pp=1,tp=2,dp=1,ep=1,sp=off".
std::string LayoutLabel(const ModelSpec& m, const Strategy& s);
// "prefill [<LayoutLabel(sp)>] | decode [<LayoutLabel(sd)>]".
std::string DisaggLabel(const ModelSpec& m, const Strategy& sp, const Strategy& sd);

// The KV link between a gp-GPU prefill and a gd-GPU decode instance, as the static disaggregated
// model sets it (DisaggModel::Link on one shared pool of the type: max(2, gp + gd) GPUs rounded
// up to whole NVLink domains when above one).
StatusOr<KvLink> KvLinkBetween(const ProblemOnGpusFn& problem_on_gpus, const std::string& engine,
                               int gp, int gd);

// The serving options a sized deployment runs with: a deployment l2s proposes states its
// running-request limit (as plan's launch commands do), so the engine's lower cap for a launch
// that sets none (SGLang with MTP: 48 per server, DefaultMaxRunning) does not apply; --max-batch
// (base.max_running > 0) still does.
// A base.router of kEngineDefault becomes the front end's of `engine` (FrontEndRouter). SGLang's
// receive interval (base.sglang_recv_interval) applies to an SGLang scheduler only: 1 for the
// others (capacity over every engine sizes each with its own settings).
serve::ServeOptions SizedServeOptions(serve::ServeOptions base, Engine scheduler,
                                      const std::string& engine);

// How the front end of the engine named `engine` (as --engine takes it) hands requests to its
// instances: round-robin where the engine layer says so (Capabilities::round_robin_router:
// Dynamo's frontend without --router-mode kv, as l2s launches it), else to the least-loaded
// instance (kShortestQueue: the SGLang and vLLM routers' load balancing; also for "" and names
// the engine layer does not know).
serve::Assign FrontEndRouter(const std::string& engine);

// The strategy space of one instance of `gpus` GPUs of problem `p`: PlanSpaceOptions(p, mtp), and
// under engine `id` only what it launches as a server of `role` (engine::RestrictOptions; kIdeal:
// unrestricted).
StatusOr<StrategySpace> InstanceSpace(engine::EngineId id, const Problem& p, int gpus, int mtp,
                                      engine::Role role = engine::Role::kServer);

// Up to `n` more layouts of one instance size beside the searcher's `best`: the space's other
// degree combinations (MegatronDegreeCombinations; best's MTP depth where the space takes it),
// best first by the steady state of `sim`'s problem (tokens/s per GPU), batch 0. The steady
// state ranks layouts at one batch whereas the percentiles depend on how a layout queues and
// batches, so the runners-up are sized too (Llama-3.1-70B on H100 at 20 req/s: 9 x tp=4 meets
// P99 TTFT 2 s / TPOT 50 ms on 36 GPUs, where the best steady state, tp=2 with 2 replicas per 4
// GPUs, needs 40).
std::vector<Strategy> OtherDegrees(const Simulator& sim, const StrategySpace& space,
                                   const Strategy& best, int n);

// The layouts an instance size offers a stream, from the searcher's `best`: `best` first when one
// rank of it holds the stream's largest request in a pool of `kind` (serve::RankKvNeed against
// serve::RankKvTokens at the stream's mean lengths: the engine refuses a larger request at every
// instance count), else the degree combination with the most tokens/s per GPU that does; then up
// to `more` runners-up that hold it too (OtherDegrees). Empty when no layout of `space` holds it
// (*largest: that request's tokens). `inst`: the problem the serve layer prices an instance with.
std::vector<Strategy> HoldingLayouts(const Simulator& sim, const StrategySpace& space,
                                     const Problem& inst, const Strategy& best,
                                     serve::PoolKind kind,
                                     const std::vector<serve::RequestSpec>& requests, int more,
                                     int64_t* largest);

// One instance size of a disaggregated role, as the capacity sizing estimates it: its GPUs, one
// instance's requests/s in the steady state (0: none) and its tokens/s per GPU.
struct RoleSize {
  int gpus = 0;
  double rps = 0;
  double tokens_per_s_per_gpu = 0;
};
// Indices into `sizes` of the (at most) `k` that carry `rate` requests/s on the fewest GPUs,
// ceil(rate / rps) x gpus (ties: more tokens/s per GPU, then the given order); sizes without a
// rate last. The disaggregated sizing pairs each role's choice.
std::vector<int> SizesForFewestGpus(const std::vector<RoleSize>& sizes, double rate, int k);

// Sizes req.requests for engine req.engine: each size's layouts by the searcher on what that
// engine launches (InstanceSpace) within the SLOs' tightest TTFT and TPOT limits read as steady
// state figures, then the fewest instances meeting the SLOs. A single-node engine skips sizes
// above one node; an engine without disaggregated serving sizes aggregated only (Serving::kDisagg:
// InvalidArgument naming it). Errors (InvalidArgument / Invalid, one line): a bad searcher spec,
// no slos, an open-loop stream without arrivals spread in time, a problem the callback rejects, no
// size holding the model.
// "No size meets the SLOs" is not an error: any_found is false.
StatusOr<FewestOutcome> SizeFewest(const CapacityRequest& req);

// SizeFewest for every serving engine with a build for the GPUs (plan::TabulatedEngines on one
// node of the type; req.engine is ignored), one row each; the best needs the fewest GPUs (ties:
// the higher rate those GPUs sustain, then table order; an engine with an answer beats one
// without). Errors: the first engine's error when no engine gives an outcome.
StatusOr<EnginesOutcome> SizeFewestAllEngines(const CapacityRequest& req);

}  // namespace l2s::plan
