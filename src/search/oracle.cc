// The exact oracle (see oracle.h for the method and docs/dev/SEARCH.md for the argument).
#include "search/oracle.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "search/searchers.h"

namespace l2s {
namespace {

constexpr int kK = Program::kMaxKinds;

// Additive cost criteria of one operator group's option (all "less is better"):
//   per layer kind k: seconds per step, weight bytes, KV bytes (attention group only);
//   embedding and LM-head sections: seconds and weight bytes;
//   serve mode: the group's share of the TTFT prefill pass (seconds, all layers).
// The largest live activation (bytes) is kept apart: groups combine it by max, not sum.
//   two-batch overlap (tbo): per layer kind, embedding and LM head also communication seconds,
//   kept apart from compute (Simulator::SectionSeconds = 2 max(compute, comm) is monotone in
//   both, so sums of minima still bound it from below); 0 otherwise.
enum Crit : int {
  kLs = 0,
  kLw = kLs + kK,
  kKv = kLw + kK,
  kLa = kKv + kK,
  kEs = kLa + kK,
  kEw,
  kEa,
  kLms,
  kLmw,
  kLma,
  kTtft,
  kNumCrit
};
using Vec = std::array<double, kNumCrit>;

// Relative slack of the floating-point filter: anything within it of a decision boundary
// (incumbent value, memory capacity, SLO) is decided by Simulator::Compose itself.
constexpr double kSlack = 1e-9;

struct GroupDef {
  int num_ops;
  std::array<Op, 3> ops;
};
// The operator groups of Simulator::OpTotals' separability contract, in Op (= head) order.
constexpr GroupDef kGroupDefs[] = {
    {1, {Op::kEmbed}},
    {3, {Op::kAttnQkv, Op::kAttnCore, Op::kAttnOut}},
    {1, {Op::kMoeRouter}},
    {2, {Op::kMoeFfn1, Op::kMoeFfn2}},
    {2, {Op::kSharedFfn1, Op::kSharedFfn2}},
    {2, {Op::kDenseFfn1, Op::kDenseFfn2}},
    {1, {Op::kLmHead}},
};

struct Option {
  int combo = 0;  // mixed-radix digits (SetCombo) = the dims of the group's ops, first op most significant
  Vec v{};
  double act = 0;
};

struct Group {
  const GroupDef* def = nullptr;
  int size = 1;  // product of the ops' dim option counts (3^num_ops unrestricted)
  bool has_kv = false;
  std::vector<Option> all, kept;
};

// Mixed radix over the space's options of each operator (StrategySpace::dim_options: {dim0,
// dim1, none}, or Megatron's dim alone in an engine-restricted space), first op most significant.
void SetCombo(const StrategySpace& space, const GroupDef& g, int combo, Strategy* s) {
  for (int j = g.num_ops - 1; j >= 0; --j) {
    const std::vector<Dim>& opts = space.dim_options(g.ops[j]);
    const int n = static_cast<int>(opts.size());
    s->set_dim(g.ops[j], opts[combo % n]);
    combo /= n;
  }
}

// Layers of each kind in one pipeline stage, and whether it holds the embedding / LM head.
struct Profile {
  std::array<double, kK> count{};
  double first = 0, last = 0;
  bool operator==(const Profile&) const = default;
};

class Solver {
 public:
  Solver(const Simulator& sim, const StrategySpace& space, Observer* observer, OracleStats* st,
         const OracleOptions& opt)
      : sim_(sim), space_(space), observer_(observer), stats_(*st), early_exit_(opt.partial_bound),
        floor_(opt.floor) {
    const Problem& p = sim.problem();
    const ModelSpec& m = p.model;
    wl_ = p.workload;
    n_ = space.num_gpus();
    // Layer kinds exactly as the layout algebra numbers them (CollectLayerKinds: first
    // appearance of each distinct LayerSpec).
    std::array<LayerKind, kK> kinds;
    num_kinds_ = CollectLayerKinds(m, &kinds);
    layer_kind_.assign(m.num_layers, -1);
    for (int i = 0; i < m.num_layers; ++i) {
      int k = -1;
      for (int j = 0; j < num_kinds_ && k < 0; ++j)
        if (kinds[j] == m.layers[i]) k = j;
      layer_kind_[i] = k;
      if (k >= 0) kind_total_[k] += 1;
    }
    for (const GroupDef& d : kGroupDefs) {
      if (!ModelHasOp(m, d.ops[0])) {
        // Operators the model lacks stay `none`, but the layout may still attribute steps to
        // them (e.g. the pre-FFN norm and residual add of MoE layers go to dense_ffn1/2): a
        // constant of the configuration, taken from the first call.
        for (int j = 0; j < d.num_ops; ++j) absent_ops_.push_back(d.ops[j]);
        continue;
      }
      Group g;
      g.def = &d;
      for (int j = 0; j < d.num_ops; ++j)
        g.size *= static_cast<int>(space.dim_options(d.ops[j]).size());
      g.has_kv = d.ops[0] == Op::kAttnQkv;
      groups_.push_back(std::move(g));
      calls_per_config_ = std::max(calls_per_config_, groups_.back().size);
    }
    // The partial bound is checked once every group smaller than the largest is complete.
    for (const Group& g : groups_)
      if (g.size < calls_per_config_) partial_at_ = std::max(partial_at_, g.size);
    ttft_matters_ = wl_.mode == Mode::kServe;
    if (space.batch_options().size() == 1 && space.batch_options()[0] == 0) {
      stats_.auto_batch = true;
      for (int64_t b = 1; b <= std::max(1, wl_.max_batch); b *= 2)
        batches_.push_back(static_cast<int>(b));
    } else {
      batches_ = space.batch_options();
    }
  }

