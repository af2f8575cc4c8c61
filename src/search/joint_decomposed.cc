// The decomposed search of the disaggregated joint space (joint.h SearchJointDecomposed): per-role
// searches at chosen instance sizes, paired exactly by DisaggModel::Combine.
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "search/joint.h"

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
  std::vector<Part> front;  // not dominated in (cap higher, time lower); time and cap ascending
  int64_t spent = 0;        // calls of its searches
  double limit_ms = 0;      // prefill: the latency its next search is held to (0: none)
  bool stale = false;       // its latest further search (2c) from its best parts found no better
  // evidence (DecomposedOptions): decode slots' batch probes (Decomposed::Probe).
  double promise = 0;            // the best value of its probes (a TPOT miss: its potential)
  std::vector<Strategy> probed;  // the best parts whose probes were evaluated

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
};

// Sees every role evaluation of a slot's search: records it, forwards progress and cancellation.
class SlotObserver final : public Observer {
 public:
  SlotObserver(Slot* slot, Observer* outer, int64_t offset, int64_t budget, double best)
      : slot_(slot), outer_(outer), offset_(offset), budget_(budget), best_(best) {}
  void OnEvaluation(const Strategy& s, const Evaluation& e) override { slot_->Record(s, e); }
  void OnProgress(int64_t calls, int64_t, double) override {
    if (outer_ != nullptr) outer_->OnProgress(offset_ + calls, budget_, best_);
  }
  bool Cancelled() override { return outer_ != nullptr && outer_->Cancelled(); }

 private:
  Slot* slot_;
  Observer* outer_;
  int64_t offset_, budget_;
  double best_;
};

