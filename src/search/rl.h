// The RL searcher: the paper's method (PAPER.md, "Policy", "Reward", "Early exit and restarts"),
// a PPO-trained attention policy over the elite history, plus three changes measured in
// docs/dev/RL_STUDY.md: prefix masking, an elite prior on the logits, and PPO/learning-rate settings.
//
// One search, step by step:
//   1. Observation: the top-T valid strategies found so far, best first, one row each:
//      [ one-hot of every head's option (K = sum of head sizes) | value / reference value ],
//      a [rows, K + 1] matrix. Padding: while fewer than T elites exist, the rows are just the
//      elites there are (mean pooling over a set makes this the same as repeating them); with no
//      elite yet the observation is one all-zero row.
//   2. Policy: pi(a_h | obs, a_<h) = softmax(net_h(obs) + prior_h(obs, a_<h)), heads sampled in
//      the space's fixed order. net is nn::PolicyNet (linear embedding -> one encoder block ->
//      mean pool -> MLP -> one categorical head per sub-action). With masking on, each head is
//      restricted to space.Mask(earlier choices), so every proposal is structurally valid
//      (memory/SLO failures remain possible). (The default's first lifetime runs the pretrained
//      nn::OptionScorer instead: "Warm start" below; rl(warm=0) is PolicyNet throughout.)
//   3. Elite prior (prior > 0; not in the paper): a fixed function of the observation and the
//      earlier choices that makes the policy a mutation distribution around the elites, which the
//      network then corrects. Per head, averaged over the elites: categorical heads (sp, dims) add
//      kappa = ln(q (n - 1) / (1 - q)) to the elite's option (probability q against n - 1 equal
//      others); ordered heads (pp, tp, ep, batch; ordinal=1) add -gamma |i - elite's option| with
//      gamma = ln(2 q / (1 - q)) (mostly one-step moves); with relbatch=1 the batch head points at
//      the batch keeping the elite's sequences per GPU (batch / tp) under the tp just chosen, so a
//      tp move follows the memory ridge. Jumps (jump = eps): the ordered heads' prior is mixed
//      with a uniform one, p = (1 - eps) p_prior + eps / n, so a degree several options away
//      stays reachable. Group moves (megadims = rho): with probability rho per proposal the prior
//      of every operator-dim head points at Megatron's dims instead of the elites' (the dims of an
//      operator group, e.g. attention's three, can then change together). q is annealed from prior0 to prior over each lifetime. It
//      applies from lifetime `prior_from` on (lifetime 0 explores as in the paper), or without
//      restarts after prior_from chunks of calls.
//   4. Every policy proposal is one Objective::Evaluate call: no cache, repeated proposals are
//      charged (sweep and descent candidates: once per search, 11. below).
//   5. Reward: raw = value / reference value (the first valid value of the search),
//      r = alpha * raw + beta * (raw - b) with b the best raw value before this proposal
//      (b = raw for the first valid one); invalid proposals get `invalid_reward`.
//   6. PPO: every `rollout` proposals, `epochs` gradient steps of the clipped surrogate with an
//      entropy bonus (the loss of nn/ppo.h over net + prior); advantage = (r - baseline) / scale,
//      baseline and scale being exponential moving averages of the reward and of its squared
//      deviation (reset with each network). Adam (gradient norm clipped at 0.5), lr
//      cosine-annealed from `lr` to 0 over one lifetime.
//   7. Elites: a valid proposal better than the worst of T elites replaces it; a strategy already
//      among the elites is never added twice. With canon=1 an elite is stored as its Canonical
//      representative (strategy/space.h: Megatron's dims on operators whose group is one GPU, sp
//      off at tp = 1; it runs identically), so dim variants of one tp = 1 strategy count once and
//      a tp = 1 -> 2 move from it is proposed with Megatron's dims (the tp = 1 plateau,
//      docs/dev/RL_STUDY.md).
//   8. Restarts: the budget is cut into `chunks` network lifetimes of ceil(budget / chunks) calls.
//      A lifetime also ends early once the policy has converged (the top option of every head,
//      in the distribution of the latest proposal, has probability >= converge). A new network is
//      drawn from a seed derived from (search seed, lifetime index) and Adam is reset; elites, the
//      reference value and the incumbent b are kept. Lifetimes continue until the budget is spent
//      (early exits free calls for further networks). restarts=0: one network for the whole
//      budget, no early exit.
//   9-34. Local search around the elites, added over issue 14's passes (each an option, on by
//      default unless said; the full text of every item, with the problem and seed that motivated
//      it, is `git show d0bb349:src/search/rl.h`; the measurements are docs/dev/RL_STUDY.md):
//       9 sweep: once the best stalls, every strategy one or two structural heads from the best
//         elite (pairsweep=0: straight to 10.);
//      10 dimgroups: a hill climb over compound moves (each neighbouring degree option and each
//         other option of slots, overlap, mtp, followed by a group descent over batch, sp and
//         each operator group's dims jointly);
//      11 batchfit, pairmoves, diverse: points compared at their own best batch; two changes at
//         once; climbs restarted from configurations no climb visited;
//      12 nearslo, dpattn, stall/stallmin: near-SLO potential ranks moves for descent; tp moves
//         with the tp group's operators `none`; the stall that triggers a sweep;
//      13 coupled, neargate, epnone, deepen: scans of the MoE block's group pairs and triple;
//         ep/pp moves with the expert dims `none`; wider moves from a repeated climb end;
//      14 deepnow: 13.'s wide moves at a configuration's first end;
//      15 membound: memory lower bounds (memory_bound.h) skip points known to miss memory;
//      16 schedpair: overlap, slots and mtp scanned jointly with the MoE pair;
//      17 feas, nearmem, pairdp: batch fits stopped by memory ranked as near misses;
//      18 repair, triple, first: short-budget repairs of invalid proposals;
//      19 the cold searcher's schedule (ColdRlOptions);
//      20 spscan: sp with each single operator's dim at a climb's end;
//      21 tripfirst: the MoE triple scan before the pair scans;
//      22 megarepair: an invalid proposal retried with Megatron's dims;
//      23 dpsp: DP-attention tp moves with sp on;
//      24 schedattn: overlap x attention group scan;
//      25 ppsp: pp moves with sp's other option;
//      26 templates: the search starts from the usual serving shapes (ServingTemplates);
//      27 epfit: pp/tp moves that also lower ep;
//      28 triphalf: the triple scan over the better half of each pair's options;
//      29 nearmove: memory near misses of a move at its own batch;
//      30 pairfirst: the attention group's near option with the expert FFN pair;
//      31 epmega: degree moves with Megatron's expert dims;
//      32 memtrade: single-dim memory trades at a stalled climb;
//      33 nearscale: memory near misses at unmeasured degrees;
//      34 recipemoves: the wide-EP recipe screened at each climb pass.
//      The plan's default searcher is now `local` (search/local.cc: these ideas as registered
//      moves and always-on services); rl keeps them for the paper's evaluation and its studies.
// Deterministic for a seed: all randomness comes from nn::Rng streams seeded from it.
// Spec options (all optional; defaults are RlOptions{}, ColdRlOptions() with warm=0, except that
// prior0 defaults to prior):
//   rl(elites, embed, hidden, attn, mask, shaping, restarts, chunks, converge, alpha, beta,
//      invalid, lr, rollout, epochs, clip, ent, decay, prior, prior0, prior_from, ordinal,
//      relbatch, canon, jump, megadims, sweep, dimgroups, stall, batchfit, diverse, pairsweep,
//      pairmoves, descents, nearslo, dpattn, stallmin, coupled, neargate, epnone, deepen, deepnow,
//      membound, schedpair, feas, nearmem, pairdp, repair, triple, first, spscan, tripfirst,
//      megarepair, dpsp, schedattn, ppsp, templates, epfit, triphalf, nearmove, pairfirst,
//      epmega, memtrade, nearscale, recipemoves, warm)
//
// Warm start (warm=1, the default since issue 14 item 3 measured it to help; the cold searcher is
// spelled rl(warm=0)): the network of the first lifetime is the shared nn::OptionScorer over the
// problem-independent option features of search/rl_features.h instead of the per-problem
// PolicyNet, and the first lifetime starts from the pretrained weights shipped in
// src/search/rl_pretrained.cc (tools/pretrain_rl) instead of random ones; restarts run the cold
// searcher's per-problem PolicyNet from random weights (restarting from the pretrained weights
// kept the pretrained bias in every lifetime and hurt the paper's 64k problems, and the shared
// network costs twice as much per call, docs/dev/RL_STUDY.md); with warm=2 or weights given by the
// tool (warm_weights) restarts keep the shared network. warm=2: the same
// shared network from random weights (what pretraining starts from). Everything else (prior,
// sweeps, restarts, PPO) is unchanged. Over an encoded problem without a strategy space the
// per-problem network is used whatever `warm` says. The role searches of SearchEncoded's
// decomposed search (each one role at one instance size, a plain strategy space) follow `warm`
// since issue 14's seventh pass (before, they ran cold; started from the pretrained weights they
// reach 0.99 of the disaggregated optimum in 68 of 90 suite runs at 4,000 calls against 60,
// docs/dev/RL_STUDY.md).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "search/joint.h"
#include "search/search.h"

