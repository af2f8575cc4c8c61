// The RL searcher (see rl.h for the algorithm and its options).
#include "search/rl.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "nn/adam.h"
#include "nn/categorical.h"
#include "nn/policy_net.h"
#include "nn/rng.h"
#include "search/joint.h"
#include "search/memory_bound.h"
#include "search/rl_features.h"
#include "search/searchers.h"

namespace l2s {

namespace {

// Adam's gradient clipping by global norm: Stable-Baselines3 PPO's default max_grad_norm = 0.5.
constexpr double kMaxGradNorm = 0.5;

// Adam over a network's parameters, gradient norm clipped at kMaxGradNorm.
StatusOr<nn::Adam> MakeAdam(std::vector<nn::ParamRef> params) {
  nn::AdamConfig acfg;
  acfg.max_grad_norm = kMaxGradNorm;
  return nn::Adam::Create(std::move(params), acfg);
}
// Floor of the advantage scale, in units of normalised reward: keeps the first updates of a
// network (when the deviation EMA is still ~0) from dividing by ~0.
constexpr double kMinAdvantageScale = 1e-3;

// SplitMix64 finaliser (Steele, Lea & Flood, OOPSLA 2014): derives independent seeds for the
// sampling stream and for each network lifetime from the search seed.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
// The constants below are ASCII tags ("net", "sampler") separating the two seed streams.
uint64_t NetSeed(uint64_t seed, int64_t index) {
  return Mix(Mix(seed) ^ Mix(0x6e6574ULL + static_cast<uint64_t>(index)));
}
uint64_t SamplerSeed(uint64_t seed) { return Mix(Mix(seed) ^ 0x73616d706c6572ULL); }

// ceil(a / b) for a >= 0, b >= 1, without the overflow of (a + b - 1) / b near INT64_MAX.
int64_t CeilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// Operator group of an op: the operators whose dims the simulator costs together (a change of one
// dim alone usually adds a resharding between them): attention's three, each FFN's pair, and the
// single operators (embed, router, lm_head).
int OpGroup(Op op) {
  switch (op) {
    case Op::kAttnQkv: case Op::kAttnCore: case Op::kAttnOut: return 1;
    case Op::kMoeFfn1: case Op::kMoeFfn2: return 3;
    case Op::kSharedFfn1: case Op::kSharedFfn2: return 4;
    case Op::kDenseFfn1: case Op::kDenseFfn2: return 5;
    default: return 10 + static_cast<int>(op);
  }
}

struct Elite {
  std::vector<int> idx;  // [num_heads] encoded strategy
  double value = 0;      // tokens/s per GPU
};

// Inverse-CDF sample from the softmax of logits[0, n) restricted to the options with allowed[i]
// (allowed == nullptr: all), u uniform in [0, 1). Returns the chosen index.
int SampleHead(const double* logits, const uint8_t* allowed, int n, double u) {
  double mx = -INFINITY;
  for (int i = 0; i < n; ++i)
    if (allowed == nullptr || allowed[i]) mx = std::max(mx, logits[i]);
  double sum = 0;
  for (int i = 0; i < n; ++i)
    if (allowed == nullptr || allowed[i]) sum += std::exp(logits[i] - mx);
  const double target = u * sum;
  double acc = 0;
  int last = -1;
  for (int i = 0; i < n; ++i) {
    if (allowed != nullptr && !allowed[i]) continue;
    acc += std::exp(logits[i] - mx);
    last = i;
    if (target < acc) return i;
  }
  return last;  // rounding: u beyond the accumulated mass
}

// One proposal kept for the PPO update.
struct Sample {
  nn::Mat obs;               // [rows, K + 1] observation it was sampled from
  std::vector<int> actions;  // [num_heads]
  std::vector<bool> mask;    // [K] allowed options, or empty (all allowed)
  nn::Vec prior;             // [K] elite prior the proposal was sampled with (fixed)
  double old_log_prob = 0;   // joint log-probability under the sampling policy
  double reward = 0;
  double advantage = 0;
};

// State of one search.
class RlRun {
 public:
  // space: obj->encoded_space(); sspace_: obj->strategy_space() (null over an encoded problem:
  // relbatch, Megatron dims, canonical keys and the compound moves then do not apply).
  RlRun(const RlOptions& o, uint64_t seed, Objective* obj, RlStats* stats,
        std::vector<std::vector<int>> start = {}, bool start_only = false)
      : o_(o), space_(obj->encoded_space()), sspace_(obj->strategy_space()), seed_(seed),
        obj_(obj), stats_(stats), rng_(SamplerSeed(seed)), start_(std::move(start)),
        start_only_(start_only) {}

  Status Run();

 private:
  void BuildObservation();
  void HeadPrior(int h, std::span<const int> prefix, double* out) const;
  int EliteTarget(const Elite& e, int h, std::span<const int> prefix) const;
  void Propose();
  void Record(const Evaluation& e);
  void RepairProposal();
  Status Update();
  void StartNetwork();
  Status MakePolicyNet(uint64_t seed);  // net_ = a per-problem PolicyNet, with its Adam
  void SetPriorStrength(double q);
  bool IsElite(const std::vector<int>& idx) const;
  const std::vector<int>& EliteKey();
  std::vector<int> CanonicalKey(const std::vector<int>& idx) const;
  void UpdateElites(double v);
  void Sweep(bool pairs);
  void CompoundMoves(const Elite& from);
  Elite SweepBase();
  double DescendFrom(std::pair<double, std::vector<int>>* move, const Elite& base, Elite* cur,
                     bool* improved, bool fit_start = true);
  std::vector<int> Config(const std::vector<int>& idx) const;
  void NoteConfig(double v);
  Elite GroupDescent(std::vector<int> start, double value, bool fit_start = true);
  Elite CoupledScans(Elite e, double base);
  bool SpScans(Elite* cur);
  bool MemoryTrades(Elite* cur);
  // pairfirst (rl.h 30.): the attention group with the expert FFN pair from a new climb point.
  Elite PairFirst(Elite e);
  std::vector<int> WithDims(std::vector<int> c, const std::vector<int>& dims) const;
  void ResetAfterDims(std::vector<int>* c) const;
  std::vector<std::pair<double, std::vector<int>>> RankOptions(const std::vector<int>& base,
                                                               const std::vector<int>& g);
  Elite PairScan(const Elite& e, const std::vector<int>& ga, const std::vector<int>& gb);
  std::vector<std::vector<int>> BetterHalf(const Elite& e, const std::vector<int>& g);
  // Heads and options of them (each option: the heads' values), as BetterHalf returns them.
  using HeadOptions = std::pair<std::vector<int>, std::vector<std::vector<int>>>;
  Elite ScanProduct(const Elite& e, const std::vector<int>& first,
                    const std::vector<HeadOptions>& rest);
  Elite ScanGroup(const std::vector<int>& from, const std::vector<int>& g, Elite best);
  std::vector<std::vector<int>> GroupOptions(const std::vector<int>& base,
                                             const std::vector<int>& g) const;
  void EvaluateCandidates(std::vector<std::vector<int>>* cands);
  double EvaluateCandidate(const std::vector<int>& c);
  int BatchOf(const std::vector<int>& key) const;
  static std::vector<int> MemoryPoint(std::vector<int> key);
  void NoteMemory(const std::vector<int>& key, const Evaluation& e);
  bool KnownMemoryMiss(const std::vector<int>& key) const;
  double Potential(const Evaluation& e) const;
  // Whether the problem has a TPOT or TTFT limit (memory near misses are ranked only then).
  bool LatencyLimited() const {
    const Workload& wl = obj_->sim().problem().workload;
    return wl.tpot_ms > 0 || wl.ttft_ms > 0;
  }
  double Closeness(const Evaluation& e) const;
  double FitBatch(std::vector<int>* c, double value, double* potential = nullptr,
                  std::vector<int>* above = nullptr, bool* near_memory = nullptr);
  void EvaluateStart();

  const RlOptions& o_;
  const EncodedSpace& space_;
  const StrategySpace* sspace_;
  uint64_t seed_;
  Objective* obj_;
  RlStats* stats_;
  nn::Rng rng_;
  std::vector<std::vector<int>> start_;  // warm start (RlSearcher::SearchFrom): evaluated first
  bool start_only_ = false;               // ... and nothing else (no search)

  int num_heads_ = 0;
  int k_ = 0;                         // total options over all heads
  std::vector<double> kappa_;         // [num_heads] elite-prior logit bonus (categorical heads)
  std::vector<double> gamma_;         // [num_heads] elite-prior logit slope (ordinal heads)
  std::vector<bool> ordinal_;         // [num_heads] head uses the ordinal prior
  std::vector<double> log2_batch_;    // [batch options] log2 of each batch option (relbatch)
  bool relbatch_ = false;             // batch head prior keeps the elite's sequences per GPU
  std::unique_ptr<nn::PolicyModel> net_;  // PolicyNet, or the shared OptionScorer (warm)
  nn::OptionScorer* scorer_ = nullptr;  // net_ when it is the shared network (warm >= 1)
  nn::Adam adam_;
  nn::MultiCategorical dist_;
  nn::Vec prior_;                     // [K] elite prior of the current proposal
  nn::Vec logits_;                    // [K] network logits + elite prior
  nn::Vec dlogits_;                   // [K] PPO gradient scratch

  nn::Mat obs_;                       // [rows, K + 1] current observation
  std::vector<int> action_;           // [num_heads] current proposal
  std::vector<bool> mask_;            // [K] allowed options of the current proposal (empty: all)
  std::vector<uint8_t> head_mask_;    // [max head size] scratch for space.Mask
  std::vector<int> canon_;            // [num_heads] canonical encoding of the current proposal
  std::vector<int> megatron_;         // [num_heads] Megatron's option of each dim head, else -1
  int64_t last_improvement_ = 0;      // call at which the best elite last improved
  int64_t last_sweep_end_ = -1;       // call at which the latest sweep ended (-1: none yet)
  int last_dim_ = 0;                  // first head after the operator dims
  std::vector<std::vector<int>> dim_groups_;  // operator-dim heads that form one group (dimgroups)
  std::vector<int> none_;             // [num_heads] option index of `none` on a dim head, else -1
  // [num_heads] none_ on the dim heads of the operators sharded over the tp group (every one but
  // the expert FFNs, which are sharded over the expert-TP group), else -1.
  std::vector<int> tp_none_;
  // [num_heads] none_ on the dim heads of the expert FFNs only (sharded over the expert-TP group,
  // which ep and pp moves change), else -1.
  std::vector<int> expert_none_;
  // [num_heads] megatron_ on the dim heads of the expert FFNs only, else -1 (epmega).
  std::vector<int> expert_megatron_;
  // The MoE block's operator-dim heads (coupled scans; empty without a strategy space or when the
  // model lacks the operators).
  struct MoeBlockHeads {
    std::vector<int> attn, router, moe, shared;
  } block_;
  std::vector<int> sweep_base_;       // the elite the current pair sweep is around
  // Per degree head (pp, tp, ep): the best valid pair-sweep candidate that moved it (value 0:
  // none).
  std::array<Elite, 3> best_moved_;
  // Sweep and descent candidates evaluated so far (Canonical key -> value, 0 when invalid, and
  // whether a smaller batch may make it valid): each is charged once per search.
  struct Known {
    double value = 0;
    bool lower_batch_may_fit = false;  // invalid for memory or an SLO
    // Invalid for the TPOT or TTFT limit: its throughput x limit / its latency (Potential).
    double potential = 0;
    // feas: invalid for memory or an SLO: 1 / max(memory / capacity, TPOT / limit, TTFT / limit),
    // higher when closer to valid (Closeness).
    double closeness = 0;
    // nearmem: invalid for memory: its bytes over the capacity and its throughput x capacity /
    // memory.
    double mem_excess = 0;
    double mem_potential = 0;
    // memtrade: its memory per GPU (bytes) when the evaluation reached the memory check (0 when
    // not), and its throughput as simulated whatever its verdict.
    double mem = 0;
    double raw = 0;
  };
  std::map<std::vector<int>, Known> known_;
  double MemoryPotential(const std::vector<int>& key, const Known& k) const;
  double ScaledSpread(const std::vector<int>& degrees) const;
  // membound: the memory of each point evaluated (Canonical key with the batch head set to -1) at
  // each batch it was evaluated at (search/memory_bound.h).
  std::map<std::vector<int>, std::vector<MemoryAtBatch>> memory_;
  // nearmem: per configuration (Config), the least and the most weight memory (weights + reserve)
  // of the points evaluated there.
  std::map<std::vector<int>, std::pair<double, double>> fixed_range_;
  // deepen: how many climbs ended in each configuration (Config: pp, tp, ep, heads after the dims).
  std::map<std::vector<int>, int> ends_;
  // diverse=1: configurations (pp, tp, ep, heads after the dims) a climb started from or ended at,
  // and the best valid point evaluated in each configuration (policy proposals included).
  std::set<std::vector<int>> climbed_;
  std::map<std::vector<int>, Elite> config_best_;
  bool to_megatron_ = false;          // this proposal's dim-head prior points at Megatron's dims
  double logp_ = 0;                   // joint log-probability of the current proposal
  bool converged_ = false;            // the latest sampling distribution had every top p >= c

  std::vector<Elite> elites_;         // sorted by value, best first, at most T
  double ref_value_ = 0;              // first valid value (reward normalisation); 0 = none yet
  double best_raw_ = 0;               // incumbent b in units of ref_value_
  std::vector<Sample> buffer_;

