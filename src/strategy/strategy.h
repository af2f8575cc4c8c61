// A strategy: parallelism degrees, batch, residual-stream layout and the sharding dimension of
// each of the 12 fused operators. See docs/dev/STRATEGY.md for the exact meaning of every choice.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace l2s {

// The 12 fused operators of the paper (fixed order: also the order of the per-op sub-actions).
enum class Op : uint8_t {
  kEmbed,
  kAttnQkv,
  kAttnCore,
  kAttnOut,
  kMoeRouter,
  kMoeFfn1,
  kMoeFfn2,
  kSharedFfn1,
  kSharedFfn2,
  kDenseFfn1,
  kDenseFfn2,
  kLmHead,
};
constexpr int kNumOps = 12;
std::string_view OpName(Op op);  // "embed", "attn_qkv", ...
bool ParseOp(std::string_view s, Op* out);

// Sharding dimension of one operator over its group (tp group for dense ops, expert-TP group for
// expert FFNs). For a matmul Y[T,N] = X[T,K] W[K,N] over g GPUs:
//   kDim0: W split along K; X must arrive split on features; Y leaves as partial sums.
//   kDim1: W split along N; X must arrive whole;             Y leaves split on features.
//   kNone: W whole on every GPU; tokens split across the group (data-parallel inside the group).
// attn_core: kDim0 = split heads, kDim1 = split each sequence's KV (context parallel),
//            kNone = whole heads, the group's sequences divided among its GPUs.
enum class Dim : uint8_t { kDim0 = 0, kDim1 = 1, kNone = 2 };
std::string_view DimName(Dim d);  // "dim0", "dim1", "none"
bool ParseDim(std::string_view s, Dim* out);

// How a MoE layer's all-to-all overlaps compute (docs/dev/COST_MODEL.md "Overlap"):
//   kNone - dispatch, expert GEMMs and combine run one after another;
//   kTbo  - two-batch overlap: the step's tokens are split in two micro-batches and each half's
//           dispatch/combine runs under the other half's compute (two half-size GEMMs);
//   kSbo  - single-batch overlap: the combine is overlapped with the down projection.
enum class Overlap : uint8_t { kNone = 0, kTbo = 1, kSbo = 2 };
std::string_view OverlapName(Overlap o);  // "none", "tbo", "sbo"
bool ParseOverlap(std::string_view s, Overlap* out);

// Largest number of speculative tokens per decode step a strategy may carry (MTP depth).
constexpr int kMaxMtpTokens = 8;

struct Strategy {
  int pp = 1;      // pipeline stages
  int tp = 1;      // attention tensor parallel (inside a stage)
  int dp = 1;      // attention data parallel: tp * dp = GPUs per stage
  int ep = 1;      // expert parallel (MoE layers); expert-TP = GPUs per stage / ep
  int batch = 0;   // sequences per attention-dp rank; 0 = auto (the simulator chooses)
  bool sp = false; // residual stream split on tokens across the tp group (sequence parallel)
  std::array<Dim, kNumOps> dims{};
  // Wide-EP choices (MoE models; ignored for dense ones):
  int slots = 0;   // routed-expert slots per instance (redundant experts); 0 = one per expert.
                   // ep must divide the slots. Text form `slots=288`, JSON `expert_slots`.
  Overlap overlap = Overlap::kNone;  // text/JSON `overlap=none|tbo|sbo`
  int mtp = 0;     // speculative (MTP / draft) tokens per decode step; text/JSON `mtp`

  Dim dim(Op op) const { return dims[static_cast<int>(op)]; }
  void set_dim(Op op, Dim d) { dims[static_cast<int>(op)] = d; }
  int gpus_per_stage() const { return tp * dp; }
  int gpus() const { return pp * tp * dp; }
  int etp() const { return tp * dp / ep; }

  bool operator==(const Strategy&) const = default;
};

// Megatron-LM's fixed per-operator dims: vocab-parallel embedding and LM head, column- then
// row-parallel attention and MLP (one all-reduce per block), replicated router.
std::array<Dim, kNumOps> MegatronDims();
// The paper's discovered MLP variant: the second MLP matmul split on its output (hidden) dim.
std::array<Dim, kNumOps> PaperMlpVariantDims();

// Canonical one-line text form, e.g.
//   "pp=2,tp=8,dp=4,ep=32,batch=64,sp=off,embed=dim0,attn_qkv=dim1,...,lm_head=dim1"
// batch=auto for 0. ToText writes every field in a fixed order, the wide-EP fields (slots,
// overlap, mtp) after sp and only when they differ from their defaults (0, none, 0); FromText accepts any order and
// any subset: missing degrees default to 1 (dp: GPUs/(pp*tp) when `total_gpus` > 0), missing
// dims default to Megatron's, missing batch to auto.
std::string ToText(const Strategy& s);
// ToText's part before the per-operator dims: degrees, batch, sp and the wide-EP fields, e.g.
// "pp=1,tp=2,dp=1,ep=1,batch=auto,sp=off,mtp=2".
std::string DegreesText(const Strategy& s);
StatusOr<Strategy> FromText(std::string_view text, int total_gpus = 0);

}  // namespace l2s