  SearchResult Run() {
    const auto t0 = std::chrono::steady_clock::now();
    stats_.space_size = space_.Size();
    stats_.valid_count = space_.CountValid();
    EnumerateDegrees(/*count_only=*/true);
    planned_calls_ = planned_configs_ * calls_per_config_;
    EnumerateDegrees(/*count_only=*/false);
    stats_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    SearchResult r;
    r.searcher = "oracle";
    r.found = has_best_;
    if (has_best_) {
      r.best = Canonical(sim_.problem().model, best_);
      r.eval = best_eval_;
    }
    r.calls = calls_;
    r.wall_s = stats_.wall_s;
    r.interrupted = cancelled_;
    r.trace = trace_;
    r.note = fmt::format(
        "{} optimum over a space of {:.4g} strategies ({:.4g} structurally valid){}: {} degree "
        "configs ({} skipped by the partial bound), {} ComputeOpTotals calls, {} "
        "branch-and-bound nodes, {} leaves composed, "
        "max |Compose - EvaluateAtBatch| rel {:.1e}, {:.2f} s",
        cancelled_ ? "interrupted before the" : "exact", stats_.space_size, stats_.valid_count,
        stats_.auto_batch ? fmt::format("; batch head {{auto}}: enumerated powers of two 1..{}",
                                        batches_.back())
                          : "",
        stats_.degree_configs, stats_.partial_pruned, stats_.op_totals_calls, stats_.nodes, stats_.composed,
        stats_.max_verify_rel_err, stats_.wall_s);
    if (kind_mismatches_ > 0)
      r.note += fmt::format(" -- {} configs SKIPPED: layer kinds differ from the program's",
                            kind_mismatches_);
    if (stats_.max_verify_rel_err > 1e-9)
      r.note += " -- DECOMPOSITION MISMATCH: the simulator's re-evaluation differs";
    return r;
  }

