// ServeSim::Run's request-level simulation (serve_sim.h): one run's state and the engine's
// scheduler, stepped by events. The state keeps the names of the simulation's quantities (st: the
// requests' live state, inst: the instances, pr: each pool's step figures, g_*: the timeline's
// counters); each method is one scheduling action.
#include "serve/serve_sim.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>

#include "model/counts.h"

namespace l2s::serve {

namespace {

struct Live {
  int64_t need = 0;       // tokens to prefill: the prompt, or prompt + output so far (recompute)
  int64_t prefilled = 0;  // of need (starts at the cached prefix)
  double gen = 0;         // tokens emitted (fractional with MTP acceptance)
  int64_t kv = 0;         // KV tokens held
  int64_t reserve = 0;    // TensorRT-LLM: tokens reserved at admission
  double last_emit = 0;
  double prefill_start = -1;  // disaggregated: its first prefill chunk's step start
  double prefill_end = -1;    // disaggregated: its prefill's end
  int inst = 0, rank = 0;     // where it is now
  // Disaggregated: the decode instance and rank it goes to (SGLang: picked at arrival), the
  // prefill instance and rank that hold its prompt's KV until the transfer ends, and that KV.
  int d_inst = -1, d_rank = 0, p_inst = -1, p_rank = 0;
  int64_t pkv = 0, preserve = 0;
  int64_t dkv = 0, dres = 0;  // KV (and TensorRT-LLM's reserve) allocated on the decode rank
  bool rejected = false;
  // Copies of what a step reads of its RequestSpec and RequestOutcome (its output tokens, whether
  // its first token was streamed, whether it finished), so that a step touches one record per
  // request.
  int64_t output = 0;
  bool streamed = false, finished = false;
  // Its last prompt chunk ran, and the microbatch holding it is still crossing the pipeline's
  // stages until pipe_done (StepCost::Times::chunk_latency_s): not yet decodable.
  bool in_pipe = false;
  double pipe_done = 0;
};

struct Rank {
  std::deque<int> inbox;  // SGLang with a receive interval: arrived, not yet received
  std::deque<int> waiting;
  std::vector<int> running;
  // Disaggregated decode ranks: requests waiting for the KV allocation (FIFO), and the number
  // allocated that have not joined the running batch yet (transferring, or arrived and waiting).
  std::deque<int> alloc;
  std::deque<int> alloc_inbox;  // SGLang with a receive interval: arrived, not yet received
  int64_t allocated = 0;
  int64_t kv_used = 0, kv_reserved = 0;
  std::vector<std::pair<int, int64_t>> plan;  // (request, prefill chunk; 0 = decode)
  RankShape shape;
};

struct Inst {
  std::vector<Rank> ranks;
  int pool = 0;
  bool busy = false, start_pending = false;
  int rr = 0;
  int replica_rr = 0;  // the first replica of a configured instance: its dp dispatch's turn
  int64_t outstanding = 0;
  double step_start = 0;
  double chunk_done = 0;  // the step's prompt chunks' end (>= the step's end; pp > 1: later)
  // SGLang's receive counter (ServeOptions::sglang_recv_interval) and the weight of the latest
  // step: 1,000 when it prefilled, 1 when it only decoded, 0 when the instance went idle after it.
  int64_t recv_counter = 0, last_step_weight = 0;
  std::vector<double> channel_free;  // disaggregated decode instances: KV links' free times
};

enum class Ev : uint8_t { kStart, kEnd, kKvArrive, kEnter, kPrefillDone };

struct Event {
  double t;
  int64_t seq;
  int inst;
  Ev kind;
  int id;  // kKvArrive, kEnter, kPrefillDone: the request
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

// Per pool: token budget, decode query tokens, MTP acceptance, attention-dp ranks.
struct PoolRun {
  int64_t mnt = 0, q_tokens = 1;
  double q = 1, accept = 1;
  int dp = 1, first = 0;  // first instance index
  int router_rr = 0;
};

}  // namespace

class ServeSim::Runner {
 public:
  Runner(ServeSim& sim, const std::vector<RequestSpec>& requests, int clients)
      : sim_(sim),
        pools_(sim.pools_),
        opt_(sim.opt_),
        dis_(sim.dis_),
        reqs(requests),
        concurrency(clients),
        n(static_cast<int64_t>(requests.size())),
        disagg(sim.pools_.size() == 2),
        entry(sim.pools_.front()),
        tail(sim.pools_.back()),
        calls0(sim.calls_),
        closed(clients > 0),
        trt(sim.engine_ == Engine::kTrtllm),
        sgl(sim.engine_ == Engine::kSglang),
        recv_interval(sim.opt_.sglang_recv_interval),  // > 1: SGLang only (Make)
        rank_assign(sim.opt_.rank_assign != Assign::kEngineDefault ? sim.opt_.rank_assign
                    : sgl                                           ? Assign::kRoundRobin
                                                                    : Assign::kShortestQueue),
        // KV bytes of a prompt (disaggregated transfers), by the decode problem's model and KV
        // dtype (and its strategy: a speculating one sends the draft's cache too).
        dprob(tail.cost->sim().problem()),
        n_stops(sim.opt_.ttft_stops.size()),
        // A request reaches the engine this long after its client sent it (the entry pool's
        // engine's request overhead, Simulator::RequestOverheadS): its TTFT and latency include
        // the wait, the steps do not.
        overhead_s(entry.cost->sim().RequestOverheadS()) {}

  // The run: the event loop, then the summary figures and the timeline.
  ServeRun Go();

