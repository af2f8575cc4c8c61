// The RL searcher (see rl.h for the algorithm and its options).
#include "search/rl.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "common/splitmix.h"
#include "nn/adam.h"
#include "nn/categorical.h"
#include "nn/policy_net.h"
#include "nn/ppo.h"
#include "nn/rng.h"
#include "search/searchers.h"

namespace l2s {

namespace {

// Fixed settings (rl.h). The study never varied them; each is the paper's value or
// the cited default.
// Adam's gradient clipping by global norm: Stable-Baselines3 PPO's default max_grad_norm = 0.5.
constexpr double kMaxGradNorm = 0.5;
constexpr int kChunks = 5;           // network lifetimes the policy's calls are cut into (paper)
constexpr double kConverge = 0.95;   // top-option probability that counts as converged (paper)
// Reward weights: the paper asks alpha > 0 and beta > 0 without values. Shaping (beta) has no
// measurable effect (RL_STUDY.md, negative results).
constexpr double kAlpha = 1.0, kBeta = 1.0;
// The paper's "large negative reward" for an invalid proposal: below any valid raw value (>= 0).
constexpr double kInvalidReward = -1.0;
constexpr int kEpochs = 2;           // gradient steps per update (paper)
constexpr double kClip = 0.2;        // PPO clip range (Stable-Baselines3 default)
constexpr double kEntropy = 0.01;    // entropy bonus (the PPO paper's Atari setting)
constexpr double kDecay = 0.9;       // EMA factor of the reward baseline and scale
// Elite prior: ordered heads spread this probability mass uniformly over all options, so a
// degree several options away stays reachable; the prior applies from this lifetime (0-based)
// on, so the first lifetime samples as in the paper.
constexpr double kJump = 0.1;
constexpr int kPriorFrom = 1;
// Floor of the advantage scale, in units of normalised reward: keeps the first updates of a
// network (when the deviation EMA is still ~0) from dividing by ~0.
constexpr double kMinAdvantageScale = 1e-3;

// SplitMix64 finaliser (Steele, Lea & Flood, OOPSLA 2014): derives independent seeds for the
// sampling stream and for each network lifetime from the search seed.
uint64_t Mix(uint64_t x) { return SplitMix64Mix(x + kSplitMix64Gamma); }
// The constants below are ASCII tags ("net", "sampler") separating the two seed streams.
uint64_t NetSeed(uint64_t seed, int64_t index) {
  return Mix(Mix(seed) ^ Mix(0x6e6574ULL + static_cast<uint64_t>(index)));
}
uint64_t SamplerSeed(uint64_t seed) { return Mix(Mix(seed) ^ 0x73616d706c6572ULL); }

// ceil(a / b) for a >= 0, b >= 1, without the overflow of (a + b - 1) / b near INT64_MAX.
int64_t CeilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

struct Elite {
  std::vector<int> idx;  // [num_heads] encoded point, canonical form
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

// One proposal kept for the PPO update: the sample (its logit offset is the elite prior it was
// drawn with, fixed) and its reward.
struct Sample {
  nn::PolicySample ppo;
  double reward = 0;
};

// State of one search.
class RlRun {
 public:
  RlRun(const RlOptions& o, uint64_t seed, Objective* obj, RlStats* stats)
      : o_(o), space_(obj->encoded_space()), seed_(seed), obj_(obj), stats_(stats),
        rng_(SamplerSeed(seed)) {}

  Status Run();

 private:
  Status MakePolicyNet(uint64_t seed);
  void StartNetwork();
  void SetPriorStrength(double q);
  void BuildObservation();
  void HeadPrior(int h, double* out) const;
  void Propose();
  void Record(const Evaluation& e);
  void UpdateElites(double v);
  Status Update();

  const RlOptions& o_;
  const EncodedSpace& space_;
  uint64_t seed_;
  Objective* obj_;
  RlStats* stats_;
  nn::Rng rng_;

  int num_heads_ = 0;
  int k_ = 0;                         // total options over all heads
  std::vector<double> kappa_;         // [num_heads] elite-prior logit bonus (categorical heads)
  std::vector<double> gamma_;         // [num_heads] elite-prior logit slope (ordinal heads)
  std::unique_ptr<nn::PolicyNet> net_;
  nn::Adam adam_;
  nn::MultiCategorical dist_;
  nn::Vec prior_;                     // [K] elite prior of the current proposal
  nn::Vec logits_;                    // [K] network logits + elite prior

  nn::Mat obs_;                       // [rows, K + 1] current observation
  std::vector<int> action_;           // [num_heads] current proposal
  std::vector<bool> mask_;            // [K] allowed options of the current proposal (empty: all)
  std::vector<uint8_t> head_mask_;    // [max head size] scratch for space.Mask
  double logp_ = 0;                   // joint log-probability of the current proposal
  bool converged_ = false;            // the latest sampling distribution had every top p >= c

