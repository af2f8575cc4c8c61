// The disaggregated joint space and its exact oracle (joint.h).
#include "search/joint.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "model/json_fields.h"  // L2S_ASSIGN_OR_RETURN, L2S_RETURN_IF_ERROR
#include "search/oracle.h"

namespace l2s {

namespace {

constexpr int kDegreeHeads[3] = {StrategySpace::kPp, StrategySpace::kTp, StrategySpace::kEp};

const std::vector<int>& DegreeOptions(const StrategySpace& s, int k) {
  return k == 0 ? s.pp_options() : k == 1 ? s.tp_options() : s.ep_options();
}

int IndexOf(const std::vector<int>& v, int x) {
  auto it = std::find(v.begin(), v.end(), x);
  return it == v.end() ? -1 : static_cast<int>(it - v.begin());
}

}  // namespace

// ---------------------------------------------------------------- JointSpace

const JointSpace::Sub* JointSpace::Role::Find(int g) const {
  for (const Sub& s : subs)
    if (s.g == g) return &s;
  return nullptr;
}

StatusOr<std::unique_ptr<JointSpace>> JointSpace::Make(std::vector<const DisaggModel*> models,
                                                       const SpaceOptions& prefill,
                                                       const SpaceOptions& decode) {
  if (models.empty()) return Status::InvalidArgument("joint space: no pool assignment");
  std::unique_ptr<JointSpace> js(new JointSpace());
  js->models_ = std::move(models);
  js->dopt_ = decode;
  auto build = [&](const DisaggModel& dm, bool is_prefill, Role* role) -> Status {
    const ModelSpec& m = dm.setup().serve.model;
    const std::vector<int>& sizes = is_prefill ? dm.prefill_sizes() : dm.decode_sizes();
    for (int g : sizes) {
      L2S_ASSIGN_OR_RETURN(StrategySpace sp,
                           StrategySpace::Make(m, g, is_prefill ? prefill : decode));
      // A size whose space has no structurally valid point is left out.
      std::vector<uint8_t> mask(sp.head_size(0));
      sp.Mask({}, 0, mask);
      if (std::find(mask.begin(), mask.end(), 1) == mask.end()) continue;
      Sub s;
      s.g = g;
      s.space = std::make_unique<StrategySpace>(std::move(sp));
      role->subs.push_back(std::move(s));
      js->sizes_.push_back(g);
    }
    return Status::Ok();
  };
  js->prefill_.resize(js->models_.size());
  js->decode_.resize(js->models_.size());
  for (size_t i = 0; i < js->models_.size(); ++i) {
    L2S_RETURN_IF_ERROR(build(*js->models_[i], true, &js->prefill_[i]));
    L2S_RETURN_IF_ERROR(build(*js->models_[i], false, &js->decode_[i]));
  }
  std::sort(js->sizes_.begin(), js->sizes_.end());
  js->sizes_.erase(std::unique(js->sizes_.begin(), js->sizes_.end()), js->sizes_.end());
  // Union of the degree options, and the index maps.
  std::vector<int>* uni[3] = {&js->pp_, &js->tp_, &js->ep_};
  auto all_subs = [&](auto&& fn) {
    for (auto* roles : {&js->prefill_, &js->decode_})
      for (Role& r : *roles)
        for (Sub& s : r.subs) fn(s);
  };
  all_subs([&](Sub& s) {
    for (int k = 0; k < 3; ++k)
      for (int v : DegreeOptions(*s.space, k)) uni[k]->push_back(v);
  });
  for (int k = 0; k < 3; ++k) {
    std::sort(uni[k]->begin(), uni[k]->end());
    uni[k]->erase(std::unique(uni[k]->begin(), uni[k]->end()), uni[k]->end());
  }
  all_subs([&](Sub& s) {
    for (int k = 0; k < 3; ++k) {
      const std::vector<int>& loc = DegreeOptions(*s.space, k);
      s.to_local[k].assign(uni[k]->size(), -1);
      s.to_union[k].assign(loc.size(), -1);
      for (size_t i = 0; i < loc.size(); ++i) {
        const int u = IndexOf(*uni[k], loc[i]);
        s.to_local[k][u] = static_cast<int>(i);
        s.to_union[k][i] = u;
      }
    }
    if (js->proto_ == nullptr) js->proto_ = s.space.get();
  });
  if (js->proto_ == nullptr)
    return Status::InvalidArgument(
        "joint space: no instance size has a structurally valid strategy");
  js->strat_heads_ = js->proto_->num_heads();
  // Every sub-space of a role shares the head structure (same model and options); prefill and
  // decode differ at most in the mtp head's options.
  js->head_sizes_ = {static_cast<int>(js->models_.size()), static_cast<int>(js->sizes_.size()),
                     static_cast<int>(js->sizes_.size())};
  for (bool is_prefill : {true, false}) {
    const Sub* any = nullptr;
    for (const Role& r : is_prefill ? js->prefill_ : js->decode_)
      if (!r.subs.empty() && any == nullptr) any = &r.subs.front();
    if (any == nullptr)
      return Status::InvalidArgument(fmt::format(
          "joint space: no {} instance size has a structurally valid strategy",
          is_prefill ? "prefill" : "decode"));
    for (int h = 0; h < any->space->num_heads(); ++h) {
      const int k = h == StrategySpace::kPp ? 0 : h == StrategySpace::kTp ? 1 : h == StrategySpace::kEp ? 2 : -1;
      js->head_sizes_.push_back(k >= 0 ? static_cast<int>(uni[k]->size()) : any->space->head_size(h));
    }
  }
  return js;
}

const JointSpace::Sub* JointSpace::SubOf(int model, bool prefill, int g) const {
  if (model < 0 || model >= static_cast<int>(models_.size())) return nullptr;
  return (prefill ? prefill_ : decode_)[model].Find(g);
}

const StrategySpace* JointSpace::PrefillSpace(int model, int g) const {
  const Sub* s = SubOf(model, true, g);
  return s == nullptr ? nullptr : s->space.get();
}

const StrategySpace* JointSpace::DecodeSpace(int model, int g) const {
  const Sub* s = SubOf(model, false, g);
  return s == nullptr ? nullptr : s->space.get();
}

bool JointSpace::PairFits(int model, int gp, int gd) const {
  const DisaggSetup& st = models_[model]->setup();
  if (st.shared) return gp + gd <= st.prefill_pool.num_gpus;
  return gp <= st.prefill_pool.num_gpus && gd <= st.decode_pool.num_gpus;
}

std::string JointSpace::head_name(int h) const {
  if (h == kPools) return "pools";
  if (h == kPrefillGpus) return "prefill_gpus";
  if (h == kDecodeGpus) return "decode_gpus";
  const int b = h - kFirstStrategy;
  return (b < strat_heads_ ? "prefill." : "decode.") + proto_->head_name(b % strat_heads_);
}

std::string JointSpace::option_name(int h, int i) const {
  if (h < 0 || h >= num_heads() || i < 0 || i >= head_sizes_[h]) return "?";
  if (h == kPools) {
    const DisaggSetup& st = models_[i]->setup();
    if (st.shared) return "shared";
    return fmt::format("prefill={},decode={}", st.prefill_pool_name, st.decode_pool_name);
  }
  if (h == kPrefillGpus || h == kDecodeGpus) return fmt::format("{}", sizes_[i]);
  const int lh = (h - kFirstStrategy) % strat_heads_;
  if (lh == StrategySpace::kPp) return fmt::format("{}", pp_[i]);
  if (lh == StrategySpace::kTp) return fmt::format("{}", tp_[i]);
  if (lh == StrategySpace::kEp) return fmt::format("{}", ep_[i]);
  const bool pre = h - kFirstStrategy < strat_heads_;
  for (const Role& r : pre ? prefill_ : decode_)
    if (!r.subs.empty()) return r.subs.front().space->option_name(lh, i);
  return "?";
}

bool JointSpace::ToLocal(const Sub& s, std::span<const int> block, int n,
                         std::vector<int>* local) const {
  local->assign(block.begin(), block.begin() + n);
  for (int k = 0; k < 3; ++k) {
    const int h = kDegreeHeads[k];
    if (h >= n) break;
    const int u = block[h];
    if (u < 0 || u >= static_cast<int>(s.to_local[k].size()) || s.to_local[k][u] < 0) return false;
    (*local)[h] = s.to_local[k][u];
  }
  return true;
}

void JointSpace::Mask(std::span<const int> prefix, int h, std::span<uint8_t> out) const {
  std::fill(out.begin(), out.end(), 0);
  auto size_ok = [&](int model, bool pre, int g) { return SubOf(model, pre, g) != nullptr; };
  auto any_pair = [&](int model, int gp_fixed) {
    for (int gp : sizes_) {
      if (gp_fixed > 0 && gp != gp_fixed) continue;
      if (!size_ok(model, true, gp)) continue;
      for (int gd : sizes_)
        if (size_ok(model, false, gd) && PairFits(model, gp, gd)) return true;
    }
    return false;
  };
  if (h == kPools) {
    for (size_t i = 0; i < models_.size(); ++i) out[i] = any_pair(static_cast<int>(i), 0);
    return;
  }
  const int model = prefix[kPools];
  if (h == kPrefillGpus) {
    for (size_t i = 0; i < sizes_.size(); ++i) out[i] = any_pair(model, sizes_[i]);
    return;
  }
  const int gp = sizes_[prefix[kPrefillGpus]];
  if (h == kDecodeGpus) {
    for (size_t i = 0; i < sizes_.size(); ++i)
      out[i] = size_ok(model, false, sizes_[i]) && PairFits(model, gp, sizes_[i]);
    return;
  }
  const int b = h - kFirstStrategy;
  const bool pre = b < strat_heads_;
  const int lh = b % strat_heads_;
  const Sub* s = SubOf(model, pre, pre ? gp : sizes_[prefix[kDecodeGpus]]);
  if (s == nullptr) return;
  const int start = kFirstStrategy + (pre ? 0 : strat_heads_);
  if (!ToLocal(*s, prefix.subspan(start, lh), lh, &scratch_local_)) return;
  const int n = s->space->head_size(lh);
  scratch_mask_.assign(n, 0);
  s->space->Mask(scratch_local_, lh, scratch_mask_);
  const int k = lh == StrategySpace::kPp ? 0 : lh == StrategySpace::kTp ? 1 : lh == StrategySpace::kEp ? 2 : -1;
  for (int i = 0; i < n; ++i) {
    if (!scratch_mask_[i]) continue;
    out[k >= 0 ? s->to_union[k][i] : i] = 1;
  }
}

bool JointSpace::Valid(std::span<const int> idx) const {
  if (static_cast<int>(idx.size()) < num_heads()) return false;
  std::vector<uint8_t> m;
  for (int h = 0; h < num_heads(); ++h) {
    if (idx[h] < 0 || idx[h] >= head_sizes_[h]) return false;
    m.assign(head_sizes_[h], 0);
    Mask(idx, h, m);
    if (!m[idx[h]]) return false;
  }
  return true;
}

double JointSpace::Size() const {
  double s = 1;
  for (int n : head_sizes_) s *= n;
  return s;
}

bool JointSpace::ordinal(int h) const {
  if (h == kPrefillGpus || h == kDecodeGpus) return true;
  if (h < kFirstStrategy) return false;
  return proto_->ordinal((h - kFirstStrategy) % strat_heads_);
}

bool JointSpace::structural(int h) const {
  if (h < kFirstStrategy) return true;
  return proto_->structural((h - kFirstStrategy) % strat_heads_);
}

int JointSpace::group(int h) const {
  if (h < kFirstStrategy) return -1;
  const int b = h - kFirstStrategy;
  const int g = proto_->group(b % strat_heads_);
  return g < 0 ? -1 : g + (b < strat_heads_ ? 0 : 16);
}

bool JointSpace::batch(int h) const {
  return h >= kFirstStrategy && proto_->batch((h - kFirstStrategy) % strat_heads_);
}

int JointSpace::recipe_option(int h, int r) const {
  if (h < kFirstStrategy) return -1;
  return proto_->recipe_option((h - kFirstStrategy) % strat_heads_, r);
}

JointSpace::Point JointSpace::Decode(std::span<const int> idx) const {
  Point p;
  p.model = idx[kPools];
  p.gp = sizes_[idx[kPrefillGpus]];
  p.gd = sizes_[idx[kDecodeGpus]];
  std::vector<int> local;
  if (const Sub* s = SubOf(p.model, true, p.gp);
      s != nullptr && ToLocal(*s, idx.subspan(kFirstStrategy, strat_heads_), strat_heads_, &local))
    p.prefill = s->space->Decode(local);
  if (const Sub* s = SubOf(p.model, false, p.gd);
      s != nullptr &&
      ToLocal(*s, idx.subspan(kFirstStrategy + strat_heads_, strat_heads_), strat_heads_, &local))
    p.decode = s->space->Decode(local);
  return p;
}

bool JointSpace::Encode(const Point& p, std::vector<int>* idx) const {
  const Sub* sp = SubOf(p.model, true, p.gp);
  const Sub* sd = SubOf(p.model, false, p.gd);
  if (sp == nullptr || sd == nullptr) return false;
  idx->assign(num_heads(), 0);
  (*idx)[kPools] = p.model;
  (*idx)[kPrefillGpus] = IndexOf(sizes_, p.gp);
  (*idx)[kDecodeGpus] = IndexOf(sizes_, p.gd);
  std::vector<int> local;
  for (const auto& [s, st, start] :
       {std::tuple{sp, &p.prefill, static_cast<int>(kFirstStrategy)},
        std::tuple{sd, &p.decode, kFirstStrategy + strat_heads_}}) {
    if (!s->space->Encode(*st, &local)) return false;
    for (int h = 0; h < strat_heads_; ++h) {
      const int k = h == StrategySpace::kPp ? 0 : h == StrategySpace::kTp ? 1 : h == StrategySpace::kEp ? 2 : -1;
      (*idx)[start + h] = k >= 0 ? s->to_union[k][local[h]] : local[h];
    }
  }
  return true;
}

// ---------------------------------------------------------------- JointProblem

DisaggEvaluation JointProblem::Describe(std::span<const int> idx) const {
  if (!space_.Valid(idx)) {
    DisaggEvaluation d;
    d.verdict = Verdict::kStructure;
    d.reason = "not a valid point of the joint space";
    return d;
  }
  const JointSpace::Point p = space_.Decode(idx);
  return space_.models()[p.model]->Evaluate(p.gp, p.prefill, p.gd, p.decode);
}

Evaluation JointProblem::Evaluate(std::span<const int> idx) const {
  return Describe(idx).AsEvaluation();
}

// ---------------------------------------------------------------- the exact oracle

namespace {

using Clock = std::chrono::steady_clock;

// One role's exact solutions at several limits, for one instance size.
struct RoleSolver {
  Simulator sim;                   // a copy whose SLOs are set per solve
  const StrategySpace* space = nullptr;
  struct Solved {
    double limit_ms = 0;
    bool found = false;
    Strategy s;
    Evaluation e;
  };
  std::vector<Solved> memo;
};

struct OracleRun {
  const JointSpace& js;
  Observer* obs;
  DisaggOracleStats* stats;
  DisaggOracleOptions options;
  bool cancelled = false;