 private:
  // Walks the structurally valid (pp, tp, ep) in encoded order, then batch, sp and mtp.
  void EnumerateDegrees(bool count_only) {
    const std::vector<int>& pps = space_.pp_options();
    std::vector<uint8_t> tp_ok(space_.head_size(StrategySpace::kTp)),
        ep_ok(space_.head_size(StrategySpace::kEp));
    const int num_sp = space_.head_size(StrategySpace::kSp);
    for (int ipp = 0; ipp < static_cast<int>(pps.size()); ++ipp) {
      const int pp_prefix[1] = {ipp};
      space_.Mask(pp_prefix, StrategySpace::kTp, tp_ok);
      if (!count_only) BuildProfiles(pps[ipp]);
      for (int itp = 0; itp < static_cast<int>(tp_ok.size()); ++itp) {
        if (!tp_ok[itp]) continue;
        const int tp_prefix[2] = {ipp, itp};
        space_.Mask(tp_prefix, StrategySpace::kEp, ep_ok);
        for (int iep = 0; iep < static_cast<int>(ep_ok.size()); ++iep) {
          if (!ep_ok[iep]) continue;
          const int ep = space_.ep_options()[iep];
          for (int b : batches_) {
            for (int isp = 0; isp < num_sp; ++isp) {
              // Expert slots and overlap (MoE spaces): part of the configuration, like sp.
              for (int slots : space_.slot_options()) {
                const int S = slots == 0 ? sim_.problem().model.num_experts : slots;
                if (space_.slots_head() >= 0 && S % ep != 0) continue;
                // An engine restriction's rules (StrategySpace::Mask's).
                if (!space_.SlotsAllowed(ep, slots)) continue;
                for (Overlap ov : space_.overlap_options()) {
                  if (ov != Overlap::kNone && ep <= 1) continue;
                  if (!space_.OverlapAllowed(n_ / (pps[ipp] * space_.tp_options()[itp]), ov)) continue;
                  // MTP depth (models with MTP layers): part of the configuration too.
                  for (int mtp : space_.mtp_options()) {
                    if (!space_.MtpAllowed(pps[ipp], mtp)) continue;
                    if (count_only) {
                      ++planned_configs_;
                      continue;
                    }
                    Strategy s;
                    s.pp = pps[ipp];
                    s.tp = space_.tp_options()[itp];
                    s.dp = n_ / (s.pp * s.tp);
                    s.ep = ep;
                    s.batch = b;
                    s.sp = isp == 1;
                    s.slots = slots;
                    s.overlap = ov;
                    s.mtp = mtp;
                    s.dims.fill(Dim::kNone);
                    if (!SolveConfig(s)) return;  // cancelled
                  }
                }
              }
            }
          }
        }
      }
    }
  }

  void BuildProfiles(int pp) {
    profiles_.clear();
    const int L = static_cast<int>(layer_kind_.size());
    for (int st = 0; st < pp; ++st) {
      const int lo = static_cast<int>(static_cast<long long>(st) * L / pp);
      const int hi = static_cast<int>(static_cast<long long>(st + 1) * L / pp);
      Profile pr;
      for (int i = lo; i < hi; ++i)
        if (layer_kind_[i] >= 0) pr.count[layer_kind_[i]] += 1;
      pr.first = st == 0 ? 1 : 0;
      pr.last = st == pp - 1 ? 1 : 0;
      if (std::find(profiles_.begin(), profiles_.end(), pr) == profiles_.end())
        profiles_.push_back(pr);
    }
  }

  // One simulator call done: progress, cancellation.
  bool AfterCall() {
    ++calls_;
    if (observer_ == nullptr) return true;
    observer_->OnProgress(calls_, planned_calls_, has_best_ ? best_eval_.tokens_per_s_per_gpu : 0);
    if (observer_->Cancelled()) cancelled_ = true;
    return !cancelled_;
  }

  // Solves one (pp, tp, ep, batch, sp) exactly. False when cancelled.
  bool SolveConfig(const Strategy& base) {
    ++stats_.degree_configs;
    base_ = base;
    // Per configuration: the activation factor follows the batch (and overlap, MTP) when the
    // engine holds a token budget's activations (Simulator::BudgetActivationScale).
    ProbeConstants();
    // MTP: every step emits TokensPerStep tokens per sequence (TPOT is the step over it).
    accept_ = sim_.TokensPerStep(base);
    value_factor_ = static_cast<double>(base.dp) * base.batch *
                    (wl_.mode == Mode::kPrefill ? static_cast<double>(wl_.isl) : accept_) / n_;
    Strategy s = base;
    Simulator::OpTotals ot;
    for (Group& g : groups_) g.all.assign(g.size, Option{});
    for (int i = 0; i < calls_per_config_; ++i) {
      for (Group& g : groups_) SetCombo(space_, *g.def, i % g.size, &s);
      sim_.ComputeOpTotals(s, base.batch, &ot);
      ++stats_.op_totals_calls;
      if (i == 0) {
        pipe_s_ = ot.pipe_s;
        ttft_pipe_s_ = ot.ttft_pipe_s;
        if (ot.num_kinds != num_kinds_) {
          // Not expected (same kind numbering as the layout algebra): skip the configuration
          // rather than mis-attribute it, and say so in the note.
          ++kind_mismatches_;
          return AfterCall();
        }
      }
      if (i == 0) {
        fixed_ = Option{};
        Extract(ot, absent_ops_, false, &fixed_);
      }
      for (Group& g : groups_) {
        if (i >= g.size) continue;
        g.all[i].combo = i;
        Extract(ot, std::span<const Op>(g.def->ops.data(), g.def->num_ops), g.has_kv, &g.all[i]);
      }
      if (!AfterCall()) return false;
      // Early exit: once every group but the largest is complete, bound the configuration with
      // the incomplete groups counted as 0 (every criterion is a non-negative time or byte
      // count, and the bounds are monotone in each) and skip the remaining calls if even that
      // bound is pruned (docs/dev/SEARCH.md "oracle": partial bound).
      if (early_exit_ && partial_at_ > 0 && i + 1 == partial_at_ && i + 1 < calls_per_config_ && PartialPrune(i + 1))
        return true;
    }
    for (Group& g : groups_) Prune(&g);
    // Suffix minima for the bound.
    const int G = static_cast<int>(groups_.size());
    suffix_min_.assign(G + 1, Vec{});
    suffix_act_.assign(G + 1, 0.0);
    for (int d = G - 1; d >= 0; --d) {
      Vec mn;
      mn.fill(std::numeric_limits<double>::infinity());
      double act = std::numeric_limits<double>::infinity();
      for (const Option& o : groups_[d].kept) {
        for (int j = 0; j < kNumCrit; ++j) mn[j] = std::min(mn[j], o.v[j]);
        act = std::min(act, o.act);
      }
      for (int j = 0; j < kNumCrit; ++j) suffix_min_[d][j] = suffix_min_[d + 1][j] + mn[j];
      suffix_act_[d] = std::max(suffix_act_[d + 1], act);
    }
    chosen_.assign(G, 0);
    return Dfs(0, fixed_.v, fixed_.act);
  }

