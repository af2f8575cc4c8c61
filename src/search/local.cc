// local: iterated local search over the registered moves (search/moves/), the plan's default
// searcher. It is local search, not learning: a bandit picks the next move by its recent gains.
//
// One search:
//   1. Start: the best of 8 uniformly drawn structures, each with a recipe's dims (one of the
//      space's recipes, uniformly chosen: StrategySpace's Megatron, data-parallel attention,
//      data parallel), batch-fitted.
//   2. Step: the bandit draws a move with probability proportional to 0.02 + g, g being an
//      exponential average (factor 0.9) of its recent outcomes (1: its proposal beat the
//      incumbent; 0: not, or it had nothing to propose); g starts at 0.2. The proposal is
//      evaluated and batch-fitted (3.); it replaces the incumbent when it ranks at least as high
//      (equal values walk plateaus).
//   3. Shared services, always on: a cache keyed by the space's canonical form (a point already
//      evaluated, or one that runs identically, costs no call); batch fitting (a point missing
//      memory or an SLO takes the next lower batch option, up to three; a valid one the next
//      higher while that pays); ranking (valid points by tokens/s per GPU, above every invalid
//      one; invalid ones by their near-SLO potential, NearSloPotential below, so that a search
//      that has found nothing valid yet climbs towards the limit); the elites (the 8 best
//      distinct points) that crossover and the kicks read.
//   4. Kick: after `patience` proposals in a row without a strict gain, the incumbent becomes an
//      elite (uniformly chosen) moved by two uniformly chosen moves, or a fresh start, in turn.
// Every evaluation is charged to the budget; nothing depends on the budget or on the problem
// beyond what the space's hints say. Options: patience (default 80) and without=a+b (moves left
// out, for the ablation: docs/dev/SEARCH.md).
#include <algorithm>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "search/joint.h"
#include "search/moves/move.h"
#include "search/moves/registry.h"
#include "search/sampling.h"
#include "search/searchers.h"

