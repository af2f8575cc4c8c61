// The decomposed search of the disaggregated joint space (joint.h SearchJointDecomposed): each
// role at each instance size is an ordinary StrategySpace problem, solved exactly where its
// space is small and searched otherwise; the parts are paired exactly by DisaggModel::Combine.
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <string>

#include "common/splitmix.h"
#include "model/counts.h"
#include "search/joint.h"
#include "search/oracle.h"

namespace l2s {

namespace {

// A recorded role evaluation of one instance.
struct Part {
  Strategy s;
  Evaluation e;
  double cap = 0;   // tokens/s of the instance
  double time = 0;  // prefill latency or decode step (s)
};

// One role at one instance size of one pool. The role's problem depends only on the pool, so the
// pool assignments that use a pool in a role share its slots.
struct Slot {
  int model = 0;  // an assignment that uses the pool in this role (its simulators and space)
  int pool = 0;   // the pool (an index over the pools' names)
  bool pre = false;
  int g = 0;
  const StrategySpace* space = nullptr;
  std::vector<Part> front;  // not dominated in (cap higher, time lower); time ascending
  double limit_ms = 0;      // prefill: the latency its searches are held to (0: none)
  bool exact = false;       // solved by the role oracle
  double value = 0;         // joint tokens/s per GPU of its best pairing (0: none)

  // A prefill evaluation that only missed the latency limit of its search is a valid part: the
  // role itself has no SLO (the TTFT is joint, checked by Combine).
  void Record(const Strategy& s, Evaluation e) {
    if (pre && e.verdict == Verdict::kTtft) e.verdict = Verdict::kValid;
    if (!e.valid()) return;
    Part p{s, e, e.tokens_per_s, pre ? e.ttft_s : e.tpot_s * e.accept};
    for (const Part& q : front)
      if (q.cap >= p.cap && q.time <= p.time) return;
    std::erase_if(front, [&](const Part& q) { return p.cap >= q.cap && p.time <= q.time; });
    auto at = std::lower_bound(front.begin(), front.end(), p.time,
                               [](const Part& q, double t) { return q.time < t; });
    front.insert(at, std::move(p));
  }
  // The part of highest capacity (prefill: within its latency limit); null if none.
  const Part* Best() const {
    for (auto it = front.rbegin(); it != front.rend(); ++it)
      if (!pre || limit_ms <= 0 || it->time * 1e3 <= limit_ms) return &*it;
    return nullptr;
  }
};

// Sees every call of a slot's search or solve: records its evaluations, forwards progress and
// cancellation, and stops the solve at `max_calls` (the calls left).
class SlotObserver final : public Observer {
 public:
  SlotObserver(Slot* slot, Observer* outer, int64_t offset, int64_t budget, int64_t max_calls)
      : slot_(slot), outer_(outer), offset_(offset), budget_(budget), max_calls_(max_calls) {}
  void OnEvaluation(const Strategy& s, const Evaluation& e) override { slot_->Record(s, e); }
  void OnProgress(int64_t calls, int64_t, double) override {
    calls_ = calls;
    if (outer_ != nullptr) outer_->OnProgress(offset_ + calls, budget_, 0);
  }
  bool Cancelled() override {
    return calls_ >= max_calls_ || (outer_ != nullptr && outer_->Cancelled());
  }

