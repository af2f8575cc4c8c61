// The layout algebra's output: what every GPU computes and communicates for one step of a
// strategy. BuildProgram turns (model, cluster topology, strategy, step shape) into per-GPU
// compute steps (with per-GPU shapes, FLOPs, bytes, weight bytes) and the collectives that convert
// one operator's output layout into the next operator's input layout. It allocates nothing: all
// arrays are fixed-capacity. The simulator (src/sim) costs the steps; `l2s explain` prints them.
//
// Layouts of an activation [T tokens, F features] over a group of g GPUs:
//   kReplicated - every GPU holds all of it
//   kTokens     - split on tokens (whole sequences divided among the g GPUs)
//   kFeatures   - split on features (F/g each)
//   kPartial    - every GPU holds a full-size partial sum
// Conversions: same -> free; replicated -> split = free local slice; partial -> replicated =
// all-reduce; partial -> split = reduce-scatter; split -> replicated = all-gather; tokens <->
// features = all-to-all. Norms and residual adds need whole feature rows (replicated or tokens).
//
// Rank-to-GPU mapping (documented in docs/dev/STRATEGY.md): inside a pipeline stage of G = tp*dp GPUs,
// tp is innermost (a tp group = `tp` consecutive GPUs), then dp; for MoE layers the expert-TP group
// is `etp` consecutive GPUs and the ep index is outer (stride etp); stages are consecutive blocks
// of G GPUs. GPUs are numbered so that each NVLink domain holds consecutive GPUs.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/dtype.h"
#include "hw/hw.h"
#include "model/model.h"
#include "strategy/strategy.h"

