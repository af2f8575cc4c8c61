// The strategy space of one problem (model x cluster): option lists per sub-action, the stable
// integer encoding the searchers and the RL policy use, structural validity with reasons, and the
// validity mask for sampling sub-actions in order.
//
// Sub-actions ("heads"), in this fixed order:
//   0 pp     - pipeline stages: divisors of the GPU count that are <= num_layers
//   1 tp     - attention tensor parallel: divisors of the GPU count that divide num_heads
//   2 ep     - expert parallel: divisors of the GPU count that divide num_experts (just {1} for
//              dense models)
//   3 batch  - sequences per attention-dp rank: powers of two 1..max_batch, or {auto}
//   4 sp     - residual stream: {off (replicated), on (split on tokens)}
//   5..      - one head per operator the model HAS, in Op order, options {dim0, dim1, none}
//              ({Megatron's dim} alone under an engine restriction, see EngineRestriction)
//   then, for models with MoE layers only:
//   slots    - routed-expert slots (SlotOptions: 0 = one per expert, E + E/8, E + E/4); ep must
//              divide the slots (E when 0)
//   overlap  - {none, tbo, sbo}; tbo and sbo need ep > 1
//   then, for models with MTP (next-token-prediction) layers only:
//   mtp      - speculative tokens per decode step: SpaceOptions::mtp (plan: 0..3 in decode and
//              serve modes, {0} in prefill)
// dp is derived: dp = GPUs / (pp * tp). Operators the model lacks are fixed to none. An engine
// restriction (SpaceOptions::restriction) narrows these options and removes the degree
// combinations the engine cannot launch (src/engine/restrict.h).
// Memory and SLO validity need the simulator and are not checked here.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "hw/hw.h"
#include "model/model.h"
#include "strategy/encoded_space.h"
#include "strategy/strategy.h"

namespace l2s {

// True when the model has this operator (e.g. no moe_* for dense models, no shared_* without
// shared experts, no dense_ffn* when every layer is MoE).
bool ModelHasOp(const ModelSpec& m, Op op);

// Structural validity of a strategy for a model and GPU count, with a reason a user understands
// ("tp=6 does not divide the 64 attention heads", "pp*tp*dp = 12 but the cluster has 16 GPUs").
// KV heads fewer than tp is valid (the KV cache is replicated) and not an error.
Status CheckStrategy(const ModelSpec& m, int num_gpus, const Strategy& s);

// mtp in 0..kMaxMtpTokens, and > 0 only for models with MTP (next-token-prediction) layers or a
// draft model (ModelSpec::can_speculate).
Status CheckMtp(const ModelSpec& m, int mtp);

// Smallest slot count above `experts` that `ep` divides (used in error messages as a hint).
int RedundantSlotsFor(int experts, int ep);

// Expert-slot options the space searches for a MoE model: 0 (one slot per expert, checkpoint
// placement) and E + E/8, E + E/4 redundant slots (EPLB placement); {0} for dense models and
// models with fewer than 64 routed experts.
std::vector<int> SlotOptions(const ModelSpec& m);

// Valid but worth telling the user, one line each: KV heads fewer than tp (the KV cache is
// replicated), MLA's latent cache replicated over tp, sp=on with tp=1. Empty when nothing to say.
std::vector<std::string> StrategyNotes(const ModelSpec& m, const Strategy& s);

// Sets the dim of every operator the model lacks to none (FromText/FromJson default every dim to
// Megatron's, so e.g. a dense model gets moe_ffn1=dim1; StrategySpace::Encode/Check reject that).
void ClearAbsentOps(const ModelSpec& m, Strategy* s);

// Strategies that differ only in choices without effect run identically: the dims of operators
// whose group is a single GPU (the tp group for dense operators, the expert-TP group for expert
// FFNs) and sp when tp = 1. Canonical returns the representative with Megatron's dims there,
// sp off and absent operators none, so that equivalent plans print the same.
Strategy Canonical(const ModelSpec& m, const Strategy& s);

class StrategySpace;
// Every structurally valid (pp, tp, ep) combination of `space`'s options for its GPU count, dp
// derived, with Megatron dims (operators the model lacks none), batch 0 (auto), sp off, no
// redundant slots, no overlap, mtp 0, in pp, tp, ep option order. The degree scans of the
// engine-expressible plans and of the TPOT sweep's fastest plan start from these.
std::vector<Strategy> MegatronDegreeCombinations(const ModelSpec& m, const StrategySpace& space);

// What an inference engine can launch, as data the space honours (src/engine/restrict.h fills
// it from the engine's capability table; the default, inactive, is the paper's full space). Each
// rule removes points from the space: Decode, Encode, Check, Mask and CountValid all honour it,
// so masked sampling and the oracle's enumeration only reach points the engine launches.
struct EngineRestriction {
  bool active = false;              // false: no restriction at all (the fields below are ignored)
  bool megatron_dims_only = false;  // every operator head has one option: Megatron's dim
  bool ep_one_or_stage = false;     // ep = 1 or ep = tp*dp (vLLM's --enable-expert-parallel)
  bool ep_one_or_stage_with_dp = false;  // the same when dp > 1 only (SGLang: DeepEP's all-to-all
                                         // spans the whole --tp group)
  bool tp_one_or_stage = false;     // tp = 1 or dp = 1: attention all-TP or all-DP in a stage
  bool slots_need_ep = false;       // redundant slots (slots != 0) only with ep > 1
  bool tbo_needs_dp = false;        // overlap=tbo only with dp > 1 (vLLM's --enable-dbo)
  bool mtp_needs_one_stage = false; // mtp > 0 only with pp = 1 (no speculation over stages)
  bool stages_need_one_dp = false;  // pp > 1 only with dp = 1 (ATOM: no pipeline stages with
                                    // data-parallel engine cores)
  bool one_stage = false;           // pp = 1 only (a vLLM server of a disaggregated pool)
  std::array<bool, 3> overlaps{true, true, true};  // allowed, indexed by Overlap (none, tbo, sbo)
  std::string engine;               // the engine's name, for the reasons Check gives
};

struct SpaceOptions {
  int max_batch = 1024;      // largest batch option (powers of two from 1)
  bool search_batch = true;  // false: the batch head has the single option `fixed_batch`
  int fixed_batch = 0;       // used when !search_batch; 0 = auto
  bool search_sp = true;     // false: sp fixed to off
  // MoE models: search the expert slots / overlap heads, or fix them to one value.
  bool search_slots = true;
  int fixed_slots = 0;       // used when !search_slots (0 = one slot per expert)
  bool search_overlap = true;
  Overlap fixed_overlap = Overlap::kNone;  // used when !search_overlap
  // Options of the mtp head (models with MTP layers; each must pass CheckMtp). Models without
  // MTP layers have no mtp head and accept only {0}.
  std::vector<int> mtp = {0};
  // Inactive by default; see EngineRestriction.
  EngineRestriction restriction{};
};

class StrategySpace final : public EncodedSpace {
 public:
  static StatusOr<StrategySpace> Make(const ModelSpec& m, int num_gpus, const SpaceOptions& opt = {});