  // Adds the attribution of operators `ops` (with KV when `has_kv`) to option `o`.
  void Extract(const Simulator::OpTotals& ot, std::span<const Op> ops, bool has_kv,
               Option* o) const {
    Vec& v = o->v;
    double act = o->act, ttft = 0;
    for (Op the_op : ops) {
      const int op = static_cast<int>(the_op);
      for (int k = 0; k < num_kinds_; ++k) {
        v[kLs + k] += ot.layer_s[k][op];
        v[kLa + k] += ot.layer_comm_s[k][op];
        v[kLw + k] += ot.layer_w[k][op];
        act = std::max(act, ot.layer_act[k][op]);
        ttft += kind_total_[k] * ot.ttft_layer_s[k][op];
      }
      v[kEs] += ot.embed_s[op];
      v[kEa] += ot.embed_comm_s[op];
      v[kEw] += ot.embed_w[op];
      v[kLms] += ot.lm_s[op];
      v[kLma] += ot.lm_comm_s[op];
      v[kLmw] += ot.lm_w[op];
      act = std::max({act, ot.embed_act[op], ot.lm_act[op]});
      ttft += ot.ttft_embed_s[op] + ot.ttft_lm_s[op];
    }
    if (has_kv)
      for (int k = 0; k < num_kinds_; ++k) v[kKv + k] = ot.layer_kv[k];
    if (ttft_matters_) v[kTtft] += ttft;
    o->act = act;
  }

  // Keeps the options not dominated in every criterion (equal ones: the smallest combo).
  static void Prune(Group* g) {
    g->kept.clear();
    const int n = static_cast<int>(g->all.size());
    for (int b = 0; b < n; ++b) {
      const Option& ob = g->all[b];
      bool dominated = false;
      for (int a = 0; a < n && !dominated; ++a) {
        if (a == b) continue;
        const Option& oa = g->all[a];
        bool le = oa.act <= ob.act, eq = oa.act == ob.act;
        for (int j = 0; j < kNumCrit && le; ++j) {
          le = oa.v[j] <= ob.v[j];
          eq = eq && oa.v[j] == ob.v[j];
        }
        dominated = le && (!eq || a < b);
      }
      if (!dominated) g->kept.push_back(ob);
    }
  }

  // Reserve bytes and the activation factor of base_ at its batch, read back from Compose itself.
  void ProbeConstants() {
    Simulator::Totals t;
    t.num_kinds = 1;
    t.layer_s[0] = 1;
    t.act = 1;
    const Evaluation e = sim_.Compose(base_, std::max(1, base_.batch), t);
    reserve_bytes_ = e.reserve_bytes;
    act_factor_ = e.act_bytes;
    capacity_bytes_ = e.mem_capacity_bytes;
  }