 private:
  Slot* slot_;
  Observer* outer_;
  int64_t offset_, budget_, max_calls_, calls_ = 0;
};

// SplitMix64 finaliser: the seed of a slot's search from (search seed, slot, round).
uint64_t SlotSeed(uint64_t seed, size_t slot, int round) {
  return SplitMix64Mix(seed ^ (kSplitMix64Gamma * (1 + slot)) ^
                       (0xc2b2ae3d27d4eb4fULL * (1 + round)));
}

// Strategy s of an instance of from_gpus GPUs moved to `to`'s: pp, tp and every other choice
// kept, dp following the GPUs, ep the option nearest (in log2) to the same share of a stage but
// on fewer GPUs at least as wide as before (the experts' bytes per GPU stay what fitted), the
// expert slots refitted when needed. False when no such point of `to` exists.
bool Move(const StrategySpace& to, Strategy s, int from_gpus, Strategy* out) {
  const int g = to.num_gpus();
  if (g % (s.pp * s.tp) != 0) return false;
  const int stage = g / s.pp;
  double want = s.ep * static_cast<double>(g) / from_gpus;
  if (g < from_gpus) want = std::min<double>(stage, std::max<double>(want, s.ep));
  std::vector<int> eps = to.ep_options();
  std::stable_sort(eps.begin(), eps.end(), [&](int a, int b) {
    return std::abs(std::log2(a / want)) < std::abs(std::log2(b / want));
  });
  s.dp = g / (s.pp * s.tp);
  for (int ep : eps) {
    s.ep = ep;
    *out = s;
    if (to.Check(*out).ok() || FitSlots(to, out)) return true;
  }
  return false;
}

class Decomposed {
 public:
  Decomposed(const JointSpace& js, const RoleRun& run, Observer* observer, int64_t budget)
      : js_(js), run_(run), obs_(observer), budget_(budget) {
    std::vector<std::string> names;
    auto pool_id = [&](const std::string& name) {
      auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end()) it = names.insert(names.end(), name);
      return static_cast<int>(it - names.begin());
    };
    for (int m = 0; m < static_cast<int>(js_.models().size()); ++m) {
      const DisaggModel& dm = *js_.models()[m];
      pools_.push_back({pool_id(dm.setup().prefill_pool_name),
                        pool_id(dm.setup().decode_pool_name)});
      for (bool pre : {false, true}) {
        const int pl = pools_.back()[pre ? 0 : 1];
        for (int g : pre ? dm.prefill_sizes() : dm.decode_sizes()) {
          const StrategySpace* sp = pre ? js_.PrefillSpace(m, g) : js_.DecodeSpace(m, g);
          // An instance whose GPUs cannot hold the model's weights once has no valid point.
          const Problem& pr = (pre ? dm.PrefillSim(g) : dm.DecodeSim(g)).problem();
          if (WeightBytes(pr.model, pr.workload.weight) > g * pr.cluster.gpu.hbm_bytes) continue;
          if (sp == nullptr || std::any_of(slots_.begin(), slots_.end(), [&](const Slot& o) {
                return o.pre == pre && o.pool == pl && o.g == g;
              }))
            continue;
          slots_.push_back(Slot{.model = m, .pool = pl, .pre = pre, .g = g, .space = sp, .front = {}});
        }
      }
    }
    // A slot no slot of the other role pairs with (their GPUs do not fit the pools) is left out.
    auto pairs = [&](const Slot& a) {
      for (const Slot& b : slots_)
        for (size_t m = 0; b.pre != a.pre && m < pools_.size(); ++m) {
          const Slot& p = a.pre ? a : b;
          const Slot& d = a.pre ? b : a;
          if (pools_[m][0] == p.pool && pools_[m][1] == d.pool &&
              js_.PairFits(static_cast<int>(m), p.g, d.g))
            return true;
        }
      return false;
    };
    std::vector<Slot> kept;
    for (const Slot& a : slots_)
      if (pairs(a)) kept.push_back(a);
    slots_ = std::move(kept);
  }

  std::vector<Slot>& slots() { return slots_; }
  int64_t used() const { return used_; }
  int64_t left() const { return cancelled_ ? 0 : budget_ - used_; }
  bool cancelled() const { return cancelled_; }
  const JointSpace::Point& best() const { return best_; }
  double best_value() const { return best_value_; }

  // Pairs every prefill slot with every decode slot of an assignment: the best pair overall,
  // each slot's best pairing value, and each prefill slot's latency limit (from its best
  // partner; without one, the TTFT less the shortest decode step recorded).
  void Assess() {
    for (Slot& s : slots_) s.value = 0;
    for (Slot& p : slots_) {
      if (!p.pre) continue;
      double limit = -1;
      for (Slot& d : slots_) {
        if (d.pre) continue;
        for (size_t m = 0; m < pools_.size(); ++m) {
          if (pools_[m][0] != p.pool || pools_[m][1] != d.pool) continue;
          const DisaggModel& dm = *js_.models()[m];
          for (const Part& dp : d.front) {
            const double x = PrefillLimitMs(dm, p.g, d.g, dp);
            if (limit < 0 || (p.value == 0 && x > limit)) limit = x;
            // The prefill part of highest capacity within the latency the TTFT leaves (the
            // front is sorted by latency, capacity rising with it).
            const Part* pp = nullptr;
            for (const Part& q : p.front)
              if (x == 0 || q.time * 1e3 <= x * (1 + 1e-12)) pp = &q;
            if (x < 0 || pp == nullptr) continue;
            const DisaggEvaluation e = dm.Combine(p.g, pp->s, pp->e, d.g, dp.s, dp.e);
            if (!e.valid()) continue;
            const double v = e.tokens_per_s_per_gpu;
            if (v > p.value) limit = x;
            p.value = std::max(p.value, v);
            d.value = std::max(d.value, v);
            if (v > best_value_) {
              best_value_ = v;
              best_ = JointSpace::Point{static_cast<int>(m), p.g, d.g, pp->s, dp.s};
            }
          }
        }
      }
      p.limit_ms = limit < 0 ? js_.models()[p.model]->setup().serve.workload.ttft_ms : limit;
    }
  }

