// The RL searcher: the paper's method (PAPER.md, "Policy", "Reward", "Early exit and restarts"),
// a PPO-trained attention policy over the elite history, with prefix masking added.
//
// One search, step by step:
//   1. Observation: the top-T valid strategies found so far, best first, one row each:
//      [ one-hot of every head's option (K = sum of head sizes) | value / reference value ],
//      a [rows, K + 1] matrix. Padding: while fewer than T elites exist, the rows are just the
//      elites there are (mean pooling over a set makes this the same as repeating them); with no
//      elite yet the observation is one all-zero row.
//   2. Policy: nn::PolicyNet (linear embedding -> one encoder block -> mean pool -> MLP -> one
//      categorical head per sub-action). Heads are sampled in the space's fixed order; with
//      masking on, each head's logits are restricted to space.Mask(earlier choices), so every
//      proposal is structurally valid (memory/SLO failures remain possible).
//   3. Every proposal is one Objective::Evaluate call: no cache, repeated proposals are charged.
//   4. Reward: raw = value / reference value (the first valid value of the search; invalid = 0
//      never enters), r = alpha * raw + beta * (raw - b) with b the best raw value before this
//      proposal (b = raw for the first valid one); invalid proposals get `invalid_reward`.
//   5. PPO: every `rollout` proposals, `epochs` gradient steps of the clipped surrogate with an
//      entropy bonus (nn/ppo.h); advantage = (r - baseline) / scale, where baseline and scale are
//      exponential moving averages of the reward and of its squared deviation (reset with each
//      network). Adam, lr cosine-annealed from `lr` to 0 over one network's lifetime.
//   6. Elites: a valid proposal better than the worst of T elites replaces it; a strategy already
//      among the elites is never added twice.
//   7. Restarts: the budget is cut into `chunks` network lifetimes of ceil(budget / chunks) calls.
//      A lifetime also ends early once the policy has converged (the top option of every head,
//      in the distribution of the latest proposal, has probability >= converge). A new network is
//      drawn from a seed derived from (search seed, network index) and Adam is reset; elites, the
//      reference value and the incumbent b are kept. Lifetimes continue until the budget is spent
//      (early exits free calls for further networks). restarts=0: one network for the whole
//      budget, no early exit.
//
// Deterministic for a seed: all randomness comes from nn::Rng streams seeded from it.
// Spec options (all optional): rl(elites=T, embed=d, hidden=h, attn=heads, mask=1, shaping=1,
//   restarts=1, chunks=5, converge=0.95, alpha=1, beta=1, invalid=-1, lr=1e-3, rollout=2,
//   epochs=2, clip=0.2, ent=0.01, decay=0.9); defaults are RlOptions{} below.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "search/search.h"

namespace l2s {

struct RlOptions {
  int elites = 8;            // T, rows of the observation (the paper uses 3)
  int embed = 64;            // d, embedding width (paper: 256)
  int hidden = 64;           // hidden width of the encoder block's MLP (paper: 256)
  int attn_heads = 4;        // attention heads; must divide embed
  bool mask = true;          // prefix masking of the heads (off: the paper's unmasked sampling)
  bool shaping = true;       // off: beta = 0
  bool restarts = true;      // off: one network for the whole budget, no early exit
  int chunks = 5;            // network lifetimes the budget is cut into (paper: 5)
  double converge = 0.95;    // top-option probability that counts as converged (paper: 0.95)
  double alpha = 1.0;        // weight of the normalised throughput
  double beta = 1.0;         // weight of the improvement over the incumbent
  double invalid_reward = -1.0;
  double lr = 1e-4;          // initial Adam learning rate (paper: 1e-3, cosine annealing)
  int rollout = 8;           // proposals per update (paper: 2)
  int epochs = 2;            // gradient steps per update (paper: 2)
  double clip = 0.2;         // PPO clip range (Stable-Baselines3 default)
  double entropy = 0.01;     // entropy bonus coefficient
  double decay = 0.9;        // EMA factor of the reward baseline and scale
  double prior = 0.8;        // elite prior: probability of an elite's option (0 = off)
  double prior0 = 0.8;       // keep probability at the start of a lifetime (annealed to prior)
  int prior_from = 1;        // first network lifetime (0-based) that uses the elite prior
  bool ordinal = true;       // ordered heads (pp, tp, ep, batch): prior decays with distance
  bool relbatch = true;      // batch prior keeps the elite's sequences per GPU (batch / tp)
};

// Reads the options of an "rl(...)" spec over the defaults. InvalidArgument for an unknown key,
// a malformed value or one out of range (sizes >= 1, attn dividing embed, 0 < converge <= 1, ...).
StatusOr<RlOptions> ParseRlOptions(const SearcherSpec& spec);

// Canonical spec with every option written out, e.g. "rl(elites=3,embed=64,...)".
std::string RlSpecText(const RlOptions& o);

// Counters of the latest Search (for tests and the study).
struct RlStats {
  int64_t proposals = 0;     // simulator calls made by the searcher
  int64_t invalid = 0;       // proposals the simulator rejected (any reason)
  int64_t structural = 0;    // ... of which structurally invalid (cannot happen with mask=1)
  int64_t updates = 0;       // PPO updates (each `epochs` gradient steps)
  int64_t networks = 0;      // network lifetimes started (1 + restarts)
  int64_t early_exits = 0;   // lifetimes ended by convergence
};

class RlSearcher final : public Searcher {
 public:
  explicit RlSearcher(const RlOptions& options) : options_(options) {}

  std::string name() const override { return RlSpecText(options_); }
  SearchResult Search(const Simulator& sim, const StrategySpace& space, int64_t budget,
                      uint64_t seed, Observer* observer) override;

  const RlOptions& options() const { return options_; }
  const RlStats& last_stats() const { return stats_; }

 private:
  RlOptions options_;
  RlStats stats_;
};

}  // namespace l2s