namespace l2s {
namespace {

struct Score {
  bool valid = false;
  double value = 0;  // tokens/s per GPU (valid) or near-SLO potential (invalid)
  Verdict verdict = Verdict::kStructure;
};

// The near-SLO potential of an evaluation that misses the TPOT or TTFT limit of `w`: its
// throughput x limit / its latency (the throughput discounted by the share of the latency that
// re-sharding would have to save); 0 for any other verdict, valid ones included.
double NearSloPotential(const Evaluation& e, const Workload& w) {
  double ratio = 0;
  if (e.verdict == Verdict::kTpot && e.tpot_s > 0) {
    ratio = w.tpot_ms / (e.tpot_s * 1e3);
  } else if (e.verdict == Verdict::kTtft && e.ttft_s > 0) {
    ratio = w.ttft_ms / (e.ttft_s * 1e3);
  }
  return e.tokens_per_s_per_gpu * std::clamp(ratio, 0.0, 1.0);
}

// a ranks above b.
bool Better(const Score& a, const Score& b) {
  if (a.valid != b.valid) return a.valid;
  return a.value > b.value;
}

struct KeyHash {
  size_t operator()(const std::vector<int>& v) const {
    uint64_t h = 1469598103934665603ull;
    for (int x : v) h = (h ^ static_cast<uint64_t>(x + 1)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

constexpr int kElites = 8;
constexpr int kStarts = 8;
constexpr int kFitDown = 3;
constexpr double kDecay = 0.9, kFloor = 0.02, kPrior = 0.2;
// Proposals in a row that cost no call (every one cached or empty) before the search stops: the
// neighbourhood of everything reachable has been evaluated.
constexpr int kMaxIdle = 1000;
constexpr int kDefaultPatience = 80;

class LocalRun {
 public:
  LocalRun(Objective& obj, const std::vector<const moves::Move*>& moves, int patience, uint64_t seed)
      : obj_(obj), space_(obj.encoded_space()), moves_(moves), patience_(patience), rng_(seed),
        gain_(moves.size(), kPrior) {
    if (obj.strategy_space() != nullptr) workload_ = &obj.sim().problem().workload;
  }

  // starts: the points to start from (in order; none: kStarts drawn ones).
  void Go(const std::vector<std::vector<int>>& starts = {}) {
    std::vector<int> base(space_.num_heads(), 0);
    if (!moves::RepairNearest(space_, &base, 0)) return;
    std::vector<int> inc;
    Score inc_score;
    const int n = starts.empty() ? kStarts : static_cast<int>(starts.size());
    for (int k = 0; k < n && !obj_.Done(); ++k) {
      std::vector<int> p = base;
      if (k < static_cast<int>(starts.size())) {
        p = starts[k];
      } else {
        Start(&p);
      }
      std::optional<Score> s = Evaluate(p);
      if (!s) break;
      Fit(&p, &*s);
      Offer(p, *s);
      if (inc.empty() || Better(*s, inc_score)) {
        inc = p;
        inc_score = *s;
      }
    }
    if (inc.empty()) return;
    int stall = 0, idle = 0, kicks = 0;
    while (!obj_.Done() && idle < kMaxIdle) {
      const int m = Pick();
      std::vector<int> cand = inc;
      const moves::MoveContext ctx{space_, elites_};
      if (!moves_[m]->Propose(ctx, rng_, &cand)) {
        Reward(m, 0);
        ++idle;
        continue;
      }
      const int64_t before = obj_.calls();
      std::optional<Score> c = Evaluate(cand);
      if (!c) break;
      Fit(&cand, &*c);
      idle = obj_.calls() == before ? idle + 1 : 0;
      Offer(cand, *c);
      const bool gain = Better(*c, inc_score);
      Reward(m, gain ? 1 : 0);
      if (gain || !Better(inc_score, *c)) {
        inc.swap(cand);
        inc_score = *c;
      }
      stall = gain ? 0 : stall + 1;
      if (stall < patience_) continue;
      stall = 0;
      if (!Kick(kicks++ % 2 == 0, &inc, &inc_score)) break;
    }
  }

 private:
  // A start point: a uniformly drawn structure with one of the space's recipes on the rest
  // (unchanged in a space of one structure).
  void Start(std::vector<int>* idx) {
    const moves::MoveContext ctx{space_, elites_};
    const std::vector<int> before = *idx;
    if (!moves::RestartMoveInstance()->Propose(ctx, rng_, idx)) *idx = before;
  }

  // From an elite moved by two uniformly chosen moves (perturb) or a fresh start; evaluated and
  // fitted. False when the budget ran out.
  bool Kick(bool perturb, std::vector<int>* inc, Score* inc_score) {
    std::vector<int> p;
    const moves::MoveContext ctx{space_, elites_};
    if (perturb && !elites_.empty()) {
      p = elites_[rng_.Uniform(static_cast<int>(elites_.size()))];
      for (int k = 0; k < 2; ++k) {
        std::vector<int> q = p;
        if (moves_[rng_.Uniform(static_cast<int>(moves_.size()))]->Propose(ctx, rng_, &q)) p = q;
      }
    } else {
      p = *inc;
      Start(&p);
    }
    std::optional<Score> s = Evaluate(p);
    if (!s) return false;
    Fit(&p, &*s);
    Offer(p, *s);
    *inc = p;
    *inc_score = *s;
    return true;
  }

  int Pick() {
    double total = 0;
    for (double g : gain_) total += kFloor + g;
    double u = rng_.Unit() * total;
    for (size_t i = 0; i < gain_.size(); ++i) {
      u -= kFloor + gain_[i];
      if (u < 0) return static_cast<int>(i);
    }
    return static_cast<int>(gain_.size()) - 1;
  }
  void Reward(int m, double r) { gain_[m] = kDecay * gain_[m] + (1 - kDecay) * r; }

  // Cached evaluation; nullopt when the point is new and the budget is spent.
  std::optional<Score> Evaluate(const std::vector<int>& idx) {
    key_ = idx;
    space_.Canonicalize(&key_);
    if (auto it = cache_.find(key_); it != cache_.end()) return it->second;
    if (obj_.Done()) return std::nullopt;
    const Evaluation& e = obj_.EvaluateEncoded(idx);
    Score s;
    s.verdict = e.verdict;
    s.valid = e.valid();
    s.value = s.valid ? e.tokens_per_s_per_gpu
                      : (workload_ != nullptr ? NearSloPotential(e, *workload_) : 0.0);
    cache_.emplace(key_, s);
    return s;
  }

  // Batch fitting over every batch head, in head order.
  void Fit(std::vector<int>* idx, Score* s) {
    for (int b = 0; b < space_.num_heads(); ++b) {
      if (!space_.batch(b) || space_.head_size(b) < 2) continue;
      const bool missed = s->verdict == Verdict::kMemory || s->verdict == Verdict::kTtft ||
                          s->verdict == Verdict::kTpot || s->verdict == Verdict::kNoBatch;
      if (!s->valid && missed) {
        for (int k = 0; k < kFitDown && !s->valid; ++k)
          if (!Step(b, -1, idx, s, /*keep_if_better=*/false)) break;
      }
      while (s->valid && Step(b, +1, idx, s, /*keep_if_better=*/true)) {
      }
    }
  }
  // Moves batch head b one valid option in direction dir and evaluates. keep_if_better: the step
  // is kept only when it ranks higher; otherwise always (a step down after a miss). Returns
  // whether the step was kept.
  bool Step(int b, int dir, std::vector<int>* idx, Score* s, bool keep_if_better) {
    const std::vector<int> opts = moves::ValidOptions(space_, *idx, b);
    const int cur = (*idx)[b];
    int next = -1;
    for (int o : opts) {
      if (dir < 0 && o < cur) next = o;
      if (dir > 0 && o > cur && next < 0) next = o;
    }
    if (next < 0) return false;
    std::vector<int> q = *idx;
    q[b] = next;
    if (!moves::RepairNearest(space_, &q, b + 1)) return false;
    std::optional<Score> t = Evaluate(q);
    if (!t) return false;
    Offer(q, *t);
    if (keep_if_better && !Better(*t, *s)) return false;
    idx->swap(q);
    *s = *t;
    return true;
  }

  // Keeps the kElites best distinct points.
  void Offer(const std::vector<int>& idx, const Score& s) {
    if (!s.valid && s.value <= 0) return;
    for (const std::vector<int>& e : elites_)
      if (e == idx) return;
    size_t pos = 0;
    while (pos < elites_.size() && !Better(s, elite_scores_[pos])) ++pos;
    if (pos >= kElites) return;
    elites_.insert(elites_.begin() + static_cast<long>(pos), idx);
    elite_scores_.insert(elite_scores_.begin() + static_cast<long>(pos), s);
    if (elites_.size() > kElites) {
      elites_.pop_back();
      elite_scores_.pop_back();
    }
  }

  Objective& obj_;
  const EncodedSpace& space_;
  const std::vector<const moves::Move*>& moves_;
  int patience_;
  Rng rng_;
  std::vector<double> gain_;
  const Workload* workload_ = nullptr;
  std::unordered_map<std::vector<int>, Score, KeyHash> cache_;
  std::vector<int> key_;
  std::vector<std::vector<int>> elites_;
  std::vector<Score> elite_scores_;
};

class LocalSearcher : public Searcher {
 public:
  LocalSearcher(int patience, std::vector<const moves::Move*> active, std::string without)
      : patience_(patience), moves_(std::move(active)), without_(std::move(without)) {}
  std::string name() const override {
    return without_.empty() ? fmt::format("local(patience={})", patience_)
                            : fmt::format("local(patience={},without={})", patience_, without_);
  }
  SearchResult Search(const Simulator& sim, const StrategySpace& space, int64_t budget,
                      uint64_t seed, Observer* observer) override {
    Objective obj(sim, space, budget, observer);
    LocalRun(obj, moves_, patience_, seed).Go();
    return obj.Finish(name());
  }
  // The joint disaggregated space by decomposition (joint.h SearchJointDecomposed): local search
  // on each role's own StrategySpace, from the decomposition's start points.
  SearchResult SearchEncoded(const EncodedProblem& problem, int64_t budget, uint64_t seed,
                             Observer* observer) override {
    if (const auto* jp = dynamic_cast<const JointProblem*>(&problem)) {
      SearchResult r = SearchJointDecomposed(*jp, budget, seed, observer, RoleRun());
      r.searcher = name();
      return r;
    }
    Objective obj(problem, budget, observer);
    LocalRun(obj, moves_, patience_, seed).Go();
    return obj.Finish(name());
  }

 private:
  l2s::RoleRun RoleRun() const {
    return [this](const Simulator& sim, const StrategySpace& space, int64_t budget, uint64_t seed,
                  std::span<const Strategy> start, Observer* observer) {
      Objective obj(sim, space, budget, observer);
      std::vector<std::vector<int>> starts;
      for (const Strategy& s : start) {
        std::vector<int> idx;
        if (space.Encode(s, &idx) && space.Valid(idx)) starts.push_back(std::move(idx));
      }
      LocalRun(obj, moves_, patience_, seed).Go(starts);
      return obj.Finish(name());
    };
  }

  int patience_;
  std::vector<const moves::Move*> moves_;
  std::string without_;
};

}  // namespace

void LocalSearchFrom(Objective& obj, uint64_t seed, const std::vector<std::vector<int>>& starts) {
  std::vector<std::vector<int>> valid;
  for (const std::vector<int>& s : starts)
    if (obj.encoded_space().Valid(s)) valid.push_back(s);
  LocalRun(obj, moves::RegisteredMoves(), kDefaultPatience, seed).Go(valid);
}

StatusOr<std::unique_ptr<Searcher>> MakeLocalSearcher(const SearcherSpec& spec) {
  if (Status st = CheckSpecKeys(spec, {"patience", "without"}); !st.ok()) return st;
  const int64_t patience = spec.Int("patience", kDefaultPatience);
  if (!spec.error.empty()) return SpecValueError(spec);
  if (patience < 1 || patience > 1'000'000)
    return Status::InvalidArgument(
        fmt::format("local: patience must be in 1..1000000, got {}", patience));
  std::vector<const moves::Move*> active = moves::RegisteredMoves();
  std::string without;
  if (auto it = spec.args.find("without"); it != spec.args.end() && !it->second.empty()) {
    std::string_view rest = it->second;
    while (!rest.empty()) {
      const size_t plus = rest.find('+');
      const std::string_view name = rest.substr(0, plus);
      const moves::Move* m = moves::FindMove(name);
      if (m == nullptr) {
        std::string names;
        for (const moves::Move* r : moves::RegisteredMoves())
          names += (names.empty() ? "" : ", ") + std::string(r->name());
        return Status::InvalidArgument(
            fmt::format("local: unknown move '{}' in without=; moves: {}", name, names));
      }
      active.erase(std::remove(active.begin(), active.end(), m), active.end());
      rest = plus == std::string_view::npos ? std::string_view() : rest.substr(plus + 1);
    }
    if (active.empty())
      return Status::InvalidArgument("local: without= removes every move");
    without = it->second;
  }
  return std::unique_ptr<Searcher>(
      new LocalSearcher(static_cast<int>(patience), std::move(active), std::move(without)));
}

}  // namespace l2s
