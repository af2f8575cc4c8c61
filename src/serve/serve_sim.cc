#include "serve/serve_sim.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>

namespace l2s::serve {

const char* AssignName(Assign a) {
  switch (a) {
    case Assign::kEngineDefault: return "default";
    case Assign::kRoundRobin: return "round-robin";
    case Assign::kShortestQueue: return "shortest-queue";
  }
  return "?";
}

bool ParseAssign(const std::string& s, Assign* out) {
  if (s == "default") *out = Assign::kEngineDefault;
  else if (s == "round-robin" || s == "rr") *out = Assign::kRoundRobin;
  else if (s == "shortest-queue" || s == "sq") *out = Assign::kShortestQueue;
  else return false;
  return true;
}

namespace {
constexpr double kHistLo = 1e-6;      // s
constexpr double kHistStep = 0.005;   // ln width of a bin
constexpr int kHistBins = 4606;       // up to 1e4 s
}  // namespace

void LogHistogram::Add(double x, double weight) {
  if (!(x >= 0) || weight <= 0) return;
  if (bins_.empty()) bins_.assign(kHistBins, 0.0);
  int b = x <= kHistLo ? 0 : static_cast<int>(std::log(x / kHistLo) / kHistStep);
  b = std::clamp(b, 0, kHistBins - 1);
  bins_[b] += weight;
  w_ += weight;
  sum_ += x * weight;
}

double LogHistogram::Quantile(double q) const {
  if (w_ <= 0) return 0;
  const double target = q * w_;
  double acc = 0;
  for (int b = 0; b < kHistBins; ++b) {
    acc += bins_[b];
    if (acc >= target && bins_[b] > 0) return kHistLo * std::exp((b + 0.5) * kHistStep);
  }
  return kHistLo * std::exp((kHistBins - 0.5) * kHistStep);
}

size_t ServeSim::KeyHash::operator()(const Key& k) const {
  uint64_t h = 1469598103934665603ULL;
  for (int32_t v : k.q) {
    h ^= static_cast<uint32_t>(v);
    h *= 1099511628211ULL;
  }
  return static_cast<size_t>(h ^ (h >> 29));
}

int32_t ServeSim::Quantise(double x) const {
  if (x <= 0) return 0;
  if (x <= 64) return static_cast<int32_t>(std::lround(x * 4));
  return 256 + static_cast<int32_t>(std::lround(opt_.shape_steps_per_octave * std::log2(x / 64)));
}

double ServeSim::Dequantise(int32_t q) const {
  if (q <= 256) return q / 4.0;
  return 64 * std::exp2(static_cast<double>(q - 256) / opt_.shape_steps_per_octave);
}

double ServeSim::StepSeconds(const RankShape& b, const RankShape& m) {
  Key k;
  k.q = {Quantise(b.decode_seqs), Quantise(b.decode_ctx), Quantise(b.prefill_tokens),
         Quantise(b.prefill_seqs), Quantise(m.decode_seqs), Quantise(m.decode_ctx),
         Quantise(m.prefill_tokens), Quantise(m.prefill_seqs)};
  auto it = memo_.find(k);
  if (it != memo_.end()) return it->second;
  RankShape qb{Dequantise(k.q[0]), Dequantise(k.q[1]), Dequantise(k.q[2]), Dequantise(k.q[3])};
  RankShape qm{Dequantise(k.q[4]), Dequantise(k.q[5]), Dequantise(k.q[6]), Dequantise(k.q[7])};
  const double s = cost_->Seconds(qb, qm);
  ++calls_;
  memo_.emplace(k, s);
  return s;
}

StatusOr<std::unique_ptr<ServeSim>> ServeSim::Make(const StepCost* cost, const ServeOptions& opt,
                                                   int64_t nominal_isl, int64_t nominal_osl) {
  if (cost == nullptr) return Status::InvalidArgument("serve: no step cost");
  if (opt.instances < 1 || opt.instances > 1'000'000)
    return Status::InvalidArgument("serve: instances must be in [1, 10^6]");
  if (opt.max_running < 0) return Status::InvalidArgument("serve: max running must be >= 0");
  if (opt.shape_steps_per_octave < 1 || opt.shape_steps_per_octave > 1'000'000)
    return Status::InvalidArgument("serve: shape resolution must be in [1, 10^6] steps per octave");
  if (opt.timeline_points < 2) return Status::InvalidArgument("serve: timeline needs >= 2 points");
  if (!(opt.sglang_new_token_ratio >= 0 && opt.sglang_new_token_ratio <= 1))
    return Status::InvalidArgument("serve: new_token_ratio must be in [0, 1]");
  std::unique_ptr<ServeSim> s(new ServeSim(cost, opt));
  s->kv_cap_ = opt.kv_capacity_tokens >= 0
                   ? opt.kv_capacity_tokens
                   : cost->KvCapacityTokens(nominal_isl + nominal_osl, nominal_isl);
  if (s->kv_cap_ <= 0)
    return Status::Invalid("serve: the weights leave no memory for the KV cache on this layout");
  return s;
}

ServeSim::ServeSim(const StepCost* cost, const ServeOptions& opt) : cost_(cost), opt_(opt) {
  engine_ = cost->sim().problem().workload.engine;
  max_running_ = opt.max_running > 0 ? opt.max_running : DefaultsOf(engine_).max_batch;
}

namespace {

struct Live {
  int64_t need = 0;       // tokens to prefill: the prompt, or prompt + output so far (recompute)
  int64_t prefilled = 0;  // of need (starts at the cached prefix)
  double gen = 0;         // tokens emitted (fractional with MTP acceptance)
  int64_t kv = 0;         // KV tokens held
  int64_t reserve = 0;    // TensorRT-LLM: tokens reserved at admission
  double last_emit = 0;
  int inst = 0, rank = 0;
  bool rejected = false;
};

struct Rank {
  std::deque<int> waiting;
  std::vector<int> running;
  int64_t kv_used = 0, kv_reserved = 0;
  std::vector<std::pair<int, int64_t>> plan;  // (request, prefill chunk; 0 = decode)
  RankShape shape;
};

struct Inst {
  std::vector<Rank> ranks;
  bool busy = false, start_pending = false;
  int rr = 0;
  int64_t outstanding = 0;
};

struct Event {
  double t;
  int64_t seq;
  int inst;
  bool end;  // false: start a step
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

}  // namespace

ServeRun ServeSim::Run(const std::vector<RequestSpec>& reqs, int concurrency) {
  ServeRun run;
  const int64_t n = static_cast<int64_t>(reqs.size());
  const int dp = cost_->strategy().dp;
  run.requests.resize(reqs.size());
  run.kv_capacity_tokens = kv_cap_;
  run.max_running = max_running_;
  run.ranks = dp;
  run.instances = opt_.instances;
  const int64_t calls0 = calls_;
  for (int64_t i = 0; i < n; ++i) {
    run.requests[i].prompt = reqs[i].prompt;
    run.requests[i].output = reqs[i].output;
  }
  if (n == 0) return run;

  const bool closed = concurrency > 0;
  run.closed_loop = closed;
  const double q = cost_->decode_q(), accept = cost_->accept();
  const int64_t mnt = cost_->max_num_tokens() > 0 ? cost_->max_num_tokens()
                                                  : std::numeric_limits<int64_t>::max() / 4;
  const bool trt = engine_ == Engine::kTrtllm, sgl = engine_ == Engine::kSglang;
  const Assign rank_assign = opt_.rank_assign != Assign::kEngineDefault ? opt_.rank_assign
                             : sgl ? Assign::kRoundRobin
                                   : Assign::kShortestQueue;
  const int64_t q_tokens = static_cast<int64_t>(q);

  std::vector<Live> st(reqs.size());
  std::vector<Inst> inst(opt_.instances);
  for (Inst& in : inst) in.ranks.resize(dp);
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  int64_t seq = 0;
  int router_rr = 0;
  // Global counters for the timeline.
  int64_t g_waiting = 0, g_running = 0, g_kv = 0;
  const double kv_total = static_cast<double>(kv_cap_) * dp * opt_.instances;
  std::vector<TimelinePoint> samples;
  std::vector<int64_t> waiting_at_arrival;  // in the system (waiting + running)
  waiting_at_arrival.reserve(closed ? 0 : reqs.size());

  // Sending.
  int64_t next_open = 0;
  std::deque<std::pair<double, int64_t>> sendq;  // closed loop: (time, request)
  int64_t next_send = 0;
  if (closed) {
    for (; next_send < std::min<int64_t>(n, concurrency); ++next_send) sendq.push_back({0.0, next_send});
  }

  auto release = [&](Rank& r, int id) {
    Live& L = st[id];
    r.kv_used -= L.kv;
    g_kv -= L.kv;
    r.kv_reserved -= L.reserve;
    L.kv = 0;
    L.reserve = 0;
  };
  // Preempts running[pos] (recompute: its KV is freed, it goes back to the front of the queue).
  auto preempt = [&](Rank& r, size_t pos) {
    const int id = r.running[pos];
    Live& L = st[id];
    release(r, id);
    L.need = reqs[id].prompt + static_cast<int64_t>(std::floor(L.gen));
    L.prefilled = reqs[id].cached;
    r.running.erase(r.running.begin() + static_cast<std::ptrdiff_t>(pos));
    r.waiting.push_front(id);
    ++run.requests[id].preemptions;
    --g_running;
    ++g_waiting;
  };
  auto admit = [&](Rank& r, int64_t chunk) {
    const int id = r.waiting.front();
    Live& L = st[id];
    r.waiting.pop_front();
    r.running.push_back(id);
    L.kv = L.prefilled + chunk;
    r.kv_used += L.kv;
    g_kv += L.kv;
    if (trt) {
      L.reserve = reqs[id].prompt + reqs[id].output;
      r.kv_reserved += L.reserve;
    }
    r.plan.push_back({id, chunk});
    --g_waiting;
    ++g_running;
  };
  auto plan_decode = [&](Rank& r, int id) {
    st[id].kv += q_tokens;
    r.kv_used += q_tokens;
    g_kv += q_tokens;
    r.plan.push_back({id, 0});
  };

  // One rank's batch for the next step (the engine's scheduler).
  auto compose = [&](Rank& r) {
    r.plan.clear();
    int64_t budget = mnt;
    auto free_kv = [&] { return kv_cap_ - r.kv_used; };
    if (sgl) {
      // Prefill step when a chunked prompt is unfinished or a waiting request can be admitted.
      double future = 0;  // reserve for the running requests' remaining outputs
      for (int id : r.running)
        future += opt_.sglang_new_token_ratio * std::max(0.0, reqs[id].output - st[id].gen);
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
             static_cast<int>(r.running.size()) < max_running_) {
        const Live& L = st[r.waiting.front()];
        const int64_t rest = L.need - L.prefilled;
        const int64_t chunk = std::min(rest, budget);
        const double need_new = static_cast<double>(L.need) +
                                opt_.sglang_new_token_ratio * (reqs[r.waiting.front()].output - L.gen);
        if (static_cast<double>(free_kv()) - future < need_new && !r.running.empty()) break;
        if (free_kv() < L.prefilled + chunk) break;
        future += opt_.sglang_new_token_ratio * (reqs[r.waiting.front()].output - L.gen);
        admit(r, chunk);
        budget -= chunk;
        if (chunk < rest) break;  // one chunked request at a time
      }
      if (!r.plan.empty()) return;
      // Decode step: every running request; retract the latest admitted while the pool is short.
      while (!r.running.empty() &&
             free_kv() < static_cast<int64_t>(r.running.size()) * q_tokens && r.running.size() > 1)
        preempt(r, r.running.size() - 1);
      for (int id : r.running) plan_decode(r, id);
      return;
    }
    // vLLM / TensorRT-LLM / ideal: mixed steps under one token budget, running requests first.
    for (size_t i = 0; i < r.running.size(); ++i) {
      const int id = r.running[i];
      Live& L = st[id];
      const bool prefilling = L.prefilled < L.need;
      const int64_t want = prefilling ? std::min(L.need - L.prefilled, budget) : q_tokens;
      if (want <= 0 || (!prefilling && budget < q_tokens)) continue;
      if (!trt) {
        while (free_kv() < want && r.running.size() > i + 1) preempt(r, r.running.size() - 1);
        if (free_kv() < want) {
          // Not even alone: preempt itself (vLLM), unless it is the only request (it was
          // admitted whole: cannot happen, requests larger than the pool are rejected).
          if (r.running.size() > 1) {
            preempt(r, i);
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
        plan_decode(r, id);
      }
      budget -= want;
    }
    while (!r.waiting.empty() && budget > 0 && static_cast<int>(r.running.size()) < max_running_) {
      const int id = r.waiting.front();
      const Live& L = st[id];
      const int64_t chunk = std::min(L.need - L.prefilled, budget);
      if (trt) {
        if (r.kv_reserved + reqs[id].prompt + reqs[id].output > kv_cap_) break;
      } else if (free_kv() < L.prefilled + chunk) {
        break;
      }
      admit(r, chunk);
      budget -= chunk;
    }
  };

  auto start_step = [&](int ii, double now) {
    Inst& in = inst[ii];
    RankShape busiest, mean;
    double best_tokens = -1;
    bool any = false;
    double ctx_total = 0;
    for (Rank& r : in.ranks) {
      compose(r);
      RankShape& s = r.shape;
      s = RankShape{};
      double ctx = 0;
      for (const auto& [id, chunk] : r.plan) {
        if (chunk > 0) {
          s.prefill_tokens += static_cast<double>(chunk);
          s.prefill_seqs += 1;
        } else {
          s.decode_seqs += 1;
          ctx += static_cast<double>(st[id].kv - q_tokens);
        }
      }
      s.decode_ctx = s.decode_seqs > 0 ? ctx / s.decode_seqs : 0;
      ctx_total += ctx;
      if (!r.plan.empty()) any = true;
      const double tok = s.tokens(q);
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
      return;
    }
    mean.decode_ctx = mean.decode_seqs > 0 ? ctx_total / (mean.decode_seqs * dp) : 0;
    if (dp == 1) mean = busiest;
    const double dur = StepSeconds(busiest, mean);
    in.busy = true;
    events.push({now + std::max(dur, 1e-9), seq++, ii, true});
    ++run.steps;
    samples.push_back({now, g_waiting, g_running, kv_total > 0 ? g_kv / kv_total : 0});
  };

  auto finish = [&](Rank& r, int id, double now, Inst& in) {
    run.requests[id].finish_s = now;
    release(r, id);
    --in.outstanding;
    --g_running;
    if (closed && next_send < n) sendq.push_back({now, next_send++});
  };

  auto end_step = [&](int ii, double now) {
    Inst& in = inst[ii];
    for (Rank& r : in.ranks) {
      bool any_done = false;
      for (const auto& [id, chunk] : r.plan) {
        Live& L = st[id];
        RequestOutcome& o = run.requests[id];
        if (chunk > 0) {
          L.prefilled += chunk;
          if (L.prefilled < L.need) continue;
          if (o.first_token_s < 0) o.first_token_s = now;
          else run.itl.Add(now - L.last_emit);
          L.gen += 1;
          L.last_emit = now;
        } else {
          const double before = std::floor(L.gen);
          L.gen = std::min<double>(static_cast<double>(reqs[id].output), L.gen + accept);
          const int64_t emitted = static_cast<int64_t>(std::floor(L.gen) - before);
          const int64_t back = q_tokens - emitted;  // draft slots not kept
          L.kv -= back;
          r.kv_used -= back;
          g_kv -= back;
          if (emitted > 0) {
            run.itl.Add(now - L.last_emit);
            L.last_emit = now;
          }
        }
        if (std::floor(L.gen) >= reqs[id].output) {
          finish(r, id, now, in);
          any_done = true;
        }
      }
      if (any_done)
        r.running.erase(std::remove_if(r.running.begin(), r.running.end(),
                                       [&](int id) { return run.requests[id].done(); }),
                        r.running.end());
    }
    in.busy = false;
  };

  auto route = [&](int id, double now) {
    Live& L = st[id];
    RequestOutcome& o = run.requests[id];
    o.arrival_s = now;
    const RequestSpec& rq = reqs[id];
    if (rq.prompt + rq.output > kv_cap_) {
      L.rejected = true;  // larger than a rank's whole KV pool: the engine refuses it
      if (closed && next_send < n) sendq.push_back({now, next_send++});
      return;
    }
    int ii = 0;
    if (opt_.instances > 1) {
      if (opt_.router == Assign::kRoundRobin) {
        ii = router_rr++ % opt_.instances;
      } else {
        for (int k = 1; k < opt_.instances; ++k)
          if (inst[k].outstanding < inst[ii].outstanding) ii = k;
      }
    }
    Inst& in = inst[ii];
    int rk = 0;
    if (dp > 1) {
      if (rank_assign == Assign::kRoundRobin) {
        rk = in.rr++ % dp;
      } else {
        auto load = [&](int k) { return in.ranks[k].waiting.size() + in.ranks[k].running.size(); };
        for (int k = 1; k < dp; ++k)
          if (load(k) < load(rk)) rk = k;
      }
    }
    L.inst = ii;
    L.rank = rk;
    L.need = rq.prompt;
    L.prefilled = rq.cached;
    L.last_emit = now;
    in.ranks[rk].waiting.push_back(id);
    ++in.outstanding;
    ++g_waiting;
    if (!in.busy && !in.start_pending) {
      in.start_pending = true;
      events.push({now, seq++, ii, false});
    }
  };

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
        route(static_cast<int>(next_open++), ta);
        waiting_at_arrival.push_back(g_waiting + g_running);
      } else {
        const int64_t id = sendq.front().second;
        sendq.pop_front();
        route(static_cast<int>(id), ta);
      }
      continue;
    }
    const Event e = events.top();
    events.pop();
    Inst& in = inst[e.inst];
    if (e.end) end_step(e.inst, e.t);
    else in.start_pending = false;
    if (!in.busy) start_step(e.inst, e.t);
    if (run.steps >= opt_.max_steps) {
      run.finished = false;
      break;
    }
  }

  // Summary figures.
  run.cost_calls = calls_ - calls0;
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
  if (rejected > 0) {
    run.unstable = true;
    run.unstable_reason = fmt::format(
        "{} requests need more KV than one rank holds ({} tokens): the engine rejects them",
        rejected, kv_cap_);
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
    const size_t m = waiting_at_arrival.size(), qn = m / 4;
    auto mean_of = [&](size_t a, size_t b) {
      double s = 0;
      for (size_t i = a; i < b; ++i) s += static_cast<double>(waiting_at_arrival[i]);
      return s / static_cast<double>(std::max<size_t>(1, b - a));
    };
    const double w2 = mean_of(qn, 2 * qn), w4 = mean_of(3 * qn, m);
    if (w4 > 1.5 * w2 + 10 && w4 > 0.01 * static_cast<double>(n)) {
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
      }
      best.t_s = tk;
      run.timeline.push_back(best);
      if (t1 <= t0) break;
    }
  }
  return run;
}

}  // namespace l2s::serve