  // Solves slot i by the role oracle; false (nothing spent) when its space has more
  // structurally valid points than `cap` (the oracle's calls are at most about that many).
  bool Solve(size_t i, double cap) {
    Slot& s = slots_[i];
    if (left() <= 0 || s.space->CountValid() > std::min<double>(cap, left())) return false;
    Simulator sim = Sim(s);
    SlotObserver so(&s, obs_, used_, budget_ + 1, left());
    const SearchResult r = SolveExact(sim, *s.space, &so);
    if (r.found) s.Record(r.best, r.eval);
    Charge(r);
    s.exact = !r.interrupted;
    return s.exact;
  }

  // Searches slot i with `calls` calls by the role run, from its best parts (none: from
  // scratch).
  void Search(size_t i, int64_t calls, int round, uint64_t seed) {
    calls = std::min(calls, left());
    if (calls <= 0) return;
    Slot& s = slots_[i];
    Simulator sim = Sim(s);
    std::vector<Strategy> start;
    for (auto it = s.front.rbegin(); it != s.front.rend() && start.size() < 3; ++it)
      if (!s.pre || s.limit_ms <= 0 || it->time * 1e3 <= s.limit_ms) start.push_back(it->s);
    if (start.empty()) {  // the usual serving shapes, also in the wide-EP recipe
      const DisaggSetup& st = js_.models()[s.model]->setup();
      start = ServingTemplates(*s.space, st.serve.model,
                               (s.pre ? st.prefill_pool : st.decode_pool).gpus_per_domain);
      AddOverlapRecipes(*s.space, &start);
    }
    // The best part of the role and pool at any other size, moved to this one.
    const Slot* from = nullptr;
    for (const Slot& o : slots_)
      if (&o != &s && o.pre == s.pre && o.pool == s.pool && o.Best() != nullptr &&
          (from == nullptr || o.Best()->e.tokens_per_s_per_gpu > from->Best()->e.tokens_per_s_per_gpu))
        from = &o;
    Strategy moved;
    if (from != nullptr && Move(*s.space, from->Best()->s, from->g, &moved) &&
        std::find(start.begin(), start.end(), moved) == start.end())
      start.push_back(moved);
    SlotObserver so(&s, obs_, used_, budget_ + 1, calls);
    Charge(run_(sim, *s.space, calls, SlotSeed(seed, i, round), start, &so));
  }

 private:
  // The role simulator of slot s (prefill: held to its latency limit).
  Simulator Sim(const Slot& s) const {
    const DisaggModel& dm = *js_.models()[s.model];
    Simulator sim = s.pre ? dm.PrefillSim(s.g) : dm.DecodeSim(s.g);
    if (s.pre && s.limit_ms > 0) sim.SetSlo(s.limit_ms, 0);
    return sim;
  }
  void Charge(const SearchResult& r) {
    used_ += r.calls;
    if (r.interrupted && obs_ != nullptr && obs_->Cancelled()) cancelled_ = true;
  }
  // The latency (ms) a prefill instance of gp GPUs may take beside decode part d of gd GPUs:
  // lat + exposed(t, lat) + step <= TTFT (disagg.h; the oracle's limit). 0: no TTFT limit;
  // negative: none fits.
  static double PrefillLimitMs(const DisaggModel& dm, int gp, int gd, const Part& d) {
    if (!(dm.setup().serve.workload.ttft_ms > 0)) return 0;
    const double x = dm.PrefillLatencyLimitMs(gp, gd, d.time * 1e3);
    return x > 0 ? x : -1;
  }

  const JointSpace& js_;
  const RoleRun& run_;
  Observer* obs_;
  int64_t budget_;  // role calls (the joint budget less the last call)
  int64_t used_ = 0;
  bool cancelled_ = false;
  std::vector<Slot> slots_;
  std::vector<std::array<int, 2>> pools_;  // per assignment: prefill and decode pool
  JointSpace::Point best_;
  double best_value_ = 0;
};

}  // namespace

