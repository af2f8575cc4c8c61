// The RL searcher: the paper's method (PAPER.md, "Policy", "Reward", "Early exit and restarts"),
// a PPO-trained attention policy over the elite history, with an elite prior on its logits, and
// then the local searcher's moves from the elites it found (refine). The study behind the
// defaults is docs/dev/RL_STUDY.md; the plan's default searcher is `local` (search/local.cc).
//
// One search, step by step:
//   1. Observation: the top-T valid points found so far, best first, one row each:
//      [ one-hot of every head's option (K = sum of head sizes) | value / reference value ],
//      a [rows, K + 1] matrix (no elite yet: one all-zero row; fewer than T: the rows there are,
//      which mean pooling makes the same as repeating them).
//   2. Policy: pi(a_h | obs, a_<h) = softmax(net_h(obs) + prior_h(obs)), heads sampled in the
//      space's order; net is nn::PolicyNet (linear embedding -> one encoder block -> mean pool ->
//      MLP -> one categorical head per sub-action). With mask=1 each head is restricted to
//      space.Mask(earlier choices), so every proposal is structurally valid (memory and SLO
//      misses remain possible); the paper samples unmasked.
//   3. Elite prior (prior = q > 0; not in the paper): a fixed function of the observation added
//      to the logits, so that the policy is a mutation distribution around the elites which the
//      network corrects. Per head, averaged over the elites: a categorical head adds
//      kappa = ln(q (n - 1) / (1 - q)) to the elite's option (probability q against n - 1 equal
//      others); an ordered head (pp, tp, ep, batch: EncodedSpace::ordinal) adds
//      -gamma |i - elite's option|, gamma = ln(2 q / (1 - q)) (mostly one-step moves), mixed with
//      a uniform distribution of weight kJump = 0.1 so a degree several options away stays
//      reachable. The prior applies from the second lifetime on (the first explores as in the
//      paper).
//   4. Every proposal is one charged Objective call (no cache, as in the paper).
//   5. Reward: raw = value / reference value (the first valid value), r = alpha raw +
//      beta (raw - b), alpha = beta = 1, b the best raw value before this proposal; invalid: -1.
//   6. PPO: every `rollout` proposals, 2 gradient steps of the clipped surrogate (clip 0.2) with
//      an entropy bonus (0.01); advantage = (r - baseline) / scale (exponential averages, factor
//      0.9, of the reward and its squared deviation); Adam (gradient norm clipped at 0.5),
//      learning rate cosine-annealed from `lr` to 0 over one lifetime.
//   7. Elites: a valid proposal better than the worst of T elites replaces it; a point already
//      among them (compared in the space's canonical form, EncodedSpace::Canonicalize) is never
//      added twice.
//   8. Restarts: the policy's share of the budget is cut into 5 network lifetimes (the paper's);
//      a lifetime also ends once the policy has converged (every head's top option has
//      probability >= 0.95, the paper's). A new network is drawn from a seed derived from
//      (search seed, lifetime); elites, the reference value and b are kept. restarts=0: one
//      network, no early exit (the prior then starts after the first fifth of the calls).
//   9. Refine (not in the paper): the last `refine` share of the budget runs the local searcher's
//      loop (search/local.cc: its registered moves, cache, batch fitting, kicks) from the elites
//      (from its own drawn starts when the policy found nothing valid). refine=0: the paper's
//      method alone.
// Deterministic for a seed: all randomness comes from streams seeded from it. Over any encoded
// problem (the disaggregated joint space included) the same search runs on its encoded space.
// The fixed settings (constants in rl.cc, with their sources) are the paper's or the cited
// defaults; the study never varied them (docs/dev/RL_STUDY.md).
//
// Spec: rl(elites, embed, hidden, attn, mask, restarts, lr, rollout, prior, refine, paper).
// paper=1 starts from the paper's configuration (PaperRlOptions) instead of the defaults; the
// other keys given override it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "search/search.h"
#include "search/searchers.h"

namespace l2s {

// Defaults marked (*) differ from the paper's; docs/dev/RL_STUDY.md has the measurements.
struct RlOptions {
  int elites = 3;            // T, rows of the observation (paper: 3)
  int embed = 64;            // (*) d, embedding width (paper: 256; 256 costs ~10 s per search)
  int hidden = 64;           // (*) hidden width of the encoder block's MLP (paper: 256)
  int attn_heads = 4;        // attention heads; must divide embed
  bool mask = true;          // (*) prefix masking of the heads (paper: unmasked)
  bool restarts = true;      // off: one network for the whole budget, no early exit
  double lr = 1e-4;          // (*) initial Adam learning rate, cosine-annealed (paper: 1e-3)
  int rollout = 8;           // (*) proposals per update (paper: 2)
  double prior = 0.8;        // (*) elite prior keep probability q (0 = off, the paper's policy)
  double refine = 0.5;       // (*) share of the budget for the local moves from the elites
};

// The paper's configuration as l2s runs it: unmasked heads, no elite prior, rollout 2,
// learning rate 1e-3, no refine; embed and hidden stay 64 (256 costs ~10 s per search for the
// same results, docs/dev/RL_STUDY.md).
RlOptions PaperRlOptions();

// Reads the options of an "rl(...)" spec over the defaults (over PaperRlOptions() with paper=1).
// InvalidArgument for an unknown key, a malformed value or one out of range.
StatusOr<RlOptions> ParseRlOptions(const SearcherSpec& spec);

// Canonical spec with every option written out, e.g. "rl(elites=3,embed=64,...)".
std::string RlSpecText(const RlOptions& o);

// Counters of the latest search (tests and the study).
struct RlStats {
  int64_t proposals = 0;     // policy proposals (each one charged call)
  int64_t invalid = 0;       // ... the simulator rejected (any reason)
  int64_t structural = 0;    // ... of which structurally invalid (cannot happen with mask=1)
  int64_t networks = 0;      // network lifetimes started (1 + restarts)
  int64_t early_exits = 0;   // lifetimes ended by convergence
  int64_t refine_calls = 0;  // calls charged by the refine phase
};

class RlSearcher final : public ObjectiveSearcher {
 public:
  explicit RlSearcher(const RlOptions& options) : options_(options) {}

  std::string name() const override { return RlSpecText(options_); }
  const RlOptions& options() const { return options_; }
  const RlStats& last_stats() const { return stats_; }

 protected:
  SearchResult Run(Objective& obj, uint64_t seed) override;

 private:
  RlOptions options_;
  RlStats stats_;
};

}  // namespace l2s