  enum Head : int { kPp = 0, kTp = 1, kEp = 2, kBatch = 3, kSp = 4, kFirstDim = 5 };

  int num_heads() const override { return static_cast<int>(head_sizes_.size()); }
  int head_size(int h) const override { return head_sizes_[h]; }
  const std::vector<int>& head_sizes() const override { return head_sizes_; }
  std::string head_name(int h) const override;           // "pp", "tp", "ep", "batch", "sp", "attn_qkv"...
  std::string option_name(int h, int i) const override;  // "8", "auto", "on", "dim1", ...
  const std::vector<Op>& searched_ops() const { return ops_; }  // op of head kFirstDim + i
  const std::vector<int>& pp_options() const { return pp_; }
  const std::vector<int>& tp_options() const { return tp_; }
  const std::vector<int>& ep_options() const { return ep_; }
  const std::vector<int>& batch_options() const { return batch_; }  // 0 = auto
  const std::vector<int>& slot_options() const { return slots_; }   // {0} for dense models
  const std::vector<Overlap>& overlap_options() const { return overlaps_; }
  // Heads after the operator dims (MoE models only); -1 when the space has no such head.
  int slots_head() const { return slots_head_; }
  int overlap_head() const { return overlap_head_; }
  const std::vector<int>& mtp_options() const { return mtp_; }  // {0} without MTP layers
  int mtp_head() const { return mtp_head_; }                     // -1 without MTP layers
  int num_gpus() const { return num_gpus_; }
  // Options of operator op's head, in option order: {dim0, dim1, none}, or {Megatron's dim} in
  // a space restricted to Megatron's dims; {none} for an operator the model lacks.
  const std::vector<Dim>& dim_options(Op op) const { return dim_options_[static_cast<int>(op)]; }
  // The options the space was made with (the engine restriction included).
  const SpaceOptions& options() const { return options_; }
  const EngineRestriction& restriction() const { return options_.restriction; }
  // Ok when `s` obeys the engine restriction (always when it is inactive): its degrees, dims,
  // sp, slots, overlap and mtp are among those the engine launches; else the reason. Batch and
  // structural validity are not checked here (Check does both).
  Status CheckRestriction(const Strategy& s) const;
  // The restriction's rules one choice at a time (all true when it is inactive), for code that
  // enumerates the space (Mask, CountValid, the oracle): tp given pp and the stage's GPUs, ep
  // given them and tp, slots given ep, an overlap given dp and ep, an mtp depth given pp.
  bool TpAllowed(int pp, int per_stage, int tp) const;
  bool EpAllowed(int per_stage, int tp, int ep) const;
  bool SlotsAllowed(int ep, int slots) const;
  bool OverlapAllowed(int dp, Overlap o) const;
  bool MtpAllowed(int pp, int mtp) const;

