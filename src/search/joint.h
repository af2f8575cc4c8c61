// The disaggregated joint space (docs/dev/SEARCH.md "Disaggregated joint space"): pool assignment x
// prefill instance size x decode instance size x prefill strategy x decode strategy. Instance
// counts are not heads: for given per-instance capacities the best counts are found exactly by
// DisaggModel::BestCounts inside every evaluation.
//
// Heads, in order:
//   0 pools        - which pool prefills and which decodes (one option on a homogeneous cluster)
//   1 prefill_gpus - GPUs of one prefill instance (InstanceSizes of the prefill pool, union over
//                    the assignments)
//   2 decode_gpus  - GPUs of one decode instance
//   3..            - the heads of the prefill instance's StrategySpace ("prefill.pp", ...), then
//                    those of the decode instance's ("decode.pp", ...). pp, tp and ep list the
//                    union of their options over the instance sizes; Mask allows only the
//                    options of the chosen size's space.
// The searchers see it through EncodedProblem (search/search.h); SolveDisaggExact is the exact
// oracle by decomposition.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "search/search.h"
#include "sim/disagg.h"
#include "strategy/space.h"

namespace l2s {

class JointSpace final : public EncodedSpace {
 public:
  // models: one per pool assignment (not owned; must outlive the space). prefill / decode: the
  // strategy-space options of each role (batch searched as powers of two: the oracle needs
  // explicit batches).
  static StatusOr<std::unique_ptr<JointSpace>> Make(std::vector<const DisaggModel*> models,
                                                    const SpaceOptions& prefill,
                                                    const SpaceOptions& decode);

  enum Head : int { kPools = 0, kPrefillGpus = 1, kDecodeGpus = 2, kFirstStrategy = 3 };

  int num_heads() const override { return static_cast<int>(head_sizes_.size()); }
  int head_size(int h) const override { return head_sizes_[h]; }
  const std::vector<int>& head_sizes() const override { return head_sizes_; }
  std::string head_name(int h) const override;
  std::string option_name(int h, int i) const override;
  void Mask(std::span<const int> prefix, int h, std::span<uint8_t> out) const override;
  bool Valid(std::span<const int> idx) const override;
  double Size() const override;
  bool ordinal(int h) const override;
  bool structural(int h) const override;
  // Each role's strategy heads carry the strategy space's hints (its operator groups, the
  // decode role's ids offset by 16; its batch head; its recipes).
  int group(int h) const override;
  bool batch(int h) const override;
  int num_recipes() const override { return proto_->num_recipes(); }
  int recipe_option(int h, int r) const override;

  // A decoded point.
  struct Point {
    int model = 0;  // index into models()
    int gp = 0, gd = 0;
    Strategy prefill, decode;
  };
  Point Decode(std::span<const int> idx) const;
  // False when the point is not representable.
  bool Encode(const Point& p, std::vector<int>* idx) const;

  const std::vector<const DisaggModel*>& models() const { return models_; }
  // The strategy space of one instance of g GPUs of a role of a model (null when g is not one of
  // its sizes or the space is empty).
  const StrategySpace* PrefillSpace(int model, int g) const;
  const StrategySpace* DecodeSpace(int model, int g) const;
  const SpaceOptions& prefill_options() const { return popt_; }
  const SpaceOptions& decode_options() const { return dopt_; }
  int strategy_heads() const { return strat_heads_; }

 private:
  JointSpace() = default;
  // Per (model, role, size): the space and its pp/tp/ep union <-> local index maps.
  struct Sub {
    int g = 0;
    std::unique_ptr<StrategySpace> space;
    std::vector<int> to_local[3];   // [pp, tp, ep] union index -> local (-1 absent)
    std::vector<int> to_union[3];   // local -> union
  };
  struct Role {
    std::vector<Sub> subs;  // by size, ascending
    const Sub* Find(int g) const;
  };
  const Sub* SubOf(int model, bool prefill, int g) const;
  // Maps the union indices of a strategy block to the sub's local ones; false if absent.
  bool ToLocal(const Sub& s, std::span<const int> block, int n, std::vector<int>* local) const;
  bool PairFits(int model, int gp, int gd) const;