// SplitMix64 finaliser: the seed of a slot's search from (search seed, slot, round).
uint64_t SlotSeed(uint64_t seed, size_t slot, int round) {
  uint64_t x = seed ^ (0x9e3779b97f4a7c15ULL * (1 + slot)) ^ (0xc2b2ae3d27d4eb4fULL * (1 + round));
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

bool ProjectPart(const StrategySpace& from, const Strategy& s, const StrategySpace& to, int mode,
                 bool ep_memory, Strategy* out) {
  std::vector<int> a;
  if (!from.Encode(s, &a)) return false;
  const double g1 = from.num_gpus(), g2 = to.num_gpus();
  const double dp1 = g1 / std::max(1, s.pp * s.tp);
  std::vector<int> b(to.num_heads(), 0);
  std::vector<uint8_t> mask;
  auto nearest = [&](int n, auto&& dist) {
    int best = -1;
    for (int i = 0; i < n; ++i)
      if (mask[i] && (best < 0 || dist(i) < dist(best))) best = i;
    return best;
  };
  for (int h = 0; h < to.num_heads(); ++h) {
    const int n = to.head_size(h);
    mask.assign(n, 0);
    to.Mask(std::span<const int>(b.data(), h), h, mask);
    int pick = -1;
    if (h == StrategySpace::kPp || h == StrategySpace::kTp || h == StrategySpace::kEp) {
      const std::vector<int>& opts = h == StrategySpace::kPp   ? to.pp_options()
                                     : h == StrategySpace::kTp ? to.tp_options()
                                                               : to.ep_options();
      double want = 0;
      if (h == StrategySpace::kPp) {
        want = mode % 3 == 1 ? g2 / (s.tp * dp1) : s.pp;
      } else if (h == StrategySpace::kTp) {
        want = mode % 3 == 2 ? g2 / (to.pp_options()[b[StrategySpace::kPp]] * dp1) : s.tp;
      } else {
        const double pp2 = to.pp_options()[b[StrategySpace::kPp]];
        want = s.ep * (g2 / pp2) / (g1 / std::max(1, s.pp));
        // ep_memory: onto a smaller instance, at least the source's experts per stage GPU.
        if (ep_memory && g2 < g1)
          want = std::max(want, std::min(s.ep * std::max(1, s.pp) / pp2, g2 / pp2));
      }
      want = std::max(want, 1.0);
      pick = nearest(n, [&](int i) { return std::abs(std::log2(opts[i] / want)); });
      // Modes 3-5: the shapes of modes 0-2 with pp the nearest option on the other side of the
      // one wanted (11 beside 22 for 16).
      if (h == StrategySpace::kPp && mode >= 3 && pick >= 0) {
        const bool above = opts[pick] > want;
        int other = -1;
        for (int i = 0; i < n; ++i)
          if (mask[i] && (above ? opts[i] < want : opts[i] > want) &&
              (other < 0 || std::abs(std::log2(opts[i] / want)) <
                                std::abs(std::log2(opts[other] / want))))
            other = i;
        if (other < 0) return false;
        pick = other;
      }
    } else if (h < from.num_heads()) {
      const std::string name = from.option_name(h, a[h]);
      for (int i = 0; i < n && pick < 0; ++i)
        if (mask[i] && to.option_name(h, i) == name) pick = i;
      if (pick < 0) pick = nearest(n, [&](int i) { return std::abs(i - a[h]); });
    } else {
      pick = nearest(n, [](int i) { return i; });
    }
    if (pick < 0) return false;
    b[h] = pick;
  }
  if (!to.Valid(b)) return false;
  *out = to.Decode(b);
  return true;
}

namespace {

// Adds the projections of `s` onto `to` in the shapes of modes 0-2 (other_side: also 3-5),
// without duplicates.
void AddProjections(const StrategySpace& from, const Strategy& s, const StrategySpace& to,
                    const DecomposedOptions& o, std::vector<Strategy>* out) {
  for (int mode = 0; mode < (o.other_side ? 6 : 3); ++mode) {
    Strategy x;
    if (ProjectPart(from, s, to, mode, o.ep_memory, &x) &&
        std::find(out->begin(), out->end(), x) == out->end())
      out->push_back(x);
  }
}

// evidence: the batch probes of a decode part `s` of `space` (DecomposedOptions): one batch up
// with each overlap option; at the widest ep (slots fitted by FitSlots) at its batch and one up,
// with each overlap option. Only points of the space (Check), without duplicates.
std::vector<Strategy> BatchProbes(const StrategySpace& space, const Strategy& s) {
  std::vector<Strategy> out;
  const std::vector<int>& batches = space.batch_options();
  const auto at = std::find(batches.begin(), batches.end(), s.batch);
  if (at == batches.end()) return out;
  const size_t own = static_cast<size_t>(at - batches.begin());
  const std::vector<Overlap> overlaps =
      space.overlap_options().empty() ? std::vector<Overlap>{s.overlap} : space.overlap_options();
  const int widest = space.ep_options().back();
  for (bool wide : {false, true}) {
    if (wide && s.ep == widest) break;
    for (size_t b = wide ? own : own + 1; b <= own + 1 && b < batches.size(); ++b)
      for (Overlap o : overlaps) {
        Strategy x = s;
        x.batch = batches[b];
        x.overlap = o;
        if (wide) {
          x.ep = widest;
          if (!FitSlots(space, &x)) continue;
        } else if (!space.Check(x).ok()) {
          continue;
        }
        if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(std::move(x));
      }
  }
  return out;
}

struct Pairing {
  bool found = false;
  int model = 0;     // the pool assignment of the pair
  double value = 0;  // tokens/s per GPU
  Part p, d;  // copies: the fronts change as searches record parts
};

class Decomposed {
 public:
  Decomposed(const JointProblem& problem, const RoleRun& run, Observer* observer, int64_t budget)
      : js_(static_cast<const JointSpace&>(problem.space())), run_(run), obs_(observer),
        budget_(budget) {
    std::vector<std::string> names;
    auto pool_id = [&](const std::string& name) {
      auto it = std::find(names.begin(), names.end(), name);
      if (it != names.end()) return static_cast<int>(it - names.begin());
      names.push_back(name);
      return static_cast<int>(names.size()) - 1;
    };
    for (int m = 0; m < static_cast<int>(js_.models().size()); ++m) {
      const DisaggModel& dm = *js_.models()[m];
      pools_.push_back({pool_id(dm.setup().prefill_pool_name),
                        pool_id(dm.setup().decode_pool_name)});
      for (bool pre : {false, true}) {
        const int pl = pools_.back()[pre ? 0 : 1];
        for (int g : pre ? dm.prefill_sizes() : dm.decode_sizes()) {
          const StrategySpace* sp = pre ? js_.PrefillSpace(m, g) : js_.DecodeSpace(m, g);
          if (sp == nullptr) continue;
          if (std::any_of(slots_.begin(), slots_.end(), [&](const Slot& o) {
                return o.pre == pre && o.pool == pl && o.g == g;
              }))
            continue;
          slots_.push_back(Slot{.model = m, .pool = pl, .pre = pre, .g = g, .space = sp,
                                .front = {}, .spent = 0, .limit_ms = 0, .stale = false,
                                .promise = 0, .probed = {}});
        }
      }
    }
  }

  // The pool assignment whose prefill pool is sp's and decode pool sd's; -1 when none.
  int PairModel(const Slot& sp, const Slot& sd) const {
    for (size_t m = 0; m < pools_.size(); ++m)
      if (pools_[m][0] == sp.pool && pools_[m][1] == sd.pool) return static_cast<int>(m);
    return -1;
  }
  const std::vector<std::array<int, 2>>& pools() const { return pools_; }

  std::vector<Slot>& slots() { return slots_; }
  int64_t used() const { return used_; }
  bool cancelled() const { return cancelled_; }
  double best_value() const { return best_.value; }

  // The latency (ms) a prefill instance of gp GPUs may take beside decode part d of gd GPUs:
  // lat + exposed(t, lat) + step <= TTFT (disagg.h; the oracle's limit). 0: no TTFT limit.
  double PrefillLimitMs(const DisaggModel& dm, int gp, int gd, const Part& d) const {
    const Workload& w = dm.setup().serve.workload;
    if (!(w.ttft_ms > 0)) return 0;
    const KvLink link = dm.Link(gp, gd);
    const double t_ms = (dm.KvBytesPerPrompt() / link.bw + link.latency) * 1e3;
    const double step_ms = d.time * 1e3;
    double x = w.ttft_ms - step_ms - t_ms;
    if (dm.setup().layerwise) {
      const double L = std::max(1, dm.setup().serve.model.num_layers);
      x = std::min(w.ttft_ms - step_ms - t_ms / L, L * (w.ttft_ms - step_ms - t_ms));
    }
    return x;
  }

  // The best pair of recorded parts of a prefill and a decode slot (same model): for each decode
  // part, the prefill part of highest capacity whose latency fits what the TTFT leaves, combined.
  Pairing Pair(const Slot& sp, const Slot& sd) const {
    Pairing best;
    const int m = PairModel(sp, sd);
    if (m < 0 || sp.front.empty() || sd.front.empty()) return best;
    const DisaggModel& dm = *js_.models()[m];
    for (const Part& d : sd.front) {
      const double x = PrefillLimitMs(dm, sp.g, sd.g, d);
      // Front sorted by time (and capacity) ascending: the last part within the limit.
      const Part* p = nullptr;
      for (const Part& q : sp.front) {
        if (x > 0 && q.time * 1e3 > x * (1 + 1e-12)) break;
        p = &q;
      }
      if (x <= 0 && dm.setup().serve.workload.ttft_ms > 0) p = nullptr;
      if (p == nullptr) continue;
      const DisaggEvaluation e = dm.Combine(sp.g, p->s, p->e, sd.g, d.s, d.e);
      if (e.valid() && (!best.found || e.tokens_per_s_per_gpu > best.value)) {
        best = Pairing{true, m, e.tokens_per_s_per_gpu, *p, d};
      }
    }
    return best;
  }

  // Pairs every prefill slot with every decode slot: each prefill slot's latency limit (from its
  // best partner; without one, from the decode part of highest capacity per GPU) and the best
  // pair overall.
  void Assess() {
    const Part* typical = nullptr;  // the decode part of highest capacity per GPU
    const Slot* typical_slot = nullptr;
    for (Slot& s : slots_) {
      if (s.pre) continue;
      for (const Part& d : s.front)
        if (typical == nullptr || d.e.tokens_per_s_per_gpu > typical->e.tokens_per_s_per_gpu) {
          typical = &d;
          typical_slot = &s;
        }
    }
    for (Slot& sp : slots_) {
      if (!sp.pre) continue;
      Pairing mine;
      const Slot* partner = nullptr;
      for (Slot& sd : slots_) {
        if (sd.pre) continue;
        const Pairing pr = Pair(sp, sd);
        if (!pr.found) continue;
        if (!mine.found || pr.value > mine.value) {
          mine = pr;
          partner = &sd;
        }
        if (!best_.found || pr.value > best_.value) {
          best_ = pr;
          best_gp_ = sp.g;
          best_gd_ = sd.g;
          best_model_ = pr.model;
        }
      }
      const int tm = typical_slot == nullptr ? -1 : PairModel(sp, *typical_slot);
      if (mine.found) {
        sp.limit_ms = PrefillLimitMs(*js_.models()[mine.model], sp.g, partner->g, mine.d);
      } else if (tm >= 0) {
        sp.limit_ms = PrefillLimitMs(*js_.models()[tm], sp.g, typical_slot->g, *typical);
      } else {  // no decode part to pair with yet: the TTFT
        sp.limit_ms = js_.models()[sp.model]->setup().serve.workload.ttft_ms;
      }
    }
  }

  // Searches slot i with `calls` calls from its best parts (within its limit).
  void Search(size_t i, int64_t calls, int round, uint64_t seed, int starts,
              const std::vector<Strategy>& extra = {}, bool start_only = false) {
    calls = std::min(calls, budget_ - used_);
    if (calls <= 0 || cancelled_) return;
    Slot& s = slots_[i];
    const DisaggModel& dm = *js_.models()[s.model];
    Simulator sim = s.pre ? dm.PrefillSim(s.g) : dm.DecodeSim(s.g);
    if (s.pre && s.limit_ms > 0) sim.SetSlo(s.limit_ms, 0);
    std::vector<Strategy> start;
    for (auto it = s.front.rbegin(); it != s.front.rend() && static_cast<int>(start.size()) < starts;
         ++it)
      if (!s.pre || s.limit_ms <= 0 || it->time * 1e3 <= s.limit_ms) start.push_back(it->s);
    for (const Strategy& x : extra)
      if (std::find(start.begin(), start.end(), x) == start.end()) start.push_back(x);
    SlotObserver so(&s, obs_, used_, budget_ + 1, best_.value);
    const SearchResult r =
        run_(sim, *s.space, calls, SlotSeed(seed, i, round), start, start_only, &so);
    used_ += r.calls;
    s.spent += r.calls;
    if (r.interrupted) cancelled_ = true;
  }

  // Evaluates strategies of slot i one by one (a call each), recorded as its parts; its promise
  // is the best of their values, a probe that misses only the TPOT counting with its near-SLO
  // potential (NearSloPotential: rl.h 12.'s).
  void Probe(size_t i, const std::vector<Strategy>& xs) {
    Slot& s = slots_[i];
    Caller c(this, i);
    for (const Strategy& x : xs) {
      Evaluation e;
      if (!c.Call(x, &e)) break;
      s.promise = std::max(s.promise, e.valid() ? e.tokens_per_s_per_gpu
                                                : NearSloPotential(e, c.sim.problem().workload));
    }
  }

  // shape_sizes (DecomposedOptions): evaluates each of xs on slot i (a call each, recorded as its
  // parts) and raises each that is valid one batch option at a time while it stays valid and its
  // tokens/s per GPU rises. Returns those invalid at their own batch.
  std::vector<Strategy> RaiseBatches(size_t i, const std::vector<Strategy>& xs) {
    const StrategySpace& space = *slots_[i].space;
    const std::vector<int>& batches = space.batch_options();
    Caller c(this, i);
    std::vector<Strategy> invalid;
    for (Strategy x : xs) {
      Evaluation e;
      if (!c.Call(x, &e)) break;
      if (!e.valid()) {
        invalid.push_back(x);
        continue;
      }
      for (double v = e.tokens_per_s_per_gpu;; v = e.tokens_per_s_per_gpu) {
        const auto at = std::find(batches.begin(), batches.end(), x.batch);
        if (at == batches.end() || at + 1 == batches.end()) break;
        x.batch = *(at + 1);
        if (!space.Check(x).ok() || !c.Call(x, &e) || !e.valid() || e.tokens_per_s_per_gpu <= v)
          break;
      }
    }
    return invalid;
  }

  // tokens/s per GPU of the cluster that a prefill slot of rho_p and a decode slot of rho_d
  // tokens/s per GPU would reach with the best counts (TTFT not checked).
  double Packed(const Slot& sp, double rho_p, const Slot& sd, double rho_d) const {
    const int m = PairModel(sp, sd);
    if (m < 0) return 0;
    const DisaggModel& dm = *js_.models()[m];
    const Workload& w = dm.setup().serve.workload;
    const double cp = rho_p * sp.g / static_cast<double>(w.isl);
    const double cd = rho_d * sd.g / static_cast<double>(w.osl);
    const KvLink l = dm.Link(sp.g, sd.g);
    const double per_gpu = dm.KvBytesPerPrompt() > 0 ? l.bw / dm.KvBytesPerPrompt()
                                                     : std::numeric_limits<double>::infinity();
    DisaggModel::Counts c;
    if (!dm.BestCounts(sp.g, cp, sd.g, cd, per_gpu, &c)) return 0;
    return c.rate * static_cast<double>(w.osl) / dm.setup().total_gpus;
  }

  // The part of highest capacity of slot i (prefill: within its latency limit); null if none.
  const Part* BestPart(size_t i) const {
    const Slot& s = slots_[i];
    for (auto it = s.front.rbegin(); it != s.front.rend(); ++it)
      if (!s.pre || s.limit_ms <= 0 || it->time * 1e3 <= s.limit_ms) return &*it;
    return nullptr;
  }

  // Holds prefill slot p's later searches to the latency that decode slot d's best part leaves
  // to the pair's TTFT; unchanged when d has no part.
  void HoldPrefill(size_t p, size_t d) {
    const Part* bd = BestPart(d);
    if (bd == nullptr) return;
    Slot& sp = slots_[p];
    sp.limit_ms = PrefillLimitMs(*js_.models()[PairModel(sp, slots_[d])], sp.g, slots_[d].g, *bd);
  }

  const Pairing& best() const { return best_; }
  int best_model() const { return best_model_; }
  int best_gp() const { return best_gp_; }
  int best_gd() const { return best_gd_; }

 private:
  // One call at a time on slot i outside its searches (Probe, RaiseBatches): each charged to the
  // budget and recorded; false, nothing evaluated, once the budget is spent or the search cancelled.
  struct Caller {
    Caller(Decomposed* d, size_t i)
        : d(d),
          slot(d->slots_[i]),
          sim(slot.pre ? d->js_.models()[slot.model]->PrefillSim(slot.g)
                       : d->js_.models()[slot.model]->DecodeSim(slot.g)),
          so(&slot, d->obs_, d->used_, d->budget_ + 1, d->best_.value) {}
    bool Call(const Strategy& x, Evaluation* e) {
      if (d->used_ >= d->budget_ || d->cancelled_) return false;
      if (so.Cancelled()) {
        d->cancelled_ = true;
        return false;
      }
      *e = sim.Evaluate(x);
      so.OnEvaluation(x, *e);
      ++d->used_;
      ++slot.spent;
      so.OnProgress(++calls, 0, 0);
      return true;
    }
    Decomposed* d;
    Slot& slot;
    const Simulator& sim;
    SlotObserver so;
    int64_t calls = 0;
  };

  const JointSpace& js_;
  const RoleRun& run_;
  Observer* obs_;
  int64_t budget_;  // role calls (the joint budget less the last call)
  int64_t used_ = 0;
  bool cancelled_ = false;
  std::vector<Slot> slots_;
  std::vector<std::array<int, 2>> pools_;  // per assignment: prefill and decode pool
  Pairing best_;
  int best_model_ = 0, best_gp_ = 0, best_gd_ = 0;
};

}  // namespace

SearchResult SearchJointDecomposed(const JointProblem& problem, int64_t budget, uint64_t seed,
                                   Observer* observer, const RoleRun& run,
                                   const DecomposedOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  SearchResult r;
  if (budget < 1) return r;
  const JointSpace& js = static_cast<const JointSpace&>(problem.space());
  Decomposed dc(problem, run, observer, budget - 1);
  std::vector<Slot>& slots = dc.slots();
  std::vector<TracePoint> trace;
  auto note_best = [&] {
    dc.Assess();
    if (dc.best().found && (trace.empty() || dc.best_value() > trace.back().value))
      trace.push_back(TracePoint{dc.used(), dc.best_value()});
  };
  const int64_t role_budget = budget - 1;
  // deep_share: a deep (or further) search takes `deep` calls, at most deep_share of the budget.
  const int64_t deep_calls = std::max<int64_t>(
      1, std::min<int64_t>(options.deep, static_cast<int64_t>(options.deep_share * role_budget)));
  // short_deep: a deep search is shorter than its cap (below 2,667 calls at the defaults), where
  // dp_shapes, deep_first and evidence_prefill_below act; one of `deep` calls climbs to the
  // data-parallel-attention regime itself, and a round's deep searches are few.
  const bool short_deep = deep_calls < options.deep;
  const bool dp_shapes = options.dp_shapes && short_deep;
  const size_t n = slots.size();
  // Pools of each role (an index over the pools' names).
  std::vector<int> role_pools[2];
  for (const auto& pr : dc.pools())
    for (int r = 0; r < 2; ++r)
      if (std::find(role_pools[r].begin(), role_pools[r].end(), pr[1 - r]) == role_pools[r].end())
        role_pools[r].push_back(pr[1 - r]);
  int npools = 0;
  for (const auto& pr : dc.pools()) npools = std::max({npools, pr[0] + 1, pr[1] + 1});
  int polishes = 0;
  auto best_gpu = [&](size_t i) {
    const Part* p = dc.BestPart(i);
    return p == nullptr ? 0.0 : p->e.tokens_per_s_per_gpu;
  };
  auto role_slots = [&](bool pre, int pool) {
    std::vector<size_t> v;
    for (size_t i = 0; i < n; ++i)
      if (slots[i].pre == pre && slots[i].pool == pool) v.push_back(i);
    std::sort(v.begin(), v.end(), [&](size_t x, size_t y) { return slots[x].g > slots[y].g; });
    return v;
  };
  // 1. Anchors: per role (decode first: its steps set the prefill slots' latency limits), a search
  // from scratch at the sizes nearest half, a quarter and a sixteenth of the largest size.
  const int64_t anchor_calls = static_cast<int64_t>(options.anchor * role_budget);
  // As many of the three anchor sizes per role as get anchor_min calls each, at least one.
  const int divs[3] = {2, 4, 16};
  const int per_role = static_cast<int>(std::clamp<int64_t>(
      anchor_calls / (2 * std::max<int64_t>(1, options.anchor_min)), 1, 3));
  // Per role and pool, the slots nearest half, a quarter and a sixteenth of its largest size;
  // the first per_role of them (without repeats) are the anchors, the others (decode) get only
  // the serving shapes (shape_sizes).
  std::vector<size_t> anchors[2], shape_only;
  for (bool pre : {false, true})
    for (int pl : role_pools[pre]) {
      const std::vector<size_t> v = role_slots(pre, pl);  // descending sizes
      if (v.empty()) continue;
      const int top = slots[v.front()].g;
      for (int di = 0; di < (pre ? per_role : 3); ++di) {
        const int div = divs[di];
        size_t best = v.front();
        for (size_t i : v)
          if (std::abs(slots[i].g * div - top) < std::abs(slots[best].g * div - top)) best = i;
        std::vector<size_t>& to = di < per_role ? anchors[pre] : shape_only;
        if (std::find(anchors[pre].begin(), anchors[pre].end(), best) == anchors[pre].end() &&
            std::find(to.begin(), to.end(), best) == to.end())
          to.push_back(best);
      }
    }
  // templates: the usual serving shapes evaluated at slot i (start_only: each and at most four
  // variants), parts for the pairing and starts for later searches; with `raise` each valid one
  // first raised in batch (RaiseBatches), the invalid ones then with their variants.
  auto shapes = [&](size_t i, bool raise) {
    const DisaggSetup& st = js.models()[slots[i].model]->setup();
    std::vector<Strategy> t =
        ServingTemplates(*slots[i].space, st.serve.model,
                         (slots[i].pre ? st.prefill_pool : st.decode_pool).gpus_per_domain);
    // recipe: each shape also with the MoE all-to-all overlapped and redundant experts.
    if (options.recipe) AddOverlapRecipes(*slots[i].space, &t);
    if (raise) t = dc.RaiseBatches(i, t);
    if (!t.empty()) dc.Search(i, 5 * static_cast<int64_t>(t.size()), 1, seed, 0, t, true);
  };
  const size_t n_anchors = anchors[0].size() + anchors[1].size();
  for (bool pre : {false, true}) {
    if (pre) dc.Assess();
    for (size_t i : anchors[pre]) {
      dc.Search(i, anchor_calls / static_cast<int64_t>(std::max<size_t>(1, n_anchors)), 1, seed,
                0);
      if (options.templates) shapes(i, false);
    }
    // shape_sizes: the decode role's other anchor sizes, which no anchor search climbs.
    if (!pre && options.templates && options.shape_sizes)
      for (size_t i : shape_only) shapes(i, true);
  }
  note_best();
  // 2. Until the budget is spent: (a) projection: every slot evaluates the best parts of the
  // `sources` slots of its role of highest capacity per GPU, projected onto its space in each
  // shape (ProjectPart; each once per slot; start_only); (b) the pairs of slots with valid parts
  // are ranked by the value their packing would reach (DisaggModel::BestCounts) if every slot not
  // yet searched deeply reached its role's best capacity per GPU seen at any size (its hope; deeply
  // searched slots count with their own best); the slots of the first pair not searched deeply
  // get a deep search of `deep` calls each (from their best parts: compound moves, then the
  // policy), unless even its hope cannot beat the best pair found; (c) otherwise the slot of the
  // best pair that binds its rate gets a further search, also from the best part of every other
  // size of its role projected onto it.
  std::vector<std::vector<Strategy>> projected(n);  // per slot: every projection evaluated
  // The projections of the best parts of slots `src` onto slot i not evaluated there before.
  auto fresh = [&](size_t i, const std::vector<size_t>& src) {
    std::vector<Strategy> out;
    for (size_t k : src) {
      const Part* q = k == i ? nullptr : dc.BestPart(k);
      if (q == nullptr) continue;
      std::vector<Strategy> xs;
      AddProjections(*slots[k].space, q->s, *slots[i].space, options, &xs);
      for (Strategy& x : xs)
        if (std::find(projected[i].begin(), projected[i].end(), x) == projected[i].end()) {
          projected[i].push_back(x);
          out.push_back(std::move(x));
        }
    }
    return out;
  };
  std::vector<bool> deep(n, false);
  bool raised = false;  // exploit: the latest deep searches raised the best pair
  bool stuck = false;  // unstick: the latest further searches (c) did not improve the best pair
  int round = 2;
  while (dc.used() < role_budget && !dc.cancelled()) {
    const int64_t before = dc.used();
    for (bool pre : {false, true}) {
      dc.Assess();
      for (int pl : role_pools[pre]) {
        std::vector<size_t> v = role_slots(pre, pl);
        std::vector<size_t> src;
        for (size_t i : v)
          if (best_gpu(i) > 0) src.push_back(i);
        std::stable_sort(src.begin(), src.end(),
                         [&](size_t x, size_t y) { return best_gpu(x) > best_gpu(y); });
        if (static_cast<int>(src.size()) > options.sources) src.resize(options.sources);
        for (size_t i : v) {
          if (dc.cancelled()) continue;
          std::vector<Strategy> starts = fresh(i, src);
          // Each start and at most four variants of it (RoleRun start_only).
          if (!starts.empty())
            dc.Search(i, 5 * static_cast<int64_t>(starts.size()), round, seed, 0, starts, true);
          // evidence: the decode slot's best part's batch probes (probe_early off: after the
          // first deep search).
          const Part* bp = options.evidence && !pre && (polishes > 0 || options.probe_early)
                               ? dc.BestPart(i)
                               : nullptr;
          if (bp != nullptr && std::find(slots[i].probed.begin(), slots[i].probed.end(), bp->s) ==
                                   slots[i].probed.end()) {
            slots[i].probed.push_back(bp->s);
            dc.Probe(i, BatchProbes(*slots[i].space, bp->s));
          }
        }
      }
    }
    dc.Assess();
    std::vector<double> rho(2 * npools, 0.0);  // [pool * 2 + pre]
    // The best capacity per GPU seen at any size of slot i's role and pool.
    auto role_best = [&](size_t i) -> double& {
      return rho[slots[i].pool * 2 + (slots[i].pre ? 1 : 0)];
    };
    for (size_t i = 0; i < n; ++i) role_best(i) = std::max(role_best(i), best_gpu(i));
    // evidence: the second, fourth, ... deep searches hope a decode slot reaches evidence_gain x
    // the larger of its best part and its probes' value.
    bool by_evidence = options.evidence && polishes % 2 == 1;
    auto hope = [&](size_t i) {
      if (deep[i]) return best_gpu(i);
      if (by_evidence && !slots[i].pre)
        return options.evidence_gain * std::max(best_gpu(i), slots[i].promise);
      return role_best(i);
    };
    std::vector<std::tuple<double, size_t, size_t>> pairs;  // (packed hope, prefill, decode)
    auto rank = [&] {
      pairs.clear();
      for (size_t p = 0; p < n; ++p)
        for (size_t d = 0; d < n; ++d)
          if (slots[p].pre && !slots[d].pre && dc.PairModel(slots[p], slots[d]) >= 0 &&
              !slots[p].front.empty() && !slots[d].front.empty())
            pairs.emplace_back(dc.Packed(slots[p], hope(p), slots[d], hope(d)), p, d);
      std::stable_sort(pairs.begin(), pairs.end(), [](const auto& x, const auto& y) {
        return std::get<0>(x) > std::get<0>(y);
      });
    };
    rank();
    if (pairs.empty()) {
      // No pair of valid parts yet: a deep search of the largest slot not searched yet (decode
      // first).
      for (bool pre : {false, true})
        for (size_t k = 0; k < role_pools[pre].size() && dc.used() == before; ++k)
          for (size_t i : role_slots(pre, role_pools[pre][k]))
            if (slots[i].spent == 0) {
              dc.Search(i, deep_calls, round, seed, 0);
              break;
            }
    } else {
      // unstick: the first ranked pair with a slot not searched deeply (not only the first pair)
      // gets its deep search when its hopes beat the best pair found, or when the latest further
      // searches (c) found nothing better (stuck: the binding slot's size may be the wrong one,
      // another size's hope too low).
      // eligible: a slot not searched deeply whose best part (the projections of its role's best
      // part among them) stays below `eligible` of its role's best capacity per GPU gets no deep
      // search: the role's good shapes fit that size badly (kimi-k2's 384 experts on a 152-GPU
      // decode instance: 713 tokens/s per GPU at best, 2,769 at 144).
      auto eligible = [&](size_t i) {
        return deep[i] || best_gpu(i) >= options.eligible * role_best(i);
      };
      auto pair_eligible = [&](size_t j) {
        return eligible(std::get<1>(pairs[j])) && eligible(std::get<2>(pairs[j]));
      };
      size_t k = 0;
      auto pick = [&] {
        k = 0;
        while (k + 1 < pairs.size() &&
               ((options.unstick && deep[std::get<1>(pairs[k])] && deep[std::get<2>(pairs[k])]) ||
                !pair_eligible(k)))
          ++k;
      };
      pick();
      // A pair that could not beat the best pair found even at its hopes is not worth a search
      // (unless stuck).
      // exploit: the round after deep searches that raised the best pair goes to (c); with
      // deep_first not on short budgets once fewer than two deep searches' calls are left.
      const bool exploit_now =
          options.exploit && raised &&
          !(options.deep_first && short_deep && role_budget - dc.used() < 2 * deep_calls);
      raised = false;
      // evidence_fallback: before the first deep search, a round whose first pair's hopes do not
      // beat the best pair (it would go to (c)) is ranked by the decode slots' evidence instead,
      // when a decode slot has probes. Later such rounds go to (c): the binding slot of the best
      // pair needs its further searches (in every round, qwen3-235b-a22b on 128 H100s deep-
      // searched six decode sizes one after another and its 80-GPU binding slot stayed at 0.967).
      bool probed = false;
      for (size_t i = 0; i < n; ++i) probed = probed || (!slots[i].pre && slots[i].promise > 0);
      if (options.evidence_fallback && options.evidence && polishes == 0 && !by_evidence &&
          !exploit_now && probed && !(std::get<0>(pairs[k]) > dc.best_value() * (1 + 1e-9)) &&
          !(options.unstick && stuck)) {
        by_evidence = true;
        rank();
        pick();
      }
      const auto [v, p, d] = pairs[k];
      if (!exploit_now && (!deep[d] || !deep[p]) && pair_eligible(k) &&
          (v > dc.best_value() * (1 + 1e-9) || (options.unstick && stuck))) {
        const double best_before = dc.best_value();
        auto deep_search = [&](size_t i) {
          // dp_shapes: a decode slot's data-parallel-attention shapes first, raised in batch, one
          // tp option at a time while the slot's best part gains.
          auto shapes = [&] {
            if (!(dp_shapes && !slots[i].pre && dc.BestPart(i) != nullptr)) return;
            const DisaggSetup& st = js.models()[slots[i].model]->setup();
            const std::vector<Strategy> t = DpAttentionShapes(
                *slots[i].space, st.serve.model, st.decode_pool.gpus_per_domain, dc.BestPart(i)->s,
                options.dp_shapes_wide);
            for (size_t a = 0, b = 0; a < t.size(); a = b) {
              while (b < t.size() && t[b].tp == t[a].tp) ++b;
              const double top = best_gpu(i);
              dc.RaiseBatches(i, std::vector<Strategy>(t.begin() + a, t.begin() + b));
              if (!(best_gpu(i) > top)) break;
            }
          };
          const double unshaped = best_gpu(i);
          shapes();
          const double shaped = best_gpu(i);
          dc.Search(i, deep_calls, round, seed, options.start);
          // dp_shapes_after: again from the part the deep search raised, when the shapes before
          // it had raised the slot's best part.
          if (options.dp_shapes_after && shaped > unshaped && best_gpu(i) > shaped) shapes();
          deep[i] = true;
        };
        // evidence_prefill off: a round ranked by the decode slots' evidence searches only the
        // decode slot that its evidence chose (the prefill slot is the one that packs with it).
        bool prefill_too = !by_evidence || deep[d] || options.evidence_prefill;
        if (!deep[d]) {
          deep_search(d);
          dc.Assess();  // the prefill slot's latency limit beside the decode parts found
        }
        // evidence_prefill_below: also the prefill slot when its best part is below its role's
        // best capacity per GPU, while deep searches are short.
        if (options.evidence_prefill_below && short_deep && best_gpu(p) < role_best(p) * (1 - 1e-9))
          prefill_too = true;
        if (!deep[p] && prefill_too) {
          dc.HoldPrefill(p, d);
          deep_search(p);
        }
        ++polishes;
        stuck = false;
        dc.Assess();
        raised = dc.best_value() > best_before * (1 + 1e-9);
      } else {
        // The best pair found so far: further searches of its slot that binds the rate (the
        // role with no capacity to spare; both on a tie or when the KV link binds).
        const DisaggModel& dm = *js.models()[dc.best_model()];
        const DisaggEvaluation e = dm.Combine(dc.best_gp(), dc.best().p.s, dc.best().p.e,
                                              dc.best_gd(), dc.best().d.s, dc.best().d.e);
        const std::array<int, 2> bp = dc.pools()[dc.best_model()];
        const int bgp = dc.best_gp(), bgd = dc.best_gd();
        // The best pair's slot of a role (prefill: pre).
        auto in_pair = [&](size_t i, bool pre) {
          return slots[i].pre == pre && slots[i].g == (pre ? bgp : bgd) &&
                 slots[i].pool == bp[pre ? 0 : 1];
        };
        bool search_d = e.bottleneck != "prefill", search_p = e.bottleneck != "decode";
        // other: the binding slot's latest further search found nothing better; the other role's
        // slot of the pair is searched further too (fewer GPUs there leave more to the binding
        // role: the GB200 NVL72's decode instance of 8 GPUs at batch 1,024 needs three instances
        // where one at batch 256 needs four).
        if (options.other)
          for (size_t i = 0; i < n; ++i)
            if (slots[i].stale) {
              if (in_pair(i, true)) search_d = true;
              if (in_pair(i, false)) search_p = true;
            }
        const int64_t left = role_budget - dc.used();
        const int64_t c = std::min<int64_t>(deep_calls, search_d && search_p ? left / 2 + 1 : left);
        // Started also from the best part of every other size of its role not yet projected
        // onto it (other shapes to climb from than its own best).
        auto more = [&](size_t i) {
          std::vector<size_t> src;
          for (size_t k = 0; k < n; ++k)
            if (slots[k].pre == slots[i].pre && slots[k].pool == slots[i].pool) src.push_back(k);
          return fresh(i, src);
        };
        // unstick: a slot whose latest further search from its best parts found nothing better is
        // searched from scratch instead (another seed's policy and climbs: another basin), then
        // from its best parts again.
        auto further = [&](size_t i) {
          const double before = best_gpu(i);
          if (options.unstick && slots[i].stale) {
            dc.Search(i, c, round, seed, 0);
            slots[i].stale = false;
          } else {
            dc.Search(i, c, round, seed, options.start, more(i));
            slots[i].stale = !(best_gpu(i) > before);
          }
        };
        const double best_before = dc.best_value();
        for (size_t i = 0; i < n; ++i)
          if (search_d && in_pair(i, false)) further(i);
        dc.Assess();
        for (size_t i = 0; i < n; ++i)
          if (search_p && in_pair(i, true)) further(i);
        dc.Assess();
        stuck = !(dc.best_value() > best_before);
      }
    }
    // pair_fallback: no valid pair yet and nothing searched this round (the ranked pairs' slots
    // all searched deeply, no best pair to search further): the first ranked pair's prefill slot
    // is searched further, held to the latency its decode part leaves (its pairings missed the
    // TTFT), then, when that makes no call, its decode slot.
    if (options.pair_fallback && dc.used() == before && !dc.best().found && !pairs.empty() &&
        !dc.cancelled()) {
      const auto [v0, p0, d0] = pairs.front();
      dc.HoldPrefill(p0, d0);
      dc.Search(p0, deep_calls, round, seed, options.start);
      if (dc.used() == before) dc.Search(d0, deep_calls, round, seed, options.start);
      dc.Assess();
    }
    note_best();
    ++round;
    if (dc.used() == before) break;  // nothing to search
  }
  const int rounds = round - 2;
  // 3. The last call: the best pair of recorded parts, through the joint problem.
  r.calls = dc.used();
  r.evaluations = dc.used();
  r.interrupted = dc.cancelled();
  if (dc.best().found && !dc.cancelled()) {
    const JointSpace::Point p{dc.best_model(), dc.best_gp(), dc.best_gd(), dc.best().p.s,
                              dc.best().d.s};
    std::vector<int> idx;
    if (js.Encode(p, &idx)) {
      const Evaluation e = problem.Evaluate(idx);
      ++r.calls;
      ++r.evaluations;
      if (observer != nullptr) {
        observer->OnProgress(r.calls, budget, Objective::Value(e));
        if (observer->Cancelled()) r.interrupted = true;
      }
      if (e.valid()) {
        r.found = true;
        r.eval = e;
        r.best_encoded = idx;
        // The trace ends at the joint evaluation of the best pair (the same Combine).
        while (!trace.empty() && trace.back().value >= Objective::Value(e)) trace.pop_back();
        trace.push_back(TracePoint{r.calls, Objective::Value(e)});
      }
    }
  }
  r.trace = std::move(trace);
  if (!r.found) r.trace.clear();
  int searched = 0;
  for (const Slot& s : slots) searched += s.spent > 0 ? 1 : 0;
  r.note = fmt::format(
      "decomposed: {} role calls over {} of {} (role, instance size) slots ({} rounds, {} "
      "polishes), best pair {} + {} GPUs; last call: that pair through the joint problem",
      dc.used(), searched, slots.size(), rounds, polishes, dc.best_gp(), dc.best_gd());
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace l2s