 private:
  StepCost::Times PoolStepTimes(int pool, const RankShape& busiest, const RankShape& mean) {
    return sim_.PoolStepTimes(pool, busiest, mean);
  }
  // Early stop on TTFT quantiles (ServeOptions::ttft_stops).
  void CountLate(size_t k, int64_t id);
  void NoteFirst(int64_t id, double now);
  bool CertainMiss(double now);
  // Disaggregated: ServeRun::prefill_queued / decode_queued from the ranks' queues now.
  void SnapshotQueues();
  bool queues_taken = false;
  // A rank's scheduler: its KV, its queue, the batch of its next step (Compose).
  void StreamFirst(int id, double now);
  double OutLeft(const Pool& P, int id);
  void Release(Rank& r, int id);
  void Preempt(Rank& r, size_t pos);
  int Enter(const Pool& P, Rank& r, int64_t extra);
  void Admit(const Pool& P, Rank& r, int64_t chunk);
  void PlanDecode(Rank& r, int id, int64_t q_tokens);
  void Compose(const Pool& P, const PoolRun& R, Rank& r, double now);
  // An instance's steps: start (every rank composes; priced by its busiest and mean rank), end.
  void StartStep(int ii, double now);
  void Kick(int ii, double now);
  void Finish(Rank& r, int id, double now, Inst& in);
  void EndStep(int ii, double now);
  // Request `id` on rank rk of instance ii has its prompt prefilled at `now`: its first token
  // (or the hand-off to the decode pool). True when it left the rank's running requests.
  bool CompletePrefill(int ii, int rk, int id, double now);
  // Drops from rank r of instance ii the running requests that finished or left it.
  void DropLeft(Rank& r, int ii);
  // A deferred CompletePrefill (pipeline stages still running the chunk): at pipe_done.
  void PrefillDone(int ii, int id, double now);
  // Routing: instance (the router, then the engine's dp dispatch) and rank.
  int PickInstance(int k);
  int PickRank(int ii);
  void Enqueue(int ii, int id);
  // Disaggregated: the decode allocation, the KV transfer, the hand-off between the pools.
  void ToDecode(int id, double now);
  void StartTransfer(int id, double now);
  void HandOff(int id, int ii, int p_rank, double now);
  void Allocate(int ii, double now);
  void KvArrive(int jj, int id, double now);
  // Arrivals: the client sends (Route), the engine receives after its overhead (ReachEngine).
  void ReachEngine(int id, double now);
  void Route(int id, double now);

  ServeSim& sim_;
  const std::vector<Pool>& pools_;
  const ServeOptions& opt_;
  const DisaggServeOptions& dis_;
  const std::vector<RequestSpec>& reqs;
  const int concurrency;
  const int64_t n;
  const bool disagg;
  const Pool& entry;  // the pool requests reach first (prefill when disaggregated)
  const Pool& tail;   // the decode pool (the only one when aggregated)
  const int64_t calls0;
  const bool closed;
  const bool trt, sgl;
  const int recv_interval;
  const Assign rank_assign;
  const Problem& dprob;
  const size_t n_stops;
  const double overhead_s;