namespace l2s {

enum class Layout : uint8_t { kReplicated, kTokens, kFeatures, kPartial };
const char* LayoutName(Layout l);

// Collective kinds as the layout algebra emits them (the simulator maps them to CollKind).
enum class CommKind : uint8_t { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kSendRecv,
                                kDispatch, kCombine };
const char* CommKindName(CommKind k);

// Group a step runs over.
enum class GroupKind : uint8_t { kTp, kEtp, kStage, kPipe };

enum class StepKind : uint8_t {
  kGemm,         // m x n x k per GPU, `count` instances (grouped experts)
  kAttnDecode,   // decode attention (GQA or MLA), per-GPU heads and sequences
  kAttnPrefill,  // causal prefill attention
  kElementwise,  // norms, activations, residual adds, embedding lookup: bytes through HBM
  kComm,         // a collective or point-to-point transfer
  // Token mixers of the hybrid / sparse layer kinds (docs/dev/COST_MODEL.md "Layer kinds"):
  kStream,       // memory-bound pass: `bytes` through HBM, `flops` at the wdtype peak
                 // (recurrent state read + write in decode, the DSA indexer's key scan)
  kScan,         // chunked linear-attention / SSM scan in prefill: `flops` costed as grouped
                 // GEMMs of the per-head state shape (m tokens x n value dim x k key dim)
};

struct Step {
  StepKind kind = StepKind::kElementwise;
  Op op = Op::kEmbed;       // operator this step belongs to (a conversion belongs to the op after
                            // which it is inserted)
  const char* what = "";    // short static label: "gemm", "norm", "reduce-scatter", ...
  // kGemm: Y[m,n] = X[m,k] W[k,n] per GPU, `count` times; weights in `wdtype`.
  double m = 0, n = 0, k = 0, count = 1;
  DType wdtype = DType::kBF16;
  // kAttn*: per GPU. seqs may be fractional in serve mode (chunked prefill share per step).
  double seqs = 0, q_len = 0, kv_len = 0, heads = 0, kv_heads = 0, head_dim = 0, v_head_dim = 0;
  double window = 0;
  // kAttnPrefill: mean keys a query attends when they are neither every earlier token nor a
  // window (DeepSeek-V4 compressed layers: window + pooled entries); 0 = from `window`.
  double keys = 0;
  bool mla = false;
  double latent_dim = 0, rope_dim = 0;  // MLA
  DType kvdtype = DType::kBF16;
  // kElementwise: bytes moved through HBM.
  double bytes = 0;
  // kComm
  CommKind comm = CommKind::kAllReduce;
  GroupKind group = GroupKind::kTp;
  int group_size = 1;
  int group_domains = 1;     // NVLink domains the group spans (1 = stays inside one)
  double comm_bytes = 0;     // nccl-tests convention (see sim/collectives.h)
  double fanout = 0;         // dispatch/combine: routed copies per token (top-k); 0 otherwise
  // Overlap (Strategy::overlap = sbo): index of the step in the same section this step runs
  // concurrently with, or -1. The pair costs max(a, b) instead of a + b; the saving, min(a, b),
  // is taken from this step (both belong to the same operator group).
  int hides_under = -1;
  Layout from = Layout::kReplicated, to = Layout::kReplicated;
  // Accounting for every kind:
  double flops = 0;          // per GPU
  double weight_bytes = 0;   // weights this step holds per GPU (counted once per layer)
};

static_assert(std::is_trivially_copyable_v<Step>, "Section::Add copies a blank Step");

// Steps of one kind of layer (or of the embedding / LM-head section).
struct Section {
  static constexpr int kMaxSteps = 64;
  std::array<Step, kMaxSteps> steps{};
  int num_steps = 0;
  double weight_bytes = 0;       // per GPU, per layer of this kind
  double kv_bytes = 0;           // per GPU, per layer of this kind, for the step's sequences:
                                 // KV cache plus recurrent state (the sequences' cache memory)
  double state_bytes = 0;        // of kv_bytes: fixed recurrent state (linear attention, Mamba)
  double act_bytes = 0;          // per GPU: largest live activation in this section
  Step& Add() {
    // Copying a blank step is a few vector moves; value-initialising one member by member was
    // ~30% of an evaluation (sim_bench).
    static const Step kBlank{};
    std::memcpy(static_cast<void*>(&steps[num_steps]), &kBlank, sizeof(Step));
    return steps[num_steps++];
  }
};

// What one step processes, per attention-dp rank.
struct StepShape {
  double decode_seqs = 0;    // sequences generating one token each
  double decode_kv_len = 0;  // keys each decoding token attends (context)
  double prefill_seqs = 0;   // prompts being prefilled this step (fractional in serve mode)
  double prefill_len = 0;    // prompt length
  double kv_hold_len = 0;    // tokens of KV each decoding sequence holds (memory), default kv_len
  // Query tokens each decoding sequence runs through the model per step: 1, or K + 1 when a step
  // verifies K speculative (MTP) tokens (docs/dev/COST_MODEL.md "MTP").
  double decode_q = 1;
  // prefill_seqs is serve mode's steady-state prefill share per step (a rate, fractional or
  // not): split evenly over a group that divides sequences, i.e. a prompt's chunk is divided by
  // tokens. False: prefill_seqs whole prompts, each kept whole on one GPU.
  bool prefill_rate = false;
};

// Distinct kinds of layers: one per distinct LayerSpec (mixer, window, FFN kind, per-layer
// shapes) of the model, in order of first appearance.
using LayerKind = LayerSpec;

struct ProgramConfig {
  DType weight = DType::kBF16;   // weight dtype of quantised parts (attention may stay bf16)
  DType kv = DType::kBF16;
  DType act = DType::kBF16;      // activations / communication
  double expert_imbalance = 1.0; // max/mean tokens per expert-parallel rank (set by the simulator)
  DType dispatch = DType::kBF16;  // MoE dispatch payload (FP8 when the experts are quantised)
  // Expert parallelism over data-parallel ranks moves tokens by an all-gather of every rank's
  // tokens over the stage and a reduce-scatter of the expert outputs (vLLM's default
  // allgather_reducescatter backend), not by a dispatch / combine all-to-all.
  bool moe_gather = false;
  // The model's layer kinds exactly as CollectLayerKinds numbers them, precomputed by a caller
  // that builds many programs of one model (the simulator) so that BuildProgram does not rescan
  // the layers; null = scan.
  const LayerKind* kinds = nullptr;
  int num_kinds = 0;
};

struct Program {
  static constexpr int kMaxKinds = ModelLimits::kMaxLayerKinds;
  Section embed;    // first stage only
  Section lm_head;  // last stage only (final norm, lm_head, sampling conversion)
  Section pipe;     // per stage boundary (send/recv of the residual stream)
  std::array<Section, kMaxKinds> layers;
  std::array<LayerKind, kMaxKinds> kinds{};
  int num_kinds = 0;
  // Speculative decoding (strategy mtp = K > 0; last stage): one draft pass of the model's MTP
  // module or draft model (embedding lookup, eh_proj or fc, the draft's transformer layer, the LM
  // head) at one token per decoding sequence plus 1/K of a serve step's prefill share, run
  // `mtp_passes` = K times per step; in a prefill step one pass over the prompts (the draft's
  // extend), whatever K. Weights and KV of the draft are counted once. Empty (no steps, 0
  // passes) without speculation.
  Section mtp;
  double mtp_passes = 0;
  double tokens_per_rank = 0;    // T: tokens per attention-dp rank in the step
  Layout residual = Layout::kReplicated;
};

// Which layer kind each model layer is (index into Program::kinds); at most kMaxKinds kinds.
int LayerKindIndex(const ModelSpec& m, int layer, const Program& p);
// The distinct layer kinds of `m` in order of first appearance, at most Program::kMaxKinds
// (ValidateModelSpec guarantees no model has more); returns how many. The one numbering the
// layout, the simulator and the oracle share.
int CollectLayerKinds(const ModelSpec& m, std::array<LayerKind, Program::kMaxKinds>* kinds);

// Builds the per-GPU program. `s` must be structurally valid (CheckStrategy). Never allocates.
void BuildProgram(const ModelSpec& m, const ClusterSpec& c, const Strategy& s,
                  const StepShape& shape, const ProgramConfig& cfg, Program* out);

// Placement of a group of `n` GPUs with stride `stride` (in GPUs) on domains of `domain` GPUs:
// how many NVLink domains it spans.
int GroupDomains(int n, int stride, int domain);

}  // namespace l2s