  // Network lifetime.
  int64_t life_start_ = 0;            // call count when the current network started
  int64_t chunk_len_ = 0;             // ceil(budget / chunks)
  int64_t life_len_ = 0;              // calls a lifetime may last (chunk_len_, or the budget)
  int64_t life_steps_ = 0;            // gradient steps planned in a full lifetime (lr schedule)
  int64_t step_ = 0;                  // gradient steps taken in this lifetime
  bool prior_on_ = false;             // the elite prior applies to the next proposal
  bool baseline_set_ = false;
  double baseline_ = 0;               // EMA of rewards
  double dev2_ = 0;                   // EMA of (reward - baseline)^2
};

Status RlRun::Run() {
  num_heads_ = space_.num_heads();
  const std::vector<int>& sizes = space_.head_sizes();
  k_ = 0;
  int max_size = 0;
  kappa_.assign(num_heads_, 0.0);
  gamma_.assign(num_heads_, 0.0);
  ordinal_.assign(num_heads_, false);
  for (int h = 0; h < num_heads_; ++h) {
    k_ += sizes[h];
    max_size = std::max(max_size, sizes[h]);
    // Degrees and batch are ordered (powers of two or divisors, ascending).
    ordinal_[h] = o_.ordinal && space_.ordinal(h);
  }
  const std::vector<int> batches = sspace_ != nullptr ? sspace_->batch_options() : std::vector<int>{};
  relbatch_ = o_.relbatch && batches.size() > 1 &&
              std::all_of(batches.begin(), batches.end(), [](int b) { return b > 0; });
  for (int b : batches) log2_batch_.push_back(b > 0 ? std::log2(static_cast<double>(b)) : 0.0);
  // Megatron's option of every operator-dim head (heads kFirstDim .. kFirstDim + ops - 1; the
  // heads after them, e.g. slots and overlap, are not dims and keep -1).
  megatron_.assign(num_heads_, -1);
  last_dim_ = sspace_ != nullptr
                  ? StrategySpace::kFirstDim + static_cast<int>(sspace_->searched_ops().size())
                  : 0;
  if (sspace_ != nullptr) {
    const auto dims = MegatronDims();
    const ModelSpec& model = obj_->sim().problem().model;
    const std::vector<Op>& ops = sspace_->searched_ops();
    for (size_t i = 0; i < ops.size(); ++i) {
      const int h = StrategySpace::kFirstDim + static_cast<int>(i);
      if (!ModelHasOp(model, ops[i])) continue;
      // The option index of Megatron's dim (the head's options may be Megatron's dim alone).
      const std::vector<Dim>& opts = sspace_->dim_options(ops[i]);
      const auto it = std::find(opts.begin(), opts.end(), dims[static_cast<int>(ops[i])]);
      const int d = it == opts.end() ? -1 : static_cast<int>(it - opts.begin());
      if (h < num_heads_ && d >= 0 && d < space_.head_size(h)) megatron_[h] = d;
    }
  }
  // Operator groups of the dim heads (attention's three, each FFN pair, the single operators):
  // heads of operators the model has and with more than one option, consecutive ops of a group.
  none_.assign(num_heads_, -1);
  tp_none_.assign(num_heads_, -1);
  expert_none_.assign(num_heads_, -1);
  expert_megatron_.assign(num_heads_, -1);
  if (sspace_ != nullptr) {
    const std::vector<Op>& ops = sspace_->searched_ops();
    int prev_group = -1;
    for (size_t i = 0; i < ops.size(); ++i) {
      const int h = StrategySpace::kFirstDim + static_cast<int>(i);
      if (h >= num_heads_ || space_.head_size(h) < 2) continue;
      for (int j = 0; j < space_.head_size(h); ++j)
        if (space_.option_name(h, j) == "none") none_[h] = j;
      if (ops[i] != Op::kMoeFfn1 && ops[i] != Op::kMoeFfn2) {
        tp_none_[h] = none_[h];
      } else {
        expert_none_[h] = none_[h];
        expert_megatron_[h] = megatron_[h];
      }
      switch (ops[i]) {
        case Op::kAttnQkv: case Op::kAttnCore: case Op::kAttnOut: block_.attn.push_back(h); break;
        case Op::kMoeRouter: block_.router.push_back(h); break;
        case Op::kMoeFfn1: case Op::kMoeFfn2: block_.moe.push_back(h); break;
        case Op::kSharedFfn1: case Op::kSharedFfn2: block_.shared.push_back(h); break;
        default: break;
      }
      const int g = OpGroup(ops[i]);
      if (g != prev_group || dim_groups_.empty()) dim_groups_.emplace_back();
      dim_groups_.back().push_back(h);
      prev_group = g;
    }
  }
  prior_.setZero(k_);
  head_mask_.assign(max_size, 1);
  action_.assign(num_heads_, 0);
  logits_.setZero(k_);
  dlogits_.setZero(k_);

  // --- warm start (issue 14, item 3): the shared network over problem-independent features ---
  if (o_.warm > 0 && sspace_ != nullptr) {
    nn::ScorerWeights given{RlFeatureCount(), o_.warm_hidden, o_.warm_weights};
    const nn::ScorerWeights* initial = !o_.warm_weights.empty() ? &given
                                       : o_.warm == 1           ? PretrainedRlWeights()
                                                                : nullptr;
    if (o_.warm == 1 && initial == nullptr)
      return Status::Unsupported(
          "rl warm=1: no pretrained weights are compiled in (run tools/pretrain_rl)");
    StatusOr<std::unique_ptr<nn::OptionScorer>> scorer =
        MakeRlScorer(obj_->sim().problem(), *sspace_, initial, NetSeed(seed_, 0));
    if (!scorer.ok()) return scorer.status();
    scorer_ = scorer->get();
    net_ = std::move(scorer).value();
  }
  // --- end of the warm-start hook ---
  if (net_ == nullptr) {
    Status st = MakePolicyNet(NetSeed(seed_, 0));
    if (!st.ok()) return st;
  } else {
    StatusOr<nn::Adam> adam = MakeAdam(net_->Params());
    if (!adam.ok()) return adam.status();
    adam_ = std::move(adam).value();
  }

  const int64_t budget = obj_->budget();
  chunk_len_ = std::max<int64_t>(CeilDiv(budget, o_.chunks), 1);
  life_len_ = o_.restarts ? chunk_len_ : std::max<int64_t>(budget, 1);
  life_steps_ = CeilDiv(life_len_, o_.rollout) * o_.epochs;
  buffer_.reserve(o_.rollout);
  stats_->networks = 1;
  EvaluateStart();
  if (start_only_) return Status::Ok();

  while (!obj_->Done()) {
    // Every iteration either starts a lifetime and then charges one call, or charges one call
    // (with repair, up to `repair` more after a missed proposal; a sweep charges its own).
    if (o_.restarts && (converged_ || obj_->calls() - life_start_ >= life_len_)) {
      if (converged_) ++stats_->early_exits;
      StartNetwork();
    }
    // The elite prior starts with lifetime `prior_from`, or, without restarts, after as many
    // chunks of calls. Each sample stores the prior it was drawn with, so a switch in the middle
    // of a rollout keeps the PPO ratios exact.
    prior_on_ = o_.prior > 0 && (stats_->networks - 1 >= o_.prior_from ||
                                 obj_->calls() >= o_.prior_from * chunk_len_);
    // Stalled (no better best for stall x a chunk of calls, at least stallmin calls or a chunk
    // when that is shorter, with the elite prior on): sweep.
    // With dimgroups, also once the budget left is half a chunk and the best has improved since
    // the latest sweep (a last local search around the best instead of a stall that never comes).
    const int64_t stall_len =
        std::max<int64_t>(static_cast<int64_t>(o_.stall * static_cast<double>(chunk_len_)),
                          std::min<int64_t>(o_.stall_min, chunk_len_));
    const bool final_sweep = o_.dimgroups && last_improvement_ != last_sweep_end_ &&
                             obj_->budget() - obj_->calls() <= chunk_len_ / 2;
    // first (18.): the first sweep comes at the latest after first x the budget.
    const bool first_due =
        o_.first > 0 && last_sweep_end_ < 0 &&
        obj_->calls() >= static_cast<int64_t>(o_.first * static_cast<double>(obj_->budget()));
    if (o_.sweep && prior_on_ && !elites_.empty() &&
        (obj_->calls() - last_improvement_ >= stall_len || final_sweep || first_due)) {
      if (last_sweep_end_ < 0) stats_->first_sweep_call = obj_->calls();
      Sweep(/*pairs=*/!final_sweep);
      last_sweep_end_ = obj_->calls();
      buffer_.clear();  // proposals of the policy before the sweep saw other elites
      if (obj_->Done()) break;
    }
    BuildObservation();
    Propose();
    const Evaluation& e = obj_->EvaluateEncoded(action_);
    ++stats_->policy_calls;
    const Verdict verdict = e.verdict;
    Record(e);
    if (o_.repair > 0 && sspace_ != nullptr &&
        (verdict == Verdict::kMemory || verdict == Verdict::kTpot || verdict == Verdict::kTtft))
      RepairProposal();
    if (static_cast<int>(buffer_.size()) >= o_.rollout) {
      Status st = Update();
      if (!st.ok()) return st;
    }
  }
  if (scorer_ != nullptr) stats_->final_weights = scorer_->Weights().values;  // warm start
  return Status::Ok();
}

// Elite-prior strength for a keep probability q in (0, 1):
//   ordinal heads: the logit falls by gamma per option away from the elite's, so mutations are
//     mostly one step; with two neighbours at e^-gamma relative weight (farther ones neglected)
//     q = 1 / (1 + 2 e^-gamma)  <=>  gamma = ln(2 q / (1 - q))  (flat, gamma = 0, for q <= 1/3);
//   categorical heads: the elite's option gets probability q against n - 1 equal others:
//     e^k / (e^k + n - 1) = q  <=>  k = ln(q (n - 1) / (1 - q)).
void RlRun::SetPriorStrength(double q) {
  for (int h = 0; h < num_heads_; ++h) {
    const int n = space_.head_size(h);
    gamma_[h] = kappa_[h] = 0;
    if (n < 2) continue;
    if (ordinal_[h]) {
      gamma_[h] = std::max(0.0, std::log(2 * q / (1 - q)));
    } else {
      kappa_[h] = std::log(q * (n - 1) / (1 - q));
    }
  }
}

Status RlRun::MakePolicyNet(uint64_t seed) {
  nn::PolicyNetConfig cfg;
  cfg.input_dim = k_ + 1;
  cfg.embed_dim = o_.embed;
  cfg.heads = o_.attn_heads;
  cfg.mlp_hidden = o_.hidden;
  cfg.head_sizes = space_.head_sizes();
  cfg.seed = seed;
  StatusOr<nn::PolicyNet> net = nn::PolicyNet::Create(cfg);
  if (!net.ok()) return net.status();
  auto made = std::make_unique<nn::PolicyNet>(std::move(net).value());
  StatusOr<nn::Adam> adam = MakeAdam(made->Params());
  if (!adam.ok()) return adam.status();
  net_ = std::move(made);
  adam_ = std::move(adam).value();
  return Status::Ok();
}

void RlRun::StartNetwork() {
  ++stats_->networks;
  // Warm start: only the first lifetime starts from the pretrained weights. Restarts of the
  // shipped policy (warm=1) run the cold searcher's per-problem network, which costs half as much
  // per call (docs/dev/RL_STUDY.md, "Pretrained policy"); with weights given by tools/pretrain_rl
  // (warm_weights) or warm=2 they draw random weights for the shared network.
  if (scorer_ != nullptr && o_.warm == 1 && o_.warm_weights.empty() &&
      MakePolicyNet(NetSeed(seed_, stats_->networks - 1)).ok()) {
    scorer_ = nullptr;
  } else if (scorer_ != nullptr) {
    scorer_->ClearInitial();
  }
  net_->Reinitialize(NetSeed(seed_, stats_->networks - 1));
  adam_.Reset();
  buffer_.clear();
  life_start_ = obj_->calls();
  step_ = 0;
  converged_ = false;
  baseline_set_ = false;
  baseline_ = 0;
  dev2_ = 0;
}

void RlRun::BuildObservation() {
  const int rows = std::max<int>(1, static_cast<int>(elites_.size()));
  obs_.setZero(rows, k_ + 1);
  for (size_t r = 0; r < elites_.size(); ++r) {
    int offset = 0;
    for (int h = 0; h < num_heads_; ++h) {
      obs_(static_cast<Eigen::Index>(r), offset + elites_[r].idx[h]) = 1.0;
      offset += space_.head_size(h);
    }
    obs_(static_cast<Eigen::Index>(r), k_) = ref_value_ > 0 ? elites_[r].value / ref_value_ : 0.0;
  }
}

// The elite's option that the prior of head h points at, given the choices before h. With
// relbatch, the batch head points at the batch that keeps the elite's sequences per GPU of a stage
// (batch / tp) under the tp chosen for this proposal, i.e. batch_e * tp / tp_e, rounded to the
// nearest option in log2: changing tp then moves along the memory ridge instead of off it.
int RlRun::EliteTarget(const Elite& e, int h, std::span<const int> prefix) const {
  if (h != StrategySpace::kBatch || !relbatch_) return e.idx[h];
  const std::vector<int>& tps = sspace_->tp_options();
  const double shift = std::log2(static_cast<double>(tps[prefix[StrategySpace::kTp]])) -
                       std::log2(static_cast<double>(tps[e.idx[StrategySpace::kTp]]));
  const double want = log2_batch_[e.idx[h]] + shift;
  int best = 0;
  for (int i = 1; i < static_cast<int>(log2_batch_.size()); ++i)
    if (std::abs(log2_batch_[i] - want) < std::abs(log2_batch_[best] - want)) best = i;
  return best;
}

// Elite prior of head h, added to the network's logits: the mean over the elites of
//   categorical heads: kappa_h for the elite's option;
//   ordinal heads:     -gamma_h * |i - elite's option| for option i.
// It depends on the observation (the elites) and the earlier choices only, never on the network,
// so the policy is pi(a_h | obs, a_<h) = softmax(net_h(obs) + prior_h(obs, a_<h)) and the network
// learns corrections to a mutation distribution around the elites. out: [head size h].
void RlRun::HeadPrior(int h, std::span<const int> prefix, double* out) const {
  const int n = space_.head_size(h);
  for (int i = 0; i < n; ++i) out[i] = 0;
  if (!prior_on_ || elites_.empty()) return;
  if (to_megatron_ && megatron_[h] >= 0) {
    out[megatron_[h]] = kappa_[h];
    return;
  }
  const double w = 1.0 / static_cast<double>(elites_.size());
  for (const Elite& e : elites_) {
    const int t = EliteTarget(e, h, prefix);
    if (ordinal_[h]) {
      for (int i = 0; i < n; ++i) out[i] -= w * gamma_[h] * std::abs(i - t);
    } else {
      out[t] += w * kappa_[h];
    }
  }
  // Jumps (ordinal heads, jump = eps > 0): mix the one-step distribution with a uniform one,
  //   p_i = (1 - eps) softmax(out)_i + eps / n,
  // so that a degree several options away (ep 1 -> 8 on 8 GPUs, where ep = 2 and 4 are worse
  // than both) keeps probability >= eps / n instead of e^(-gamma d). Still a fixed function of
  // the observation and the earlier choices; out = log p (any constant shift is harmless).
  if (ordinal_[h] && o_.jump > 0 && n > 1) {
    double mx = -INFINITY;
    for (int i = 0; i < n; ++i) mx = std::max(mx, out[i]);
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += std::exp(out[i] - mx);
    for (int i = 0; i < n; ++i)
      out[i] = std::log((1 - o_.jump) * std::exp(out[i] - mx) / sum + o_.jump / n);
  }
}

void RlRun::Propose() {
  nn::PolicyModel& net = *net_;
  // Shapes are fixed by construction ([rows >= 1, K + 1]); Forward cannot fail here.
  (void)net.Forward(obs_);
  logits_ = net.logits();
  if (prior_on_) {
    // Keep probability annealed linearly from prior0 to prior over the lifetime.
    const double t = std::min(1.0, static_cast<double>(obj_->calls() - life_start_) /
                                       static_cast<double>(life_len_));
    SetPriorStrength(o_.prior0 + (o_.prior - o_.prior0) * t);
  }
  // Group moves (megadims = rho > 0): with probability rho the prior of every operator-dim head
  // points at Megatron's dims instead of the elites', so the degrees can move with all dims
  // re-set together (an attention group whose three dims must change at once, or dims that
  // were arbitrary in a tp = 1 elite). The sample keeps the prior it was drawn with.
  to_megatron_ = prior_on_ && o_.megadims > 0 && rng_.Uniform() < o_.megadims;
  if (o_.mask) {
    mask_.assign(k_, true);
  } else {
    mask_.clear();
  }
  int offset = 0;
  for (int h = 0; h < num_heads_; ++h) {
    const int n = space_.head_size(h);
    const uint8_t* allowed = nullptr;
    if (o_.mask) {
      std::span<uint8_t> m(head_mask_.data(), n);
      space_.Mask(std::span<const int>(action_.data(), h), h, m);
      int count = 0;
      for (int i = 0; i < n; ++i) count += m[i] ? 1 : 0;
      // A head with no valid option only happens when the space has no valid strategy at all:
      // sample it unmasked (the proposal is then invalid and charged like any other).
      if (count > 0) {
        allowed = head_mask_.data();
        for (int i = 0; i < n; ++i) mask_[offset + i] = m[i] != 0;
      }
    }
    const std::span<const int> prefix(action_.data(), h);
    HeadPrior(h, prefix, prior_.data() + offset);
    for (int i = 0; i < n; ++i) logits_[offset + i] += prior_[offset + i];
    action_[h] = SampleHead(logits_.data() + offset, allowed, n, rng_.Uniform());
    offset += n;
  }
  // The joint distribution the proposal was drawn from (head h's mask depends only on the choices
  // before h, so one Set with the completed mask reproduces every head's sampling distribution).
  (void)dist_.Set(net.layout(), std::span<const double>(logits_.data(), logits_.size()), mask_);
  StatusOr<double> lp = dist_.LogProb(action_);
  logp_ = lp.ok() ? *lp : 0.0;
  converged_ = true;
  const nn::Vec& p = dist_.probs();
  offset = 0;
  for (int h = 0; h < num_heads_ && converged_; ++h) {
    double top = 0;
    for (int i = 0; i < space_.head_size(h); ++i) top = std::max(top, p[offset + i]);
    converged_ = top >= o_.converge;
    offset += space_.head_size(h);
  }
}

// The encoding an elite is stored under: with canon=1, the canonical representative of the
// proposal (Canonical in strategy/space.h: Megatron's dims on operators whose group is one GPU,
// sp off at tp = 1), which runs identically. Equivalent proposals then count as one elite (no
// elite slots filled with dim variants of one tp = 1 strategy), and the prior of a dim whose
// operator had no effect in the elite points at Megatron's choice, so a tp = 1 -> 2 move lands on
// Megatron's dims instead of on whatever dims the tp = 1 elite happened to carry.
const std::vector<int>& RlRun::EliteKey() {
  if (!o_.canonical || sspace_ == nullptr) return action_;
  const Strategy c = Canonical(obj_->sim().problem().model, sspace_->Decode(action_));
  if (!sspace_->Encode(c, &canon_)) return action_;
  return canon_;
}

// The canonical encoding of idx (the strategy it runs identically to; idx itself when it has no
// other encoding). Sweeps and descents skip a candidate whose key they have already evaluated:
// at tp = 1, e.g., the 27 attention options of a group descent are one strategy.
std::vector<int> RlRun::CanonicalKey(const std::vector<int>& idx) const {
  if (sspace_ == nullptr) return idx;
  std::vector<int> key;
  const Strategy c = Canonical(obj_->sim().problem().model, sspace_->Decode(idx));
  if (!sspace_->Encode(c, &key)) return idx;
  return key;
}

bool RlRun::IsElite(const std::vector<int>& idx) const {
  for (const Elite& el : elites_)
    if (el.idx == idx) return true;
  return false;
}

// Elite update with the valid value v of action_: insert when there is room or when better than
// the worst, never twice. Remembers the call of the latest improvement of the best (sweep).
void RlRun::UpdateElites(double v) {
  if (elites_.empty() || v > elites_.front().value) last_improvement_ = obj_->calls();
  const int t = o_.elites;
  if (static_cast<int>(elites_.size()) < t || v > elites_.back().value) {
    const std::vector<int>& key = EliteKey();
    if (!IsElite(key)) {
      if (static_cast<int>(elites_.size()) >= t) elites_.pop_back();
      Elite el{key, v};
      auto pos = std::upper_bound(elites_.begin(), elites_.end(), el,
                                  [](const Elite& a, const Elite& b) { return a.value > b.value; });
      elites_.insert(pos, std::move(el));
    }
  }
}

// Pair sweep (sweep=1): every strategy that differs from the best elite in one or two of the
// structural heads (pp, tp, ep, batch, sp and the heads after the dims: slots, overlap, ...),
// dims kept; when tp changes and batch is not one of the two, batch follows the elite's
// sequences per GPU (relbatch). Structurally invalid candidates are skipped without a call, the
// rest are evaluated in a random order (one charged call each) until the list or the budget
// ends. These proposals are not policy samples: they update the elites, not the network. With
// dimgroups the compound moves follow; pairs = false (the sweep near the end of the budget) runs
// the compound moves alone.
void RlRun::Sweep(bool pairs) {
  ++stats_->sweeps;
  if (!pairs) {
    if (sspace_ != nullptr) CompoundMoves(elites_.front());
    last_improvement_ = obj_->calls();
    return;
  }
  const Elite base = SweepBase();
  std::vector<int> heads;  // pp, tp, ep, batch, sp and the heads after the dims (slots, ...)
  for (int h = 0; h < num_heads_; ++h)
    if (space_.structural(h)) heads.push_back(h);
  std::vector<std::vector<int>> cands;
  auto add = [&](std::vector<int> c, bool batch_set) {
    const bool tp_moved = c[StrategySpace::kTp] != base.idx[StrategySpace::kTp];
    if (!batch_set && relbatch_ && tp_moved) {
      c[StrategySpace::kBatch] = EliteTarget(base, StrategySpace::kBatch, c);
    }
    if (c == base.idx || !space_.Valid(c)) return;
    // dimgroups: a tp move also with every operator dim at `none` (the weights whole on each GPU
    // of the group, tokens split: what a tp = 1 elite computes, spread over the new tp group),
    // from which the compound moves' group descents re-shard one operator group at a time.
    if (o_.dimgroups && sspace_ != nullptr && tp_moved) {
      std::vector<int> n = WithDims(c, none_);
      if (n != c && space_.Valid(n)) cands.push_back(std::move(n));
    }
    cands.push_back(std::move(c));
  };
  for (size_t a = 0; a < heads.size(); ++a) {
    const int ha = heads[a];
    for (int i = 0; i < space_.head_size(ha); ++i) {
      if (i == base.idx[ha]) continue;
      std::vector<int> c = base.idx;
      c[ha] = i;
      add(c, ha == StrategySpace::kBatch);
      for (size_t b = a + 1; b < heads.size(); ++b) {
        const int hb = heads[b];
        for (int j = 0; j < space_.head_size(hb); ++j) {
          if (j == base.idx[hb]) continue;
          std::vector<int> c2 = c;
          c2[hb] = j;
          add(c2, ha == StrategySpace::kBatch || hb == StrategySpace::kBatch);
        }
      }
    }
  }
  // The best candidate that moved each degree head (pp, tp, ep) is remembered for the compound
  // moves: it was evaluated with the batch and dims chosen for the old degrees.
  sweep_base_ = base.idx;
  for (Elite& m : best_moved_) m = Elite{};
  if (!o_.pairsweep) cands.clear();
  EvaluateCandidates(&cands);
  sweep_base_.clear();
  if (o_.dimgroups && sspace_ != nullptr) CompoundMoves(base);
  last_improvement_ = obj_->calls();
}

// Configuration of a point for diverse restarts: its degrees (pp, tp, ep) and the heads after the
// dims (slots, overlap, mtp).
std::vector<int> RlRun::Config(const std::vector<int>& idx) const {
  std::vector<int> k(idx.begin(), idx.begin() + StrategySpace::kBatch);
  k.insert(k.end(), idx.begin() + last_dim_, idx.end());
  return k;
}

// diverse=1: remembers action_ (valid, of value v) as the best point of its configuration when it
// is.
void RlRun::NoteConfig(double v) {
  if (!o_.diverse || sspace_ == nullptr) return;
  Elite& e = config_best_[Config(action_)];
  if (v > e.value) e = Elite{action_, v};
}

// The point a sweep and its compound moves start from: the best elite, unless (diverse=1) a climb
// of the compound moves already started from or ended at its configuration (pp, tp, ep and the
// heads after the dims). Then the best point evaluated so far (elites, sweep and descent
// candidates) whose configuration no climb has started from or ended at: the search restarts its
// local search in another basin (iterated local search) instead of climbing again into the trap
// it ended in.
Elite RlRun::SweepBase() {
  Elite base = elites_.front();
  if (o_.diverse && sspace_ != nullptr) {
    if (climbed_.count(Config(base.idx)) != 0) {
      Elite alt;
      auto consider = [&](const std::vector<int>& idx, double v) {
        if (v > alt.value && climbed_.find(Config(idx)) == climbed_.end()) alt = Elite{idx, v};
      };
      for (const auto& [config, e] : config_best_) consider(e.idx, e.value);
      if (alt.value > 0) {
        base = std::move(alt);
        ++stats_->diverse;
      }
    }
  }
  climbed_.insert(Config(base.idx));
  return base;
}

// Compound moves (dimgroups=1), after the pair sweep: a hill climb whose moves are a change of
// one structural head followed by a group descent from it, whatever the change's own value (a
// degree evaluated with the batch and dims of the old degrees is often worse or invalid, memory or
// SLO, although it is better with its own). The moves from the best elite: each neighbouring
// option of tp, ep and pp (batch following tp, relbatch) and each other option of the heads after
// the dims (slots, overlap, mtp); in the first pass also the pair sweep's best candidate that
// moved each of pp, tp, ep, after a descent from the best elite itself.
void RlRun::CompoundMoves(const Elite& from) {
  const int64_t climb_start = obj_->calls();
  // First improvement: as soon as a compound move improves the best elite, the next pass starts
  // from it (a descent ended there, so the pass does not descend from it again); passes end when
  // one improves nothing (a local optimum of the compound neighbourhood) or the budget does.
  std::vector<Elite> starts(best_moved_.begin(), best_moved_.end());
  bool descend_from_best = true;
  Elite cur = from;  // the climb's own best (the best elite unless it restarted elsewhere)
  int widened = 0;   // deepnow: 1 while the current pass is the widened repeat of the last one
  while (!obj_->Done()) {
    const double before = cur.value;
    if (descend_from_best) {
      Elite d = GroupDescent(cur.idx, cur.value);
      if (d.value > cur.value) cur = std::move(d);
      // pairfirst (rl.h 30.): then the attention group with the expert FFN pair at the new point.
      if (o_.pairfirst >= 1) cur = PairFirst(std::move(cur));
    }
    descend_from_best = false;
    const Elite base = cur;
    bool improved = base.value > before;
    // The pair sweep's best moves of pp, tp, ep (first pass only), then the ordered degree heads
    // one option either way and the heads after the dims (slots, overlap, mtp) to each other
    // option.
    std::vector<std::vector<int>> moves;
    for (const Elite& m : starts)
      if (m.value > 0) moves.push_back(m.idx);
    starts.clear();
    // relbatch: a move that changed tp takes the batch that keeps the base's sequences per GPU.
    auto follow_tp = [&](std::vector<int>* c) {
      if (relbatch_ && (*c)[StrategySpace::kTp] != base.idx[StrategySpace::kTp])
        (*c)[StrategySpace::kBatch] = EliteTarget(base, StrategySpace::kBatch, *c);
    };
    // dpsp (rl.h 23.): a tp move with the tp group's operators `none` has sp on (when sp is off
    // and on is structurally valid): each GPU of the group then computes its share of the
    // tokens, as the tp = 1 point it copies did, instead of every token of the group.
    auto push_dp = [&](std::vector<int> t) {
      const int sp = StrategySpace::kSp;
      if (o_.dpsp && space_.head_size(sp) == 2 && t[sp] == 0) {
        t[sp] = 1;
        if (!space_.Valid(t)) t[sp] = 0;
      }
      moves.push_back(std::move(t));
    };
    auto add_move = [&](int h, int i) {
      if (i < 0 || i >= space_.head_size(h) || i == base.idx[h]) return;
      std::vector<int> c = base.idx;
      c[h] = i;
      follow_tp(&c);
      // batchfit: a degree move that the heads after the dims make structurally invalid (ep 8 -> 1
      // with overlap sbo or redundant slots) takes each of those heads that is not moved back to
      // its first option (no redundant slots, no overlap, no MTP) until valid.
      if (o_.batchfit && h < StrategySpace::kBatch) ResetAfterDims(&c);
      // epfit (rl.h 27.): a pp or tp move that leaves no valid point for the elite's ep (the
      // experts no longer divide over the GPUs of a stage outside its tp group) also with the
      // widest lower ep that is valid and with ep = 1, each also with the expert FFNs' dims
      // `none` (deepseek-v3 prefill on 128 H100s: pp=4,tp=8,ep=32 -> pp=16,tp=8,ep=1).
      if (o_.batchfit && o_.epfit && (h == StrategySpace::kPp || h == StrategySpace::kTp) &&
          !space_.Valid(c)) {
        const int ep = StrategySpace::kEp;
        auto push_ep = [&](int j) {
          std::vector<int> t = c;
          t[ep] = j;
          ResetAfterDims(&t);
          if (!space_.Valid(t)) return false;
          std::vector<int> n = WithDims(t, expert_none_);
          if (n != t) moves.push_back(std::move(n));
          moves.push_back(std::move(t));
          return true;
        };
        for (int j = c[ep] - 1; j > 0; --j)
          if (push_ep(j)) break;
        if (c[ep] > 0) push_ep(0);
      }
      // batchfit (without the pair sweep that tried it): a tp move also with every operator dim
      // at `none` (what a tp = 1 point computes, spread over the new tp group: DP attention).
      if (o_.batchfit && h == StrategySpace::kTp) {
        std::vector<int> n = WithDims(c, none_);
        // ... and with the tp group's operators `none` but the expert FFNs' dims (over the
        // expert-TP group, which the tp move does not change) kept.
        if (o_.dpattn) {
          std::vector<int> t = WithDims(c, tp_none_);
          if (t != c && t != n) push_dp(std::move(t));
        }
        if (n != c) push_dp(std::move(n));
      }
      // epnone: an ep or pp move also with the expert FFNs' dims `none` (the expert-TP group
      // changes with ep and pp: what was sharded over it may be better whole per GPU).
      if (o_.batchfit && o_.epnone && (h == StrategySpace::kEp || h == StrategySpace::kPp)) {
        std::vector<int> t = WithDims(c, expert_none_);
        if (t != c) moves.push_back(std::move(t));
        // epmega (rl.h 31.): ... and, the other way, with Megatron's expert FFN dims (what was
        // whole per GPU may be better sharded over the new group).
        if (o_.epmega) {
          std::vector<int> m = WithDims(c, expert_megatron_);
          if (m != c && m != t) moves.push_back(std::move(m));
        }
      }
      // ppsp (rl.h 25.): a pp move also with sp's other option (sp's value, chosen at the old
      // layers per stage, can change sign with them).
      if (o_.batchfit && o_.ppsp && h == StrategySpace::kPp &&
          space_.head_size(StrategySpace::kSp) == 2) {
        std::vector<int> t = c;
        t[StrategySpace::kSp] = 1 - t[StrategySpace::kSp];
        if (space_.Valid(t)) moves.push_back(std::move(t));
      }
      moves.push_back(std::move(c));
    };
    // batchfit: every other option of each degree head (screened below, so the far ones cost a
    // few calls each); otherwise one option either way.
    for (int d : {static_cast<int>(StrategySpace::kTp), static_cast<int>(StrategySpace::kEp),
                  static_cast<int>(StrategySpace::kPp)}) {
      if (o_.batchfit) {
        for (int i = 0; i < space_.head_size(d); ++i) add_move(d, i);
      } else {
        for (int step : {-1, 1}) add_move(d, base.idx[d] + step);
      }
    }
    for (int h = last_dim_; h < num_heads_; ++h)
      for (int i = 0; i < space_.head_size(h); ++i) add_move(h, i);
    // pairmoves (with batchfit): two changes at once, one option either way of a degree head with
    // one either way of another degree head or with another option of a head after the dims
    // (pp 2 -> 1 with overlap sbo -> tbo; tp 2 -> 4 with ep 144 -> 72), screened with the rest.
    if (o_.batchfit && o_.pairmoves) {
      const int degrees[3] = {StrategySpace::kTp, StrategySpace::kEp, StrategySpace::kPp};
      for (int a = 0; a < 3; ++a) {
        const int ha = degrees[a];
        for (int sa : {-1, 1}) {
          const int ia = base.idx[ha] + sa;
          if (ia < 0 || ia >= space_.head_size(ha)) continue;
          auto add_pair = [&](int hb, int ib) {
            if (ib < 0 || ib >= space_.head_size(hb) || ib == base.idx[hb]) return;
            std::vector<int> c = base.idx;
            c[ha] = ia;
            c[hb] = ib;
            follow_tp(&c);
            // pairdp: from tp = 1 (dims that are only Canonical placeholders there), a pair move
            // of tp also with the DP-attention dims, as add_move's single tp move (dpattn).
            if (o_.pairdp && o_.dpattn && ha == StrategySpace::kTp &&
                sspace_ != nullptr && sspace_->tp_options()[base.idx[StrategySpace::kTp]] == 1) {
              std::vector<int> t = WithDims(c, tp_none_);
              if (t != c) push_dp(std::move(t));
            }
            moves.push_back(std::move(c));
          };
          for (int b = a + 1; b < 3; ++b)
            for (int sb : {-1, 1}) {
              add_pair(degrees[b], base.idx[degrees[b]] + sb);
              // triple (18.): the two degree moves with another option of a head after the dims.
              const int ib = base.idx[degrees[b]] + sb;
              if (!o_.triple || ib < 0 || ib >= space_.head_size(degrees[b])) continue;
              for (int h = last_dim_; h < num_heads_; ++h)
                for (int i = 0; i < space_.head_size(h); ++i) {
                  if (i == base.idx[h]) continue;
                  std::vector<int> c = base.idx;
                  c[ha] = ia;
                  c[degrees[b]] = ib;
                  c[h] = i;
                  follow_tp(&c);
                  moves.push_back(std::move(c));
                }
            }
          for (int h = last_dim_; h < num_heads_; ++h)
            for (int i = 0; i < space_.head_size(h); ++i) add_pair(h, i);
        }
      }
    }
    // recipemoves (rl.h 34.): the wide-EP recipe at the point's pp and at one pp option either
    // way: the experts over the widest ep a stage allows, with each overlap option and the most
    // redundant expert slots that fit (FitSlots), the rest of the point kept.
    if (o_.recipemoves && o_.batchfit && sspace_ != nullptr &&
        !sspace_->overlap_options().empty()) {
      const std::vector<int>& eps = sspace_->ep_options();
      for (int step : {-1, 0, 1}) {
        const int pp = StrategySpace::kPp;
        std::vector<int> at = base.idx;
        at[pp] += step;
        if (at[pp] < 0 || at[pp] >= space_.head_size(pp)) continue;
        const Strategy b = sspace_->Decode(at);  // dp follows pp
        for (Overlap ov : sspace_->overlap_options()) {
          if (ov == Overlap::kNone) continue;
          for (auto e = eps.rbegin(); e != eps.rend(); ++e) {  // widest first
            Strategy x = b;
            x.ep = *e;
            x.overlap = ov;
            if (!FitSlots(*sspace_, &x, /*most_redundant=*/true)) continue;
            std::vector<int> c;
            if (sspace_->Encode(x, &c) && c != base.idx) moves.push_back(std::move(c));
            break;
          }
        }
      }
    }
    // deepen: from a point where a climb already ended (the same trap again), also every option
    // of a degree head with every option of another degree head or of a head after the dims
    // (deepseek-v3 decode on 144 H800s: pp 9 -> 1 with ep 16 -> 72, a trap that no move of one
    // option either way leaves), and twice as many descents per earlier end (below).
    int prior_ends = 0;
    if (o_.deepen && o_.batchfit) {
      auto it = ends_.find(Config(base.idx));
      if (it != ends_.end()) prior_ends = it->second;
      prior_ends += widened;
    }
    if (prior_ends > 0) {
      auto add_wide = [&](int ha, int ia, int hb, int ib) {
        if (ia == base.idx[ha] || ib == base.idx[hb]) return;
        std::vector<int> c = base.idx;
        c[ha] = ia;
        c[hb] = ib;
        follow_tp(&c);
        // Two degree heads moved: the heads after the dims reset as in add_move.
        if (hb < last_dim_) ResetAfterDims(&c);
        moves.push_back(std::move(c));
      };
      const int degrees[3] = {StrategySpace::kTp, StrategySpace::kEp, StrategySpace::kPp};
      for (int a = 0; a < 3; ++a)
        for (int ia = 0; ia < space_.head_size(degrees[a]); ++ia) {
          for (int b = a + 1; b < 3; ++b)
            for (int ib = 0; ib < space_.head_size(degrees[b]); ++ib)
              add_wide(degrees[a], ia, degrees[b], ib);
        }
      for (int a = 0; a < 3; ++a)
        for (int ia = 0; ia < space_.head_size(degrees[a]); ++ia)
          for (int h = last_dim_; h < num_heads_; ++h)
            for (int ib = 0; ib < space_.head_size(h); ++ib) add_wide(degrees[a], ia, h, ib);
      // ... and three heads at once: up to two options either way of two degree heads with
      // another option of a head after the dims (the paper's 1.6T: pp 4 -> 2, tp 8 -> 32 with
      // overlap sbo -> tbo; every change of one or two of them is worse).
      for (int a = 0; a < 3; ++a)
        for (int b = a + 1; b < 3; ++b)
          for (int sa : {-2, -1, 1, 2})
            for (int sb : {-2, -1, 1, 2})
              for (int h = last_dim_; h < num_heads_; ++h)
                for (int i = 0; i < space_.head_size(h); ++i) {
                  const int ia = base.idx[degrees[a]] + sa, ib = base.idx[degrees[b]] + sb;
                  if (ia < 0 || ia >= space_.head_size(degrees[a]) || ib < 0 ||
                      ib >= space_.head_size(degrees[b]) || i == base.idx[h])
                    continue;
                  std::vector<int> c = base.idx;
                  c[degrees[a]] = ia;
                  c[degrees[b]] = ib;
                  c[h] = i;
                  follow_tp(&c);
                  moves.push_back(std::move(c));
                }
    }
    // Each move is first evaluated at its own best batch (batchfit; invalid with the old dims:
    // from Megatron's dims when those make it valid); with batchfit the descents then start from
    // the moves in decreasing order of that value, so the first improvement tends to come early.
    // nearslo: in decreasing order of max(value, potential), the potential being that of the next
    // batch up when the fit stopped there at the TPOT or TTFT limit (FitBatch): a descent can
    // re-shard a group to bring the latency under the limit and so win that batch (kimi-k2 serve
    // on 64 H200s: pp 2 -> 1 with overlap tbo, 0.55 of the optimum at batch 128, misses TPOT by
    // 4% at batch 256; its descent from batch 256 moves the MoE pair and reaches the optimum).
    std::vector<std::pair<double, std::vector<int>>> screened;
    std::vector<double> rank;
    std::vector<std::vector<int>> aboves;
    const int64_t screen_start = obj_->calls();
    for (std::vector<int>& c : moves) {
      if (improved || obj_->Done()) break;
      if (!space_.Valid(c) || CanonicalKey(c) == base.idx) continue;
      ++stats_->screened_moves;
      double pot = 0;
      std::vector<int> above;
      bool near_memory = false;
      double v = FitBatch(&c, -1, &pot, &above, &near_memory);
      if (v <= 0) {
        // Invalid with the old dims (often memory: weights whole on each GPU of a group): start
        // the descent from Megatron's dims instead when they make it valid.
        std::vector<int> m = WithDims(c, megatron_);
        if (m != c && space_.Valid(m) && !obj_->Done()) {
          double pm = 0;
          std::vector<int> am;
          bool nm = false;
          const double w = FitBatch(&m, -1, &pm, &am, &nm);
          if (w > 0) {
            c = std::move(m);
            v = w;
            pot = pm;
            above = std::move(am);
            near_memory = nm;
          }
        }
      }
      if (v > cur.value) {  // the move itself improves: the next pass descends from it
        cur = Elite{c, v};
        improved = descend_from_best = true;
        break;
      }
      screened.emplace_back(v, std::move(c));
      rank.push_back(o_.nearslo ? std::max(v, pot) : v);
      aboves.push_back(pot > v || near_memory ? std::move(above) : std::vector<int>{});
      if (!o_.batchfit) {
        std::pair<double, std::vector<int>>& m = screened.back();
        DescendFrom(&m, base, &cur, &improved);
      }
    }
    stats_->screen_calls += obj_->calls() - screen_start;
    if (o_.batchfit) {
      std::vector<size_t> order(screened.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t x, size_t y) { return rank[x] > rank[y]; });
      // Only the `descents` best-screened moves are descended from: a pass then costs a few
      // descents, and the budget goes to climbs from other configurations (diverse).
      // deepen: from a point where earlier climbs already ended (the descents of the moves
      // descended from before are known and cost nothing), twice as many per earlier end.
      const size_t limit = static_cast<size_t>(o_.descents) << std::min(prior_ends, 10);
      for (size_t i = 0; i < order.size() && i < limit; ++i) {
        if (improved || obj_->Done()) break;
        // nearslo: a move ranked by its potential descends from the batch that missed the
        // latency limit (invalid, so each group's options are judged by whether they bring it
        // under the limit), and from its fitted point when no option of that descent is valid.
        const size_t k = order[i];
        if (o_.nearslo && !aboves[k].empty()) {
          std::pair<double, std::vector<int>> up(0.0, aboves[k]);
          if (DescendFrom(&up, base, &cur, &improved, /*fit_start=*/false) <= 0)
            DescendFrom(&screened[k], base, &cur, &improved);
        } else {
          DescendFrom(&screened[k], base, &cur, &improved);
        }
      }
    }
    // spscan (rl.h 20.): a pass that improved nothing scans sp jointly with each single
    // operator's dim from the climb's point; a better point is descended from and the climb goes
    // on from there.
    if (!improved && o_.spscan) improved = SpScans(&cur);
    // memtrade (rl.h 32.): then a faster option that misses memory with another that saves it.
    if (!improved && o_.memtrade) improved = MemoryTrades(&cur);
    if (!improved) {
      // deepnow: a pass that improved nothing, from a configuration no climb ended in before, is
      // repeated once as if one had (deepen's wide moves and doubled descents; the moves and
      // descents of this pass are known and cost nothing again).
      if (o_.deepnow && o_.deepen && o_.batchfit && widened == 0 && !obj_->Done() &&
          ends_.count(Config(cur.idx)) == 0) {
        widened = 1;
        continue;
      }
      break;
    }
    widened = 0;
  }
  // diverse: the local optimum the climb ended at counts as climbed.
  climbed_.insert(Config(cur.idx));
  ++ends_[Config(cur.idx)];
  stats_->climb_calls += obj_->calls() - climb_start;
}

// One compound move of CompoundMoves: a group descent from the move (value, point; fit_start=false:
// the start's batch is not fitted first); a better end than `base` becomes the climb's point.
// Returns the descent's end value (0: no valid point).
double RlRun::DescendFrom(std::pair<double, std::vector<int>>* move, const Elite& base,
                          Elite* cur, bool* improved, bool fit_start) {
  if (obj_->Done()) return 0;
  Elite d = GroupDescent(std::move(move->second), move->first, fit_start);
  // coupled: a descent that ends below the climb's point but within neargate of it gets the
  // coupled scans of the MoE block's groups (CoupledScans), which a group-at-a-time descent
  // cannot make.
  if (o_.coupled > 0 && d.value <= base.value && d.value >= o_.near_gate * base.value &&
      !obj_->Done())
    d = CoupledScans(std::move(d), base.value);
  // pairfirst=2 (rl.h 30.): a descent that improves on the climb's point ends at a new point too.
  if (o_.pairfirst >= 2 && d.value > base.value) d = PairFirst(std::move(d));
  const double end = d.value;
  if (d.value > base.value) {
    *cur = std::move(d);
    *improved = true;
  }
  return end;
}

// Group descent (dimgroups=1): one pass of coordinate descent from `start` (of value `value`, 0
// when invalid) over the batch and sp heads, the operator groups of the dims and the heads after
// them (slots, overlap, mtp), in head order: for each, every joint option of the group (27 for
// attention, 9 per FFN pair, 3 for a single operator, every batch) with the rest kept is
// evaluated (structurally invalid ones skipped without a call), and the point moves to the best
// valid one before the next group. The simulator's costs add up over the operator groups, so at
// fixed degrees one pass re-shards each group for the degrees it is at (a tp move lands with dims
// chosen for the old tp). Every evaluation updates the elites, not the network. The value only
// rises: with a valid start and fit_start=false the result is the start itself when no option beats
// it.
Elite RlRun::GroupDescent(std::vector<int> start, double value, bool fit_start) {
  std::vector<std::vector<int>> groups;
  // batchfit: every point is evaluated at its own best batch (FitBatch), the start included, so
  // the batch is not a group of its own.
  const bool fit = o_.batchfit && space_.head_size(StrategySpace::kBatch) > 1;
  constexpr size_t kFitTop = 2;
  if (fit && fit_start) value = FitBatch(&start, value);
  for (int h : {static_cast<int>(StrategySpace::kBatch), static_cast<int>(StrategySpace::kSp)})
    if (space_.head_size(h) > 1 && !(fit && h == StrategySpace::kBatch)) groups.push_back({h});
  groups.insert(groups.end(), dim_groups_.begin(), dim_groups_.end());
  for (int h = last_dim_; h < num_heads_; ++h)
    if (space_.head_size(h) > 1) groups.push_back({h});
  std::set<std::vector<int>> seen = {CanonicalKey(start)};
  // A start that is invalid (memory, SLO) gets a second pass: the groups before the one that made
  // it valid were chosen while everything was invalid.
  const int passes = value > 0 ? 1 : 2;
  for (int pass = 0; pass < passes; ++pass) {
    for (const std::vector<int>& g : groups) {
      std::vector<int> best = start;
      std::vector<std::pair<double, std::vector<int>>> valid;  // fit: the options to fit
      // feas: while the descent has no valid point, the option of this group closest to valid
      // (when closer than the start) becomes the start of the next group.
      const bool feas = o_.feasible && !(value > 0);
      double closest = 0;
      std::vector<int> closer;
      if (feas)
        if (auto it = known_.find(CanonicalKey(start)); it != known_.end())
          closest = it->second.closeness;
      for (const std::vector<int>& c : GroupOptions(start, g)) {
        if (obj_->Done()) break;
        std::vector<int> key = CanonicalKey(c);
        if (!seen.insert(key).second) continue;
        const double v = EvaluateCandidate(c);
        if (fit && v > 0) valid.emplace_back(v, c);
        if (feas && !(v > 0))
          if (auto it = known_.find(key); it != known_.end() && it->second.closeness > closest) {
            closest = it->second.closeness;
            closer = c;
          }
        if (v > value) {
          value = v;
          best = c;
        }
      }
      if (feas && !(value > 0) && !closer.empty()) best = std::move(closer);
      // batchfit: the kFitTop best options of the group at the start's batch are moved to their
      // own best batch (an option that allows a larger batch wins only there).
      std::stable_sort(valid.begin(), valid.end(),
                       [](const auto& x, const auto& y) { return x.first > y.first; });
      for (size_t i = 0; i < valid.size() && i < kFitTop && !obj_->Done(); ++i) {
        std::vector<int> c = valid[i].second;
        const double v = FitBatch(&c, valid[i].first);
        if (v > value) {
          value = v;
          best = std::move(c);
        }
      }
      start = best;
    }
  }
  return Elite{start, value};
}

// Every other structurally valid joint option of group g (heads) from base, in option order.
std::vector<std::vector<int>> RlRun::GroupOptions(const std::vector<int>& base,
                                                  const std::vector<int>& g) const {
  std::vector<std::vector<int>> out;
  int combos = 1;
  for (int h : g) combos *= space_.head_size(h);
  for (int k = 0; k < combos; ++k) {
    std::vector<int> c = base;
    int r = k;
    for (size_t j = g.size(); j-- > 0;) {
      c[g[j]] = r % space_.head_size(g[j]);
      r /= space_.head_size(g[j]);
    }
    if (c != base && space_.Valid(c)) out.push_back(std::move(c));
  }
  return out;
}

// Every other option of group g from `from` (one charged call each, known ones free); the two
// best valid ones batch-fitted (batchfit). Returns the better of `best` and the fitted ones.
Elite RlRun::ScanGroup(const std::vector<int>& from, const std::vector<int>& g, Elite best) {
  constexpr size_t kFitTop = 2;
  std::vector<std::pair<double, std::vector<int>>> valid;
  for (std::vector<int>& c : GroupOptions(from, g)) {
    if (obj_->Done()) break;
    const double v = EvaluateCandidate(c);
    if (v > 0) valid.emplace_back(v, std::move(c));
  }
  std::stable_sort(valid.begin(), valid.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  for (size_t j = 0; j < valid.size() && j < kFitTop && !obj_->Done(); ++j) {
    std::vector<int> c = std::move(valid[j].second);
    const double v = FitBatch(&c, valid[j].first);
    if (v > best.value) best = Elite{std::move(c), v};
  }
  return best;
}

// triphalf (rl.h 28.): group g's options from e.idx (e's own included, at e.value), each alone
// (one charged call each, known ones free; an invalid one ranked by its near-SLO potential), the
// better half kept, (n + 1) / 2 of n, best first. Each option is the values of g's heads.
std::vector<std::vector<int>> RlRun::BetterHalf(const Elite& e, const std::vector<int>& g) {
  std::vector<std::pair<double, std::vector<int>>> ranked = RankOptions(e.idx, g);
  // e's own option ahead of the others of equal value.
  auto at = std::find_if(ranked.begin(), ranked.end(),
                         [&](const auto& x) { return x.first <= e.value; });
  ranked.emplace(at, e.value, e.idx);
  std::vector<std::vector<int>> out;
  for (size_t i = 0; i < (ranked.size() + 1) / 2; ++i) {
    std::vector<int> o;
    for (int h : g) o.push_back(ranked[i].second[h]);
    out.push_back(std::move(o));
  }
  return out;
}

// triphalf: every combination from e.idx of an option of the heads `first` (e's own included) with
// one of each (heads, options) of `rest` (options as BetterHalf returns them: the heads' values).
// Evaluated like ScanGroup (one charged call each, known ones free, structurally invalid ones
// skipped), the two best valid ones batch-fitted. Returns the better of e and the fitted ones.
Elite RlRun::ScanProduct(const Elite& e, const std::vector<int>& first,
                         const std::vector<HeadOptions>& rest) {
  constexpr size_t kFitTop = 2;
  std::vector<std::vector<int>> points = GroupOptions(e.idx, first);
  points.push_back(e.idx);
  for (const auto& [heads, options] : rest) {
    std::vector<std::vector<int>> next;
    for (const std::vector<int>& p : points)
      for (const std::vector<int>& o : options) {
        std::vector<int> c = p;
        for (size_t j = 0; j < heads.size(); ++j) c[heads[j]] = o[j];
        next.push_back(std::move(c));
      }
    points = std::move(next);
  }
  std::vector<std::pair<double, std::vector<int>>> valid;
  for (std::vector<int>& c : points) {
    if (obj_->Done()) break;
    if (c == e.idx || !space_.Valid(c)) continue;
    const double v = EvaluateCandidate(c);
    if (v > 0) valid.emplace_back(v, std::move(c));
  }
  std::stable_sort(valid.begin(), valid.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  Elite best = e;
  for (size_t j = 0; j < valid.size() && j < kFitTop && !obj_->Done(); ++j) {
    std::vector<int> c = std::move(valid[j].second);
    const double v = FitBatch(&c, valid[j].first);
    if (v > best.value) best = Elite{std::move(c), v};
  }
  return best;
}

// coupled (rl.h 13.): the screened joint scan of operator groups a and b from e, both ways: the
// `coupled` best other options of one group (each with the other group kept; an invalid one
// ranked by its near-SLO potential) are each combined with every option of the other group, and
// the two best valid combinations of each are batch-fitted. Returns the best point found (e when
// none is better). Costs at most |b| + coupled x |a| + |a| + coupled x |b| calls, plus the fits.
Elite RlRun::PairScan(const Elite& e, const std::vector<int>& ga, const std::vector<int>& gb) {
  Elite best = e;
  for (int dir = 0; dir < 2 && !obj_->Done(); ++dir) {
    const std::vector<int>& screened = dir == 0 ? gb : ga;
    const std::vector<int>& scanned = dir == 0 ? ga : gb;
    const std::vector<std::pair<double, std::vector<int>>> ranked = RankOptions(e.idx, screened);
    for (size_t i = 0; i < ranked.size() && i < static_cast<size_t>(o_.coupled); ++i)
      best = ScanGroup(ranked[i].second, scanned, std::move(best));
  }
  return best;
}

// coupled (rl.h 13.): the coupled scans of the MoE block from e, the end of a group descent that
// stopped below the climb's point (of value `base`): the attention group with the expert FFN
// pair (attention's output is what the dispatch sends and the expert FFN's first GEMM reads),
// with the router (which reads it too), then the router with the shared FFN pair (both read the
// post-attention hidden state; the shared output is added to the combined routed one). An
// improving scan is followed by a group descent from its point. Dense models have no such pair:
// e is returned unchanged.
Elite RlRun::CoupledScans(Elite e, double base) {
  constexpr double kTripleGate = 0.99;
  const std::vector<int>& attn = block_.attn;
  const std::vector<int>& moe = block_.moe;
  const std::vector<int>& router = block_.router;
  const std::vector<int>& shared = block_.shared;
  // A descent that ends within 1% of the climb's point: the router, MoE and shared pairs
  // jointly, every option (243 for DeepSeek's 3 x 9 x 9; deepseek-v3 decode on 144 H800s needs
  // the router `none` with both pairs `dim0/none`, each change alone or in two worse). With
  // tripfirst (rl.h 21.) before the pair scans, else after them (judged on their end).
  auto triple = [&](Elite* x) {
    if (!(x->value <= base && x->value >= kTripleGate * base) || router.empty() || moe.empty() ||
        shared.empty() || obj_->Done())
      return;
    Elite best = *x;
    if (o_.triphalf) {
      // triphalf (rl.h 28.): of each FFN pair only the better half of its options alone (the
      // current one included), with every router option: 3 x 5 x 5 for DeepSeek's 9-option pairs.
      best = ScanProduct(*x, router,
                         {{moe, BetterHalf(*x, moe)}, {shared, BetterHalf(*x, shared)}});
    } else {
      std::vector<int> g = router;
      g.insert(g.end(), moe.begin(), moe.end());
      g.insert(g.end(), shared.begin(), shared.end());
      best = ScanGroup(x->idx, g, *x);
    }
    if (best.value > x->value)
      *x = GroupDescent(std::move(best.idx), best.value, /*fit_start=*/false);
  };
  if (o_.tripfirst) triple(&e);
  for (const auto& [a, b] :
       {std::pair{&attn, &moe}, std::pair{&attn, &router}, std::pair{&router, &shared}}) {
    if (a->empty() || b->empty() || obj_->Done()) continue;
    Elite p = PairScan(e, *a, *b);
    if (p.value > e.value) e = GroupDescent(std::move(p.idx), p.value, /*fit_start=*/false);
  }
  // schedpair (rl.h 16.): each head after the dims (overlap, slots, mtp) with the MoE pair, every
  // joint option.
  if (o_.schedpair && !moe.empty()) {
    for (int h = last_dim_; h < num_heads_ && !obj_->Done(); ++h) {
      if (space_.head_size(h) < 2) continue;
      std::vector<int> g = {h};
      g.insert(g.end(), moe.begin(), moe.end());
      Elite p = ScanGroup(e.idx, g, e);
      if (p.value > e.value) e = GroupDescent(std::move(p.idx), p.value, /*fit_start=*/false);
    }
  }
  // schedattn (rl.h 24.): from DP attention (tp > 1, the attention group `none`), the overlap
  // head with the attention group, every joint option.
  bool dp_attention = o_.schedattn && sspace_ != nullptr && sspace_->overlap_head() >= 0 &&
                      !attn.empty() && sspace_->tp_options()[e.idx[StrategySpace::kTp]] > 1;
  for (int h : attn) dp_attention = dp_attention && e.idx[h] == none_[h];
  if (dp_attention && !obj_->Done()) {
    std::vector<int> g = {sspace_->overlap_head()};
    g.insert(g.end(), attn.begin(), attn.end());
    Elite p = ScanGroup(e.idx, g, e);
    if (p.value > e.value) e = GroupDescent(std::move(p.idx), p.value, /*fit_start=*/false);
  }
  if (!o_.tripfirst) triple(&e);
  return e;
}

// c with the option of `dims` on every operator-dim head where it has one (>= 0): Megatron's
// dims (megatron_), every dim `none` (none_) or the tp group's operators `none` (tp_none_).
std::vector<int> RlRun::WithDims(std::vector<int> c, const std::vector<int>& dims) const {
  for (int h = StrategySpace::kFirstDim; h < last_dim_; ++h)
    if (dims[h] >= 0) c[h] = dims[h];
  return c;
}

// Each head after the dims of *c, in order, back to its first option (no redundant slots, no
// overlap, no MTP) while *c is not structurally valid.
void RlRun::ResetAfterDims(std::vector<int>* c) const {
  for (int k = last_dim_; k < num_heads_ && !space_.Valid(*c); ++k) (*c)[k] = 0;
}

// Each option of group g from base alone (GroupOptions; one charged call each, known ones free),
// with its value, an invalid one with its near-SLO potential; best first (stable).
std::vector<std::pair<double, std::vector<int>>> RlRun::RankOptions(const std::vector<int>& base,
                                                                    const std::vector<int>& g) {
  std::vector<std::pair<double, std::vector<int>>> ranked;
  for (std::vector<int>& c : GroupOptions(base, g)) {
    if (obj_->Done()) break;
    double v = EvaluateCandidate(c);
    if (v <= 0) {
      auto it = known_.find(CanonicalKey(c));
      if (it != known_.end()) v = it->second.potential;
    }
    ranked.emplace_back(v, std::move(c));
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  return ranked;
}

// spscan (rl.h 20.): sp jointly with the dim of each single operator (the embedding, the router,
// the LM head: one-operator groups of the dims), every joint option from *cur (the two best
// batch-fitted, ScanGroup); a better point is followed by a group descent and becomes *cur.
// Returns whether *cur improved.
bool RlRun::SpScans(Elite* cur) {
  const int sp = StrategySpace::kSp;
  if (space_.head_size(sp) < 2) return false;
  bool improved = false;
  for (const std::vector<int>& g : dim_groups_) {
    if (g.size() != 1 || obj_->Done()) continue;
    Elite p = ScanGroup(cur->idx, {sp, g[0]}, *cur);
    if (p.value > cur->value) {
      *cur = GroupDescent(std::move(p.idx), p.value, /*fit_start=*/false);
      improved = true;
    }
  }
  return improved;
}

// memtrade (rl.h 32.): from the climb's point *cur, every other option of each operator's dim
// alone (one charged call each, known ones free); each that misses memory and whose throughput as
// simulated beats the point's, with the fastest valid one of another operator that saves at least
// its excess (one call each); the first better pair is descended from.
bool RlRun::MemoryTrades(Elite* cur) {
  if (sspace_ == nullptr || obj_->Done()) return false;
  auto at = known_.find(CanonicalKey(cur->idx));
  if (at == known_.end() || !(at->second.mem > 0)) return false;
  const double mem0 = at->second.mem;
  // bytes: a miss's excess over the capacity, a saver's saving below the point's memory.
  struct Option {
    int h = 0, i = 0;
    double value = 0, bytes = 0;
  };
  std::vector<Option> misses, savers;
  for (int h = StrategySpace::kFirstDim; h < last_dim_ && !obj_->Done(); ++h) {
    for (std::vector<int>& c : GroupOptions(cur->idx, {h})) {
      if (obj_->Done()) break;
      const double v = EvaluateCandidate(c);
      auto it = known_.find(CanonicalKey(c));
      if (it == known_.end() || !(it->second.mem > 0)) continue;
      const Known& k = it->second;
      if (v > cur->value) {  // a single change better after all: descend from it
        *cur = GroupDescent(std::move(c), v, /*fit_start=*/false);
        return true;
      }
      if (v > 0 && k.mem < mem0) savers.push_back({h, c[h], v, mem0 - k.mem});
      if (!(v > 0) && k.mem_excess > 0 && k.raw > cur->value)
        misses.push_back({h, c[h], k.raw, k.mem_excess});
    }
  }
  auto faster = [](const Option& x, const Option& y) { return x.value > y.value; };
  std::stable_sort(misses.begin(), misses.end(), faster);
  std::stable_sort(savers.begin(), savers.end(), faster);
  for (const Option& m : misses) {
    for (const Option& s : savers) {
      if (obj_->Done()) return false;
      if (s.h == m.h || s.bytes < m.bytes) continue;
      std::vector<int> c = cur->idx;
      c[m.h] = m.i;
      c[s.h] = s.i;
      if (!space_.Valid(c)) continue;
      const double v = EvaluateCandidate(c);
      if (v > cur->value) {
        *cur = GroupDescent(std::move(c), v, /*fit_start=*/false);
        return true;
      }
      break;  // this miss's fastest sufficient saver
    }
  }
  return false;
}

// pairfirst (rl.h 30.): from e, a point a climb pass starts at after its group descent (with
// pairfirst=2 also the end of a descent that improved on the climb's point), the best other
// option of the attention group (by the values already known: no call; a latency miss by its
// near-SLO potential) when it is within 1% of e, with every option of the expert FFN pair, and
// with pairfirst=2 then of the shared FFN pair (ScanGroup: the two best batch-fitted); a better
// point is followed by a group descent.
Elite RlRun::PairFirst(Elite e) {
  constexpr double kGate = 0.99;
  if (block_.attn.empty() || block_.moe.empty() || obj_->Done()) return e;
  const std::vector<std::vector<int>> options = GroupOptions(e.idx, block_.attn);
  const std::vector<int>* other = nullptr;
  double best = 0;
  for (const std::vector<int>& c : options) {
    if (c == e.idx) continue;
    auto it = known_.find(CanonicalKey(c));
    if (it == known_.end()) continue;
    const double v = it->second.value > 0 ? it->second.value : it->second.potential;
    if (v > best) {
      best = v;
      other = &c;
    }
  }
  if (other == nullptr || best < kGate * e.value) return e;
  Elite p = ScanGroup(*other, block_.moe, e);
  if (o_.pairfirst >= 2 && !block_.shared.empty() && !obj_->Done())
    p = ScanGroup(*other, block_.shared, std::move(p));
  if (p.value <= e.value) return e;
  return GroupDescent(std::move(p.idx), p.value, /*fit_start=*/false);
}

// The batch of an encoded point of the strategy space (0: auto or no strategy space).
int RlRun::BatchOf(const std::vector<int>& key) const {
  return sspace_ != nullptr ? sspace_->batch_options()[key[StrategySpace::kBatch]] : 0;
}

// membound: the key memory_ files a Canonical key under, the same for every batch of the point
// (the batch head set to -1).
std::vector<int> RlRun::MemoryPoint(std::vector<int> key) {
  key[StrategySpace::kBatch] = -1;
  return key;
}

// membound: remembers the memory of point `key` (a Canonical key) from its evaluation e, when e
// reached the memory check (search/memory_bound.h MemoryOf) at a fixed batch; nearmem: widens
// the range of weight memory seen at its configuration.
void RlRun::NoteMemory(const std::vector<int>& key, const Evaluation& e) {
  if ((!o_.membound && !o_.nearmem) || BatchOf(key) <= 0) return;
  std::optional<MemoryAtBatch> m = MemoryOf(e, obj_->sim().problem().workload.mode);
  if (!m) return;
  if (o_.nearmem) {
    auto [it, fresh] =
        fixed_range_.try_emplace(Config(key), m->fixed_bytes, m->fixed_bytes);
    if (!fresh) {
      it->second.first = std::min(it->second.first, m->fixed_bytes);
      it->second.second = std::max(it->second.second, m->fixed_bytes);
    }
  }
  if (!o_.membound) return;
  std::vector<MemoryAtBatch>& at = memory_[MemoryPoint(key)];
  for (const MemoryAtBatch& x : at)
    if (x.batch == m->batch) return;
  at.push_back(*m);
}

// membound: whether point `key` (a Canonical key) certainly misses memory, by the lower bound of
// search/memory_bound.h from the same point evaluated at another batch.
bool RlRun::KnownMemoryMiss(const std::vector<int>& key) const {
  const int batch = BatchOf(key);
  if (!o_.membound || batch <= 0) return false;
  auto it = memory_.find(MemoryPoint(key));
  if (it == memory_.end()) return false;
  for (const MemoryAtBatch& m : it->second)
    if (CertainMemoryMiss(m, batch)) return true;
  return false;
}

// nearslo: the potential of an evaluation that misses the TPOT or TTFT limit (NearSloPotential,
// search.h); 0 for any other verdict (memory misses are not counted, rl.h 12.).
double RlRun::Potential(const Evaluation& e) const {
  return NearSloPotential(e, obj_->sim().problem().workload);
}

// feas: how close an evaluation invalid for memory or a latency limit is to valid, 1 / the largest
// of memory / capacity, TPOT / its limit and TTFT / its limit (each > 1 when missed); 0 when
// none is known.
double RlRun::Closeness(const Evaluation& e) const {
  const Workload& wl = obj_->sim().problem().workload;
  double worst = 0;
  if (e.batch >= 1 && e.mem_capacity_bytes > 0) worst = e.mem_bytes / e.mem_capacity_bytes;
  if (wl.tpot_ms > 0 && e.tpot_s > 0) worst = std::max(worst, e.tpot_s * 1e3 / wl.tpot_ms);
  if (wl.ttft_ms > 0 && e.ttft_s > 0) worst = std::max(worst, e.ttft_s * 1e3 / wl.ttft_ms);
  return worst > 0 ? 1.0 / worst : 0.0;
}

// nearmem: the potential of a point known to miss memory when the weight memory seen at its
// degrees (nearscale: when none was seen there, ScaledSpread) spreads over more than its excess
// (0 otherwise).
double RlRun::MemoryPotential(const std::vector<int>& key, const Known& k) const {
  if (!o_.nearmem || !(k.mem_excess > 0)) return 0;
  // The spread of the dims at these degrees: the most that the weight memory of one
  // configuration with the point's pp, tp and ep has been seen to vary (its points differ in
  // their dims; slots, overlap and MTP change which weights there are, not how dims shard them).
  const std::vector<int> cfg = Config(key);
  const std::vector<int> degrees(cfg.begin(), cfg.begin() + StrategySpace::kBatch);
  double spread = 0;
  for (auto it = fixed_range_.lower_bound(degrees);
       it != fixed_range_.end() && std::equal(degrees.begin(), degrees.end(), it->first.begin());
       ++it)
    spread = std::max(spread, it->second.second - it->second.first);
  if (spread <= 0 && o_.nearscale && sspace_ != nullptr) spread = ScaledSpread(degrees);
  if (spread < k.mem_excess) return 0;
  return k.mem_potential;
}

// nearscale (rl.h 33.): the spread of the dims at `degrees` (pp, tp, ep option indices) when none
// was measured there, from the configurations measured at the same tp and, for a MoE model, the
// same expert-TP degree (a stage's GPUs / ep, the same where pp x ep is): the dims shard the same
// operators over the same groups there, and a stage holds num_layers / pp layers, so a spread seen
// at pp' is scaled by pp' / pp. The largest such estimate; 0 when none was measured.
double RlRun::ScaledSpread(const std::vector<int>& degrees) const {
  const StrategySpace& sp = *sspace_;
  const bool moe = sp.ep_options().size() > 1 || sp.ep_options().front() > 1;
  const int pp = sp.pp_options()[degrees[StrategySpace::kPp]];
  const int stage_ep = pp * sp.ep_options()[degrees[StrategySpace::kEp]];
  double spread = 0;
  for (const auto& [cfg, range] : fixed_range_) {
    if (cfg[StrategySpace::kTp] != degrees[StrategySpace::kTp] || !(range.second > range.first))
      continue;
    const int pp2 = sp.pp_options()[cfg[StrategySpace::kPp]];
    if (moe && pp2 * sp.ep_options()[cfg[StrategySpace::kEp]] != stage_ep) continue;
    spread = std::max(spread, (range.second - range.first) * pp2 / pp);
  }
  return spread;
}

// One charged call for a sweep or descent candidate; the elites are updated with a valid one.
// Returns its value (0 when invalid). A candidate equivalent (Canonical) to one evaluated before
// by a sweep or descent of this search is not evaluated again (no call): its value is known.
double RlRun::EvaluateCandidate(const std::vector<int>& c) {
  std::vector<int> key = CanonicalKey(c);
  if (auto it = known_.find(key); it != known_.end()) return it->second.value;
  if (KnownMemoryMiss(key)) {
    // membound: the same point at another batch shows that this one misses memory (no call; known
    // as an evaluated memory miss would be).
    ++stats_->memory_skips;
    known_[std::move(key)].lower_batch_may_fit = true;
    return 0;
  }
  action_ = c;
  const Evaluation& e = obj_->EvaluateEncoded(action_);
  ++stats_->proposals;
  NoteMemory(key, e);
  Known& k = known_[std::move(key)];
  if (e.batch >= 1 && e.mem_capacity_bytes > 0 && e.mem_bytes > 0) k.mem = e.mem_bytes;
  k.raw = e.tokens_per_s_per_gpu;
  if (!e.valid()) {
    ++stats_->invalid;
    k.lower_batch_may_fit = e.verdict == Verdict::kMemory || e.verdict == Verdict::kTtft ||
                            e.verdict == Verdict::kTpot;
    if (k.lower_batch_may_fit && sspace_ != nullptr) {
      k.potential = Potential(e);
      k.closeness = Closeness(e);
      if (e.verdict == Verdict::kMemory && e.batch >= 1 && e.mem_capacity_bytes > 0 &&
          e.mem_bytes > e.mem_capacity_bytes) {
        k.mem_excess = e.mem_bytes - e.mem_capacity_bytes;
        k.mem_potential = e.tokens_per_s_per_gpu * e.mem_capacity_bytes / e.mem_bytes;
      }
    }
    return 0;
  }
  k.value = e.tokens_per_s_per_gpu;
  if (ref_value_ > 0) best_raw_ = std::max(best_raw_, e.tokens_per_s_per_gpu / ref_value_);
  UpdateElites(e.tokens_per_s_per_gpu);
  NoteConfig(e.tokens_per_s_per_gpu);
  return e.tokens_per_s_per_gpu;
}

// Warm start (RlSearcher::SearchFrom): the start points are evaluated first, one charged call
// each, and the valid ones become the first elites (the first valid one sets the reference value).
// With the sweep and dimgroups, the compound moves (a group descent from the best start, then the
// hill climb of structural moves each followed by a descent) follow at once: a start is usually a
// good strategy of another instance size or of a search under another limit, whose batch, dims and
// degrees need re-fitting here. start_only: the start points (and their variants) only.
void RlRun::EvaluateStart() {
  for (const std::vector<int>& c : start_) {
    if (obj_->Done()) break;
    double v = EvaluateCandidate(c);
    // Invalid (memory or a latency limit: the dims or batch of another size): also with
    // Megatron's dims, with every dim `none` (as the compound moves do), and with half and a
    // quarter of the batch, until one is valid.
    if (v <= 0 && sspace_ != nullptr) {
      std::vector<std::vector<int>> alts;
      for (const std::vector<int>* dims : {&megatron_, &none_}) alts.push_back(WithDims(c, *dims));
      for (int down : {1, 2}) {
        std::vector<int> m = c;
        m[StrategySpace::kBatch] -= down;
        if (m[StrategySpace::kBatch] >= 0 && sspace_->batch_options()[m[StrategySpace::kBatch]] > 0)
          alts.push_back(std::move(m));
      }
      for (const std::vector<int>& m : alts) {
        if (m == c || !space_.Valid(m) || obj_->Done()) continue;
        v = EvaluateCandidate(m);
        if (v > 0) break;
      }
    }
    if (ref_value_ <= 0 && v > 0) {
      ref_value_ = v;
      best_raw_ = 1;
    }
  }
  if (start_only_) return;
  if (!start_.empty() && !elites_.empty() && o_.sweep && o_.dimgroups && sspace_ != nullptr &&
      !obj_->Done()) {
    Sweep(/*pairs=*/false);
    last_sweep_end_ = obj_->calls();
  }
}

// Batch fitting (batchfit=1): moves *c (of value `value`, < 0 when not evaluated yet) to the best
// batch near its own and returns that value. Valid: the batch goes up one option at a time while
// that improves (the memory / SLO ridge: throughput grows with the batch until a limit binds).
// Invalid for memory or an SLO: the batch goes down one option at a time, at most kFitDown
// options, until valid. A strategy is then compared with others at its own best batch instead of
// at the batch chosen for another one, which the limits often make invalid or poor
// (docs/dev/RL_STUDY.md). Each evaluation is a charged call (or a known one).
// potential (nearslo): max(the value found, the Potential of the batch the fit stopped at when
// that one missed a latency limit, or under a latency limit its MemoryPotential when it missed
// memory near enough: nearmem); above: that batch's point when that is the larger; near_memory:
// set (with above) when the batch missed memory near enough but is not ranked by it (no latency
// limit).
double RlRun::FitBatch(std::vector<int>* c, double value, double* potential,
                       std::vector<int>* above, bool* near_memory) {
  constexpr int kFitDown = 3;
  const int h = StrategySpace::kBatch;
  const int n = space_.head_size(h);
  if (value < 0) value = EvaluateCandidate(*c);
  if (potential != nullptr) *potential = value;
  if (!o_.batchfit || n < 2) return value;
  if (value > 0) {
    while ((*c)[h] + 1 < n && !obj_->Done()) {
      std::vector<int> up = *c;
      ++up[h];
      if (!space_.Valid(up)) break;
      const double v = EvaluateCandidate(up);
      if (v <= 0 && potential != nullptr) {
        const std::vector<int> key = CanonicalKey(up);
        auto it = known_.find(key);
        if (it != known_.end()) {
          // nearmem: under a latency limit a memory near miss is ranked by its potential like a
          // latency one; without one, memory bounds every fit (each fitted point's next batch
          // misses it), so it is not ranked, but a descent from the move starts at that batch.
          const double mem = MemoryPotential(key, it->second);
          const double p = std::max(it->second.potential, LatencyLimited() ? mem : 0.0);
          if (p > value) {
            *potential = p;
            if (above != nullptr) *above = up;
          } else if (near_memory != nullptr && mem > value) {
            *near_memory = true;
            if (above != nullptr) *above = up;
          }
        }
      }
      if (v <= value) break;
      value = v;
      *c = std::move(up);
    }
    return value;
  }
  const std::vector<int> start_key = CanonicalKey(*c);
  auto it = known_.find(start_key);  // a std::map entry: stays valid as evaluations add others
  if (it == known_.end() || !it->second.lower_batch_may_fit) return 0;
  if (potential != nullptr) *potential = it->second.potential;
  for (int b = (*c)[h] - 1; b >= 0 && b >= (*c)[h] - kFitDown && !obj_->Done(); --b) {
    std::vector<int> down = *c;
    down[h] = b;
    if (!space_.Valid(down)) continue;
    const double v = EvaluateCandidate(down);
    if (v > 0) {
      // nearmove (rl.h 29.): the move at its own batch (*c) missed memory near enough (17.'s
      // spread): ranked by its memory potential under a latency limit, and descended from either
      // way.
      if (o_.nearmove && potential != nullptr) {
        const double mem = MemoryPotential(start_key, it->second);
        const bool limited = LatencyLimited();
        if (mem > v && (limited || near_memory != nullptr)) {
          if (limited) {
            *potential = std::max(*potential, mem);
          } else {
            *near_memory = true;
          }
          if (above != nullptr) *above = *c;
        }
      }
      *c = std::move(down);
      if (potential != nullptr) *potential = std::max(*potential, v);
      return v;
    }
  }
  return 0;
}

// Evaluates the candidates once each (equivalent ones and the elites removed) in a random order
// (the sampling stream), one charged call each, until the list or the budget ends; they update
// the elites, not the network.
void RlRun::EvaluateCandidates(std::vector<std::vector<int>>* list) {
  std::vector<std::vector<int>>& cands = *list;
  // Once each up to equivalence (CanonicalKey), the elites excluded.
  std::set<std::vector<int>> seen;
  for (const Elite& e : elites_) seen.insert(CanonicalKey(e.idx));
  std::vector<std::vector<int>> unique;
  std::sort(cands.begin(), cands.end());
  for (std::vector<int>& c : cands)
    if (seen.insert(CanonicalKey(c)).second) unique.push_back(std::move(c));
  cands = std::move(unique);
  // Fisher-Yates with the sampling stream.
  for (size_t i = cands.size(); i > 1; --i) {
    const size_t j = std::min(i - 1, static_cast<size_t>(rng_.Uniform() * static_cast<double>(i)));
    std::swap(cands[i - 1], cands[j]);
  }
  for (const std::vector<int>& c : cands) {
    if (obj_->Done()) break;
    const double v = EvaluateCandidate(c);
    // Degree heads pp, tp, ep are heads 0, 1, 2 (StrategySpace::Head).
    for (int d = 0; d < 3 && !sweep_base_.empty(); ++d)
      if (c[d] != sweep_base_[d] && v > best_moved_[d].value) best_moved_[d] = Elite{c, v};
  }
}

// repair (18.): the policy proposal just evaluated (action_) missed memory or a latency limit;
// its batch goes down one option at a time until a valid one, at most `repair` charged calls. A
// candidate the memory bound shows to miss costs no call and does not count (it is known to miss
// as an evaluated one would be), so the repair goes on below it. The valid point updates the
// elites, not the network. Like a sweep's candidates, each one evaluated leaves action_ at it;
// the next proposal overwrites it.
void RlRun::RepairProposal() {
  const int h = StrategySpace::kBatch;
  std::vector<int> start = action_;  // EvaluateCandidate overwrites action_
  int64_t charged = 0;
  // Evaluates c (charged unless known) and says whether it is valid.
  auto valid = [&](const std::vector<int>& c) {
    const int64_t before = obj_->calls();
    const double v = EvaluateCandidate(c);
    charged += obj_->calls() - before;
    return v > 0;
  };
  // megarepair (rl.h 22.): a whole lifetime's worth of calls without a valid point: the missed
  // proposal with Megatron's dims first (every weight sharded), then its lower batches.
  if (o_.megarepair && elites_.empty() && obj_->calls() >= chunk_len_ && !obj_->Done()) {
    std::vector<int> m = WithDims(start, megatron_);
    if (m != start && space_.Valid(m)) {
      if (valid(m)) {
        stats_->repairs += charged;
        return;
      }
      start = std::move(m);
    }
  }
  for (int b = start[h] - 1; b >= 0 && charged < o_.repair && !obj_->Done(); --b) {
    std::vector<int> down = start;
    down[h] = b;
    if (!space_.Valid(down)) continue;
    if (valid(down)) break;
  }
  stats_->repairs += charged;
}

void RlRun::Record(const Evaluation& e) {
  ++stats_->proposals;
  NoteMemory(CanonicalKey(action_), e);
  double reward = o_.invalid_reward;
  if (e.valid()) {
    const double v = e.tokens_per_s_per_gpu;
    if (ref_value_ <= 0) {
      ref_value_ = v > 0 ? v : 1.0;
      best_raw_ = v / ref_value_;
    }
    const double raw = v / ref_value_;
    const double beta = o_.shaping ? o_.beta : 0.0;
    reward = o_.alpha * raw + beta * (raw - best_raw_);
    best_raw_ = std::max(best_raw_, raw);
    UpdateElites(v);
    NoteConfig(v);
  } else {
    ++stats_->invalid;
    if (e.verdict == Verdict::kStructure) ++stats_->structural;
  }
  Sample s;
  s.obs = obs_;
  s.actions = action_;
  s.mask = mask_;
  s.prior = prior_;
  s.old_log_prob = logp_;
  s.reward = reward;
  buffer_.push_back(std::move(s));
}

// PPO clipped surrogate with entropy bonus (Schulman et al. 2017, eq. 7 and 9; no value term),
// the same loss as nn::PpoLossAndGrad but over the policy's logits network + prior:
//   L = -(1/N) sum_i min(r_i A_i, clip(r_i, 1 - eps, 1 + eps) A_i) - c_ent (1/N) sum_i H_i,
// r_i = exp(log pi(a_i | o_i) - old_log_prob_i). The prior is constant in the parameters, so
// dL/dlogits flows into the network unchanged.
Status RlRun::Update() {
  const double n = static_cast<double>(buffer_.size());
  if (!baseline_set_) {
    // First batch of a lifetime: centre on its own mean.
    double mean = 0;
    for (const Sample& s : buffer_) mean += s.reward / n;
    baseline_ = mean;
    dev2_ = 0;
    for (const Sample& s : buffer_) dev2_ += (s.reward - mean) * (s.reward - mean) / n;
    baseline_set_ = true;
  }
  const double scale = std::max(std::sqrt(dev2_), kMinAdvantageScale);
  for (Sample& s : buffer_) s.advantage = (s.reward - baseline_) / scale;
  // Then fold the batch into the running statistics (the advantages above used the past only).
  for (const Sample& s : buffer_) {
    const double d = s.reward - baseline_;
    baseline_ += (1.0 - o_.decay) * d;
    dev2_ = o_.decay * dev2_ + (1.0 - o_.decay) * d * d;
  }
  nn::PolicyModel& net = *net_;
  const double inv_n = 1.0 / n;
  for (int ep = 0; ep < o_.epochs; ++ep) {
    for (const Sample& s : buffer_) {
      // Shapes fixed by construction; Forward cannot fail.
      (void)net.Forward(s.obs);
      logits_ = net.logits() + s.prior;
      Status st = dist_.Set(net.layout(), std::span<const double>(logits_.data(), logits_.size()),
                            s.mask);
      if (!st.ok()) return st;
      StatusOr<double> logp = dist_.LogProb(s.actions);
      if (!logp.ok()) return logp.status();
      const double r = std::exp(*logp - s.old_log_prob);
      const double a = s.advantage;
      const double unclipped = r * a;
      const double clipped = std::clamp(r, 1.0 - o_.clip, 1.0 + o_.clip) * a;
      const double dloss_dlogp = unclipped <= clipped ? -a * r * inv_n : 0.0;
      dlogits_.setZero();
      std::span<double> dl(dlogits_.data(), dlogits_.size());
      dist_.AddLogProbGrad(s.actions, dloss_dlogp, dl);
      if (o_.entropy != 0) dist_.AddEntropyGrad(-o_.entropy * inv_n, dl);
      st = net.Backward(dlogits_);
      if (!st.ok()) return st;
    }
    adam_.Step(nn::CosineLr(o_.lr, 0.0, step_, life_steps_));
    net.ZeroGrad();
    ++step_;
  }
  ++stats_->updates;
  buffer_.clear();
  return Status::Ok();
}

}  // namespace

RlOptions ColdRlOptions() {
  RlOptions o;
  o.warm = 0;
  o.prior_from = 0;
  o.first = 0.25;
  o.epfit = true;
  o.triphalf = true;
  return o;
}

StatusOr<RlOptions> ParseRlOptions(const SearcherSpec& spec) {
  Status keys = CheckSpecKeys(spec, {"elites", "embed", "hidden", "attn", "mask", "shaping",
                                     "restarts", "chunks", "converge", "alpha", "beta", "invalid",
                                     "lr", "rollout", "epochs", "clip", "ent", "decay", "prior",
                                     "prior_from", "ordinal", "relbatch", "prior0", "canon",
                                     "jump", "megadims", "sweep", "dimgroups", "stall",
                                     "batchfit", "diverse", "pairsweep", "pairmoves", "descents",
                                     "nearslo", "dpattn", "stallmin", "warm", "coupled",
                                     "neargate", "epnone", "deepen", "deepnow", "membound", "schedpair",
                                     "feas", "nearmem", "pairdp", "repair", "triple", "first",
                                     "spscan", "tripfirst", "megarepair", "dpsp", "schedattn",
                                     "ppsp", "templates", "epfit", "triphalf", "nearmove",
                                     "pairfirst", "epmega", "memtrade", "nearscale",
                                     "recipemoves"});
  if (!keys.ok()) return keys;
  // The defaults: the cold searcher's (rl.h 19.) when the spec says warm=0.
  const RlOptions d = spec.Int("warm", RlOptions{}.warm) == 0 ? ColdRlOptions() : RlOptions{};
  RlOptions o;
  const int64_t elites = spec.Int("elites", d.elites);
  const int64_t embed = spec.Int("embed", d.embed);
  const int64_t hidden = spec.Int("hidden", d.hidden);
  const int64_t attn = spec.Int("attn", d.attn_heads);
  const int64_t chunks = spec.Int("chunks", d.chunks);
  const int64_t rollout = spec.Int("rollout", d.rollout);
  const int64_t epochs = spec.Int("epochs", d.epochs);
  o.mask = spec.Bool("mask", d.mask);
  o.shaping = spec.Bool("shaping", d.shaping);
  o.restarts = spec.Bool("restarts", d.restarts);
  o.converge = spec.Double("converge", d.converge);
  o.alpha = spec.Double("alpha", d.alpha);
  o.beta = spec.Double("beta", d.beta);
  o.invalid_reward = spec.Double("invalid", d.invalid_reward);
  o.lr = spec.Double("lr", d.lr);
  o.clip = spec.Double("clip", d.clip);
  o.entropy = spec.Double("ent", d.entropy);
  o.decay = spec.Double("decay", d.decay);
  o.prior = spec.Double("prior", d.prior);
  o.prior0 = spec.Double("prior0", o.prior);
  o.ordinal = spec.Bool("ordinal", d.ordinal);
  o.relbatch = spec.Bool("relbatch", d.relbatch);
  o.canonical = spec.Bool("canon", d.canonical);
  o.jump = spec.Double("jump", d.jump);
  o.megadims = spec.Double("megadims", d.megadims);
  o.sweep = spec.Bool("sweep", d.sweep);
  o.dimgroups = spec.Bool("dimgroups", d.dimgroups);
  o.stall = spec.Double("stall", d.stall);
  o.batchfit = spec.Bool("batchfit", d.batchfit);
  o.diverse = spec.Bool("diverse", d.diverse);
  o.pairsweep = spec.Bool("pairsweep", d.pairsweep);
  o.pairmoves = spec.Bool("pairmoves", d.pairmoves);
  o.nearslo = spec.Bool("nearslo", d.nearslo);
  o.dpattn = spec.Bool("dpattn", d.dpattn);
  const int64_t prior_from = spec.Int("prior_from", d.prior_from);
  const int64_t descents = spec.Int("descents", d.descents);
  const int64_t stall_min = spec.Int("stallmin", d.stall_min);
  const int64_t warm = spec.Int("warm", d.warm);
  const int64_t coupled = spec.Int("coupled", d.coupled);
  o.near_gate = spec.Double("neargate", d.near_gate);
  o.epnone = spec.Bool("epnone", d.epnone);
  o.epfit = spec.Bool("epfit", d.epfit);
  o.triphalf = spec.Bool("triphalf", d.triphalf);
  o.nearmove = spec.Bool("nearmove", d.nearmove);
  const int64_t pairfirst = spec.Int("pairfirst", d.pairfirst);
  o.epmega = spec.Bool("epmega", d.epmega);
  o.memtrade = spec.Bool("memtrade", d.memtrade);
  o.nearscale = spec.Bool("nearscale", d.nearscale);
  o.recipemoves = spec.Bool("recipemoves", d.recipemoves);
  o.deepen = spec.Bool("deepen", d.deepen);
  o.deepnow = spec.Bool("deepnow", d.deepnow);
  o.membound = spec.Bool("membound", d.membound);
  o.schedpair = spec.Bool("schedpair", d.schedpair);
  o.feasible = spec.Bool("feas", d.feasible);
  o.nearmem = spec.Bool("nearmem", d.nearmem);
  o.pairdp = spec.Bool("pairdp", d.pairdp);
  const int64_t repair = spec.Int("repair", d.repair);
  o.triple = spec.Bool("triple", d.triple);
  o.first = spec.Double("first", d.first);
  o.spscan = spec.Bool("spscan", d.spscan);
  o.tripfirst = spec.Bool("tripfirst", d.tripfirst);
  o.megarepair = spec.Bool("megarepair", d.megarepair);
  o.dpsp = spec.Bool("dpsp", d.dpsp);
  o.schedattn = spec.Bool("schedattn", d.schedattn);
  o.ppsp = spec.Bool("ppsp", d.ppsp);
  o.templates = spec.Bool("templates", d.templates);
  Status values = SpecValueError(spec);
  if (!values.ok()) return values;
  auto range = [&](const char* key, int64_t v, int64_t lo, int64_t hi) -> Status {
    if (v < lo || v > hi)
      return Status::InvalidArgument(
          fmt::format("searcher 'rl': option {}={} is out of range [{}, {}]", key, v, lo, hi));
    return Status::Ok();
  };
  // Upper limits keep the network and the observation within sane sizes (a 4096-wide network
  // would take hours for a 4,000-call search).
  for (Status st : {range("elites", elites, 1, 256), range("embed", embed, 1, 4096),
                    range("hidden", hidden, 1, 4096), range("attn", attn, 1, 4096),
                    range("chunks", chunks, 1, 1000), range("rollout", rollout, 1, 4096),
                    range("epochs", epochs, 1, 100),
                    range("prior_from", prior_from, 0, 1000),
                    range("descents", descents, 1, 1000),
                    range("stallmin", stall_min, 1, int64_t{1} << 40), range("warm", warm, 0, 2),
                    range("coupled", coupled, 0, 1000), range("repair", repair, 0, 16),
                    range("pairfirst", pairfirst, 0, 2)}) {
    if (!st.ok()) return st;
  }
  o.elites = static_cast<int>(elites);
  o.embed = static_cast<int>(embed);
  o.hidden = static_cast<int>(hidden);
  o.attn_heads = static_cast<int>(attn);
  o.chunks = static_cast<int>(chunks);
  o.rollout = static_cast<int>(rollout);
  o.epochs = static_cast<int>(epochs);
  o.prior_from = static_cast<int>(prior_from);
  o.descents = static_cast<int>(descents);
  o.stall_min = stall_min;
  o.warm = static_cast<int>(warm);
  o.coupled = static_cast<int>(coupled);
  o.repair = static_cast<int>(repair);
  o.pairfirst = static_cast<int>(pairfirst);
  if (o.embed % o.attn_heads != 0)
    return Status::InvalidArgument(fmt::format(
        "searcher 'rl': attn={} must divide embed={}", o.attn_heads, o.embed));
  auto positive = [](const char* key, double v) -> Status {
    if (!(v > 0))
      return Status::InvalidArgument(fmt::format("searcher 'rl': option {}={} must be > 0", key, v));
    return Status::Ok();
  };
  for (Status st : {positive("alpha", o.alpha), positive("lr", o.lr), positive("clip", o.clip)}) {
    if (!st.ok()) return st;
  }
  if (!(o.converge > 0 && o.converge <= 1))
    return Status::InvalidArgument(
        fmt::format("searcher 'rl': option converge={} must be in (0, 1]", o.converge));
  if (!(o.decay >= 0 && o.decay < 1))
    return Status::InvalidArgument(
        fmt::format("searcher 'rl': option decay={} must be in [0, 1)", o.decay));
  if (!(o.prior >= 0 && o.prior < 1))
    return Status::InvalidArgument(
        fmt::format("searcher 'rl': option prior={} must be in [0, 1)", o.prior));
  if (o.prior > 0 && !(o.prior0 > 0 && o.prior0 < 1))
    return Status::InvalidArgument(
        fmt::format("searcher 'rl': option prior0={} must be in (0, 1)", o.prior0));
  if (!(o.megadims >= 0 && o.megadims <= 1))
    return Status::InvalidArgument(
        fmt::format("searcher 'rl': option megadims={} must be in [0, 1]", o.megadims));
  if (!(o.jump >= 0 && o.jump < 1))
    return Status::InvalidArgument(
        fmt::format("searcher 'rl': option jump={} must be in [0, 1)", o.jump));
  if (!(o.near_gate >= 0 && o.near_gate <= 1))
    return Status::InvalidArgument(
        fmt::format("searcher 'rl': option neargate={} must be in [0, 1]", o.near_gate));
  if (!(o.first >= 0 && o.first <= 1))
    return Status::InvalidArgument(
        fmt::format("searcher 'rl': option first={} must be in [0, 1]", o.first));
  if (!(o.stall > 0 && o.stall <= 100))
    return Status::InvalidArgument(
        fmt::format("searcher 'rl': option stall={} must be in (0, 100]", o.stall));
  if (o.beta < 0 || o.entropy < 0)
    return Status::InvalidArgument("searcher 'rl': options beta and ent must be >= 0");
  if (o.warm == 1 && PretrainedRlWeights() == nullptr)
    return Status::InvalidArgument(
        "searcher 'rl': warm=1 needs pretrained weights and none are compiled in (tools/pretrain_rl)");
  if (o.invalid_reward >= 0)
    return Status::InvalidArgument(fmt::format(
        "searcher 'rl': option invalid={} must be negative", o.invalid_reward));
  return o;
}

std::string RlSpecText(const RlOptions& o) {
  // warm is written only when it differs from the default (rl.h), so the default searcher's name
  // is unchanged and the cold searcher's ends in ",warm=0)".
  return fmt::format(
      "rl(elites={},embed={},hidden={},attn={},mask={},shaping={},restarts={},chunks={},"
      "converge={},alpha={},beta={},invalid={},lr={},rollout={},epochs={},clip={},ent={},"
      "decay={},prior={},prior0={},prior_from={},ordinal={},relbatch={},canon={},jump={},"
      "megadims={},sweep={},dimgroups={},stall={},batchfit={},diverse={},pairsweep={},"
      "pairmoves={},descents={},nearslo={},dpattn={},stallmin={},coupled={},neargate={},epnone={},deepen={},deepnow={},membound={},schedpair={},"
      "feas={},nearmem={},pairdp={},repair={},triple={},first={},spscan={},tripfirst={},"
      "megarepair={},dpsp={},schedattn={},ppsp={},templates={},epfit={},triphalf={},"
      "nearmove={},pairfirst={},epmega={},memtrade={},nearscale={},recipemoves={}",
      o.elites, o.embed, o.hidden, o.attn_heads, o.mask ? 1 : 0, o.shaping ? 1 : 0,
      o.restarts ? 1 : 0, o.chunks, o.converge, o.alpha, o.beta, o.invalid_reward, o.lr,
      o.rollout, o.epochs, o.clip, o.entropy, o.decay, o.prior, o.prior0, o.prior_from,
      o.ordinal ? 1 : 0, o.relbatch ? 1 : 0, o.canonical ? 1 : 0, o.jump, o.megadims,
      o.sweep ? 1 : 0, o.dimgroups ? 1 : 0, o.stall, o.batchfit ? 1 : 0,
      o.diverse ? 1 : 0, o.pairsweep ? 1 : 0, o.pairmoves ? 1 : 0,
      o.descents, o.nearslo ? 1 : 0, o.dpattn ? 1 : 0, o.stall_min, o.coupled, o.near_gate, o.epnone ? 1 : 0,
      o.deepen ? 1 : 0, o.deepnow ? 1 : 0, o.membound ? 1 : 0, o.schedpair ? 1 : 0,
      o.feasible ? 1 : 0, o.nearmem ? 1 : 0, o.pairdp ? 1 : 0, o.repair, o.triple ? 1 : 0,
      o.first, o.spscan ? 1 : 0, o.tripfirst ? 1 : 0, o.megarepair ? 1 : 0,
      o.dpsp ? 1 : 0, o.schedattn ? 1 : 0, o.ppsp ? 1 : 0, o.templates ? 1 : 0, o.epfit ? 1 : 0,
      o.triphalf ? 1 : 0, o.nearmove ? 1 : 0, o.pairfirst, o.epmega ? 1 : 0,
      o.memtrade ? 1 : 0, o.nearscale ? 1 : 0, o.recipemoves ? 1 : 0) +
         (o.warm != RlOptions{}.warm ? fmt::format(",warm={})", o.warm) : std::string(")"));
}

SearchResult RlSearcher::Search(const Simulator& sim, const StrategySpace& space, int64_t budget,
                                uint64_t seed, Observer* observer) {
  // templates (rl.h 26.): the usual serving shapes as start points, the compound moves from them
  // at once (EvaluateStart); a prefill instance's usual shapes are others.
  if (options_.templates && sim.problem().workload.mode != Mode::kPrefill)
    return SearchFrom(sim, space, budget, seed, observer,
                      ServingTemplates(space, sim.problem().model,
                                       sim.problem().cluster.gpus_per_domain));
  Objective obj(sim, space, budget, observer);
  return Run(obj, seed);
}

SearchResult RlSearcher::SearchFrom(const Simulator& sim, const StrategySpace& space,
                                    int64_t budget, uint64_t seed, Observer* observer,
                                    std::span<const Strategy> start, bool start_only) {
  Objective obj(sim, space, budget, observer);
  std::vector<std::vector<int>> idx;
  for (const Strategy& s : start)
    if (std::vector<int> i; space.Encode(s, &i)) idx.push_back(std::move(i));
  return Run(obj, seed, std::move(idx), start_only);
}

RoleRun RlRoleRun(const RlOptions& options) {
  return [options](const Simulator& sim, const StrategySpace& space, int64_t budget,
                   uint64_t seed, std::span<const Strategy> start, bool start_only,
                   Observer* observer) {
    // A warm-started search has elites from its first call: the elite prior applies at once.
    // One from nothing keeps a first lifetime without it, also under the cold searcher's
    // prior_from = 0 (rl.h 19.: measured on the disaggregated suite, docs/dev/RL_STUDY.md eleventh
    // pass, the elite prior from the first call costs cold role searches runs there, 4,000 calls
    // 77 -> 68 of 90 at 0.99).
    RlOptions o = options;
    o.prior_from = start.empty() ? std::max(o.prior_from, 1) : 0;
    // The options of rl.h 18. are off in role searches: measured on the disaggregated suite
    // (docs/dev/RL_STUDY.md, ninth pass) they cost runs there (4,000 calls: 78 -> 75 of 90 runs at
    // 0.99, cold 77 -> 66); repair alone accounts for 2 of the 3 (cold 5 of the 11), all of it in
    // the searches that start from nothing.
    o.repair = 0;
    o.triple = false;
    o.first = 0;
    // Likewise the options of rl.h 23. and 24. (docs/dev/RL_STUDY.md, twelfth pass: 4,000 calls cold
    // 77 -> 76 of 90 runs at 0.99, warm 1,000 calls 50 -> 49 at 0.98).
    o.dpsp = false;
    o.schedattn = false;
    // And 27. (thirteenth pass: 1,000 calls cold 53 -> 51 of 90 runs at 0.98, two seeds of
    // deepseek-v3 on 256 H100s; 4,000 calls unchanged). 28. refines the triple scan, off here.
    o.epfit = false;
    // And 34. (twentieth pass: on in role searches the disaggregated suite at 4,000 calls had
    // 87 / 83 of 90 runs at 0.99, pretrained / cold, instead of 89 / 90: kimi-k2 on 256 H100s
    // 1,253.99 -> 1,224.18 in seven cold seeds; the fifteenth pass's eight at 1,000 calls 59 / 60
    // -> 56 / 59 at 0.98, llama-4-maverick on 64 H100s; docs/dev/RL_STUDY.md).
    o.recipemoves = false;
    RlSearcher r(o);
    return r.SearchFrom(sim, space, budget, seed, observer, start, start_only);
  };
}

// ---- The disaggregated joint space (docs/dev/SEARCH.md "Decomposed search"): rl searches each
// role's own StrategySpace at the instance sizes SearchJointDecomposed (search/joint.h) chooses,
// with every StrategySpace refinement; the joint point is the best exact pairing of the parts.
SearchResult RlSearcher::SearchEncoded(const EncodedProblem& problem, int64_t budget,
                                       uint64_t seed, Observer* observer) {
  const auto* jp = dynamic_cast<const JointProblem*>(&problem);
  if (jp != nullptr) {
    SearchResult r = SearchJointDecomposed(*jp, budget, seed, observer, RlRoleRun(options_));
    r.searcher = name();
    return r;
  }
  Objective obj(problem, budget, observer);
  return Run(obj, seed);
}
// ---- end of the joint space

SearchResult RlSearcher::Run(Objective& obj, uint64_t seed,
                             std::vector<std::vector<int>> start, bool start_only) {
  stats_ = RlStats{};
  std::string note;
  if (!obj.Done()) {
    RlRun run(options_, seed, &obj, &stats_, std::move(start), start_only);
    Status st = run.Run();
    if (!st.ok()) note = "rl stopped early: " + st.message();
  }
  SearchResult r = obj.Finish(name());
  if (note.empty()) {
    note = fmt::format("{} networks ({} ended by convergence), {} of {} proposals invalid",
                       stats_.networks, stats_.early_exits, stats_.invalid, stats_.proposals);
    if (stats_.memory_skips > 0)
      note += fmt::format(", {} more known to miss memory without a call", stats_.memory_skips);
  }
  r.note = note;
  return r;
}

StatusOr<std::unique_ptr<Searcher>> MakeRlSearcher(const SearcherSpec& spec) {
  StatusOr<RlOptions> o = ParseRlOptions(spec);
  if (!o.ok()) return o.status();
  return std::unique_ptr<Searcher>(std::make_unique<RlSearcher>(*o));
}

}  // namespace l2s