  std::vector<Elite> elites_;         // sorted by value, best first, at most T
  double ref_value_ = 0;              // first valid value (reward normalisation); 0 = none yet
  double best_raw_ = 0;               // incumbent b in units of ref_value_
  std::vector<Sample> buffer_;
  std::vector<nn::PolicySample> batch_;  // the rollout handed to PPO
  nn::PpoWorkspace ppo_ws_;

  // Network lifetime.
  int64_t policy_budget_ = 0;         // calls for the policy (the rest: refine)
  int64_t chunk_len_ = 0;             // ceil(policy_budget_ / kChunks)
  int64_t life_start_ = 0;            // call count when the current network started
  int64_t life_len_ = 0;              // calls a lifetime may last
  int64_t life_steps_ = 0;            // gradient steps planned in a full lifetime (lr schedule)
  int64_t step_ = 0;                  // gradient steps taken in this lifetime
  bool prior_on_ = false;             // the elite prior applies to the next proposal
  bool baseline_set_ = false;
  double baseline_ = 0;               // EMA of rewards
  double dev2_ = 0;                   // EMA of (reward - baseline)^2
};

Status RlRun::Run() {
  num_heads_ = space_.num_heads();
  int max_size = 0;
  kappa_.assign(num_heads_, 0.0);
  gamma_.assign(num_heads_, 0.0);
  for (int h = 0; h < num_heads_; ++h) {
    k_ += space_.head_size(h);
    max_size = std::max(max_size, space_.head_size(h));
  }
  if (o_.prior > 0) SetPriorStrength(o_.prior);
  prior_.setZero(k_);
  logits_.setZero(k_);
  head_mask_.assign(max_size, 1);
  action_.assign(num_heads_, 0);
  if (Status st = MakePolicyNet(NetSeed(seed_, 0)); !st.ok()) return st;

  const int64_t budget = obj_->budget();
  policy_budget_ = budget - static_cast<int64_t>(o_.refine * static_cast<double>(budget));
  chunk_len_ = std::max<int64_t>(CeilDiv(policy_budget_, kChunks), 1);
  life_len_ = o_.restarts ? chunk_len_ : std::max<int64_t>(policy_budget_, 1);
  life_steps_ = CeilDiv(life_len_, o_.rollout) * kEpochs;
  buffer_.reserve(o_.rollout);
  stats_->networks = 1;
  while (!obj_->Done() && obj_->calls() < policy_budget_) {
    if (o_.restarts && (converged_ || obj_->calls() - life_start_ >= life_len_)) {
      if (converged_) ++stats_->early_exits;
      StartNetwork();
    }
    // The elite prior starts with lifetime kPriorFrom, or, without restarts, after as many
    // chunks of calls. Each sample keeps the prior it was drawn with, so the PPO ratios stay
    // exact across the switch.
    prior_on_ = o_.prior > 0 && !elites_.empty() &&
                (stats_->networks - 1 >= kPriorFrom ||
                 (!o_.restarts && obj_->calls() >= kPriorFrom * chunk_len_));
    BuildObservation();
    Propose();
    Record(obj_->EvaluateEncoded(action_));
    if (static_cast<int>(buffer_.size()) >= o_.rollout) {
      if (Status st = Update(); !st.ok()) return st;
    }
  }
  // Refine: the local searcher's moves from the elites, best first (rl.h 9.).
  if (!obj_->Done()) {
    const int64_t before = obj_->calls();
    std::vector<std::vector<int>> starts;
    for (const Elite& e : elites_) starts.push_back(e.idx);
    LocalSearchFrom(*obj_, Mix(seed_ ^ 0x726566696e65ULL), starts);  // tag "refine"
    stats_->refine_calls = obj_->calls() - before;
  }
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
    if (space_.ordinal(h)) {  // degrees and batch: ascending options
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
  nn::AdamConfig acfg;
  acfg.max_grad_norm = kMaxGradNorm;
  StatusOr<nn::Adam> adam = nn::Adam::Create(made->Params(), acfg);
  if (!adam.ok()) return adam.status();
  net_ = std::move(made);
  adam_ = std::move(adam).value();
  return Status::Ok();
}

void RlRun::StartNetwork() {
  ++stats_->networks;
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

// Elite prior of head h, added to the network's logits: the mean over the elites of
//   categorical heads: kappa_h for the elite's option;
//   ordinal heads:     -gamma_h |i - elite's option| for option i, then mixed with a uniform
//                      distribution: p_i = (1 - kJump) softmax(out)_i + kJump / n.
// A fixed function of the observation, never of the network: the policy is
// softmax(net_h(obs) + prior_h(obs)) and the network learns corrections to a mutation
// distribution around the elites. out: [head size h].
void RlRun::HeadPrior(int h, double* out) const {
  const int n = space_.head_size(h);
  for (int i = 0; i < n; ++i) out[i] = 0;
  if (!prior_on_) return;
  const double w = 1.0 / static_cast<double>(elites_.size());
  for (const Elite& e : elites_) {
    const int t = e.idx[h];
    if (space_.ordinal(h)) {
      for (int i = 0; i < n; ++i) out[i] -= w * gamma_[h] * std::abs(i - t);
    } else {
      out[t] += w * kappa_[h];
    }
  }
  if (space_.ordinal(h) && n > 1) {
    double mx = -INFINITY;
    for (int i = 0; i < n; ++i) mx = std::max(mx, out[i]);
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += std::exp(out[i] - mx);
    for (int i = 0; i < n; ++i)
      out[i] = std::log((1 - kJump) * std::exp(out[i] - mx) / sum + kJump / n);
  }
}

void RlRun::Propose() {
  // Shapes are fixed by construction ([rows >= 1, K + 1]); Forward cannot fail here.
  (void)net_->Forward(obs_);
  logits_ = net_->logits();
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
      // A head with no valid option only happens when the space has no valid point at all:
      // sample it unmasked (the proposal is then invalid and charged like any other).
      if (count > 0) {
        allowed = head_mask_.data();
        for (int i = 0; i < n; ++i) mask_[offset + i] = m[i] != 0;
      }
    }
    HeadPrior(h, prior_.data() + offset);
    for (int i = 0; i < n; ++i) logits_[offset + i] += prior_[offset + i];
    action_[h] = SampleHead(logits_.data() + offset, allowed, n, rng_.Uniform());
    offset += n;
  }
  // The joint distribution the proposal was drawn from (head h's mask depends only on the choices
  // before h, so one Set with the completed mask reproduces every head's distribution).
  (void)dist_.Set(net_->layout(), std::span<const double>(logits_.data(), logits_.size()), mask_);
  StatusOr<double> lp = dist_.LogProb(action_);
  logp_ = lp.ok() ? *lp : 0.0;
  converged_ = true;
  const nn::Vec& p = dist_.probs();
  offset = 0;
  for (int h = 0; h < num_heads_ && converged_; ++h) {
    double top = 0;
    for (int i = 0; i < space_.head_size(h); ++i) top = std::max(top, p[offset + i]);
    converged_ = top >= kConverge;
    offset += space_.head_size(h);
  }
}

// A valid proposal of value v joins the elites when there is room or when it beats the worst,
// never twice (compared in canonical form: points that run identically count once).
void RlRun::UpdateElites(double v) {
  const int t = o_.elites;
  if (static_cast<int>(elites_.size()) >= t && v <= elites_.back().value) return;
  std::vector<int> key = action_;
  space_.Canonicalize(&key);
  for (const Elite& e : elites_)
    if (e.idx == key) return;
  if (static_cast<int>(elites_.size()) >= t) elites_.pop_back();
  Elite el{std::move(key), v};
  auto pos = std::upper_bound(elites_.begin(), elites_.end(), el,
                              [](const Elite& a, const Elite& b) { return a.value > b.value; });
  elites_.insert(pos, std::move(el));
}

void RlRun::Record(const Evaluation& e) {
  ++stats_->proposals;
  double reward = kInvalidReward;
  if (e.valid()) {
    const double v = e.tokens_per_s_per_gpu;
    if (ref_value_ <= 0) {
      ref_value_ = v > 0 ? v : 1.0;
      best_raw_ = v / ref_value_;
    }
    const double raw = v / ref_value_;
    reward = kAlpha * raw + kBeta * (raw - best_raw_);
    best_raw_ = std::max(best_raw_, raw);
    UpdateElites(v);
  } else {
    ++stats_->invalid;
    if (e.verdict == Verdict::kStructure) ++stats_->structural;
  }
  Sample s;
  s.ppo.obs = obs_;
  s.ppo.actions = action_;
  s.ppo.mask = mask_;
  s.ppo.logit_offset = prior_;
  s.ppo.old_log_prob = logp_;
  s.reward = reward;
  buffer_.push_back(std::move(s));
}

// PPO (nn/ppo.h: clipped surrogate with entropy bonus, over net + the fixed prior) on the rollout,
// advantage = (r - baseline) / scale with the baseline and scale of the rewards before it.
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
  batch_.clear();
  for (Sample& s : buffer_) {
    s.ppo.advantage = (s.reward - baseline_) / scale;
    batch_.push_back(std::move(s.ppo));
  }
  // Then fold the batch into the running statistics (the advantages above used the past only).
  for (const Sample& s : buffer_) {
    const double d = s.reward - baseline_;
    baseline_ += (1.0 - kDecay) * d;
    dev2_ = kDecay * dev2_ + (1.0 - kDecay) * d * d;
  }
  const nn::PpoConfig cfg{kClip, kEntropy};
  for (int ep = 0; ep < kEpochs; ++ep) {
    if (StatusOr<nn::PpoStats> st = nn::PpoLossAndGrad(*net_, batch_, cfg, &ppo_ws_); !st.ok())
      return st.status();
    adam_.Step(nn::CosineLr(o_.lr, 0.0, step_, life_steps_));
    net_->ZeroGrad();
    ++step_;
  }
  buffer_.clear();
  return Status::Ok();
}

}  // namespace

RlOptions PaperRlOptions() {
  RlOptions o;
  o.mask = false;
  o.prior = 0;
  o.rollout = 2;
  o.lr = 1e-3;
  o.refine = 0;
  return o;
}

StatusOr<RlOptions> ParseRlOptions(const SearcherSpec& spec) {
  Status keys = CheckSpecKeys(spec, {"elites", "embed", "hidden", "attn", "mask", "restarts",
                                     "lr", "rollout", "prior", "refine", "paper"});
  if (!keys.ok()) return keys;
  const RlOptions d = spec.Bool("paper", false) ? PaperRlOptions() : RlOptions{};
  RlOptions o;
  const int64_t elites = spec.Int("elites", d.elites);
  const int64_t embed = spec.Int("embed", d.embed);
  const int64_t hidden = spec.Int("hidden", d.hidden);
  const int64_t attn = spec.Int("attn", d.attn_heads);
  const int64_t rollout = spec.Int("rollout", d.rollout);
  o.mask = spec.Bool("mask", d.mask);
  o.restarts = spec.Bool("restarts", d.restarts);
  o.lr = spec.Double("lr", d.lr);
  o.prior = spec.Double("prior", d.prior);
  o.refine = spec.Double("refine", d.refine);
  if (Status values = SpecValueError(spec); !values.ok()) return values;
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
                    range("rollout", rollout, 1, 4096)}) {
    if (!st.ok()) return st;
  }
  o.elites = static_cast<int>(elites);
  o.embed = static_cast<int>(embed);
  o.hidden = static_cast<int>(hidden);
  o.attn_heads = static_cast<int>(attn);
  o.rollout = static_cast<int>(rollout);
  if (o.embed % o.attn_heads != 0)
    return Status::InvalidArgument(fmt::format(
        "searcher 'rl': attn={} must divide embed={}", o.attn_heads, o.embed));
  auto check = [](bool ok, const char* key, double v, const char* what) -> Status {
    if (ok) return Status::Ok();
    return Status::InvalidArgument(
        fmt::format("searcher 'rl': option {}={} must be {}", key, v, what));
  };
  for (Status st : {check(o.lr > 0, "lr", o.lr, "> 0"),
                    check(o.prior >= 0 && o.prior < 1, "prior", o.prior, "in [0, 1)"),
                    check(o.refine >= 0 && o.refine <= 1, "refine", o.refine, "in [0, 1]")}) {
    if (!st.ok()) return st;
  }
  return o;
}