  // idx has num_heads() entries, each in [0, head_size(h)).
  Strategy Decode(std::span<const int> idx) const;
  // False when `s` is not representable (a degree or batch not among the options, a dim set on
  // an operator the model lacks).
  bool Encode(const Strategy& s, std::vector<int>* idx) const;
  Status Check(const Strategy& s) const;  // CheckStrategy + representable

  // Valid options of head h given the earlier heads prefix[0..h). out.size() == head_size(h);
  // out[i] = 1 if option i keeps the strategy completable to a structurally valid one.
  // Guarantee: choosing every head from its mask in order yields Check(...).ok().
  void Mask(std::span<const int> prefix, int h, std::span<uint8_t> out) const override;

  double Size() const override;  // product of head sizes (all combinations)
  double CountValid() const;  // structurally valid combinations (exact)

  // EncodedSpace: Check(Decode(idx)).ok(); pp, tp, ep and batch are ordinal; every head but the
  // operator dims is structural.
  bool Valid(std::span<const int> idx) const override { return Check(Decode(idx)).ok(); }
  bool ordinal(int h) const override { return h == kPp || h == kTp || h == kEp || h == kBatch; }
  bool structural(int h) const override {
    return h < kFirstDim || h >= kFirstDim + static_cast<int>(ops_.size());
  }
  // Operator groups: attention (qkv, core, out), each FFN pair (MoE, shared, dense), and the
  // router, embedding and LM head each alone. The batch head is kBatch. Recipes: 0 Megatron's
  // dims with sp off; 1 data-parallel attention inside the tp group (every operator sharded over
  // the tp group but the LM head `none`, sp on where searched; the expert FFNs and the LM head at
  // Megatron's): with dims `none` a tp group computes as tp = 1 does, and sp keeps the residual
  // split on tokens, so tp can grow without the all-gathers a replicated residual needs; 2 data
  // parallel: every dim `none` but the LM head's (Megatron's), experts included, sp on.
  // Canonicalize: Encode(Canonical(model, Decode(idx))) when representable.
  int group(int h) const override;
  bool batch(int h) const override { return h == kBatch; }
  int num_recipes() const override { return 3; }
  int recipe_option(int h, int r) const override;
  void Canonicalize(std::vector<int>* idx) const override;
  const ModelSpec& model() const { return *model_; }

 private:
  const ModelSpec* model_ = nullptr;  // not owned; must outlive the space
  int num_gpus_ = 0;
  std::vector<int> pp_, tp_, ep_, batch_, slots_;
  std::vector<Overlap> overlaps_;
  int slots_head_ = -1, overlap_head_ = -1;
  std::vector<int> mtp_;
  int mtp_head_ = -1;
  std::vector<Op> ops_;
  std::vector<int> head_sizes_;
  bool search_sp_ = true;
  std::array<std::vector<Dim>, kNumOps> dim_options_;
  SpaceOptions options_;
};

// The two usual shapes of a serving (decode) instance on `space`'s GPUs: pp = 1 with the widest
// expert parallelism (and the first slot option it divides) and the middle batch option,
// (a) tp = 1 with every operator dim `none` (data-parallel attention, every weight whole per GPU)
// and (b) tp over one NVLink domain of `domain` GPUs (or all of them when fewer) with Megatron's
// dims; sp off, absent operators `none`. Those not structurally valid in `space` (Check fails)
// are left out; no duplicates. Under an engine restriction the widest ep is the widest its rules
// allow and each shape is put in the engine's form. The decomposed disaggregated search starts its
// role searches from them (search/joint_decomposed.cc).
std::vector<Strategy> ServingTemplates(const StrategySpace& space, const ModelSpec& m, int domain);

// The wide-EP serving recipe (large-scale expert-parallel deployments: redundant experts placed
// by EPLB and the MoE all-to-all overlapped): appends to *t, for each of its shapes, the shape with
// each other overlap option of `space` and the most redundant slot option that passes
// space.Check (none when no slot option does). Shapes already in *t are not added again.
void AddOverlapRecipes(const StrategySpace& space, std::vector<Strategy>* t);

// Sets s->slots to the first slot option of `space` (in option order: one slot per expert, then
// the redundant counts) with which *s passes space.Check, e.g. 288 for ep = 144 with 256 experts;
// with most_redundant the last such option instead; false, *s unchanged, when none does.
// ServingTemplates fits its widest-ep shapes with it, AddOverlapRecipes its recipes (the most
// redundant), the decomposed disaggregated search a part moved to another instance size
// (search/joint_decomposed.cc).
bool FitSlots(const StrategySpace& space, Strategy* s, bool most_redundant = false);

}  // namespace l2s
