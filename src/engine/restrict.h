// What an engine launches, applied to strategies and to the strategy space, from the capability
// table (engine.h):
//   - Violations: the choices of a strategy the engine cannot launch, one reason each;
//   - Repairs: what the engine runs instead (the plan's choices it cannot express replaced);
//   - RestrictOptions / RestrictedSpace: the space of exactly the strategies the engine launches
//     (StrategySpace honours the restriction in Decode, Encode, Check, Mask and CountValid, so
//     masked sampling, the searchers and the oracle stay inside it; search::Objective charges a
//     point outside it without simulating it and never returns it).
// Invariant (restrict_test): a structurally valid strategy of the unrestricted space has no
// violations exactly when its Canonical form is in the restricted space built from the same
// options.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "engine/engine.h"
#include "model/model.h"
#include "strategy/space.h"
#include "strategy/strategy.h"

namespace l2s::engine {

struct Violation {
  enum class Kind {
    kDim,             // a per-operator dim other than Megatron's on a group of > 1 GPU
    kSp,              // sp = on with tp > 1 where the engine has no sequence parallelism
    kMtp,             // mtp > 0 where the engine has no MTP speculative decoding
    kSlots,           // redundant slots where the engine has none, or with ep = 1
    kOverlap,         // an overlap the engine does not have
    kExpertSpan,      // ep the engine cannot span (vLLM: 1 < ep < tp*dp)
    kAttentionSplit,  // tp > 1 with dp > 1 where the engine runs attention all-TP or all-DP
    kStagesWithDp,    // pp > 1 with dp > 1 where the engine runs pipeline stages only at dp = 1
    kPoolStages,      // pp > 1 in a disaggregated pool where the engine's KV connector has none
  };
  Kind kind = Kind::kDim;
  Op op = Op::kEmbed;     // kDim: the operator
  Dim runs = Dim::kNone;  // kDim: the dim the engine runs instead (Megatron's)
  std::string text;       // one line: what the plan wants, why the engine cannot, what it runs
};

// The choices of `s` that engine `c` cannot launch as they are, in the order of Violation::Kind.
// `s` is assumed structurally valid for `m` (CheckStrategy); kIdeal launches everything. Empty:
// the engine launches `s` exactly. `role`: a server of a disaggregated pool also runs pp = 1 where
// the engine's KV transfer has no pipeline stages on that side (StagesAllowed).
std::vector<Violation> FindViolations(const Capabilities& c, const ModelSpec& m, const Strategy& s,
                                      Role role = Role::kServer);
// The same, the texts only.
std::vector<std::string> Violations(const Capabilities& c, const ModelSpec& m, const Strategy& s,
                                    Role role = Role::kServer);
inline bool Launchable(const Capabilities& c, const ModelSpec& m, const Strategy& s,
                       Role role = Role::kServer) {
  return FindViolations(c, m, s, role).empty();
}

// What engine `c` can run instead of `s`: Megatron dims (operators the model lacks none), sp,
// mtp, slots and overlap off where unsupported, and each repair of the degrees (ep -> 1 or tp*dp
// for kOneOrStage; (tp, dp) -> (1, G) then (G, 1) for a split the engine lacks, (G, 1) for
// pipeline stages the engine runs only without data parallelism). Only
// structurally valid candidates, each launchable, no duplicates; {Canonical(s)} when `s` is
// launchable (the same computation); empty when no repair is valid. A pool server whose stages
// `role` does not allow has them folded into tp, then into dp (pp = 1 on the same GPUs) first.
std::vector<Strategy> Repairs(const Capabilities& c, const ModelSpec& m, const Strategy& s,
                              Role role = Role::kServer);

// `opt` narrowed to what engine `c` launches for model `m`: Megatron dims only, sp off, mtp {0},
// no redundant slots, the engine's overlaps and degree rules, as the table says (kIdeal: `opt`
// unchanged, restriction inactive). InvalidArgument when `opt` fixes a choice the engine lacks
// (e.g. a fixed overlap=sbo for TensorRT-LLM, fixed slots for Megatron-LM, an mtp head without 0
// for Megatron-LM), naming the engine.
// `role`: a disaggregated pool's servers, pp = 1 where StagesAllowed says so.
StatusOr<SpaceOptions> RestrictOptions(const Capabilities& c, const ModelSpec& m,
                                       SpaceOptions opt, Role role = Role::kServer);
// StrategySpace::Make(m, num_gpus, RestrictOptions(c, m, opt)). `m` must outlive the space.
StatusOr<StrategySpace> RestrictedSpace(const Capabilities& c, const ModelSpec& m, int num_gpus,
                                        const SpaceOptions& opt = {});
// The same from an existing space (its model, GPU count and options).
StatusOr<StrategySpace> RestrictedSpace(const Capabilities& c, const StrategySpace& space);

}  // namespace l2s::engine