namespace l2s {

// Defaults marked (*) differ from the paper's; docs/dev/RL_STUDY.md has the measurements behind them.
struct RlOptions {
  int elites = 3;            // T, rows of the observation (paper: 3; 8 and 16 measured no better)
  int embed = 64;            // (*) d, embedding width (paper: 256; 256 costs ~10 s per search)
  int hidden = 64;           // (*) hidden width of the encoder block's MLP (paper: 256)
  int attn_heads = 4;        // attention heads; must divide embed
  bool mask = true;          // (*) prefix masking of the heads (paper: unmasked)
  bool shaping = true;       // off: beta = 0
  bool restarts = true;      // off: one network for the whole budget, no early exit
  int chunks = 5;            // network lifetimes the budget is cut into (paper: 5)
  double converge = 0.95;    // top-option probability that counts as converged (paper: 0.95)
  double alpha = 1.0;        // weight of the normalised throughput (paper: alpha > 0, no value)
  double beta = 1.0;         // weight of the improvement over the incumbent (paper: beta > 0)
  double invalid_reward = -1.0;  // "a large negative reward": below any valid raw value (>= 0)
  double lr = 1e-4;          // (*) initial Adam learning rate, cosine-annealed (paper: 1e-3)
  int rollout = 8;           // (*) proposals per update (paper: 2)
  int epochs = 2;            // gradient steps per update (paper: 2)
  double clip = 0.2;         // PPO clip range (Stable-Baselines3 default)
  double entropy = 0.01;     // entropy bonus (PPO paper's Atari setting, Schulman et al. 2017)
  double decay = 0.9;        // EMA factor of the reward baseline and scale (~10-update memory)
  double prior = 0.8;        // (*) elite prior keep probability q (0 = off, the paper's policy)
  double prior0 = 0.8;       // keep probability at the start of a lifetime (annealed to prior)
  int prior_from = 1;        // first lifetime (0-based) using the elite prior (see 3. above)
  bool ordinal = true;       // ordered heads (pp, tp, ep, batch): prior decays with distance
  bool relbatch = true;      // batch prior keeps the elite's sequences per GPU (batch / tp)
  bool canonical = true;     // spec "canon": elites stored as their Canonical representative
  double jump = 0.1;         // ordinal heads: probability mass spread uniformly over all options
  double megadims = 0.1;     // probability that a proposal's dim prior points at Megatron's dims
  bool sweep = true;         // pair sweep of the structural heads around the best when stalled
  bool dimgroups = true;     // sweep: compound moves and group descents (see 10. above)
  double stall = 0.5;        // (*12.) sweep once the best has not improved for stall x a chunk
  bool batchfit = true;      // compound moves and descents compare points at their own best batch
  bool pairsweep = false;     // sweep: evaluate the pair neighbourhood before the compound moves
  bool pairmoves = true;     // batchfit: compound moves also change two heads at once
  int descents = 4;          // batchfit: screened compound moves descended from per climb pass
  bool diverse = true;       // a sweep whose base was swept before starts from another config
  bool nearslo = true;       // batchfit: screened moves ranked by their near-SLO potential (12.)
  bool dpattn = true;        // batchfit: a tp move also with the tp group's dims `none` (12.)
  int64_t stall_min = 200;   // spec "stallmin": a stall lasts >= min(this, a chunk) calls (12.)
  int coupled = 1;           // (13.) screened options per coupled scan of a near-miss descent
  double near_gate = 0.9;    // spec "neargate": a near miss ends >= this x the climb's point
  bool epnone = true;        // (13.) an ep or pp move also with the expert FFNs' dims `none`
  bool deepen = true;        // (13.) wider moves and more descents from a repeated climb end
  bool deepnow = true;       // (14.) a climb's pass that improves nothing is widened once
  bool membound = true;      // (15.) candidates certain to miss memory are not evaluated
  bool schedpair = true;     // (16.) coupled scans: each head after the dims with the MoE pair
  bool feasible = true;      // spec "feas" (17.): an invalid descent moves towards validity
  bool nearmem = true;       // (17.) memory near misses within the dims' seen spread ranked
  bool pairdp = true;        // (17.) from tp = 1, pair moves of tp also with DP-attention dims
  bool triple = true;        // (18.) pair moves of two degree heads also with a head after dims
  int repair = 2;            // (18.) calls re-evaluating a missed proposal at lower batches
  double first = 0.4;        // (18.) the first sweep at the latest after first x the budget
  bool spscan = true;        // (20.) a climb's end scans sp with each single operator's dim
  bool tripfirst = true;     // (21.) a near miss's router x MoE x shared scan before the pairs
  bool megarepair = true;    // (22.) nothing valid after a lifetime: repair with Megatron's dims
  bool dpsp = true;          // (23.) a tp move with the tp group's dims `none` also splits tokens
  bool schedattn = true;     // (24.) coupled scans: the overlap head with the attention group
  bool ppsp = true;          // (25.) a pp move also with sp's other option
  bool templates = true;     // (26.) start from the usual serving shapes (since 31.: warm too)
  bool epfit = false;        // (27.) a pp or tp move that leaves ep not fitting also lowers ep
                             // (cold searcher: on)
  bool triphalf = false;     // (28.) the triple scan takes the better half of each FFN pair
                             // (cold searcher: on)
  bool nearmove = true;      // (29.) a move missing memory near enough descends from its batch
  int pairfirst = 2;         // (30.) a new climb point: attention's near option x the FFN pairs
  bool epmega = true;        // (31.) an ep or pp move also with Megatron's expert FFN dims
  bool memtrade = true;      // (32.) a climb's end: a memory miss with a memory saver
  bool nearscale = true;     // (33.) nearmem's spread at unmeasured degrees, scaled from others
  bool recipemoves = true;   // (34.) climb moves to the wide-EP recipe at pp and pp +- 1
                             // (off in the disaggregated space's role searches)
  int warm = 1;              // (*) 1: shared pretrained (default); 0: per-problem network (cold,
                             // the searcher before issue 14 item 3); 2: shared, random weights
  // Code only (tools/pretrain_rl): with warm >= 1, initial weights of the shared network in
  // place of the shipped ones (nn::ScorerWeights::values of RlFeatureCount() features and
  // `warm_hidden` hidden units).
  std::vector<double> warm_weights;
  int warm_hidden = 0;
};

// The cold searcher's defaults (rl(warm=0), rl.h 19.): RlOptions{} with warm = 0, the elite prior
// from the first lifetime (prior_from = 0), the first sweep by a quarter of the budget (first =
// 0.25), the ep-fitted moves (epfit = 1, rl.h 27.) and the triple scan over better halves
// (triphalf = 1, 28.); both searchers start from the serving shapes (templates = 1, 26.).
// ParseRlOptions reads a spec with warm=0 over these.
RlOptions ColdRlOptions();

// Reads the options of an "rl(...)" spec over the defaults (ColdRlOptions() with warm=0).
// InvalidArgument for an unknown key, a malformed value or one out of range (sizes >= 1, attn
// dividing embed, 0 < converge <= 1, ...).
StatusOr<RlOptions> ParseRlOptions(const SearcherSpec& spec);

// Canonical spec with every option written out, e.g. "rl(elites=3,embed=64,...)", except warm,
// written only when it differs from the default (",warm=0)" for the cold searcher), so the
// default searcher's name is the one it had before the warm start became the default.
std::string RlSpecText(const RlOptions& o);

// The role search of the decomposed search of the disaggregated joint space (search/joint.h
// SearchJointDecomposed): rl with `options` on one role's StrategySpace (`warm` included: the
// default starts from the pretrained weights), from the start points, the elite prior at once
// when there are any (without any, from lifetime max(prior_from, 1): the cold searcher's
// prior_from = 0 of 19. cost runs there, docs/dev/RL_STUDY.md eleventh pass), and without the
// options of 18. (repair, triple, first: measured to cost runs on the disaggregated suite,
// docs/dev/RL_STUDY.md ninth pass), 23. and 24. (dpsp, schedattn: twelfth pass) whatever `options`
// says.
RoleRun RlRoleRun(const RlOptions& options);

// Counters of the latest Search (for tests and the study).
struct RlStats {
  int64_t proposals = 0;     // simulator calls made by the searcher
  int64_t invalid = 0;       // proposals the simulator rejected (any reason)
  int64_t structural = 0;    // ... of which structurally invalid (cannot happen with mask=1)
  int64_t updates = 0;       // PPO updates (each `epochs` gradient steps)
  int64_t networks = 0;      // network lifetimes started (1 + restarts)
  int64_t early_exits = 0;   // lifetimes ended by convergence
  int64_t sweeps = 0;        // pair sweeps run (sweep=1)
  int64_t diverse = 0;       // ... of which started away from the best elite (diverse=1)
  int64_t memory_skips = 0;  // sweep/descent candidates known to miss memory, not evaluated
  int64_t repairs = 0;       // charged calls re-evaluating missed proposals at a lower batch (18.)
  int64_t first_sweep_call = -1;  // calls made when the main loop's first sweep began (-1: none)
  int64_t policy_calls = 0;  // calls charged by policy proposals (the main loop's samples)
  // Where the local search's calls go (compound moves, 10. and 11.): calls charged by the climbs
  // (screening, descents, coupled scans), of which screening the moves at their best batch
  // before the descents, and the moves screened (each charged at most 1 + its batch fit; known
  // ones free). Without batchfit the descents run inside the screening loop and count there.
  int64_t climb_calls = 0;
  int64_t screen_calls = 0;
  int64_t screened_moves = 0;
  // warm >= 1: the shared network's weights at the end of the search (tools/pretrain_rl carries
  // them to the next problem); empty otherwise.
  std::vector<double> final_weights;
};

class RlSearcher final : public Searcher {
 public:
  explicit RlSearcher(const RlOptions& options) : options_(options) {}

  std::string name() const override { return RlSpecText(options_); }
  SearchResult Search(const Simulator& sim, const StrategySpace& space, int64_t budget,
                      uint64_t seed, Observer* observer) override;
  SearchResult SearchEncoded(const EncodedProblem& problem, int64_t budget, uint64_t seed,
                             Observer* observer) override;

  // Search from `start` (strategies of `space`, evaluated first, one charged call each, as the
  // first elites; an invalid one also with Megatron's dims, every dim `none`, half and a quarter
  // of its batch), followed at once by the compound moves, then the search; start_only: the
  // start points alone. The disaggregated joint space's role searches use it (search/joint.h
  // SearchJointDecomposed).
  SearchResult SearchFrom(const Simulator& sim, const StrategySpace& space, int64_t budget,
                          uint64_t seed, Observer* observer, std::span<const Strategy> start,
                          bool start_only = false);

  const RlOptions& options() const { return options_; }
  const RlStats& last_stats() const { return stats_; }

 private:
  SearchResult Run(Objective& obj, uint64_t seed, std::vector<std::vector<int>> start = {},
                   bool start_only = false);
  RlOptions options_;
  RlStats stats_;
};

}  // namespace l2s