  std::vector<const DisaggModel*> models_;
  SpaceOptions popt_, dopt_;
  std::vector<Role> prefill_, decode_;  // by model
  std::vector<int> sizes_;              // union of instance sizes (both roles), ascending
  std::vector<int> pp_, tp_, ep_;       // union options
  std::vector<int> head_sizes_;
  int strat_heads_ = 0;
  const StrategySpace* proto_ = nullptr;  // a sub-space whose head names and non-degree options
                                          // every sub shares
  mutable std::vector<int> scratch_local_;
  mutable std::vector<uint8_t> scratch_mask_;
};

class JointProblem final : public EncodedProblem {
 public:
  explicit JointProblem(const JointSpace& space) : space_(space) {}
  const EncodedSpace& space() const override { return space_; }
  Evaluation Evaluate(std::span<const int> idx) const override;
  DisaggEvaluation Describe(std::span<const int> idx) const;

 private:
  const JointSpace& space_;
};

// rl's search of the joint space by decomposition (docs/dev/SEARCH.md "Decomposed search"). A joint
// point's value depends on its prefill part only through (capacity, latency) and on its decode
// part only through (capacity, step), and the instance counts are exact for any pair; so the
// budget goes to per-role searches, each over one role's StrategySpace at one instance size of one
// pool (a "slot"; the pool assignments of a mixed cluster that use a pool in a role share its
// slots), run by `run` (rl on the role's own space, with all its StrategySpace refinements).
// Every role evaluation is recorded: per slot, the parts not dominated in (capacity,
// latency/step); pairs of recorded parts are joined exactly by DisaggModel::Combine (no call).
//   1. anchors: per role and pool (decode first: its steps set the prefill latency limits), rl from
//      scratch at the sizes nearest half, a quarter and a sixteenth of the largest instance size
//      (`anchor` of the budget in all; only as many of the three as get `anchor_min` calls each,
//      at least one); with `templates`, beside each anchor the usual serving shapes of that size
//      are evaluated (start_only; ServingTemplates in strategy/space.h), with `recipe` also with
//      overlap and redundant experts (AddOverlapRecipes); with `shape_sizes` also at the decode
//      role's other anchor sizes, each valid shape raised in batch while it gains;
//   2. until the budget is spent:
//      a. projection: the best part of the `sources` slots of highest capacity per GPU of a role
//         and pool is projected onto every other slot of that role and pool (ProjectPart: three
//         shapes - pp and tp kept, tp and dp kept, pp and dp kept - with pp the nearest option
//         (`other_side`: also the nearest on the other side); ep the same share of a stage, with
//         `ep_memory` onto a smaller instance at least the source's experts' GPUs; the other heads
//         the same option when allowed) and evaluated there once (start_only: with Megatron's
//         dims, every dim none, or half or a quarter of the batch when invalid); with `evidence`
//         (and `probe_early`, from the first round on) each decode slot's best part is probed;
//      b. hope: a slot not yet searched deeply is assumed to reach the best capacity per GPU seen
//         at any size of its role and pool; the pairs of slots with valid parts are ranked by the
//         rate their packing would reach at their hopes (DisaggModel::BestCounts); the first pair,
//         when it has a slot not searched deeply and its hope beats the best pair found, gets a
//         deep search of `deep` calls (at most `deep_share` of the budget) per such slot (from its
//         `start` best parts: rl's compound moves, then its policy; the prefill slot held to the
//         latency the pair's decode part leaves); with `eligible`, pairs with a slot not searched
//         deeply whose best part is below that fraction of its role's best capacity per GPU are
//         passed over; with `evidence`, every second such round hopes each decode slot not searched
//         deeply reaches evidence_gain x what its best part and its batch probes show and
//         deep-searches that decode slot only (`evidence_prefill` off); with `evidence_fallback`,
//         so is a round before the first deep search whose first pair's hopes do not beat the best
//         pair;
//      c. otherwise (with `exploit`, also in the round after deep searches that raised the best
//         pair) the slot of the best pair found that binds its rate gets a further search, also
//         from every other size's best part projected onto it;
//      unstick: a binding slot whose latest further search found nothing better is searched from
//      scratch next (then from its best parts again), and after a round of further searches that
//      left the best pair unchanged, b. takes the first ranked pair with a slot not searched
//      deeply even when its hopes do not beat the best pair found;
//      other: the other role's slot of that pair is then searched further as well (a decode
//      instance of more capacity can leave GPUs to a binding prefill pool);
//      pair_fallback: a round that searched nothing while no pairing is valid yet searches the
//      first ranked pair's prefill slot further, held to the latency its decode part leaves;
//   3. the last call evaluates the best pair of recorded parts through the joint problem.
// Every role evaluation is one call of the budget (the result's calls = the role calls + 1 <=
// budget); deterministic for a seed. The observer sees every call and may cancel.
using RoleRun = std::function<SearchResult(const Simulator& sim, const StrategySpace& space,
                                           int64_t budget, uint64_t seed,
                                           std::span<const Strategy> start, bool start_only,
                                           Observer* observer)>;
struct DecomposedOptions {
  double anchor = 0.35;  // fraction of the budget spent on the anchor searches
  int sources = 1;       // slots per role whose best part is projected onto the others
  int deep = 400;        // calls of one deep search of a slot
  // (issue 14, fourteenth pass) ... but at most this share of the budget (0.15: 149 calls at
  // 1,000, 400 from 2,668 calls on; further searches too).
  double deep_share = 0.15;
  int start = 3;         // best parts of its own a slot's search starts from
  // (issue 14, sixth pass; docs/dev/SEARCH.md "Decomposed search")
  bool unstick = true;       // 2c: from scratch after a fruitless further search; b. when stuck
  int64_t anchor_min = 200;  // anchors per role: as many of 3 as get this many calls each (>= 1)
  bool templates = true;     // the usual serving shapes evaluated beside each anchor
  // (issue 14, eighth pass) 2c: when the binding slot's latest further search found nothing
  // better, the other role's slot of the best pair gets a further search too: the rate also
  // rises when that role needs fewer GPUs and leaves them to the binding one.
  bool other = true;
  // (issue 14, thirteenth pass) 2b: a slot not searched deeply gets a deep search only when its
  // best part is at least this fraction of its role and pool's best capacity per GPU (0: every
  // slot, as before).
  double eligible = 0.6;
  // (issue 14, fourteenth pass) 2a/2b: after the first deep search (probe_early: from the first
  // projection round on), every decode slot's best part is probed one batch up with each overlap
  // option, and at the widest ep at its batch and one up (BatchProbes, one call each, once per
  // best part); its evidence is the larger of its best
  // part and its probes' best value (a probe that misses only the TPOT counts with its near-SLO
  // potential, NearSloPotential in search.h). The second, fourth, ... deep searches rank the pairs
  // with every decode slot not searched deeply at evidence_gain x its evidence instead of its
  // role's best (the first, third, ... as before: the sizes that pack well).
  bool evidence = true;
  double evidence_gain = 1.4;
  // (fourteenth pass) A round ranked by evidence also deep-searches its pair's prefill slot
  // (off: only the decode slot that the evidence chose).
  bool evidence_prefill = false;
  // (issue 14, twenty-fourth pass) ... but it does when that prefill slot's best part is below
  // its role's best capacity per GPU (a projection that has not yet found the role's shapes at
  // that size, where a deep search has room to gain). deepseek-v3 served on 128 H100s with 4,096
  // in at 1,000 calls, cold seed 4: the first round is ranked by evidence (evidence_fallback), its
  // 40-GPU decode slot is searched deeply, and the 88-GPU prefill slot of the optimum's pair
  // (8,134.9 input tokens/s per GPU beside the role's 9,042.1 at another size) never was: 0.896
  // of the optimum; searched there it reaches 9,147.0 and the run 0.997. Only while deep searches
  // are shorter than their cap `deep` (as dp_shapes: below 2,667 calls), where a round's deep
  // searches are few and a slot left out may get none; at 4,000 calls it lowered kimi-k2 on 256
  // H100s in eight runs (1.000 -> 0.977-0.993, three below 0.99).
  bool evidence_prefill_below = true;
  // (fourteenth pass) 2c: the round after deep searches that raised the best pair searches the
  // best pair's binding slot further instead of deep-searching another pair.
  bool exploit = true;
  // (issue 14, fourteenth pass) 2a: the projections also in the three shapes with pp the nearest
  // option on the other side of the one wanted (six shapes instead of three; on before).
  bool other_side = false;
  // (issue 14, fifteenth pass) 2a: a projection onto a smaller instance spreads the experts over
  // at least as many GPUs of a stage as its source did (ep >= min(ep x source pp / pp, the
  // stage's GPUs)) instead of the same share of the stage: the experts' bytes per GPU stay what
  // fitted at the source (deepseek-v3's 120-GPU decode part, ep 40, lands on 16 GPUs at ep 16,
  // not 8, which needs 138 GiB per GPU). Off: the share of the stage (before).
  bool ep_memory = true;
  // (fifteenth pass) evidence: the batch probes from the first projection round on (off: after
  // the first deep search).
  bool probe_early = true;
  // (fifteenth pass) evidence: before the first deep search, a round ranked by packing whose
  // first pair cannot beat the best pair even at its hopes (it would go to 2c) is ranked by the
  // decode slots' evidence instead, when a decode slot has probes (needs probe_early).
  bool evidence_fallback = true;
  // (issue 14, eighteenth pass) 1: the serving shapes evaluated beside each anchor also in the
  // wide-EP recipe (AddOverlapRecipes in strategy/space.h: each with every other overlap option
  // and the most redundant expert slots). kimi-k2 served on 128 H100s: the optimum's prefill
  // instance is 24 GPUs at pp=1,tp=8,ep=24 with two-batch overlap and 480 slots (11,415 input
  // tokens/s per GPU; tp=1 with every dim `none`, the shape (a) with TBO and 480 slots, 11,401);
  // the anchors' shapes had wide ep only without overlap and with one slot per expert (at
  // 24 GPUs 6,769), so their deep pipelines (pp=16, 11,192) were projected onto every other
  // prefill size, and the 24-GPU slot's projections missed memory: every seed ended at 3 x 16
  // prefill GPUs (1,049.29, 0.981). Needs `templates`.
  bool recipe = true;
  // (issue 14, twenty-second pass) 1: with `templates`, the decode role's anchor sizes that get
  // no anchor search (a budget below 3 x 2 x anchor_min / anchor calls: per_role < 3) get its
  // serving shapes too (with `recipe` also in the wide-EP recipe), each shape that is valid
  // raised one batch option at a time while it stays valid and gains (the largest batch the TPOT
  // allows, as a serving engineer sets it): no anchor search climbs the batch there. kimi-k2
  // served on 256 H100s at 1,000 calls: the one decode anchor (128 GPUs) ends at tp=1, batch 64
  // (1,442.5 tokens/s per GPU); at 64 GPUs the raised recipe with SBO reaches 1,524.3 and its
  // projection leads the 120-GPU slot to tp=2, batch 256, TBO; every seed then ends at 0.967 of
  // the optimum (cold 0.828-0.976 before). At the anchors themselves the raise is left out: at
  // 4,000 calls it cost deepseek-v3 on the GB200 NVL72 eight runs at 0.99 (1.000 -> 0.987).
  bool shape_sizes = true;
  // (twenty-second pass) 2: a round that searched nothing while no pairing of the parts found is
  // valid (every one misses the TTFT or packs into no instance counts, and the ranked pairs'
  // slots were all searched deeply) would end the search with calls left and no answer; instead
  // the first ranked pair's prefill slot is searched further, held to the latency its decode
  // part leaves (then its decode slot, when that makes no call). llama-3.1-405b served on 32 H100s,
  // pretrained role searches, 1,000 calls, seed 3, with deep searches of 0.175 of the budget: no
  // pair at 744 calls without it, 16 + 16 GPUs with it. No run of the three disaggregated sets
  // at the defaults (500 runs, 1,000 calls) reaches that end.
  bool pair_fallback = true;
  // (issue 14, twenty-third pass) 2b: before a decode slot's deep search, the data-parallel-
  // attention shapes of its best part (DpAttentionShapes in strategy/space.h: tp options above
  // the part's up to the NVLink domain, pp = 1, the widest ep, sp on, the embedding, QKV and
  // attention core `none`, the part's KV per GPU, each overlap option) are evaluated one tp
  // option at a time, each valid one raised one batch option at a time while it stays valid and
  // gains (as shape_sizes does), as parts the deep search may start from; the next tp option only
  // while the slot's best part gained. Only while deep searches are shorter than their cap
  // `deep` (deep_share binds: below 2,667 calls); one of 400 calls climbs there itself (at 4,000
  // calls the suite's 90 runs are per seed the same either way; on there, the calls they take
  // cost the GB200 NVL72 seven runs at 0.99). A 149-call climb from a tp=1 or tp=2 wide-EP part
  // does not reach a decode instance whose attention is data-parallel in tp groups of four:
  // kimi-k2 served on 256 H100s at 1,000 calls, the 120-GPU decode slot climbed to tp=2, batch
  // 256 (2,586.4 tokens/s per GPU; every cold seed 0.967 of the optimum); the shape at tp=4
  // raised to batch 512 (2,645.4) starts it there and it ends at the role's optimum (2,675.19;
  // every cold seed the joint optimum).
  bool dp_shapes = true;
  // (issue 14, twenty-fourth pass) dp_shapes also at the tp options below the part's (down to 2)
  // and with every dim `none` but the LM head split on the vocabulary (DpAttentionShapes' `wide`).
  // deepseek-v3 served on 256 H100s at 1,000 calls: the 24-GPU decode slot's role optimum is tp=2
  // at batch 256 with only the LM head split (3,707.2 tokens/s per GPU, `l2s eval`); the tp=2
  // point with every dim `none` is the tp=1 program (3,698.8), so no climb move leads there, and
  // a part already at tp=8 (the domain) had no shapes at all: six cold seeds ended at 0.9795 of
  // the optimum, now 0.982 (the role optimum's pair).
  bool dp_shapes_wide = true;
  // (twenty-fourth pass) 2c: while deep searches are shorter than their cap `deep` (as
  // dp_shapes), `exploit` is skipped once fewer than two deep searches' calls are left: the
  // round goes to the first ranked pair's deep search when its hopes beat the best pair, so the
  // last calls do not all go to further searches of a slot already searched deeply. kimi-k2
  // served on 64 H200s at 1,000 calls, cold seed 5: the 16-GPU decode slot of the optimum's pair
  // got no deep search (0.892), now does (1.000). At 4,000 calls the same rule (ungated) cost
  // kimi-k2 on 256 H100s eight runs at 0.99 (twenty-third pass), hence the gate.
  bool deep_first = true;
  // (twenty-fourth pass) dp_shapes also after a decode slot's deep search, from the part it
  // raised, when the shapes before it had raised the slot's best part (the slot is in the
  // data-parallel-attention regime; the deep search may have moved what the shapes keep: the
  // part's MTP tokens, its overlap). deepseek-v3 served on 256 H100s at 1,000 calls, cold seed 9:
  // the 24-GPU slot's part (tp=4, one MTP token) raised by its shapes to tp=2 with TBO (2,779.5),
  // the deep search ends at tp=1 with two MTP tokens (3,698.8); the tp=2 LM-head shape from there
  // is the role's optimum (3,707.2) and the run ends at 0.982 of the joint optimum (0.9795).
  bool dp_shapes_after = true;