  ServeRun run;
  std::vector<PoolRun> pr;
  std::vector<Live> st;
  std::vector<Inst> inst;
  double kv_total = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  int64_t seq = 0;
  // Global counters for the timeline.
  int64_t g_waiting = 0, g_running = 0, g_kv = 0, g_transfer = 0;
  std::vector<TimelinePoint> samples;
  std::vector<int64_t> waiting_at_arrival;  // in the system (waiting + running + transferring)
  std::vector<int64_t> queued_at_arrival;   // waiting alone (not yet admitted to a step)
  // Sending.
  int64_t next_open = 0;
  std::deque<std::pair<double, int64_t>> sendq;  // closed loop: (time, request)
  int64_t next_send = 0;
  // Early stop (ServeOptions::ttft_stops): per stop, the requests certain to miss its limit - a
  // first token later than the limit, or none yet once the limit has passed since the request was
  // sent (Route sets its arrival_s: open loop its arrival, closed loop when its client sent it; a
  // pointer over the `routed` requests, sent in index order) - each counted once.
  std::vector<std::vector<uint8_t>> late;
  std::vector<int64_t> late_count, late_next;
  int64_t routed = 0;  // requests sent so far (Route), in index order
  std::string stop_reason;
};

bool ServeSim::TooBig(const RequestSpec& r) const {
  if (disaggregated())
    return RankKvNeed(r, PoolKind::kPrefill) > pools_.front().kv_cap ||
           RankKvNeed(r, PoolKind::kDecode) > pools_.back().kv_cap;
  return RankKvNeed(r, PoolKind::kAggregated) > pools_.front().kv_cap;
}

int64_t ServeSim::Refused(const std::vector<RequestSpec>& requests, std::string* why) const {
  int64_t n = 0, prompts = 0;  // prompts: of n, those a prefill rank refuses
  for (const RequestSpec& r : requests) {
    if (!TooBig(r)) continue;
    ++n;
    if (disaggregated() && RankKvNeed(r, PoolKind::kPrefill) > pools_.front().kv_cap) ++prompts;
  }
  if (n > 0 && why != nullptr) {
    *why = !disaggregated()
               ? fmt::format("{} requests need more KV than one rank holds ({} tokens): the "
                             "engine rejects them",
                             n, pools_.front().kv_cap)
           : prompts == n
               ? fmt::format("{} prompts need more KV than one prefill rank holds ({} tokens): "
                             "the engine rejects them",
                             n, pools_.front().kv_cap)
               : fmt::format("{} requests need more KV than one {} rank holds ({} tokens): the "
                             "engine rejects them",
                             n, prompts > 0 ? "prefill or decode" : "decode",
                             prompts > 0 ? std::min(pools_.front().kv_cap, pools_.back().kv_cap)
                                         : pools_.back().kv_cap);
  }
  return n;
}

ServeRun ServeSim::Run(const std::vector<RequestSpec>& reqs, int concurrency) {
  return Runner(*this, reqs, concurrency).Go();
}

void ServeSim::Runner::SnapshotQueues() {
  queues_taken = true;
  run.prefill_queued = run.decode_queued = 0;
  for (const Inst& in : inst) {
    const bool prefill = pools_[static_cast<size_t>(in.pool)].role == Role::kPrefill;
    for (const Rank& r : in.ranks) {
      const auto q = static_cast<int64_t>(r.inbox.size() + r.waiting.size());
      if (prefill) run.prefill_queued += q;
      else run.decode_queued += q + static_cast<int64_t>(r.alloc.size() + r.alloc_inbox.size());
    }
  }
}

ServeRun ServeSim::Runner::Go() {
  run.requests.resize(reqs.size());
  run.kv_capacity_tokens = tail.kv_cap;
  run.max_running = tail.max_running;
  run.ranks = tail.ranks;
  run.instances = tail.instances;
  run.disaggregated = disagg;
  if (disagg) {
    run.prefill_instances = entry.instances;
    run.prefill_ranks = entry.ranks;
    run.prefill_max_running = entry.max_running;
    run.prefill_kv_capacity_tokens = entry.kv_cap;
  }
  for (int64_t i = 0; i < n; ++i) {
    run.requests[i].prompt = reqs[i].prompt;
    run.requests[i].output = reqs[i].output;
  }
  if (n == 0) return std::move(run);

  run.closed_loop = closed;
  // Per pool: token budget, decode query tokens, MTP acceptance, attention-dp ranks.
  pr.resize(pools_.size());
  int total_inst = 0;
  for (size_t k = 0; k < pools_.size(); ++k) {
    const StepCost& c = *pools_[k].cost;
    pr[k].mnt = c.max_num_tokens() > 0 ? c.max_num_tokens()
                                       : std::numeric_limits<int64_t>::max() / 4;
    pr[k].q = c.decode_q();
    pr[k].q_tokens = static_cast<int64_t>(pr[k].q);
    pr[k].accept = c.accept();
    pr[k].dp = pools_[k].ranks;
    pr[k].first = total_inst;
    total_inst += pools_[k].instances;
  }

  st.resize(reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) st[i].output = reqs[i].output;
  inst.resize(total_inst);
  for (size_t k = 0; k < pools_.size(); ++k) {
    kv_total += static_cast<double>(pools_[k].kv_cap) * pr[k].dp * pools_[k].instances;
    for (int i = 0; i < pools_[k].instances; ++i) {
      Inst& in = inst[pr[k].first + i];
      in.pool = static_cast<int>(k);
      in.ranks.resize(pr[k].dp);
      if (pools_[k].role == Role::kDecode)
        in.channel_free.assign(
            dis_.kv_channels > 0 ? dis_.kv_channels
                                 : pools_[k].cost->strategy().gpus() / pools_[k].replicas,
            0.0);
    }
  }
  waiting_at_arrival.reserve(closed ? 0 : reqs.size());
  queued_at_arrival.reserve(closed ? 0 : reqs.size());
  if (closed) {
    for (; next_send < std::min<int64_t>(n, concurrency); ++next_send) sendq.push_back({0.0, next_send});
  }
  late.assign(n_stops, std::vector<uint8_t>(static_cast<size_t>(n), 0));
  late_count.assign(n_stops, 0);
  late_next.assign(n_stops, 0);
  run.request_overhead_s = overhead_s;
  run.recv_interval = recv_interval;

  constexpr double kInf = std::numeric_limits<double>::infinity();
  while (true) {
    double ta = kInf;
    if (!closed) {
      if (next_open < n) ta = reqs[next_open].arrival_s;
    } else if (!sendq.empty()) {
      ta = sendq.front().first;
    }
    const double te = events.empty() ? kInf : events.top().t;
    if (ta == kInf && te == kInf) break;
    if (ta <= te) {
      if (!closed) {
        Route(static_cast<int>(next_open++), ta);
        waiting_at_arrival.push_back(g_waiting + g_running + g_transfer);
        queued_at_arrival.push_back(g_waiting);
        if (disagg && next_open == n) SnapshotQueues();
      } else {
        const int64_t id = sendq.front().second;
        sendq.pop_front();
        Route(static_cast<int>(id), ta);
      }
      continue;
    }
    const Event e = events.top();
    events.pop();
    Inst& in = inst[e.inst];
    if (e.kind == Ev::kKvArrive) {
      KvArrive(e.inst, e.id, e.t);
      continue;
    }
    if (e.kind == Ev::kEnter) {
      ReachEngine(e.id, e.t);
      continue;
    }
    if (e.kind == Ev::kPrefillDone) {
      PrefillDone(e.inst, e.id, e.t);
      continue;
    }
    if (e.kind == Ev::kEnd) EndStep(e.inst, e.t);
    else in.start_pending = false;
    if (!in.busy) StartStep(e.inst, e.t);
    if (run.steps >= opt_.max_steps) {
      run.finished = false;
      break;
    }
    if (n_stops > 0 && CertainMiss(e.t)) {
      run.finished = false;
      break;
    }
  }

  if (disagg && !queues_taken) SnapshotQueues();
  // Summary figures.
  run.cost_calls = sim_.calls_ - calls0;
  double first = kInf, last = 0;
  int64_t undone = 0, rejected = 0;
  for (int64_t i = 0; i < n; ++i) {
    const RequestOutcome& o = run.requests[i];
    if (st[i].rejected) ++rejected;
    if (!o.done()) {
      ++undone;
      continue;
    }
    first = std::min(first, o.arrival_s);
    last = std::max(last, o.finish_s);
  }
  run.makespan_s = last > first ? last - first : 0;
  if (!stop_reason.empty()) {
    run.unstable = true;
    run.unstable_reason = stop_reason;
  } else if (rejected > 0) {
    run.unstable = true;
    sim_.Refused(reqs, &run.unstable_reason);  // every request reached the engine
  } else if (!run.finished || undone > 0) {
    run.unstable = true;
    run.unstable_reason = fmt::format("{} of {} requests unfinished after {} steps (work limit)",
                                      undone, n, run.steps);
  } else if (!closed && n >= 40) {
    // Growth of the requests in the system (waiting or running, sampled at arrivals): their mean
    // over the last quarter of the arrivals against the second quarter. A stable system
    // fluctuates around rate x mean latency; an overloaded one grows by (offered - served rate)
    // x time, in the queue or, when the engine admits everything (SGLang's prefill priority), in
    // an ever larger and slower decode batch.
    // A stable system first fills: at t after the first arrival it holds rate x E[min(latency,
    // t)], which still rises over the second and last quarters when requests last longer than a
    // quarter of the arrivals' span (200 req/s of 500-token outputs: 11 s each, 2,000 requests
    // sent in 10 s). So each quarter's mean is compared with that fill, E over the latencies of
    // the first quarter's requests (which an overloaded system has barely queued): with
    // expectations e2, e4, unstable when w4 - e4 > 0.5 e4 + 1.5 (w2 - e2) + 10 - where every
    // first-quarter request is done within a quarter (e2 = e4), exactly w4 > 1.5 w2 + 10. When
    // the system is so far over capacity that the first quarter's requests already queued, that
    // fill is overstated; the queue alone (requests not yet admitted, which no stable system
    // accumulates, filling or not) then grows by the same rule, q4 > 1.5 q2 + 10.
    const size_t m = waiting_at_arrival.size(), qn = m / 4;
    std::vector<double> lat(qn);
    for (size_t i = 0; i < qn; ++i) lat[i] = run.requests[i].e2e_s();
    std::sort(lat.begin(), lat.end());
    std::vector<double> lat_sum(qn + 1, 0.0);
    for (size_t i = 0; i < qn; ++i) lat_sum[i + 1] = lat_sum[i] + lat[i];
    const double t0 = reqs[0].arrival_s, span = reqs[m - 1].arrival_s - t0;
    const double rate = span > 0 ? static_cast<double>(m - 1) / span : 0.0;
    auto filled = [&](size_t i) {  // rate x E[min(latency, t_i - t0)]
      const double t = reqs[i].arrival_s - t0;
      const size_t k = static_cast<size_t>(std::upper_bound(lat.begin(), lat.end(), t) - lat.begin());
      return rate * (lat_sum[k] + static_cast<double>(qn - k) * t) /
             static_cast<double>(std::max<size_t>(1, qn));
    };
    auto in_system = [&](size_t i) { return static_cast<double>(waiting_at_arrival[i]); };
    auto queued = [&](size_t i) { return static_cast<double>(queued_at_arrival[i]); };
    auto mean_of = [&](size_t a, size_t b, const auto& at) {  // over arrivals a..b-1
      double s = 0;
      for (size_t i = a; i < b; ++i) s += at(i);
      return s / static_cast<double>(std::max<size_t>(1, b - a));
    };
    const double w2 = mean_of(qn, 2 * qn, in_system), w4 = mean_of(3 * qn, m, in_system);
    const double e2 = mean_of(qn, 2 * qn, filled), e4 = mean_of(3 * qn, m, filled);
    const double q2 = mean_of(qn, 2 * qn, queued), q4 = mean_of(3 * qn, m, queued);
    if ((w4 - e4 > 0.5 * e4 + 1.5 * (w2 - e2) + 10 || q4 > 1.5 * q2 + 10) &&
        w4 > 0.01 * static_cast<double>(n)) {
      run.unstable = true;
      run.unstable_reason = fmt::format(
          "the queue grows: {:.0f} requests in the system on average over the last quarter of "
          "the arrivals against {:.0f} over the second (the offered rate is above what the "
          "deployment serves)",
          w4, w2);
    }
  }
  // Timeline: keep at most timeline_points samples, evenly spaced in time (the latest sample at or
  // before each grid time, and the peak queue of the interval).
  if (!samples.empty()) {
    const double t0 = samples.front().t_s, t1 = samples.back().t_s;
    const int P = opt_.timeline_points;
    size_t j = 0;
    for (int k = 0; k < P; ++k) {
      const double tk = t0 + (t1 - t0) * k / (P - 1);
      TimelinePoint best = samples[j];
      while (j + 1 < samples.size() && samples[j + 1].t_s <= tk) {
        ++j;
        if (samples[j].waiting > best.waiting) best.waiting = samples[j].waiting;
        best.running = samples[j].running;
        best.kv_fraction = samples[j].kv_fraction;
        best.transferring = samples[j].transferring;
      }
      best.t_s = tk;
      run.timeline.push_back(best);
      if (t1 <= t0) break;
    }
  }
  return std::move(run);
}

void ServeSim::Runner::CountLate(size_t k, int64_t id) {
  if (late[k][static_cast<size_t>(id)]) return;
  late[k][static_cast<size_t>(id)] = 1;
  ++late_count[k];
}

void ServeSim::Runner::NoteFirst(int64_t id, double now) {
  for (size_t k = 0; k < n_stops; ++k)
    if (now - run.requests[static_cast<size_t>(id)].arrival_s > opt_.ttft_stops[k].limit_s)
      CountLate(k, id);
}

bool ServeSim::Runner::CertainMiss(double now) {
  for (size_t k = 0; k < n_stops; ++k) {
    const ServeOptions::TtftStop& s = opt_.ttft_stops[k];
    int64_t& p = late_next[k];
    while (p < routed && run.requests[static_cast<size_t>(p)].arrival_s + s.limit_s < now) {
      if (run.requests[static_cast<size_t>(p)].first_token_s < 0) CountLate(k, p);
      ++p;
    }
    // The quantile sits at position q (n - 1) of the sorted TTFTs (linear interpolation):
    // above the limit once the order statistic at floor(q (n - 1)) is among the late ones.
    const int64_t need =
        n - static_cast<int64_t>(std::floor(s.quantile * static_cast<double>(n - 1)));
    if (late_count[k] >= need) {
      stop_reason = fmt::format(
          "stopped early: {} of {} requests certainly have a TTFT above {:.0f} ms, so its "
          "p{:g} does too",
          late_count[k], n, s.limit_s * 1e3, s.quantile * 100);
      return true;
    }
  }
  return false;
}

// The client receives request `id`'s first token at `now`.
void ServeSim::Runner::StreamFirst(int id, double now) {
  run.requests[id].first_token_s = now;
  st[id].streamed = true;
  NoteFirst(id, now);
  st[id].last_emit = now;
}

// Tokens a request's output reserves on a pool: none on a prefill instance (it leaves after its
// prompt), else what is left to generate.
double ServeSim::Runner::OutLeft(const Pool& P, int id) {
  return P.role == Role::kPrefill ? 0.0 : std::max(0.0, st[id].output - st[id].gen);
}

void ServeSim::Runner::Release(Rank& r, int id) {
  Live& L = st[id];
  r.kv_used -= L.kv;
  g_kv -= L.kv;
  r.kv_reserved -= L.reserve;
  L.kv = 0;
  L.reserve = 0;
}

// Preempts running[pos] (recompute: its KV is freed, it goes back to the front of the queue).
void ServeSim::Runner::Preempt(Rank& r, size_t pos) {
  const int id = r.running[pos];
  Live& L = st[id];
  Release(r, id);
  L.in_pipe = false;
  L.need = reqs[id].prompt + static_cast<int64_t>(std::floor(L.gen));
  L.prefilled = reqs[id].cached;
  r.running.erase(r.running.begin() + static_cast<std::ptrdiff_t>(pos));
  r.waiting.push_front(id);
  ++run.requests[id].preemptions;
  --g_running;
  ++g_waiting;
}

// Moves the queue's front to the running requests holding its KV so far (+ `extra`).
int ServeSim::Runner::Enter(const Pool& P, Rank& r, int64_t extra) {
  const int id = r.waiting.front();
  Live& L = st[id];
  r.waiting.pop_front();
  r.running.push_back(id);
  L.kv = L.prefilled + extra;
  r.kv_used += L.kv;
  g_kv += L.kv;
  if (trt) {
    L.reserve = reqs[id].prompt + static_cast<int64_t>(std::ceil(OutLeft(P, id) + L.gen));
    r.kv_reserved += L.reserve;
  }
  --g_waiting;
  ++g_running;
  return id;
}

void ServeSim::Runner::Admit(const Pool& P, Rank& r, int64_t chunk) {
  r.plan.push_back({Enter(P, r, chunk), chunk});
}

void ServeSim::Runner::PlanDecode(Rank& r, int id, int64_t q_tokens) {
  st[id].kv += q_tokens;
  r.kv_used += q_tokens;
  g_kv += q_tokens;
  r.plan.push_back({id, 0});
}

// One rank's batch for the next step (the engine's scheduler).
void ServeSim::Runner::Compose(const Pool& P, const PoolRun& R, Rank& r, double now) {
  r.plan.clear();
  int64_t budget = R.mnt;
  const int64_t kv_cap = P.kv_cap, q_tokens = R.q_tokens;
  const int max_running = P.max_running;
  auto free_kv = [&] { return kv_cap - r.kv_used; };
  double future = 0;  // SGLang: reserve for the running requests' remaining outputs
  if (sgl)
    for (int id : r.running) future += opt_.sglang_new_token_ratio * OutLeft(P, id);
  if (P.role == Role::kDecode) {
    // Requests whose KV arrived join the running batch (FCFS) while max running allows; their
    // KV was allocated before the transfer. SGLang streams their first token as they join (its
    // prebuilt batch, before this step runs). Preempted requests hold no KV and stay queued
    // for the recompute paths below; the arrived ones pass them (they hold their KV already:
    // waiting behind a recompute that needs their KV would stall the rank for good).
    for (size_t k = 0; k < r.waiting.size() &&
                       static_cast<int>(r.running.size()) < max_running;) {
      const int id = r.waiting[k];
      const Live& L = st[id];
      if (L.prefilled < L.need) {  // preempted
        ++k;
        continue;
      }
      if (!sgl && !trt && free_kv() < q_tokens) break;  // vLLM: room for the step's token
      r.waiting.erase(r.waiting.begin() + static_cast<std::ptrdiff_t>(k));
      r.running.push_back(id);
      --r.allocated;
      --g_waiting;
      ++g_running;
      if (sgl) StreamFirst(id, now);
    }
  }
  if (sgl) {
    // Prefill step when a chunked prompt is unfinished or a waiting request can be admitted.
    for (int id : r.running) {
      Live& L = st[id];
      if (L.prefilled >= L.need || budget <= 0) continue;
      const int64_t chunk = std::min(L.need - L.prefilled, budget);
      L.kv += chunk;
      r.kv_used += chunk;
      g_kv += chunk;
      r.plan.push_back({id, chunk});
      budget -= chunk;
    }
    while (!r.waiting.empty() && budget > 0 &&
           static_cast<int>(r.running.size()) < max_running) {
      const int wid = r.waiting.front();
      const Live& L = st[wid];
      if (L.prefilled >= L.need) break;  // its KV arrived: admitted by the decode pass
      const int64_t rest = L.need - L.prefilled;
      const int64_t chunk = std::min(rest, budget);
      const double need_new =
          static_cast<double>(L.need) + opt_.sglang_new_token_ratio * OutLeft(P, wid);
      if (static_cast<double>(free_kv()) - future < need_new && !r.running.empty()) break;
      if (free_kv() < L.prefilled + chunk) break;
      future += opt_.sglang_new_token_ratio * OutLeft(P, wid);
      Admit(P, r, chunk);
      budget -= chunk;
      if (chunk < rest) break;  // one chunked request at a time
    }
    if (!r.plan.empty() || P.role == Role::kPrefill) return;
    // Decode step: every running request; retract the latest admitted while the pool is short.
    while (!r.running.empty() &&
           free_kv() < static_cast<int64_t>(r.running.size()) * q_tokens && r.running.size() > 1)
      Preempt(r, r.running.size() - 1);
    for (int id : r.running)
      if (!st[id].in_pipe) PlanDecode(r, id, q_tokens);
    return;
  }
  // vLLM / TensorRT-LLM / ideal: mixed steps under one token budget, running requests first.
  for (size_t i = 0; i < r.running.size(); ++i) {
    const int id = r.running[i];
    Live& L = st[id];
    if (L.in_pipe) continue;  // its first token is still in the pipeline
    const bool prefilling = L.prefilled < L.need;
    const int64_t want = prefilling ? std::min(L.need - L.prefilled, budget) : q_tokens;
    if (want <= 0 || (!prefilling && budget < q_tokens)) continue;
    if (!trt) {
      while (free_kv() < want && r.running.size() > i + 1) Preempt(r, r.running.size() - 1);
      if (free_kv() < want) {
        // Not even alone: preempt itself (vLLM), unless it is the only request (it was
        // admitted whole: cannot happen, requests larger than the pool are rejected).
        if (r.running.size() > 1) {
          Preempt(r, i);
          break;
        }
        continue;
      }
    }
    if (prefilling) {
      L.kv += want;
      r.kv_used += want;
      g_kv += want;
      r.plan.push_back({id, want});
    } else {
      PlanDecode(r, id, q_tokens);
    }
    budget -= want;
  }
  while (!r.waiting.empty() && budget > 0 && static_cast<int>(r.running.size()) < max_running) {
    const int id = r.waiting.front();
    const Live& L = st[id];
    if (L.prefilled >= L.need) break;  // its KV arrived: admitted by the decode pass
    const int64_t chunk = std::min(L.need - L.prefilled, budget);
    if (trt) {
      if (r.kv_reserved + reqs[id].prompt + static_cast<int64_t>(std::ceil(OutLeft(P, id) + L.gen)) >
          kv_cap)
        break;
    } else if (free_kv() < L.prefilled + chunk) {
      break;
    }
    Admit(P, r, chunk);
    budget -= chunk;
  }
}

void ServeSim::Runner::StartStep(int ii, double now) {
  Inst& in = inst[ii];
  const Pool& P = pools_[in.pool];
  const PoolRun& R = pr[in.pool];
  if (recv_interval > 1) {
    // SGLang's receive point: the counter grows by the latest step's weight; the scheduler
    // receives when it reaches the interval, or at once when it has nothing else to run.
    in.recv_counter += in.last_step_weight;
    bool work = false;
    for (const Rank& r : in.ranks) work = work || !r.running.empty() || !r.waiting.empty();
    if (in.recv_counter >= recv_interval || !work) {
      for (Rank& r : in.ranks) {
        r.waiting.insert(r.waiting.end(), r.inbox.begin(), r.inbox.end());
        r.inbox.clear();
        r.alloc.insert(r.alloc.end(), r.alloc_inbox.begin(), r.alloc_inbox.end());
        r.alloc_inbox.clear();
      }
      in.recv_counter = 0;
    }
  }
  if (P.role == Role::kDecode) Allocate(ii, now);
  const int dp = R.dp;
  RankShape busiest, mean;
  double best_tokens = -1;
  bool any = false;
  double ctx_total = 0;
  for (Rank& r : in.ranks) {
    Compose(P, R, r, now);
    RankShape& s = r.shape;
    s = RankShape{};
    double ctx = 0;
    for (const auto& [id, chunk] : r.plan) {
      if (chunk > 0) {
        s.prefill_tokens += static_cast<double>(chunk);
        s.prefill_seqs += 1;
        if (st[id].prefill_start < 0) st[id].prefill_start = now;
      } else {
        s.decode_seqs += 1;
        ctx += static_cast<double>(st[id].kv - R.q_tokens);
      }
    }
    s.decode_ctx = s.decode_seqs > 0 ? ctx / s.decode_seqs : 0;
    ctx_total += ctx;
    if (!r.plan.empty()) any = true;
    const double tok = s.tokens(R.q);
    if (tok > best_tokens) {
      best_tokens = tok;
      busiest = s;
    }
    mean.decode_seqs += s.decode_seqs / dp;
    mean.prefill_tokens += s.prefill_tokens / dp;
    mean.prefill_seqs += s.prefill_seqs / dp;
  }
  if (!any) {
    in.busy = false;
    in.last_step_weight = 0;
    return;
  }
  in.last_step_weight = mean.prefill_tokens > 0 ? 1000 : 1;
  mean.decode_ctx = mean.decode_seqs > 0 ? ctx_total / (mean.decode_seqs * dp) : 0;
  if (dp == 1) mean = busiest;
  const StepCost::Times times = PoolStepTimes(in.pool, busiest, mean);
  const double dur = std::max(times.round_s, 1e-9);
  in.busy = true;
  in.step_start = now;
  in.chunk_done = now + std::max(times.chunk_latency_s, dur);
  (P.role == Role::kPrefill ? run.prefill_busy_s : run.decode_busy_s) += dur;
  events.push({now + dur, seq++, ii, Ev::kEnd, -1});
  ++run.steps;
  samples.push_back({now, g_waiting, g_running, kv_total > 0 ? g_kv / kv_total : 0, g_transfer});
}

void ServeSim::Runner::Kick(int ii, double now) {
  Inst& in = inst[ii];
  if (!in.busy && !in.start_pending) {
    in.start_pending = true;
    events.push({now, seq++, ii, Ev::kStart, -1});
  }
}

void ServeSim::Runner::Finish(Rank& r, int id, double now, Inst& in) {
  run.requests[id].finish_s = now;
  st[id].finished = true;
  Release(r, id);
  --in.outstanding;
  --g_running;
  if (closed && next_send < n) sendq.push_back({now, next_send++});
}

// Instance of pool k for a new request: the router picks a configured instance (its load: the
// requests outstanding on all its replicas), then the engine's dp dispatch one of its
// independent replicas (as it picks an attention-dp rank: round-robin or the least loaded).
int ServeSim::Runner::PickInstance(int k) {
  const Pool& P = pools_[k];
  PoolRun& R = pr[k];
  const int groups = P.instances / P.replicas;
  auto group_load = [&](int g) {
    int64_t s = 0;
    for (int j = 0; j < P.replicas; ++j) s += inst[R.first + g * P.replicas + j].outstanding;
    return s;
  };
  int g = 0;
  if (groups > 1) {
    if (P.router == Assign::kRoundRobin) {
      g = R.router_rr++ % groups;
    } else {
      for (int j = 1; j < groups; ++j)
        if (group_load(j) < group_load(g)) g = j;
    }
  }
  int ii = R.first + g * P.replicas;
  if (P.replicas > 1) {
    if (rank_assign == Assign::kRoundRobin) {
      ii += inst[ii].replica_rr++ % P.replicas;
    } else {
      const int base = ii;
      for (int j = base + 1; j < base + P.replicas; ++j)
        if (inst[j].outstanding < inst[ii].outstanding) ii = j;
    }
  }
  return ii;
}

// Rank of instance ii for a new request (attention-DP ranks).
int ServeSim::Runner::PickRank(int ii) {
  Inst& in = inst[ii];
  const int dp = pr[in.pool].dp;
  int rk = 0;
  if (dp > 1) {
    if (rank_assign == Assign::kRoundRobin) {
      rk = in.rr++ % dp;
    } else {
      auto load = [&](int k) {
        const Rank& r = in.ranks[k];
        return static_cast<int64_t>(r.inbox.size() + r.waiting.size() + r.running.size() +
                                    r.alloc_inbox.size() + r.alloc.size()) +
               r.allocated;
      };
      for (int k = 1; k < dp; ++k)
        if (load(k) < load(rk)) rk = k;
    }
  }
  return rk;
}

// Queues request `id` on a rank of instance ii (SGLang with a receive interval: in the rank's
// inbox while the instance steps, until its scheduler receives).
void ServeSim::Runner::Enqueue(int ii, int id) {
  const int rk = PickRank(ii);
  st[id].inst = ii;
  st[id].rank = rk;
  Rank& r = inst[ii].ranks[rk];
  (recv_interval > 1 && inst[ii].busy ? r.inbox : r.waiting).push_back(id);
  ++g_waiting;
}

// Disaggregated: request `id` waits for the KV allocation on decode instance jj.
void ServeSim::Runner::ToDecode(int id, double now) {
  Live& L = st[id];
  const int jj = PickInstance(1);
  ++inst[jj].outstanding;
  L.d_inst = jj;
  L.d_rank = PickRank(jj);
  Rank& r = inst[jj].ranks[L.d_rank];
  (recv_interval > 1 && inst[jj].busy ? r.alloc_inbox : r.alloc).push_back(id);
  Kick(jj, now);
}

// Disaggregated: request `id`'s KV leaves for its decode instance, whose allocation holds it
// (KvTransferSeconds, after the transfers queued on that instance's links; layerwise: only
// the part not hidden behind the prefill, when the transfer starts at the prefill's end).
void ServeSim::Runner::StartTransfer(int id, double now) {
  Live& L = st[id];
  Inst& dst = inst[L.d_inst];
  // A speculating deployment sends the draft's KV cache of the prompt too.
  const double bytes =
      KvBytesForSequence(dprob.model, dprob.workload.kv, reqs[id].prompt) +
      (tail.cost->strategy().mtp > 0
           ? DraftKvBytesForSequence(dprob.model, dprob.workload.kv, reqs[id].prompt)
           : 0.0);
  const double full = KvTransferSeconds(dis_.link, bytes);
  const double t = now <= L.prefill_end
                       ? ExposedKvTransfer(full, L.prefill_end - std::max(0.0, L.prefill_start),
                                           dprob.model.num_layers, dis_.layerwise)
                       : full;
  auto ch = std::min_element(dst.channel_free.begin(), dst.channel_free.end());
  const double done = std::max(now, *ch) + t;
  *ch = done;
  events.push({done, seq++, L.d_inst, Ev::kKvArrive, id});
}

// Request `id`'s prefill finished on rank p_rank of prefill instance ii, which holds its KV
// until the transfer ends. SGLang: its decode KV is allocated already, the transfer starts;
// else it waits for the allocation on the decode instance the decode router picks.
void ServeSim::Runner::HandOff(int id, int ii, int p_rank, double now) {
  Live& L = st[id];
  L.pkv = L.kv;
  L.preserve = L.reserve;
  L.kv = L.reserve = 0;
  L.p_inst = ii;
  L.p_rank = p_rank;
  L.prefill_end = now;
  run.requests[id].prefill_end_s = now;
  ++g_transfer;
  if (sgl) {
    StartTransfer(id, now);
  } else {
    ToDecode(id, now);
  }
  L.inst = L.d_inst;
}

// Disaggregated decode instance ii: the KV allocations its scheduler makes at `now`.
void ServeSim::Runner::Allocate(int ii, double now) {
  Inst& in = inst[ii];
  const Pool& P = pools_[in.pool];
  const int64_t cap = P.kv_cap, maxr = P.max_running;
  const int64_t res = dis_.sglang_reserved_decode_tokens, clip = dis_.sglang_clip_max_new_tokens;
  // SGLang: the request slots of its decode req_to_token pool (max running, plus 2 x max
  // running pre-allocation slots when that is <= 32).
  const int64_t slots = maxr + (maxr <= 32 ? 2 * maxr : 0);
  for (Rank& r : in.ranks) {
    if (r.alloc.empty()) continue;
    int64_t retractable = 0, single = 0;
    if (sgl) {
      for (int id : r.running) retractable += reqs[id].prompt + static_cast<int64_t>(st[id].gen);
      for (int id : r.running)
        single = std::max(single,
                          reqs[id].prompt + std::min(reqs[id].output, clip) - retractable);
    }
    while (!r.alloc.empty()) {
      const int id = r.alloc.front();
      Live& L = st[id];
      const int64_t prompt = reqs[id].prompt, out = reqs[id].output;
      const int64_t held = static_cast<int64_t>(r.running.size()) + r.allocated;
      const int64_t free_tok = cap - r.kv_used;
      if (sgl) {
        if (held >= slots) break;
        const int64_t allocatable = free_tok - std::max(res * held, single);
        const bool fits = prompt + res <= allocatable &&
                          prompt + std::min(out, clip) - retractable <= allocatable;
        // An empty rank takes a request that fits it whole (else nothing would ever free).
        if (!fits && !(held == 0 && prompt + out <= cap)) break;
      } else if (trt) {
        if (held >= maxr || r.kv_reserved + prompt + out > cap) break;
      } else if (static_cast<int64_t>(r.running.size()) >= maxr || free_tok < prompt) {
        break;
      }
      r.alloc.pop_front();
      ++r.allocated;
      run.requests[id].kv_alloc_s = now;
      L.dkv = prompt;
      r.kv_used += prompt;
      g_kv += prompt;
      if (trt) {
        L.dres = prompt + out;
        r.kv_reserved += L.dres;
      }
      if (sgl) {
        --g_waiting;  // now queued on its prefill instance
        Enqueue(L.p_inst, id);
        Kick(L.p_inst, now);
      } else {
        StartTransfer(id, now);
      }
    }
  }
}

// Request `id`'s KV reached decode instance jj: the prefill instance frees it, the request
// waits to join jj's batch.
void ServeSim::Runner::KvArrive(int jj, int id, double now) {
  Live& L = st[id];
  Rank& pr_rank = inst[L.p_inst].ranks[L.p_rank];
  pr_rank.kv_used -= L.pkv;
  pr_rank.kv_reserved -= L.preserve;
  g_kv -= L.pkv;
  L.pkv = L.preserve = 0;
  Kick(L.p_inst, now);
  --g_transfer;
  run.requests[id].kv_ready_s = now;
  L.need = L.prefilled = reqs[id].prompt;  // its prompt's KV is here
  L.kv = L.dkv;
  L.reserve = L.dres;
  L.dkv = L.dres = 0;
  if (!sgl && !trt) L.gen = 0;  // vLLM: the decode instance computes the first token itself
  L.inst = jj;
  L.rank = L.d_rank;
  inst[jj].ranks[L.d_rank].waiting.push_back(id);
  ++g_waiting;
  Kick(jj, now);
}

void ServeSim::Runner::EndStep(int ii, double now) {
  Inst& in = inst[ii];
  const Pool& P = pools_[in.pool];
  const PoolRun& R = pr[in.pool];
  for (size_t rk = 0; rk < in.ranks.size(); ++rk) {
    Rank& r = in.ranks[rk];
    bool any_left = false;
    for (const auto& [id, chunk] : r.plan) {
      Live& L = st[id];
      if (chunk > 0) {
        L.prefilled += chunk;
        if (L.prefilled < L.need) continue;
        if (in.chunk_done > now) {
          // The microbatch holding the last chunk crosses the remaining stages: the prompt's
          // token comes at chunk_done (the next step may start before).
          L.in_pipe = true;
          L.pipe_done = in.chunk_done;
          L.rank = static_cast<int>(rk);
          events.push({in.chunk_done, seq++, ii, Ev::kPrefillDone, id});
          continue;
        }
        any_left = CompletePrefill(ii, static_cast<int>(rk), id, now) || any_left;
        continue;
      } else {
        const double before = std::floor(L.gen);
        L.gen = std::min<double>(static_cast<double>(L.output), L.gen + R.accept);
        const int64_t emitted = static_cast<int64_t>(std::floor(L.gen) - before);
        const int64_t back = R.q_tokens - emitted;  // draft slots not kept
        L.kv -= back;
        r.kv_used -= back;
        g_kv -= back;
        if (emitted > 0) {
          if (!L.streamed) {
            StreamFirst(id, now);  // TensorRT-LLM, vLLM: the first decode step's output
          } else {
            run.itl.Add(now - L.last_emit);
          }
          L.last_emit = now;
        }
      }
      if (std::floor(L.gen) >= L.output) {
        Finish(r, id, now, in);
        any_left = true;
      } else if (P.role == Role::kPrefill) {
        // Prompt done: the KV leaves for the decode pool.
        --in.outstanding;
        --g_running;
        HandOff(id, ii, static_cast<int>(rk), now);
        any_left = true;
      }
    }
    if (any_left) DropLeft(r, ii);
  }
  in.busy = false;
}

void ServeSim::Runner::DropLeft(Rank& r, int ii) {
  r.running.erase(std::remove_if(r.running.begin(), r.running.end(),
                                 [&](int id) { return st[id].finished || st[id].inst != ii; }),
                  r.running.end());
}

bool ServeSim::Runner::CompletePrefill(int ii, int rk, int id, double now) {
  Inst& in = inst[ii];
  const Pool& P = pools_[in.pool];
  Rank& r = in.ranks[static_cast<size_t>(rk)];
  Live& L = st[id];
  // Disaggregated: the client sees this token only from the decode instance, unless the
  // request ends here.
  const bool to_dec = P.role == Role::kPrefill && L.gen + 1 < L.output;
  if (!to_dec) {
    if (!L.streamed) {
      StreamFirst(id, now);
    } else {
      run.itl.Add(now - L.last_emit);
    }
  }
  L.gen += 1;
  L.last_emit = now;
  if (std::floor(L.gen) >= L.output) {
    Finish(r, id, now, in);
    return true;
  }
  if (P.role == Role::kPrefill) {
    // Prompt done: the KV leaves for the decode pool.
    --in.outstanding;
    --g_running;
    HandOff(id, ii, rk, now);
    return true;
  }
  return false;
}

void ServeSim::Runner::PrefillDone(int ii, int id, double now) {
  Live& L = st[id];
  if (!L.in_pipe || L.pipe_done != now) return;  // preempted meanwhile (a stale event)
  L.in_pipe = false;
  Rank& r = inst[ii].ranks[static_cast<size_t>(L.rank)];
  if (CompletePrefill(ii, L.rank, id, now)) DropLeft(r, ii);
  Kick(ii, now);  // it decodes from now on (or its slot is free)
}

void ServeSim::Runner::ReachEngine(int id, double now) {
  Live& L = st[id];
  const RequestSpec& rq = reqs[id];
  run.requests[id].engine_s = now;
  if (sim_.TooBig(rq)) {  // larger than a rank's whole KV pool: the engine refuses it
    L.rejected = true;
    if (closed && next_send < n) sendq.push_back({now, next_send++});
    return;
  }
  const int ii = PickInstance(0);
  L.need = rq.prompt;
  L.prefilled = rq.cached;
  L.last_emit = now;
  ++inst[ii].outstanding;
  if (disagg && sgl && rq.output > 1) {
    // SGLang: the decode instance pre-allocates the prompt's KV before the prefill may start.
    L.p_inst = ii;
    ++g_waiting;
    ToDecode(id, now);
    return;
  }
  Enqueue(ii, id);
  Kick(ii, now);
}

void ServeSim::Runner::Route(int id, double now) {
  run.requests[id].arrival_s = now;
  ++routed;
  if (overhead_s > 0) events.push({now + overhead_s, seq++, 0, Ev::kEnter, id});
  else ReachEngine(id, now);
}

}  // namespace l2s::serve