  // Worst stage time and memory of (partial) totals v with activation `act`.
  void StageBounds(const Vec& v, double act, double* t, double* mem) const {
    double worst_t = 0, worst_m = 0;
    const double pipe = base_.pp > 1 ? pipe_s_ : 0.0;
    for (const Profile& pr : profiles_) {
      const bool tbo = base_.overlap == Overlap::kTbo;
      double time = pipe + pr.first * sim_.SectionSeconds(v[kEs], v[kEa], tbo) +
                    pr.last * sim_.SectionSeconds(v[kLms], v[kLma], tbo);
      double w = pr.first * v[kEw] + pr.last * v[kLmw];
      for (int k = 0; k < num_kinds_; ++k) {
        time += pr.count[k] * sim_.SectionSeconds(v[kLs + k], v[kLa + k], tbo);
        w += pr.count[k] * (v[kLw + k] + base_.pp * v[kKv + k]);
      }
      worst_t = std::max(worst_t, time);
      worst_m = std::max(worst_m, w);
    }
    *t = worst_t;
    *mem = worst_m + act_factor_ * act + reserve_bytes_;
  }

  // True when no completion of lower-bound totals `lb` (activation lower bound `lb_act`) can be
  // valid and beat the incumbent: memory, the SLOs, the value bound.
  bool Pruned(const Vec& lb, double lb_act) const {
    double t = 0, mem = 0;
    StageBounds(lb, lb_act, &t, &mem);
    if (mem > capacity_bytes_ * (1 + kSlack)) return true;
    if (wl_.tpot_ms > 0 && wl_.mode != Mode::kPrefill &&
        base_.pp * t / accept_ * 1e3 > wl_.tpot_ms * (1 + kSlack))
      return true;
    if (wl_.ttft_ms > 0 && wl_.mode != Mode::kDecode) {
      // TTFT as Compose: the engine's request overhead on top of the steps.
      const double overhead = sim_.RequestOverheadS();
      const double ttft = wl_.mode == Mode::kPrefill
                              ? base_.pp * t + overhead
                              : lb[kTtft] + ttft_pipe_s_ * (base_.pp - 1) + overhead + t;
      if (ttft * 1e3 > wl_.ttft_ms * (1 + kSlack)) return true;
    }
    const double bar = has_best_ ? std::max(best_value_, floor_) : floor_;
    return bar > 0 && t > 0 && value_factor_ / t < bar * (1 - kSlack);
  }

  // The root bound after the first `calls` calls: the groups of size <= calls are complete (their
  // per-criterion minima over all options, which equal those over the options kept by Prune);
  // the others count 0. Valid because every criterion is >= 0 and StageBounds is monotone.
  bool PartialPrune(int calls) {
    ++stats_.partial_checks;
    Vec lb = fixed_.v;
    double act = fixed_.act;
    for (const Group& g : groups_) {
      if (g.size > calls) continue;
      Vec mn;
      mn.fill(std::numeric_limits<double>::infinity());
      double a = std::numeric_limits<double>::infinity();
      for (const Option& o : g.all) {
        for (int j = 0; j < kNumCrit; ++j) mn[j] = std::min(mn[j], o.v[j]);
        a = std::min(a, o.act);
      }
      for (int j = 0; j < kNumCrit; ++j) lb[j] += mn[j];
      act = std::max(act, a);
    }
    if (!Pruned(lb, act)) return false;
    ++stats_.partial_pruned;
    return true;
  }

  // Depth-first over the groups' kept options with partial sums `v`, activation max `act`.
  bool Dfs(int d, const Vec& v, double act) {
    ++stats_.nodes;
    Vec lb = v;
    for (int j = 0; j < kNumCrit; ++j) lb[j] += suffix_min_[d][j];
    const double lb_act = std::max(act, suffix_act_[d]);
    if (Pruned(lb, lb_act)) return true;
    if (d == static_cast<int>(groups_.size())) return Leaf(v, act);
    Vec next;
    for (int i = 0; i < static_cast<int>(groups_[d].kept.size()); ++i) {
      const Option& o = groups_[d].kept[i];
      for (int j = 0; j < kNumCrit; ++j) next[j] = v[j] + o.v[j];
      chosen_[d] = i;
      if (!Dfs(d + 1, next, std::max(act, o.act))) return false;
    }
    return true;
  }