  bool operator==(const DecomposedOptions&) const = default;
};
// A strategy of `to` (an instance of another size of the same role) like `s` of `from`: the
// decomposed search's projections. Head by head under `to`'s mask, in one of three shapes: mode 0
// keeps pp and tp (the replicas dp follow the size), mode 1 keeps tp and dp (pp follows), mode 2
// keeps pp and dp (tp follows); modes 3-5 are those with pp the nearest option on the other side
// of the one wanted. Each degree is the allowed option nearest (in log2) to the one wanted; ep the
// same share of a stage's GPUs, and with ep_memory onto a smaller instance at least
// min(s.ep x s.pp / pp, the stage's GPUs) (DecomposedOptions::ep_memory); every other head the
// same option when allowed, else the nearest one. False when `s` is not a point of `from` or the
// result is not structurally valid.
bool ProjectPart(const StrategySpace& from, const Strategy& s, const StrategySpace& to, int mode,
                 bool ep_memory, Strategy* out);

SearchResult SearchJointDecomposed(const JointProblem& problem, int64_t budget, uint64_t seed,
                                   Observer* observer, const RoleRun& run,
                                   const DecomposedOptions& options = {});

struct DisaggOracleStats {
  int64_t pool_solves = 0;      // SolveExact calls on one role's instance space
  int64_t pairs = 0;            // (assignment, prefill size, decode size) pairs
  int64_t pairs_examined = 0;   // ... not pruned by their upper bound
  int64_t frontier_points = 0;  // decode frontier points examined
  int64_t sizes_bounded = 0;    // decode sizes whose solve the incumbent's floor cut short
                                // (or made unnecessary)
  double wall_s = 0;
};

struct DisaggResult {
  bool found = false;
  bool interrupted = false;
  std::vector<int> best_encoded;
  JointSpace::Point best;
  DisaggEvaluation eval;
  double wall_s = 0;
  std::string note;
  std::string why_none;  // solved without a valid point: the binding limit, one line
};

// The exact optimum of the joint space by decomposition (docs/dev/SEARCH.md): per instance size,
// each role is solved exactly by SolveExact (oracle.h); the TTFT couples the roles only through
// the decode step, so the decode role is walked along its frontier (best capacity at a step
// strictly shorter than the previous point's) with the prefill solved at the latency the rest of
// the TTFT leaves, and pairs of sizes are pruned by an upper bound. The observer may cancel.
struct DisaggOracleOptions {
  // Decode sizes solved with the incumbent's floor (OracleOptions::floor) or skipped when no
  // capacity could beat the incumbent; off = every decode size solved in full (the reference).
  bool floors = true;
  // Each pool solve's partial bound (OracleOptions::partial_bound).
  bool partial_bound = true;
};
DisaggResult SolveDisaggExact(const JointSpace& space, Observer* observer,
                              DisaggOracleStats* stats = nullptr,
                              const DisaggOracleOptions& options = {});

}  // namespace l2s