  // floor: OracleOptions::floor (tokens/s per GPU; 0 = none).
  bool Solve(RoleSolver& r, double ttft_ms, double tpot_ms, const StrategySpace& space,
             RoleSolver::Solved* out, double floor = 0) {
    r.sim.SetSlo(ttft_ms, tpot_ms);
    OracleOptions opt;
    opt.floor = floor;
    opt.partial_bound = options.partial_bound;
    const SearchResult res = SolveExact(r.sim, space, obs, nullptr, opt);
    ++stats->pool_solves;
    if (res.interrupted) cancelled = true;
    out->found = res.found;
    if (res.found) {
      out->s = res.best;
      out->e = res.eval;
    }
    return !cancelled;
  }

  // Best prefill instance with latency <= x_ms (x_ms <= 0: none; infinity: no limit).
  RoleSolver::Solved Prefill(RoleSolver& r, double x_ms) {
    RoleSolver::Solved out;
    out.limit_ms = x_ms;
    if (!(x_ms > 0)) return out;
    for (const RoleSolver::Solved& m : r.memo) {
      if (m.limit_ms == x_ms) return m;
      // A solution at a looser limit that meets this one is optimal here too; none at a looser
      // limit means none here.
      if (m.limit_ms >= x_ms && (!m.found || m.e.ttft_s * 1e3 <= x_ms)) {
        RoleSolver::Solved c = m;
        c.limit_ms = x_ms;
        return c;
      }
    }
    Solve(r, std::isinf(x_ms) ? 0.0 : x_ms, 0, *r.space, &out);
    r.memo.push_back(out);
    return out;
  }
};

}  // namespace

DisaggResult SolveDisaggExact(const JointSpace& js, Observer* observer, DisaggOracleStats* stats,
                              const DisaggOracleOptions& options) {
  const auto t0 = Clock::now();
  DisaggOracleStats local_stats;
  if (stats == nullptr) stats = &local_stats;
  *stats = DisaggOracleStats{};
  OracleRun run{js, observer, stats, options};
  DisaggResult best;
  double incumbent = 0;  // matched requests/s over all GPUs (per-GPU figure x all GPUs / osl)
  bool any_prefill = false, any_decode = false;
  for (int mi = 0; mi < static_cast<int>(js.models().size()) && !run.cancelled; ++mi) {
    const DisaggModel& dm = *js.models()[mi];
    const Workload& w = dm.setup().serve.workload;
    const double ttft_ms = w.ttft_ms > 0 ? w.ttft_ms : std::numeric_limits<double>::infinity();
    // Per size: the prefill solver and the decode frontier.
    std::map<int, std::unique_ptr<RoleSolver>> pre;
    struct DecodeFrontier {
      std::vector<RoleSolver::Solved> points;  // capacities falling, steps strictly falling
      bool done = false;
      std::unique_ptr<RoleSolver> solver;
      std::map<int, std::unique_ptr<StrategySpace>> by_mtp;  // spaces with mtp fixed
    };
    std::map<int, DecodeFrontier> dec;
    std::vector<int> gps, gds;
    for (int g : dm.prefill_sizes())
      if (js.PrefillSpace(mi, g) != nullptr) {
        gps.push_back(g);
        pre[g] = std::make_unique<RoleSolver>(RoleSolver{dm.PrefillSim(g), js.PrefillSpace(mi, g), {}});
      }
    for (int g : dm.decode_sizes())
      if (js.DecodeSpace(mi, g) != nullptr) {
        gds.push_back(g);
        dec[g].solver = std::make_unique<RoleSolver>(RoleSolver{dm.DecodeSim(g), js.DecodeSpace(mi, g), {}});
      }
    // Frontier point j of size g (computed on demand); null when there is none.
    auto decode_point = [&](int g, size_t j) -> const RoleSolver::Solved* {
      DecodeFrontier& f = dec[g];
      while (f.points.size() <= j && !f.done && !run.cancelled) {
        RoleSolver& r = *f.solver;
        RoleSolver::Solved next;
        if (f.points.empty()) {
          run.Solve(r, 0, w.tpot_ms, *r.space, &next);
        } else {
          // The best decode instance whose step is strictly shorter than the last point's: per
          // MTP depth k (tokens per step A_k), TPOT <= step / A_k.
          const RoleSolver::Solved& last = f.points.back();
          const double step_ms = last.e.tpot_s * last.e.accept * 1e3 * (1 - 1e-9);
          for (int k : js.decode_options().mtp) {
            if (!dm.setup().serve.model.can_speculate() && k > 0) continue;
            auto& sp = f.by_mtp[k];
            if (!sp) {
              SpaceOptions o = js.decode_options();
              o.mtp = {k};
              StatusOr<StrategySpace> s = StrategySpace::Make(dm.setup().serve.model, g, o);
              if (!s.ok()) continue;
              sp = std::make_unique<StrategySpace>(std::move(*s));
            }
            Strategy probe;
            probe.mtp = k;
            const double a = r.sim.TokensPerStep(probe);
            double limit = step_ms / a;
            if (w.tpot_ms > 0) limit = std::min(limit, w.tpot_ms);
            RoleSolver::Solved c;
            if (!run.Solve(r, 0, limit, *sp, &c)) break;
            if (c.found && (!next.found || c.e.tokens_per_s > next.e.tokens_per_s)) next = c;
          }
        }
        if (run.cancelled) break;
        if (!next.found) {
          f.done = true;
          break;
        }
        f.points.push_back(next);
      }
      return j < f.points.size() ? &f.points[j] : nullptr;
    };
    // Upper bounds per size.
    auto counts_rate = [&](int gp, double cp, int gd, double cd) {
      DisaggModel::Counts c;
      const KvLink l = dm.Link(gp, gd);
      const double per_gpu = dm.KvBytesPerPrompt() > 0 ? l.bw / dm.KvBytesPerPrompt()
                                                       : std::numeric_limits<double>::infinity();
      return dm.BestCounts(gp, cp, gd, cd, per_gpu, &c) ? c.rate : 0.0;
    };
    struct Pair {
      int gp, gd;
      double ub;
    };
    // Prefill: the optimum of every size at the whole TTFT (an upper bound on its capacity at
    // any tighter latency limit).
    std::map<int, double> cp_ub;  // requests/s of one instance
    for (int gp : gps) {
      const RoleSolver::Solved pu = run.Prefill(*pre[gp], ttft_ms);
      if (run.cancelled) break;
      if (!pu.found) continue;
      any_prefill = true;
      cp_ub[gp] = pu.e.tokens_per_s / static_cast<double>(w.isl);
    }
    // The best rate any solved prefill size reaches beside a decode instance of gd GPUs of
    // capacity cd (non-decreasing in cd).
    auto best_rate = [&](int gd, double cd) {
      double r = 0;
      for (const auto& [gp, cp] : cp_ub) r = std::max(r, counts_rate(gp, cp, gd, cd));
      return r;
    };
    // Decode sizes in ascending order (small instances are cheap and give the incumbent early).
    // For each, the capacity below which no pair with it can beat the incumbent (bisection on the
    // monotone best_rate) becomes the floor of its solve (OracleOptions::floor): a size whose
    // optimum is below the floor is bounded, not solved; one that cannot beat the incumbent even
    // at unbounded capacity is not solved at all. The pairs of a solved size are examined at once,
    // in the order of their upper bounds; the incumbent only grows, so every prune stays valid.
    constexpr double kHuge = 1e15;  // requests/s: "unbounded" decode capacity
    for (int gd : gds) {
      if (run.cancelled) break;
      stats->pairs += static_cast<int64_t>(cp_ub.size());
      double floor_per_gpu = 0;
      if (incumbent > 0 && run.options.floors) {
        if (best_rate(gd, kHuge) <= incumbent * (1 + 1e-12)) {
          ++stats->sizes_bounded;
          continue;
        }
        double lo = 0, hi = kHuge;  // best_rate(lo) <= incumbent < best_rate(hi)
        for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; ++it) {
          const double mid = 0.5 * (lo + hi);
          (best_rate(gd, mid) <= incumbent * (1 + 1e-12) ? lo : hi) = mid;
        }
        // Any capacity that beats the incumbent exceeds lo; as tokens/s per GPU, with a margin
        // for rounding (a lower floor only prunes less).
        floor_per_gpu = lo * static_cast<double>(w.osl) / gd * (1 - 1e-6);
      }
      DecodeFrontier& f = dec[gd];
      if (floor_per_gpu > 0 && f.points.empty() && !f.done) {
        RoleSolver::Solved p0;
        if (!run.Solve(*f.solver, 0, w.tpot_ms, *f.solver->space, &p0, floor_per_gpu)) break;
        if (p0.found) any_decode = true;
        if (!p0.found || p0.e.tokens_per_s_per_gpu < floor_per_gpu * (1 - 1e-9)) {
          // Its optimum (if any) is below the floor: no pair with it beats the incumbent.
          ++stats->sizes_bounded;
          continue;
        }
        f.points.push_back(p0);  // the exact optimum: it is above the floor
      }
      const RoleSolver::Solved* d0 = decode_point(gd, 0);
      if (run.cancelled) break;
      if (d0 == nullptr) continue;
      any_decode = true;
      std::vector<Pair> pairs;
      for (const auto& [gp, cp] : cp_ub) {
        const double ub = counts_rate(gp, cp, gd, d0->e.tokens_per_s / static_cast<double>(w.osl));
        if (ub > 0) pairs.push_back({gp, gd, ub});
      }
      std::stable_sort(pairs.begin(), pairs.end(),
                       [](const Pair& a, const Pair& b) { return a.ub > b.ub; });
      for (const Pair& pr : pairs) {
        if (run.cancelled || pr.ub <= incumbent * (1 + 1e-12)) break;
        ++stats->pairs_examined;
        const RoleSolver::Solved pu = run.Prefill(*pre[pr.gp], ttft_ms);
        const double cp_ub = pu.e.tokens_per_s / static_cast<double>(w.isl);
        for (size_t j = 0;; ++j) {
          const RoleSolver::Solved* d = decode_point(pr.gd, j);
          if (d == nullptr || run.cancelled) break;
          ++stats->frontier_points;
          const double cd = d->e.tokens_per_s / static_cast<double>(w.osl);
          const double step_ms = d->e.tpot_s * d->e.accept * 1e3;
          // Prefill latency limit: lat + exposed(t, lat) + step <= TTFT (disagg.h).
          const double x = dm.PrefillLatencyLimitMs(pr.gp, pr.gd, step_ms);
          const RoleSolver::Solved p = run.Prefill(*pre[pr.gp], x);
          if (run.cancelled) break;
          if (p.found) {
            const double rate = counts_rate(pr.gp, p.e.tokens_per_s / static_cast<double>(w.isl),
                                            pr.gd, cd);
            if (rate > incumbent * (1 + 1e-12)) {
              const DisaggEvaluation ev = dm.Combine(pr.gp, p.s, p.e, pr.gd, d->s, d->e);
              if (ev.valid()) {
                incumbent = rate;
                best.found = true;
                best.best = JointSpace::Point{mi, pr.gp, pr.gd, p.s, d->s};
                best.eval = ev;
              }
            }
          }
          // Further points decode less: their bound uses this point's capacity.
          if (counts_rate(pr.gp, cp_ub, pr.gd, cd) <= incumbent * (1 + 1e-12)) break;
        }
      }
    }
  }
  if (best.found && !js.Encode(best.best, &best.best_encoded)) best.best_encoded.clear();
  best.interrupted = run.cancelled;
  if (!best.found && !run.cancelled) {
    const Workload& w = js.models().front()->setup().serve.workload;
    const std::string below = Simulator::TtftBelowRequestOverhead(w);
    best.why_none =
        !below.empty() ? below
        : !any_prefill ? fmt::format("no prefill instance of any size fits in memory{}",
                                   w.ttft_ms > 0 ? fmt::format(" within the TTFT SLO of {} ms", w.ttft_ms) : "")
        : !any_decode ? fmt::format("no decode instance of any size fits in memory{}",
                                    w.tpot_ms > 0 ? fmt::format(" within the TPOT SLO of {} ms", w.tpot_ms) : "")
                      : w.ttft_ms > 0
                          ? fmt::format("no prefill + decode pair meets the TTFT SLO of {} ms (prefill "
                                        "latency + KV transfer + one decode step)",
                                        w.ttft_ms)
                          : std::string("no prefill + decode pair fits in the cluster's GPUs (the "
                                        "smallest prefill and decode instances that fit in memory "
                                        "need more GPUs together)");
  }
  best.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  stats->wall_s = best.wall_s;
  best.note = fmt::format(
      "joint space of {:.3g} points solved exactly by decomposition: {} pool solves, {} of {} "
      "size pairs examined, {} decode frontier points, {} decode sizes bounded by the incumbent",
      js.Size(), stats->pool_solves, stats->pairs_examined, stats->pairs, stats->frontier_points,
      stats->sizes_bounded);
  return best;
}

}  // namespace l2s