SearchResult SearchJointDecomposed(const JointProblem& problem, int64_t budget, uint64_t seed,
                                   Observer* observer, const RoleRun& run) {
  const auto t0 = std::chrono::steady_clock::now();
  SearchResult r;
  if (budget < 1) return r;
  const JointSpace& js = static_cast<const JointSpace&>(problem.space());
  Decomposed dc(js, run, observer, budget - 1);
  std::vector<Slot>& slots = dc.slots();
  const size_t n = slots.size();
  std::vector<TracePoint> trace;
  auto note_best = [&] {
    dc.Assess();
    if (dc.best_value() > 0 && (trace.empty() || dc.best_value() > trace.back().value))
      trace.push_back(TracePoint{dc.used(), dc.best_value()});
  };
  // 1. Every slot, decode first (its steps set the prefill slots' latency limits), largest
  // instances first (slots ascend by size; a smaller one starts from the role's best part moved
  // to it): solved exactly when its space fits its share of a quarter of the budget, else a first
  // search of that share.
  const int64_t share = std::max<int64_t>(1, (budget - 1) / 4 / std::max<size_t>(1, n));
  std::vector<size_t> searched;
  for (bool pre : {false, true}) {
    if (pre) dc.Assess();
    for (size_t i = n; i-- > 0;) {
      if (slots[i].pre != pre || dc.Solve(i, static_cast<double>(share))) continue;
      dc.Search(i, share, 0, seed);
      searched.push_back(i);
    }
  }
  note_best();
  // 2. Successive halving, per role, on the searched slots ranked by the value of their best
  // pairing (then their best tokens/s per GPU): each round keeps the better half of each role's
  // (at least one), and its slots share equally the calls left divided by the rounds left
  // (decode first); once one of each role remains, they share what is left.
  auto rank = [&](size_t a, size_t b) {
    if (slots[a].value != slots[b].value) return slots[a].value > slots[b].value;
    const Part* x = slots[a].Best();
    const Part* y = slots[b].Best();
    return (x ? x->e.tokens_per_s_per_gpu : 0) > (y ? y->e.tokens_per_s_per_gpu : 0);
  };
  std::vector<size_t> alive[2];  // [pre]
  for (size_t i : searched) alive[slots[i].pre].push_back(i);
  for (int round = 1; dc.left() > 0; ++round) {
    dc.Assess();
    int rounds_left = 1;
    for (std::vector<size_t>& v : alive) {
      std::stable_sort(v.begin(), v.end(), rank);
      v.resize((v.size() + 1) / 2);
      int k = 1;
      for (size_t m = v.size(); m > 1; m = (m + 1) / 2) ++k;
      rounds_left = std::max(rounds_left, k);
    }
    const size_t count = alive[0].size() + alive[1].size();
    if (count == 0) break;
    const int64_t before = dc.used();
    const int64_t each = std::max<int64_t>(1, dc.left() / rounds_left / static_cast<int64_t>(count));
    for (const std::vector<size_t>& v : alive) {
      for (size_t i : v) dc.Search(i, each, round, seed);
      dc.Assess();
    }
    note_best();
    if (dc.used() == before) break;  // nothing left to search
  }
  // 3. The last call evaluates the best pair through the joint problem.
  r.calls = dc.used();
  r.interrupted = dc.cancelled();
  std::vector<int> idx;
  if (dc.best_value() > 0 && !dc.cancelled() && js.Encode(dc.best(), &idx)) {
    const Evaluation e = problem.Evaluate(idx);
    ++r.calls;
    if (observer != nullptr) {
      observer->OnProgress(r.calls, budget, Objective::Value(e));
      if (observer->Cancelled()) r.interrupted = true;
    }
    if (e.valid()) {
      r.found = true;
      r.eval = e;
      r.best_encoded = idx;
      while (!trace.empty() && trace.back().value >= Objective::Value(e)) trace.pop_back();
      trace.push_back(TracePoint{r.calls, Objective::Value(e)});
    }
  }
  if (r.found) r.trace = std::move(trace);
  int exact = 0;
  for (const Slot& s : slots) exact += s.exact ? 1 : 0;
  r.note = fmt::format(
      "decomposed: {} role calls, {} of {} (role, instance size) slots solved exactly; best pair "
      "{} + {} GPUs; last call: that pair through the joint problem",
      dc.used(), exact, n, dc.best().gp, dc.best().gd);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace l2s