std::string RlSpecText(const RlOptions& o) {
  return fmt::format(
      "rl(elites={},embed={},hidden={},attn={},mask={},restarts={},lr={},rollout={},prior={},"
      "refine={})",
      o.elites, o.embed, o.hidden, o.attn_heads, o.mask ? 1 : 0, o.restarts ? 1 : 0, o.lr,
      o.rollout, o.prior, o.refine);
}

SearchResult RlSearcher::Run(Objective& obj, uint64_t seed) {
  stats_ = RlStats{};
  std::string note;
  if (!obj.Done()) {
    RlRun run(options_, seed, &obj, &stats_);
    if (Status st = run.Run(); !st.ok()) note = "rl stopped early: " + st.message();
  }
  SearchResult r = obj.Finish(name());
  if (note.empty())
    note = fmt::format(
        "{} networks ({} ended by convergence), {} of {} proposals invalid, {} refine calls",
        stats_.networks, stats_.early_exits, stats_.invalid, stats_.proposals,
        stats_.refine_calls);
  r.note = note;
  return r;
}

StatusOr<std::unique_ptr<Searcher>> MakeRlSearcher(const SearcherSpec& spec) {
  StatusOr<RlOptions> o = ParseRlOptions(spec);
  if (!o.ok()) return o.status();
  return std::unique_ptr<Searcher>(std::make_unique<RlSearcher>(*o));
}

}  // namespace l2s