  // A full combination that passed the filter: Compose decides.
  bool Leaf(const Vec& v, double act) {
    ++stats_.composed;
    Simulator::Totals t;
    t.num_kinds = num_kinds_;
    for (int k = 0; k < num_kinds_; ++k) {
      t.layer_s[k] = v[kLs + k];
      t.layer_comm_s[k] = v[kLa + k];
      t.layer_w[k] = v[kLw + k];
      t.layer_kv[k] = v[kKv + k];
    }
    t.act = act;
    t.embed_s = v[kEs];
    t.embed_w = v[kEw];
    t.lm_s = v[kLms];
    t.embed_comm_s = v[kEa];
    t.lm_comm_s = v[kLma];
    t.lm_w = v[kLmw];
    t.pipe_s = pipe_s_;
    // TTFT as Simulator::TtftSeconds: the prefill pass's parts plus the engine's request overhead.
    if (ttft_matters_)
      t.ttft_prefill_s = v[kTtft] + ttft_pipe_s_ * (base_.pp - 1) + sim_.RequestOverheadS();
    const Evaluation e = sim_.Compose(base_, base_.batch, t);
    if (!e.valid()) return true;
    if (has_best_ && !(e.tokens_per_s_per_gpu > best_value_)) return true;
    // New incumbent: the full strategy, re-evaluated by the simulator itself.
    Strategy s = base_;
    for (size_t g = 0; g < groups_.size(); ++g)
      SetCombo(space_, *groups_[g].def, groups_[g].kept[chosen_[g]].combo, &s);
    const Evaluation ev = sim_.EvaluateAtBatch(s, s.batch);
    const double rel =
        ev.valid() ? std::abs(ev.tokens_per_s_per_gpu - e.tokens_per_s_per_gpu) /
                         e.tokens_per_s_per_gpu
                   : std::numeric_limits<double>::infinity();
    stats_.max_verify_rel_err = std::max(stats_.max_verify_rel_err, rel);
    has_best_ = true;
    best_value_ = e.tokens_per_s_per_gpu;
    best_ = s;
    best_eval_ = ev;
    if (observer_ != nullptr) observer_->OnEvaluation(s, ev);
    const bool go_on = AfterCall();
    // Trace in simulator values; rounding can make two incumbents equal there: keep it strict.
    const double tv = Objective::Value(ev);
    while (!trace_.empty() && trace_.back().value >= tv) trace_.pop_back();
    trace_.push_back(TracePoint{calls_, tv});
    return go_on;
  }

  const Simulator& sim_;
  const StrategySpace& space_;
  Observer* observer_;
  OracleStats& stats_;
  Workload wl_;
  int n_ = 1;
  std::vector<int> layer_kind_;
  std::array<double, kK> kind_total_{};
  int num_kinds_ = 0;
  std::vector<Group> groups_;
  std::vector<Op> absent_ops_;
  int calls_per_config_ = 1;
  int partial_at_ = 0;  // calls after which PartialPrune runs (0: never)
  bool early_exit_ = true;
  double floor_ = 0;  // OracleOptions::floor
  bool ttft_matters_ = false;
  std::vector<int> batches_;
  int64_t planned_configs_ = 0, planned_calls_ = 0;

  // Per configuration.
  Strategy base_;
  std::vector<Profile> profiles_;
  double pipe_s_ = 0, ttft_pipe_s_ = 0, value_factor_ = 0, accept_ = 1;
  std::vector<Vec> suffix_min_;
  std::vector<double> suffix_act_;
  std::vector<int> chosen_;
  Option fixed_;  // attribution of the absent operators (constant in the configuration)

  double reserve_bytes_ = 0, act_factor_ = 0, capacity_bytes_ = 0;

  int64_t calls_ = 0;
  int64_t kind_mismatches_ = 0;
  bool cancelled_ = false;
  bool has_best_ = false;
  double best_value_ = 0;  // Compose's value of the incumbent (the comparisons' reference)
  Strategy best_;
  Evaluation best_eval_;
  std::vector<TracePoint> trace_;
};

class OracleSearcher : public Searcher {
 public:
  std::string name() const override { return "oracle"; }
  SearchResult Search(const Simulator& sim, const StrategySpace& space, int64_t budget,
                      uint64_t seed, Observer* observer) override {
    (void)budget;
    (void)seed;
    return SolveExact(sim, space, observer);
  }
};

}  // namespace

SearchResult SolveExact(const Simulator& sim, const StrategySpace& space, Observer* observer,
                        OracleStats* stats, const OracleOptions& options) {
  OracleStats local;
  Solver solver(sim, space, observer, stats != nullptr ? stats : &local, options);
  return solver.Run();
}

StatusOr<std::unique_ptr<Searcher>> MakeOracleSearcher(const SearcherSpec& spec) {
  if (Status st = CheckSpecKeys(spec, {}); !st.ok()) return st;
  return std::unique_ptr<Searcher>(new OracleSearcher());
}

}  // namespace l2s
