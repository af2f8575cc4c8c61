#include "sim/simulator.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "sim/kernels.h"
#include "sim/moe_load.h"
#include "strategy/space.h"

namespace l2s {


namespace {

// Runtime reserve per GPU that is neither weights, KV nor activations: CUDA context, cuBLAS and
// attention workspaces ("other_mem" = 3.5 GiB) plus NCCL buffers ("nccl_mem" for 8 GPUs =
// 392 MiB), both from aiconfigurator's system.yaml (../shared/calibration/h100_sxm/system.yaml).
constexpr double kOtherMemBytes = 3758096384.0;
constexpr double kNcclMemBytes = 411041792.0;

// Live activations are double-buffered (input of the next op allocated while the output of the
// current one is alive).
constexpr double kActivationBuffers = 2.0;

// DeepEP's low-latency kernels are used for decode-sized batches (<= 256 tokens per GPU, the
// largest "num_tokens_per_rank" class the engines route to them); larger steps use the
// high-throughput kernels.
constexpr double kLowLatencyTokenLimit = 256;

// Host-side time to launch one kernel when a step runs eagerly (its decode batch is above the
// engine's CUDA-graph limit): a kernel then takes at least this long, max(gpu_s, kLaunchS), since
// the GPU waits for the CPU to issue it. An assumed constant, not a fit: no table or row in
// ../shared measures eager execution (the kernel tables were timed as CUDA-graph replays), and
// 5 us is the order of a cudaLaunchKernel call plus the framework's per-op dispatch.
// docs/dev/COST_MODEL.md "CUDA graphs" gives the formula and a hand-derived example.
constexpr double kEagerLaunchS = 5e-6;

// Whether the step of the latest Prepare on this thread runs eagerly (set by Prepare, cleared by
// PrefillPass; StepTimes reads it, unless tl_no_floor, which CostAdp sets while it reads the
// graph-replayed seconds of a spread step).
thread_local bool tl_eager = false;
thread_local bool tl_no_floor = false;


CollKind ToCollKind(CommKind k) {
  switch (k) {
    case CommKind::kAllReduce: return CollKind::kAllReduce;
    case CommKind::kAllGather: return CollKind::kAllGather;
    case CommKind::kReduceScatter: return CollKind::kReduceScatter;
    case CommKind::kAllToAll: return CollKind::kAllToAll;
    case CommKind::kSendRecv: return CollKind::kSendRecv;
    case CommKind::kDispatch: return CollKind::kDispatch;
    case CommKind::kCombine: return CollKind::kCombine;
  }
  return CollKind::kAllReduce;
}

std::vector<LayerKind> KindsOf(const ModelSpec& m) {
  std::array<LayerKind, Program::kMaxKinds> kinds;
  const int n = CollectLayerKinds(m, &kinds);
  return std::vector<LayerKind>(kinds.begin(), kinds.begin() + n);
}

// Mean keys a causal query attends over a prompt of `len` tokens, at most `window` each.
double MeanCausalKeys(double len, double window) {
  if (window <= 0 || window >= len) return (len + 1.0) / 2.0;
  return (window * (window + 1.0) / 2.0 + (len - window) * window) / len;
}

}  // namespace

Simulator::Simulator(Problem problem) : p_(std::move(problem)) {
  // A factor outside (0, inf) is not an engine (the fitted ones are 0.9-1.0): the ideal engine.
  if (!(p_.workload.engine_factor > 0) || !std::isfinite(p_.workload.engine_factor))
    p_.workload.engine_factor = 1.0;
  kc_ = &CoeffsFor(p_.cluster.gpu);
  cc_ = &CollectiveCoeffsFor(p_.cluster.gpu);
  quick_reduce_ = QuickReduceInForce(p_);
  block_fp8_ = p_.model.weight_block_scaled && p_.model.weight_dtype == DType::kFP8 &&
               p_.workload.weight == DType::kFP8;
  const std::vector<LayerKind> kinds = KindsOf(p_.model);
  const int L = p_.model.num_layers;
  kind_prefix_.assign(kinds.size(), std::vector<int>(L + 1, 0));
  for (size_t k = 0; k < kinds.size(); ++k) {
    for (int i = 0; i < L; ++i) {
      const LayerSpec& l = p_.model.layers[i];
      const bool is = l == kinds[k];
      kind_prefix_[k][i + 1] = kind_prefix_[k][i] + (is ? 1 : 0);
    }
  }
  num_kinds_ = static_cast<int>(kinds.size());
  std::copy(kinds.begin(), kinds.end(), kinds_.begin());
  reserve_bytes_ = kOtherMemBytes + (p_.cluster.num_gpus > 1 ? kNcclMemBytes : 0.0);
  cfg_.weight = p_.workload.weight;
  cfg_.kv = p_.workload.kv;
  cfg_.act = DType::kBF16;
  routing_sigma_ = p_.workload.routing_sigma >= 0 ? p_.workload.routing_sigma
                                                  : kDefaultRoutingSigma;
  if (p_.model.is_moe()) {
    std::vector<int> slot_options = SlotOptions(p_.model);
    // An ep that is a factor must divide the GPU count and a slot count (the experts or an
    // option), so no ep above the largest slot count needs a factor.
    int max_slots = p_.model.num_experts;
    for (int slots : slot_options) max_slots = std::max(max_slots, slots);
    for (int ep = 1; ep <= std::min(max_slots, p_.cluster.num_gpus); ++ep) {
      if (p_.cluster.num_gpus % ep != 0) continue;
      for (int slots : slot_options) {
        if ((slots == 0 ? p_.model.num_experts : slots) % ep != 0) continue;
        static_load_.push_back(
            {ep, slots, MoeStaticImbalance(p_.model.num_experts, ep, slots, routing_sigma_)});
      }
    }
  }
  {
    const double comm_sms = CollectiveCoeffsFor(p_.cluster.gpu).deepep_normal_sms;
    const double sms = p_.cluster.gpu.sm_count;
    overlap_stretch_ = sms > comm_sms ? sms / (sms - comm_sms) : 1.0;
  }
  // Dispatch payload: bf16 for a bf16 model, FP4 (with its block scales) for FP4 experts on GPUs
  // with FP4 tensor cores (the activations are quantised to FP4 before the all-to-all), FP8
  // otherwise.
  cfg_.dispatch = p_.workload.weight == DType::kBF16 ? DType::kBF16
                  : (p_.workload.weight == DType::kFP4 && p_.cluster.gpu.fp4_flops > 0)
                      ? DType::kFP4
                      : DType::kFP8;
  cfg_.moe_gather = p_.workload.engine == Engine::kVllm && !p_.workload.disagg_pool;
  const EngineDefaults d = DefaultsOf(p_.workload.engine);
  max_num_tokens_ = p_.workload.max_num_tokens > 0 ? p_.workload.max_num_tokens : d.max_num_tokens;
  graph_max_batch_ =
      p_.workload.cuda_graph_max_batch > 0 ? p_.workload.cuda_graph_max_batch : d.cuda_graph_max_batch;
  request_overhead_s_ = RequestOverheadOf(p_.workload);
}

double Simulator::TokensPerStep(const Strategy& s) const {
  if (s.mtp <= 0 || p_.workload.mode == Mode::kPrefill) return 1.0;
  return p_.workload.mtp_accept > 0 ? p_.workload.mtp_accept : DefaultMtpAccept(s.mtp);
}

int Simulator::TokenBatchLimit(const Strategy& s) const {
  constexpr int kNone = std::numeric_limits<int>::max();
  if (max_num_tokens_ <= 0) return kNone;
  const Workload& w = p_.workload;
  const double C = max_num_tokens_;
  double per_seq = 0;  // tokens one sequence puts into a step
  switch (w.mode) {
    case Mode::kPrefill:
      // Prompts longer than the budget are chunked one at a time (the chunks' extra attention
      // passes are not modelled): at least one prompt per step.
      return std::max(1, static_cast<int>(std::floor(C / static_cast<double>(w.isl))));
    case Mode::kDecode: per_seq = 1.0 + std::max(0, s.mtp); break;
    case Mode::kServe:
      per_seq = 1.0 + std::max(0, s.mtp);
      // Engines that mix prefill chunks into decode steps (every engine but SGLang, whose
      // prefill steps run apart) must fit the steady-state prefill share in the same budget.
      if (w.engine != Engine::kSglang)
        per_seq += TokensPerStep(s) * static_cast<double>(w.isl) /
                   static_cast<double>(std::max<int64_t>(1, w.osl));
      break;
  }
  double b = std::floor(C / per_seq + 1e-9);
  // vllm/config/scheduler.py SchedulerConfig._verify_args: "max_num_batched_tokens (..) must be
  // greater than or equal to max_num_seqs (..)", and a server's max_num_seqs holds every
  // pipeline microbatch's sequences (batch x pp).
  if (w.engine == Engine::kVllm && s.pp > 1) b = std::min(b, std::floor(C / s.pp + 1e-9));
  return b >= kNone ? kNone : static_cast<int>(b);
}

// Dispersion of expert popularity (lognormal sigma, sim/moe_load.h) of measured routing:
// fitted by tools/fit_moe_skew so that redundant experts with EPLB placement (288 slots) speed
// DeepSeek-V3 prefill on 32 H100s (DEP32, 4 x 4,096-token prompts per rank) up by the 1.49x
// SGLang reports for EPLB (../shared/reference/MEASUREMENTS.md); docs/dev/COST_MODEL.md
// "Expert load" gives the decode gain it implies as a check.
const double Simulator::kDefaultRoutingSigma = 1.2994;

double Simulator::StaticLoadFactor(int ep, int slots) const {
  for (const StaticLoad& l : static_load_)
    if (l.ep == ep && l.slots == slots) return l.factor;
  // A slot count outside SlotOptions (a user's strategy): computed on demand.
  return MoeStaticImbalance(p_.model.num_experts, ep, slots, routing_sigma_);
}

bool Simulator::QuickStructureOk(const Strategy& s) const {
  const ModelSpec& m = p_.model;
  if (s.pp < 1 || s.tp < 1 || s.dp < 1 || s.ep < 1 || s.batch < 0) return false;
  if (s.mtp < 0 || s.mtp > kMaxMtpTokens || (s.mtp > 0 && !m.can_speculate())) return false;
  if (s.mtp > 0 && p_.workload.mtp_accept > 0 && p_.workload.mode != Mode::kPrefill &&
      (p_.workload.mtp_accept < 1 || p_.workload.mtp_accept > s.mtp + 1))
    return false;
  if (static_cast<long long>(s.pp) * s.tp * s.dp != p_.cluster.num_gpus) return false;
  if (s.pp > m.num_layers) return false;
  if (m.num_heads % s.tp != 0) return false;
  const int G = s.tp * s.dp;
  if (!m.is_moe()) return s.ep == 1 && s.slots == 0 && s.overlap == Overlap::kNone;
  if (s.overlap != Overlap::kNone && s.ep <= 1) return false;
  if (s.slots != 0) return s.slots >= m.num_experts && G % s.ep == 0 && s.slots % s.ep == 0;
  return G % s.ep == 0 && m.num_experts % s.ep == 0;
}

void Simulator::Shape(const Strategy& s, int batch, StepShape* sh) const {
  const Workload& w = p_.workload;
  *sh = StepShape{};
  // MTP: each decoding sequence runs its verified token plus mtp draft tokens through the model.
  sh->decode_q = w.mode == Mode::kPrefill ? 1.0 : 1.0 + std::max(0, s.mtp);
  switch (w.mode) {
    case Mode::kDecode:
      sh->decode_seqs = batch;
      sh->decode_kv_len = static_cast<double>(w.context);
      sh->kv_hold_len = static_cast<double>(w.kv_hold > 0 ? w.kv_hold : w.context);
      break;
    case Mode::kPrefill:
      sh->prefill_seqs = batch;
      sh->prefill_len = static_cast<double>(w.isl);
      break;
    case Mode::kServe: {
      // Steady-state in-flight batching: `batch` sequences decode one token each per step, at
      // uniformly spread progress (average context isl + osl/2), and the prompts of the requests
      // that replace finished ones are prefilled in chunks sharing the same steps: batch / osl
      // prompts' worth of tokens per step.
      // Attention reads the average context, but memory is reserved for the whole isl + osl of
      // every admitted request (no-eviction admission, TensorRT-LLM's default
      // GUARANTEED_NO_EVICT scheduler; see docs/dev/VALIDATION.md for the effect on the fit).
      const double avg_ctx = static_cast<double>(w.isl) + static_cast<double>(w.osl) / 2.0;
      sh->decode_seqs = batch;
      sh->decode_kv_len = avg_ctx;
      sh->kv_hold_len = static_cast<double>(w.isl + w.osl);
      // With MTP a sequence emits TokensPerStep tokens a step and finishes that much sooner.
      sh->prefill_seqs = static_cast<double>(batch) * TokensPerStep(s) /
                         static_cast<double>(std::max<int64_t>(1, w.osl));
      sh->prefill_len = static_cast<double>(w.isl);
      sh->prefill_rate = true;
      break;
    }
  }
}

double Simulator::StepSeconds(const Step& st, bool decode_kernels) const {
  // The engine's factor scales every step alike (Workload::engine_factor).
  return IdealStepSeconds(st, decode_kernels) / p_.workload.engine_factor;
}

double Simulator::IdealStepSeconds(const Step& st, bool decode_kernels) const {
  const GpuSpec& gpu = p_.cluster.gpu;
  switch (st.kind) {
    case StepKind::kGemm:
      if (st.m <= 0) return 0;
      return GemmSecondsFor(*kc_, gpu, st.m, st.n, st.k, st.wdtype, st.count, block_fp8_,
                            st.op == Op::kMoeFfn1 || st.op == Op::kMoeFfn2);
    case StepKind::kAttnDecode:
      if (st.seqs <= 0) return 0;
      // q_len > 1 (MTP verification): the q_len queries of a sequence read the same keys; the
      // decode kernels fold them into the query heads (FlashMLA's s_q, XQA's speculative mode),
      // so the step is a decode step with heads x q_len query heads.
      if (st.mla)
        return MlaDecodeSeconds(gpu, st.seqs, st.kv_len, st.heads * st.q_len, st.latent_dim,
                                st.rope_dim, st.kvdtype, p_.workload.attn);
      return AttnDecodeSeconds(gpu, st.seqs, st.kv_len, st.heads * st.q_len, st.kv_heads,
                               st.head_dim, st.window, st.kvdtype);
    case StepKind::kAttnPrefill: {
      if (st.seqs <= 0) return 0;
      // On Hopper an FP8 KV cache makes the context FMHA run in FP8 (calibration README caveat 1);
      // so does FP8 attention math (Workload::attn).
      const DType compute = st.kvdtype == DType::kBF16 && p_.workload.attn == DType::kBF16
                                ? DType::kBF16
                                : DType::kFP8;
      // A fractional prompt count is serve mode's per-step share of chunked prefill: engines run
      // full-size chunks, so the step pays that share of one whole prompt's attention (not a
      // kernel launch with a fractional batch).
      const double share = st.seqs < 1 ? st.seqs : 1.0;
      const double seqs = st.seqs < 1 ? 1.0 : st.seqs;
      if (st.mla) {
        // Sparse (DSA) layers attend at most `window` (= index_topk) keys per query: the dense
        // kernel's time scaled by the fraction of keys attended.
        // DeepSeek-V4 layers give their mean keys per query (`keys`) the same way.
        const double frac = st.keys > 0 ? std::min(1.0, st.keys / MeanCausalKeys(st.q_len, 0))
                            : st.window > 0 ? MeanCausalKeys(st.q_len, st.window) /
                                                  MeanCausalKeys(st.q_len, 0)
                                            : 1.0;
        return share * frac *
               MlaPrefillSeconds(gpu, seqs, st.q_len, st.heads, st.head_dim, st.v_head_dim,
                                 st.kvdtype, p_.workload.attn);
      }
      return share * AttnPrefillSeconds(gpu, seqs, st.q_len, st.heads, st.kv_heads, st.head_dim,
                                        st.window, compute);
    }
    case StepKind::kElementwise:
      if (st.bytes <= 0) return 0;
      return ElementwiseSecondsWith(*kc_, gpu, st.bytes);
    case StepKind::kStream: {
      // Roofline of a streaming kernel: its HBM traffic at the fitted elementwise efficiency, or
      // its FLOPs at the dtype's dense peak, whichever is longer.
      if (st.bytes <= 0 && st.flops <= 0) return 0;
      const double peak =
          st.wdtype == DType::kBF16 || gpu.fp8_flops <= 0 ? gpu.bf16_flops : gpu.fp8_flops;
      return std::max(st.bytes > 0 ? ElementwiseSecondsWith(*kc_, gpu, st.bytes) : 0.0, st.flops / peak);
    }
    case StepKind::kScan:
      if (st.m <= 0 || st.count <= 0) return 0;
      return GemmSecondsFor(*kc_, gpu, st.m, st.n, st.k, st.wdtype, st.count, block_fp8_);
    case StepKind::kComm: {
      if (st.comm_bytes <= 0 || st.group_size <= 1) return 0;
      // QuickReduce (AMD, when the launch turns it on) sends the all-reduces it takes quantised.
      const double share = st.comm == CommKind::kAllReduce && st.group_domains <= 1
                               ? QuickReduceWireShare(quick_reduce_, st.group_size, st.comm_bytes)
                               : 1.0;
      return CollectiveSecondsWith(*cc_, p_.cluster, ToCollKind(st.comm),
                                   GroupPlacement{st.group_size, st.group_domains, st.fanout},
                                   st.comm_bytes * share, decode_kernels);
    }
  }
  return 0;
}

void Simulator::StepTimes(const Section& sec, bool decode, double* x, const Section* like,
                          const double* like_raw, double* raw) const {
  // A step's seconds depend on its fields and `decode` alone, so a step byte-equal to `like`'s
  // step at the same index takes its seconds (equal bytes imply equal fields; Section::Add starts
  // every step from a zeroed blank, so equal fields also give equal padding and the reuse hits).
  const int shared = like != nullptr ? std::min(sec.num_steps, like->num_steps) : 0;
  for (int i = 0; i < sec.num_steps; ++i) {
    x[i] = i < shared && std::memcmp(&sec.steps[i], &like->steps[i], sizeof(Step)) == 0
               ? like_raw[i]
               : StepSeconds(sec.steps[i], decode);
  }
  // Eager step: every kernel that runs takes at least its launch time (idempotent on like_raw,
  // which holds adjusted seconds of the same program).
  if (tl_eager && !tl_no_floor)
    for (int i = 0; i < sec.num_steps; ++i)
      if (x[i] > 0 && x[i] < kEagerLaunchS) x[i] = kEagerLaunchS;
  if (raw != nullptr) std::copy(x, x + sec.num_steps, raw);
  // Overlapped pairs (sbo): the later step runs beside the earlier one (which runs on the SMs
  // it leaves: OverlapStretch) and is charged what the pair takes beyond the earlier step.
  for (int i = 0; i < sec.num_steps; ++i) {
    const int j = sec.steps[i].hides_under;
    if (j >= 0 && j < i) x[i] = std::max(x[j] * overlap_stretch_, x[i]) - x[j];
  }
}

double Simulator::SectionSeconds(double compute, double comm, bool two_batch) const {
  // Two-batch overlap: the section runs for each of two half batches (compute and comm are one
  // half's), and each half's communication runs under the other half's compute, which runs on
  // the SMs the communication kernels leave.
  return two_batch ? 2.0 * std::max(compute * overlap_stretch_, comm) : compute + comm;
}

void Simulator::CostSection(const Section& sec, bool decode, double* compute_out,
                            double* comm_out, SectionBreakdown* acc, bool two_batch,
                            const Section* like, const double* like_raw, double* raw,
                            double* shown) const {
  double x[Section::kMaxSteps];
  StepTimes(sec, decode, x, like, like_raw, raw);
  double compute = 0, comm = 0;
  for (int i = 0; i < sec.num_steps; ++i) {
    const Step& st = sec.steps[i];
    (st.kind == StepKind::kComm ? comm : compute) += x[i];
  }
  if (acc != nullptr || shown != nullptr) {
    // With two-batch overlap, attribute the time to the side that is not hidden: communication
    // when it is longer than compute, else compute (the attributions add up to the section's).
    // Under overlap the compute side runs stretched (OverlapStretch), so it counts as
    // 2 x stretch x compute when it shows.
    const double scale = two_batch ? 2.0 : 1.0;
    const bool comm_shows = comm > compute * overlap_stretch_;
    const double comm_keep = !two_batch || comm_shows ? scale : 0.0;
    const double comp_keep = !two_batch ? 1.0 : comm_shows ? 0.0 : scale * overlap_stretch_;
    for (int i = 0; i < sec.num_steps; ++i) {
      const Step& st = sec.steps[i];
      const int op = static_cast<int>(st.op);
      if (shown != nullptr) shown[i] = x[i] * (st.kind == StepKind::kComm ? comm_keep : comp_keep);
      if (acc == nullptr) continue;
      if (st.kind == StepKind::kComm) {
        acc->comm_s_by_op[op] += x[i] * comm_keep;
        acc->comm_s_by_kind[static_cast<int>(st.comm)] += x[i] * comm_keep;
      } else {
        acc->compute_s_by_op[op] += x[i] * comp_keep;
      }
    }
  }
  *compute_out = compute;
  *comm_out = comm;
}

double Simulator::CostSection(const Section& sec, bool decode) const {
  double c = 0, a = 0;
  CostSection(sec, decode, &c, &a, nullptr, false);
  return c + a;
}

namespace {
void AddBreakdown(const SectionBreakdown& b, double weight, Evaluation* e) {
  if (weight <= 0) return;
  for (int op = 0; op < kNumOps; ++op) {
    e->compute_s_by_op[op] += b.compute_s_by_op[op] * weight;
    e->comm_s_by_op[op] += b.comm_s_by_op[op] * weight;
    e->compute_s += b.compute_s_by_op[op] * weight;
    e->comm_s += b.comm_s_by_op[op] * weight;
  }
  for (size_t k = 0; k < b.comm_s_by_kind.size(); ++k) e->comm_s_by_kind[k] += b.comm_s_by_kind[k] * weight;
}
// Per-section breakdowns of the latest ComputeTotals on this thread: layer kinds, then embed,
// lm_head, pipe, one MTP draft pass.
thread_local std::array<SectionBreakdown, Program::kMaxKinds + 4> tl_breakdown;

// Tokens one attention-dp rank runs through the model in a step of shape `sh`.
double StepTokens(const StepShape& sh) {
  return sh.decode_seqs * sh.decode_q + sh.prefill_seqs * sh.prefill_len;
}

// Steps whose work is pooled over the attention-dp ranks of a stage: the expert FFNs (their GEMMs,
// their activation and the expert-TP conversions see every rank's tokens after the dispatch).
// Every other step works on one rank's own tokens.
bool PooledAcrossRanks(const Step& st) {
  if (st.kind == StepKind::kComm) return st.group == GroupKind::kEtp;
  if (st.op != Op::kMoeFfn1 && st.op != Op::kMoeFfn2) return false;
  return st.kind == StepKind::kGemm || (st.kind == StepKind::kElementwise && st.op == Op::kMoeFfn1);
}
// Shapes and program configuration of the latest Prepare on this thread: the whole step's
// (before a two-batch split; it sets the attention-DP imbalance) and the built one's.
thread_local StepShape tl_full_shape, tl_shape;
thread_local ProgramConfig tl_cfg;
}  // namespace

int Simulator::SyncRanks(const Strategy& s) const { return p_.model.is_moe() ? s.dp : 1; }

bool Simulator::ConfigureForTokens(const Strategy& s, double tokens, ProgramConfig* cfg) const {
  if (p_.model.is_moe() && s.ep > 1) {
    cfg->expert_imbalance = CombinedImbalance(
        StaticLoadFactor(s.ep, s.slots), tokens * s.dp * p_.model.experts_per_token, s.ep);
  }
  return tokens / std::max(1, s.tp) <= kLowLatencyTokenLimit;
}

bool Simulator::BudgetedPrefillStep(const StepShape& sh) const {
  const Workload& w = p_.workload;
  return w.mode == Mode::kServe && w.engine != Engine::kIdeal &&
         sh.prefill_seqs * sh.prefill_len > 0 && max_num_tokens_ > 0;
}

double Simulator::ChunkTokens(const StepShape& sh) const {
  const Workload& w = p_.workload;
  const double p = sh.prefill_seqs * sh.prefill_len;  // prefill tokens per rank per decode step
  if (!BudgetedPrefillStep(sh)) return 0;
  // SGLang runs prefill batches of its own, up to C tokens of the waiting prompts (one prompt
  // when fewer than one arrives per decode step, chunked above C). TensorRT-LLM and vLLM, which
  // mix chunks into decode steps, keep the spread share (Adp; docs/dev/COST_MODEL.md says why).
  if (w.engine != Engine::kSglang) return 0;
  return std::min(static_cast<double>(max_num_tokens_), std::max(sh.prefill_len, p));
}

Simulator::AdpCoeffs Simulator::Adp(const Strategy& s, const StepShape& sh) const {
  AdpCoeffs c;
  const Workload& w = p_.workload;
  const double p = sh.prefill_seqs * sh.prefill_len;
  if (!BudgetedPrefillStep(sh)) return c;
  c.chunk = ChunkTokens(sh);
  // Only ranks that synchronise wait for each other: `dp` below counts the attention-dp ranks
  // of one synchronising group. The ranks of a stage meet in every MoE layer (the dispatch /
  // combine all-to-all over the stage, or with ep = 1 the expert-TP group of all tp x dp GPUs);
  // a model without MoE layers has no collective wider than a tp group, so its dp ranks are
  // independent replicas, each priced as a lone rank (dp = 1) whatever the strategy's dp.
  const double dp = SyncRanks(s);
  if (c.chunk > 0) {
    const double u = p / c.chunk;  // chunks per decode step
    c.active = true;
    c.r = u;
    // Prefill steps of their own: u of them per decode step, (1 + u) steps in all; a fraction
    // f = u / (1 + u) of a rank's steps prefill, and some rank prefills in q = 1 - (1 - f)^dp of
    // them. A prefill step costs the chunk step (the decode step's floor plus the chunk's work).
    const double f = u / (1 + u), q = 1 - std::pow(1 - f, dp);
    c.a = 1 + u;
    c.b = q * (1 + u);
    c.b_even = u;
    return c;
  }
  // TensorRT-LLM and vLLM mix prefill chunks into decode steps, up to the token budget left by
  // the decode tokens; the step is the spread one (p tokens a step), r = 1 on it. A rank needs a
  // chunk in f = p / room of the steps. With TensorRT-LLM's attention-DP balancing the ranks
  // take their chunks in the same steps (the even spread the step already is); without it they
  // take them independently and a step waits for the slowest rank: some rank prefills in
  // q = 1 - (1 - f)^dp of the steps, so the per-rank prefill work costs q / f times its share.
  const bool balance = w.engine == Engine::kTrtllm && w.adp_balance > 0;
  const double room = max_num_tokens_ - sh.decode_seqs * sh.decode_q;
  if (balance || dp <= 1 || room <= 0) return c;  // room <= 0: TokenBatchLimit rejects it
  const double f = std::min(1.0, p / room);
  c.active = true;
  c.spread = true;
  c.b = (1 - std::pow(1 - f, dp)) / f;
  return c;
}

Simulator::AdpCoeffs Simulator::AdpProgram(const Strategy& s, Program* dec) const {
  AdpCoeffs c = Adp(s, tl_full_shape);
  if (c.active) {
    // The same (half) step without its prefill chunk: the decode-only step of the model, with the
    // expert-load imbalance and the kernels of its own token count.
    StepShape dsh = tl_shape;
    dsh.prefill_seqs = 0;
    ProgramConfig cfg = tl_cfg;
    // The spread step keeps the mixed step's kernels and expert load (its token count).
    c.dec_kernels = ConfigureForTokens(s, StepTokens(c.spread ? tl_shape : dsh), &cfg);
    BuildProgram(p_.model, p_.cluster, s, dsh, cfg, dec);
  }
  return c;
}

void Simulator::CostAdp(const Section& sec, const Section& dec, bool dk, const AdpCoeffs& c,
                        bool two_batch, double* compute, double* comm, SectionBreakdown* acc,
                        std::array<double, kNumOps>* by_op,
                        std::array<double, kNumOps>* by_op_comm, double* even,
                        double* shown, double* dec_shown) const {
  // cost = r * pooled(chunk) + (a - r) * pooled(decode) + b * rank(chunk) + (a - b) * rank(decode),
  // step by step. An eager step's launch floor applies to both programs' kernels; on a spread
  // step it is what the floor adds to the mixed step's kernels (flooring both programs first
  // would cancel the prefill increments of short kernels in b x mixed + (1 - b) x decode).
  double x[Section::kMaxSteps], xd[Section::kMaxSteps], w[Section::kMaxSteps];
  double xf[Section::kMaxSteps];
  tl_no_floor = c.spread;
  StepTimes(sec, dk, x);
  StepTimes(dec, c.dec_kernels, xd);
  tl_no_floor = false;
  const bool floor_after = c.spread && tl_eager;
  if (floor_after) StepTimes(sec, dk, xf);
  double cs = 0, as = 0, ec = 0, ea = 0;
  for (int i = 0; i < sec.num_steps; ++i) {
    const bool pooled = PooledAcrossRanks(sec.steps[i]);
    const bool is_comm = sec.steps[i].kind == StepKind::kComm;
    w[i] = (pooled ? c.r : c.b) * x[i];
    const double floor_s = floor_after ? xf[i] - x[i] : 0.0;
    w[i] += floor_s;
    (is_comm ? as : cs) += w[i];
    (is_comm ? ea : ec) += (pooled ? c.r : c.b_even) * x[i] + floor_s;
  }
  for (int i = 0; i < dec.num_steps; ++i) {
    const bool pooled = PooledAcrossRanks(dec.steps[i]);
    const bool is_comm = dec.steps[i].kind == StepKind::kComm;
    (is_comm ? ea : ec) += (c.a - (pooled ? c.r : c.b_even)) * xd[i];
    xd[i] *= c.a - (pooled ? c.r : c.b);
    (is_comm ? as : cs) += xd[i];
  }
  if (even != nullptr) *even = SectionSeconds(ec, ea, two_batch);
  // Attribution as CostSection's (under two-batch overlap, to the side that is not hidden).
  const double scale = two_batch ? 2.0 : 1.0;
  const bool comm_shows = as > cs;
  const double comm_keep = !two_batch || comm_shows ? scale : 0.0;
  const double comp_keep = !two_batch || !comm_shows ? scale : 0.0;
  auto add = [&](const Step& st, double v) {
    const int op = static_cast<int>(st.op);
    const bool is_comm = st.kind == StepKind::kComm;
    if (by_op != nullptr) (is_comm && by_op_comm != nullptr ? *by_op_comm : *by_op)[op] += v;
    if (acc == nullptr) return;
    if (is_comm) {
      acc->comm_s_by_op[op] += v * comm_keep;
      acc->comm_s_by_kind[static_cast<int>(st.comm)] += v * comm_keep;
    } else {
      acc->compute_s_by_op[op] += v * comp_keep;
    }
  };
  for (int i = 0; i < sec.num_steps; ++i) add(sec.steps[i], w[i]);
  for (int i = 0; i < dec.num_steps; ++i) add(dec.steps[i], xd[i]);
  auto keep = [&](const Step& st) { return st.kind == StepKind::kComm ? comm_keep : comp_keep; };
  if (shown != nullptr)
    for (int i = 0; i < sec.num_steps; ++i) shown[i] = w[i] * keep(sec.steps[i]);
  if (dec_shown != nullptr)
    for (int i = 0; i < dec.num_steps; ++i) dec_shown[i] = xd[i] * keep(dec.steps[i]);
  *compute = cs;
  *comm = as;
}

void Simulator::ProgramShape(const Strategy& s, int batch, StepShape* sh, StepShape* full) const {
  Shape(s, batch, sh);
  if (full != nullptr) *full = *sh;
  // Serve mode on an engine with a token budget: the step carries one whole prefill chunk (Adp
  // weighs it against the decode-only step).
  const double chunk = ChunkTokens(*sh);
  if (chunk > 0) sh->prefill_seqs = chunk / sh->prefill_len;
  if (s.overlap == Overlap::kTbo) {
    // Two-batch overlap: the program is the larger of two half batches, ceil(batch / 2)
    // sequences (SectionSeconds doubles it); serve mode's fractional prefill share is halved.
    sh->decode_seqs = std::ceil(sh->decode_seqs / 2);
    sh->prefill_seqs = p_.workload.mode == Mode::kServe ? sh->prefill_seqs / 2
                                                        : std::ceil(sh->prefill_seqs / 2);
  }
}

double Simulator::BudgetActivationScale(const Strategy& s, int batch) const {
  const Workload& w = p_.workload;
  if (w.mode != Mode::kServe || w.engine == Engine::kIdeal || max_num_tokens_ <= 0 || batch < 1)
    return 1.0;
  StepShape sh;
  ProgramShape(s, batch, &sh, nullptr);
  const double tokens = StepTokens(sh);
  // Under two-batch overlap the program is one half: the budget step's half is C / 2 tokens.
  const double budget =
      static_cast<double>(max_num_tokens_) / (s.overlap == Overlap::kTbo ? 2.0 : 1.0);
  return tokens > 0 && tokens < budget ? budget / tokens : 1.0;
}

bool Simulator::Prepare(const Strategy& s, int batch, Program* prog, bool* decode_kernels) const {
  if (!QuickStructureOk(s) || batch < 1) return false;
  StepShape& sh = tl_shape;
  ProgramShape(s, batch, &sh, &tl_full_shape);
  const bool tbo = s.overlap == Overlap::kTbo;
  ProgramConfig& cfg = tl_cfg;
  cfg = cfg_;
  cfg.kinds = kinds_.data();
  cfg.num_kinds = num_kinds_;
  const bool dk = ConfigureForTokens(s, StepTokens(sh), &cfg);
  BuildProgram(p_.model, p_.cluster, s, sh, cfg, prog);
  if (tbo) {
    // Both halves' KV caches are resident.
    for (int k = 0; k < prog->num_kinds; ++k) {
      prog->layers[k].kv_bytes *= 2;
      prog->layers[k].state_bytes *= 2;
    }
    prog->mtp.kv_bytes *= 2;
  }
  *decode_kernels = dk;
  // Decode and serve steps replay CUDA graphs up to the engine's limit; a larger decode batch
  // runs eagerly (prefill steps are costed from the graph-replayed tables either way).
  tl_eager = p_.workload.mode != Mode::kPrefill && graph_max_batch_ > 0 && batch > graph_max_batch_;
  return true;
}

void Simulator::PrefillPass(const Strategy& s, Program* prog, bool* decode_kernels) const {
  // First token of a new request: its whole prompt prefilled alone through all stages.
  tl_eager = false;
  StepShape sh;
  sh.prefill_seqs = 1;
  sh.prefill_len = static_cast<double>(p_.workload.isl);
  ProgramConfig cfg = cfg_;
  cfg.kinds = kinds_.data();
  cfg.num_kinds = num_kinds_;
  BuildProgram(p_.model, p_.cluster, s, sh, cfg, prog);
  *decode_kernels = sh.prefill_len / std::max(1, s.tp) <= kLowLatencyTokenLimit;
}

void Simulator::ComputeTotals(const Strategy& s, int batch, Totals* t) const {
  ComputeTotalsWithTtft(s, batch, -1.0, t, false);
}

void Simulator::ComputeTotalsWithTtft(const Strategy& s, int batch, double ttft_prefill_s,
                                      Totals* t, bool breakdown) const {
  *t = Totals{};
  thread_local Program prog;
  bool dk = true;
  if (!Prepare(s, batch, &prog, &dk)) return;
  t->num_kinds = prog.num_kinds;
  double act = 0;
  // Per-section attribution to operators (tl_breakdown), only when the caller reads it: it is
  // ~10% of an evaluation (sim_bench). Only the entries this program uses (its layer kinds, then
  // embed, lm_head, pipe, MTP) are read.
  auto& bd = tl_breakdown;
  if (breakdown) {
    for (int k = 0; k < prog.num_kinds; ++k) bd[k] = SectionBreakdown{};
    for (int k = Program::kMaxKinds; k < static_cast<int>(bd.size()); ++k) bd[k] = SectionBreakdown{};
  }
  auto slot = [&](int i) { return breakdown ? &bd[i] : nullptr; };
  const bool tbo = s.overlap == Overlap::kTbo;
  // Serve-mode attention-DP imbalance (docs/dev/COST_MODEL.md): sections are costed against their
  // decode-only counterparts in `dec`.
  thread_local Program dec;
  const AdpCoeffs adp = AdpProgram(s, &dec);
  double bal_total = 0, imb_total = 0;  // whole model, for Evaluation::adp_imbalance
  // Sections' compute and communication seconds: kept apart under two-batch overlap (Compose
  // combines them with SectionSeconds), summed otherwise. Returns the section's seconds; `bal`
  // gets them with prefill spread evenly.
  // Layer kinds often share their attention block (DeepSeek's dense and MoE layers): a kind's
  // steps equal to the previous kind's reuse their seconds (StepTimes).
  double raw[2][Section::kMaxSteps];
  const Section* like = nullptr;
  auto cost = [&](const Section& sec, const Section& dsec, SectionBreakdown* acc, double* ts,
                  double* ta, double* bal, double* raw_out = nullptr) {
    double c = 0, a = 0;
    CostSection(sec, dk, &c, &a, adp.active ? nullptr : acc, tbo, like,
                like != nullptr ? raw[0] : nullptr, raw_out);
    *bal = SectionSeconds(c, a, tbo);
    if (adp.active) CostAdp(sec, dsec, dk, adp, tbo, &c, &a, acc, nullptr, nullptr, bal);
    *ts = tbo ? c : c + a;
    *ta = tbo ? a : 0.0;
    return SectionSeconds(c, a, tbo);
  };
  double bal = 0;
  for (int k = 0; k < prog.num_kinds; ++k) {
    const double n = kind_prefix_[k].back();
    imb_total += n * cost(prog.layers[k], dec.layers[k], slot(k), &t->layer_s[k],
                          &t->layer_comm_s[k], &bal, raw[1]);
    std::copy(raw[1], raw[1] + prog.layers[k].num_steps, raw[0]);
    like = &prog.layers[k];
    bal_total += n * bal;
    t->layer_w[k] = prog.layers[k].weight_bytes;
    t->layer_kv[k] = prog.layers[k].kv_bytes;
    t->layer_state[k] = prog.layers[k].state_bytes;
    act = std::max(act, prog.layers[k].act_bytes);
  }
  like = nullptr;
  imb_total += cost(prog.embed, dec.embed, slot(Program::kMaxKinds), &t->embed_s,
                    &t->embed_comm_s, &bal);
  bal_total += bal;
  imb_total += cost(prog.lm_head, dec.lm_head, slot(Program::kMaxKinds + 1), &t->lm_s,
                    &t->lm_comm_s, &bal);
  bal_total += bal;
  {
    double ps = 0, pa = 0;
    t->pipe_s = cost(prog.pipe, dec.pipe, slot(Program::kMaxKinds + 2), &ps, &pa, &bal);
    imb_total += t->pipe_s * (s.pp - 1);
    bal_total += bal * (s.pp - 1);
  }
  t->embed_w = prog.embed.weight_bytes;
  t->lm_w = prog.lm_head.weight_bytes;
  t->act = std::max({act, prog.embed.act_bytes, prog.lm_head.act_bytes});
  if (prog.mtp_passes > 0) {
    // MTP draft passes: on the last stage with the LM head, whose seconds they join (under
    // two-batch overlap the halves' passes overlap like the LM head's steps). A serve step's
    // passes carry its prefill share (BuildMtp): weighed against their decode-only counterparts
    // as the layers are (a chunk in u of the steps, the ranks' imbalance).
    double c = 0, a = 0;
    SectionBreakdown* const mslot = slot(Program::kMaxKinds + 3);
    if (!adp.active) {
      CostSection(prog.mtp, dk, &c, &a, mslot, tbo);
    } else {
      double even = 0;
      CostAdp(prog.mtp, dec.mtp, dk, adp, tbo, &c, &a, mslot, nullptr, nullptr, &even);
      imb_total += prog.mtp_passes * SectionSeconds(c, a, tbo);
      bal_total += prog.mtp_passes * even;
    }
    const double K = prog.mtp_passes;
    t->lm_s += K * (tbo ? c : c + a);
    t->lm_comm_s += tbo ? K * a : 0.0;
    t->mtp_s = K * SectionSeconds(c, a, tbo);
    t->mtp_passes = prog.mtp_passes;
    t->mtp_w = prog.mtp.weight_bytes;
    t->mtp_kv = prog.mtp.kv_bytes;
    t->act = std::max(t->act, prog.mtp.act_bytes);
  }
  if (adp.active && bal_total > 0) t->adp_imbalance = imb_total / bal_total;
  if (p_.workload.mode == Mode::kServe)
    t->ttft_prefill_s = ttft_prefill_s >= 0 ? ttft_prefill_s : TtftSeconds(s);
}

void Simulator::ComputeOpTotals(const Strategy& s, int batch, OpTotals* t) const {
  *t = OpTotals{};
  thread_local Program prog;
  bool dk = true;
  if (!Prepare(s, batch, &prog, &dk)) return;
  const double act_b = BytesPerElement(cfg_.act);
  const bool tbo = s.overlap == Overlap::kTbo;
  // Under two-batch overlap communication steps go to `ta` (Compose takes
  // SectionSeconds(compute, comm)); otherwise everything to `ts`.
  // Serve-mode attention-DP imbalance: sections with a decode-only counterpart (`dsec`) are
  // costed against it (CostAdp), each step's share to its operator.
  thread_local Program dec;
  const AdpCoeffs adp = AdpProgram(s, &dec);
  auto attribute = [&](const Section& sec, bool dk2, std::array<double, kNumOps>* ts,
                       std::array<double, kNumOps>* ws, std::array<double, kNumOps>* acts,
                       std::array<double, kNumOps>* ta = nullptr, const Section* dsec = nullptr,
                       double scale = 1.0) {
    const bool imbalanced = dsec != nullptr && adp.active;
    if (imbalanced && scale == 1.0) {
      double c = 0, a = 0;
      CostAdp(sec, *dsec, dk2, adp, tbo, &c, &a, nullptr, ts, ta);
    } else if (imbalanced) {  // the draft passes: one pass's seconds, times the passes
      double c = 0, a = 0;
      std::array<double, kNumOps> xs{}, xa{};
      CostAdp(sec, *dsec, dk2, adp, tbo, &c, &a, nullptr, &xs, ta != nullptr ? &xa : nullptr);
      for (int op = 0; op < kNumOps; ++op) {
        (*ts)[op] += scale * xs[op];
        if (ta != nullptr) (*ta)[op] += scale * xa[op];
      }
    }
    double x[Section::kMaxSteps];
    StepTimes(sec, dk2, x);
    for (int i = 0; i < sec.num_steps; ++i) {
      const Step& st = sec.steps[i];
      const int op = static_cast<int>(st.op);
      if (!imbalanced) (ta != nullptr && st.kind == StepKind::kComm ? *ta : *ts)[op] += scale * x[i];
      if (ws) (*ws)[op] += st.weight_bytes;
      if (acts && st.kind == StepKind::kGemm)
        (*acts)[op] = std::max((*acts)[op], st.m * st.count * (st.n + st.k) * act_b);
    }
  };
  // Weight bytes a section holds outside any step (biases, sinks, the embedding table) go to
  // the named operator so that the per-op sums equal the section's total.
  auto rest = [](const Section& sec, std::array<double, kNumOps>* ws, Op op) {
    double steps_w = 0;
    for (double w : *ws) steps_w += w;
    (*ws)[static_cast<int>(op)] += sec.weight_bytes - steps_w;
  };
  t->num_kinds = prog.num_kinds;
  for (int k = 0; k < prog.num_kinds; ++k) {
    attribute(prog.layers[k], dk, &t->layer_s[k], &t->layer_w[k], &t->layer_act[k],
              tbo ? &t->layer_comm_s[k] : nullptr, &dec.layers[k]);
    rest(prog.layers[k], &t->layer_w[k], Op::kAttnOut);
    t->layer_kv[k] = prog.layers[k].kv_bytes;
  }
  attribute(prog.embed, dk, &t->embed_s, &t->embed_w, &t->embed_act,
            tbo ? &t->embed_comm_s : nullptr, &dec.embed);
  rest(prog.embed, &t->embed_w, Op::kEmbed);
  attribute(prog.lm_head, dk, &t->lm_s, &t->lm_w, &t->lm_act, tbo ? &t->lm_comm_s : nullptr,
            &dec.lm_head);
  if (prog.mtp_passes > 0) {
    // MTP draft passes live on the last stage with the LM head: fold them into its figures
    // (seconds x passes; weights once, the rest of the section's weights to embed; the module's
    // KV x pp microbatches to attn_core, whose dims set it).
    std::array<double, kNumOps> mw{};
    attribute(prog.mtp, dk, &t->lm_s, &mw, &t->lm_act, tbo ? &t->lm_comm_s : nullptr, &dec.mtp,
              prog.mtp_passes);
    rest(prog.mtp, &mw, Op::kEmbed);
    for (int op = 0; op < kNumOps; ++op) t->lm_w[op] += mw[op];
    t->lm_w[static_cast<int>(Op::kAttnCore)] += prog.mtp.kv_bytes * s.pp;
  }
  std::array<double, kNumOps> pipe{}, pipe_comm{};
  attribute(prog.pipe, dk, &pipe, nullptr, nullptr, &pipe_comm, &dec.pipe);
  double pc = 0, pa = 0;
  for (double x : pipe) pc += x;
  for (double x : pipe_comm) pa += x;
  t->pipe_s = SectionSeconds(pc, pa, tbo);
  if (p_.workload.mode == Mode::kServe) {
    PrefillPass(s, &prog, &dk);
    for (int k = 0; k < prog.num_kinds; ++k)
      attribute(prog.layers[k], dk, &t->ttft_layer_s[k], nullptr, nullptr);
    attribute(prog.embed, dk, &t->ttft_embed_s, nullptr, nullptr);
    attribute(prog.lm_head, dk, &t->ttft_lm_s, nullptr, nullptr);
    // A speculating prompt's pass through the draft (TtftSeconds), with the LM head's part.
    if (prog.mtp_passes > 0)
      attribute(prog.mtp, dk, &t->ttft_lm_s, nullptr, nullptr, nullptr, nullptr, prog.mtp_passes);
    std::array<double, kNumOps> tpipe{};
    attribute(prog.pipe, dk, &tpipe, nullptr, nullptr);
    for (double x : tpipe) t->ttft_pipe_s += x;
  }
}

Evaluation Simulator::Compose(const Strategy& s, int batch, const Totals& t) const {
  Evaluation e;
  e.batch = batch;
  e.mem_capacity_bytes = p_.cluster.gpu.hbm_bytes;
  if (!QuickStructureOk(s) || batch < 1) {
    e.verdict = Verdict::kStructure;
    return e;
  }
  // Pipeline: stage i holds layers [i*L/pp, (i+1)*L/pp). `pp` microbatches are in flight, so each
  // stage keeps KV for pp * batch sequences of its layers.
  const int L = p_.model.num_layers, pp = s.pp;
  const bool tbo = s.overlap == Overlap::kTbo;
  // An engine with a token budget holds the activations of a full budget step (a burst of
  // prompts fills it; vLLM and TensorRT-LLM size their KV pool after a profile run at the
  // budget), not only the steady step's: activations grow linearly with a step's tokens
  // (strategy/layout.cc: m x (n + k) per GEMM), so the steady step's are scaled to it.
  const double act = t.act * kActivationBuffers * BudgetActivationScale(s, batch);
  double worst_t = -1, worst_mem = -1;
  int worst_stage = 0;
  // Per layer kind: seconds of one layer and the kind's prefix counts (hoisted out of the stages).
  std::array<double, Program::kMaxKinds> kind_s;
  std::array<const int*, Program::kMaxKinds> prefix;
  for (int k = 0; k < t.num_kinds; ++k) {
    kind_s[k] = SectionSeconds(t.layer_s[k], t.layer_comm_s[k], tbo);
    prefix[k] = kind_prefix_[k].data();
  }
  for (int st = 0; st < pp; ++st) {
    const int lo = static_cast<int>(static_cast<long long>(st) * L / pp);
    const int hi = static_cast<int>(static_cast<long long>(st + 1) * L / pp);
    double time = (pp > 1 ? t.pipe_s : 0.0), w = 0, kv = 0, state = 0;
    for (int k = 0; k < t.num_kinds; ++k) {
      const int c = prefix[k][hi] - prefix[k][lo];
      time += c * kind_s[k];
      w += c * t.layer_w[k];
      kv += c * t.layer_kv[k] * pp;  // KV cache and recurrent state
      state += c * t.layer_state[k] * pp;
    }
    if (st == 0) { time += SectionSeconds(t.embed_s, t.embed_comm_s, tbo); w += t.embed_w; }
    if (st == pp - 1) {
      time += SectionSeconds(t.lm_s, t.lm_comm_s, tbo);  // includes the MTP draft passes
      w += t.lm_w + t.mtp_w;
      kv += t.mtp_kv * pp;
    }
    const double mem = w + kv + act + reserve_bytes_;
    if (time > worst_t) { worst_t = time; worst_stage = st; }
    if (mem > worst_mem) {
      worst_mem = mem;
      e.weight_bytes = w;
      e.kv_bytes = kv - state;
      e.state_bytes = state;
    }
  }
  e.act_bytes = act;
  e.reserve_bytes = reserve_bytes_;
  e.mem_bytes = worst_mem;
  e.stage_s = worst_t;
  e.slowest_stage = worst_stage;

  const Workload& wl = p_.workload;
  // One microbatch of dp x batch sequences leaves the pipeline every stage time, each with
  // `accept` new tokens (MTP: the verified token plus the accepted drafts, on average).
  const double seqs_per_s = s.dp * static_cast<double>(batch) / worst_t;
  e.accept = TokensPerStep(s);
  if (worst_stage == pp - 1) e.mtp_s = t.mtp_s;
  e.adp_imbalance = t.adp_imbalance;
  if (wl.mode == Mode::kPrefill) {
    e.tokens_per_s = seqs_per_s * static_cast<double>(wl.isl);
    e.ttft_s = pp * worst_t + request_overhead_s_;
  } else {
    e.tokens_per_s = seqs_per_s * e.accept;
    e.tpot_s = pp * worst_t / e.accept;
    if (wl.mode == Mode::kServe) e.ttft_s = t.ttft_prefill_s + worst_t;
  }
  e.tokens_per_s_per_gpu = e.tokens_per_s / p_.cluster.num_gpus;

  if (batch > TokenBatchLimit(s)) {
    e.verdict = Verdict::kStructure;  // the engine's token budget cannot hold the batch
  } else if (e.mem_bytes > e.mem_capacity_bytes) {
    e.verdict = Verdict::kMemory;
  } else if (wl.tpot_ms > 0 && wl.mode != Mode::kPrefill && e.tpot_s * 1e3 > wl.tpot_ms) {
    e.verdict = Verdict::kTpot;
  } else if (wl.ttft_ms > 0 && wl.mode != Mode::kDecode && e.ttft_s * 1e3 > wl.ttft_ms) {
    e.verdict = Verdict::kTtft;
  } else {
    e.verdict = Verdict::kValid;
  }
  return e;
}

Evaluation Simulator::EvaluateImpl(const Strategy& s, int batch, bool with_breakdown,
                                   double ttft_prefill_s) const {
  Totals t;
  ComputeTotalsWithTtft(s, batch, ttft_prefill_s, &t, with_breakdown);
  Evaluation e = Compose(s, batch, t);
  if (!with_breakdown || e.verdict == Verdict::kStructure) return e;
  // Attribute the slowest stage's time to operators and collectives.
  const int L = p_.model.num_layers, pp = s.pp, ws = e.slowest_stage;
  const int lo = static_cast<int>(static_cast<long long>(ws) * L / pp);
  const int hi = static_cast<int>(static_cast<long long>(ws + 1) * L / pp);
  const auto& bd = tl_breakdown;
  for (int k = 0; k < t.num_kinds; ++k) AddBreakdown(bd[k], kind_prefix_[k][hi] - kind_prefix_[k][lo], &e);
  if (ws == 0) AddBreakdown(bd[Program::kMaxKinds], 1, &e);
  if (ws == pp - 1) AddBreakdown(bd[Program::kMaxKinds + 1], 1, &e);
  if (ws == pp - 1 && t.mtp_s > 0) AddBreakdown(bd[Program::kMaxKinds + 3], t.mtp_passes, &e);
  if (pp > 1) AddBreakdown(bd[Program::kMaxKinds + 2], 1, &e);
  return e;
}

double Simulator::TtftSeconds(const Strategy& s) const {
  thread_local Program prog;
  bool dk = true;
  PrefillPass(s, &prog, &dk);
  double total = 0, t = 0;
  for (int k = 0; k < prog.num_kinds; ++k) {
    t = CostSection(prog.layers[k], dk);
    total += t * kind_prefix_[k].back();
  }
  total += CostSection(prog.embed, dk);
  total += CostSection(prog.lm_head, dk);
  total += CostSection(prog.pipe, dk) * (s.pp - 1);
  // A speculating deployment's prompt also runs once through the draft (BuildMtp).
  if (prog.mtp_passes > 0) total += prog.mtp_passes * CostSection(prog.mtp, dk);
  return total + request_overhead_s_;
}

Evaluation Simulator::EvaluateAtBatch(const Strategy& s, int batch) const {
  return EvaluateImpl(s, batch, true);
}

double Simulator::MemoryBytes(const Strategy& s, int batch) const {
  thread_local Program prog;
  bool dk = true;
  if (!Prepare(s, batch, &prog, &dk)) return std::numeric_limits<double>::infinity();
  // Compose's memory figures need only weights, KV and activations: no step is costed.
  Totals t;
  t.num_kinds = prog.num_kinds;
  double act = 0;
  for (int k = 0; k < prog.num_kinds; ++k) {
    t.layer_s[k] = 1;  // any positive time: only memory is read below
    t.layer_w[k] = prog.layers[k].weight_bytes;
    t.layer_kv[k] = prog.layers[k].kv_bytes;
    t.layer_state[k] = prog.layers[k].state_bytes;
    act = std::max(act, prog.layers[k].act_bytes);
  }
  t.embed_w = prog.embed.weight_bytes;
  t.lm_w = prog.lm_head.weight_bytes;
  t.act = std::max({act, prog.embed.act_bytes, prog.lm_head.act_bytes});
  if (prog.mtp_passes > 0) {
    t.mtp_w = prog.mtp.weight_bytes;
    t.mtp_kv = prog.mtp.kv_bytes;
    t.act = std::max(t.act, prog.mtp.act_bytes);
  }
  return Compose(s, batch, t).mem_bytes;
}

Evaluation Simulator::Evaluate(const Strategy& s) const { return EvaluateAuto(s, true); }

Evaluation Simulator::EvaluateWithoutBreakdown(const Strategy& s) const {
  return EvaluateAuto(s, false);
}

int Simulator::LargestBatchInMemory(const Strategy& s) const {
  if (!QuickStructureOk(s)) return 0;
  const int max_b = std::max(1, std::min(p_.workload.max_batch, TokenBatchLimit(s)));
  const double cap = p_.cluster.gpu.hbm_bytes;
  auto fits = [&](int b) { return MemoryBytes(s, b) <= cap; };
  if (!fits(1)) return 0;
  int good = 1, bad = max_b + 1;
  for (int b = 2; b <= max_b; b *= 2) {
    if (fits(b)) {
      good = b;
    } else {
      bad = b;
      break;
    }
  }
  if (bad == max_b + 1 && good < max_b) {
    if (fits(max_b)) good = max_b;
  }
  while (bad - good > 1) {
    const int mid = good + (bad - good) / 2;
    (fits(mid) ? good : bad) = mid;
  }
  return good;
}

Evaluation Simulator::EvaluateAuto(const Strategy& s, bool breakdown) const {
  if (s.batch > 0) return EvaluateImpl(s, s.batch, breakdown);
  if (!QuickStructureOk(s)) return EvaluateImpl(s, 1, breakdown);
  // Auto batch. Memory grows with the batch, and so do TPOT and TTFT, while throughput grows
  // with it: find the largest batch that fits in memory by exponential + binary search on memory
  // alone (no step costed), then, when SLOs are set, the largest batch within them by bisection;
  // the largest power of two below the answer is also evaluated and the better one kept (guards
  // against rounding effects of token splits).
  const Workload& wl = p_.workload;
  // The TTFT prefill pass does not depend on the batch: compute it once.
  const double ttft = wl.mode == Mode::kServe ? TtftSeconds(s) : -1.0;
  const int good = LargestBatchInMemory(s);
  if (good == 0) return EvaluateImpl(s, 1, breakdown, ttft);
  const bool slo = (wl.tpot_ms > 0 && wl.mode != Mode::kPrefill) ||
                   (wl.ttft_ms > 0 && wl.mode != Mode::kDecode);
  int chosen = good;
  Evaluation best = EvaluateImpl(s, chosen, breakdown, ttft);
  if (slo && !best.valid()) {
    Evaluation one = EvaluateImpl(s, 1, breakdown, ttft);
    if (!one.valid()) return one;
    int lo = 1, hi = chosen;
    best = one;
    while (hi - lo > 1) {
      const int mid = lo + (hi - lo) / 2;
      Evaluation e = EvaluateImpl(s, mid, breakdown, ttft);
      if (e.valid()) {
        lo = mid;
        best = e;
      } else {
        hi = mid;
      }
    }
    chosen = lo;
  }
  int p2 = 1;
  while (p2 * 2 <= chosen) p2 *= 2;
  if (p2 != chosen) {
    Evaluation e = EvaluateImpl(s, p2, breakdown, ttft);
    if (e.valid() && e.tokens_per_s > best.tokens_per_s) best = e;
  }
  return best;  // every candidate above carries its own breakdown
}

std::string Simulator::Reason(const Strategy& s, const Evaluation& e) const {
  constexpr double G = kGiB;
  switch (e.verdict) {
    case Verdict::kValid: return "";
    case Verdict::kStructure: {
      Status st = CheckStrategy(p_.model, p_.cluster.num_gpus, s);
      if (!st.ok()) return st.message();
      const double A = p_.workload.mtp_accept;
      if (s.mtp > 0 && A > 0 && (A < 1 || A > s.mtp + 1))
        return fmt::format(
            "mtp_accept {} is outside [1, mtp + 1 = {}]: a step emits the verified token plus at "
            "most mtp accepted drafts",
            A, s.mtp + 1);
      if (e.batch > TokenBatchLimit(s))
        return fmt::format(
            "batch {} exceeds the {} tokens per rank per step of max_num_tokens (at most batch {} "
            "with {} tokens per sequence{}{})",
            e.batch, max_num_tokens_, TokenBatchLimit(s),
            p_.workload.mode == Mode::kPrefill ? p_.workload.isl : 1 + std::max(0, s.mtp),
            p_.workload.mode == Mode::kServe && p_.workload.engine != Engine::kSglang
                ? " plus the steady-state prefill share"
                : "",
            p_.workload.engine == Engine::kVllm && s.pp > 1 && p_.workload.mode != Mode::kPrefill
                ? fmt::format(", and vLLM keeps its --max-num-seqs, batch x pp {}, within it",
                              s.pp)
                : "");
      return "batch must be at least 1";
    }
    case Verdict::kMemory:
      return fmt::format(
          "needs {:.1f} GiB of {:.1f} GiB per GPU (weights {:.1f}, KV cache {:.1f}, {}"
          "activations {:.1f}, runtime reserve {:.1f}) at batch {}{}",
          e.mem_bytes / G, e.mem_capacity_bytes / G, e.weight_bytes / G, e.kv_bytes / G,
          e.state_bytes > 0 ? fmt::format("recurrent state {:.1f}, ", e.state_bytes / G) : "",
          e.act_bytes / G, e.reserve_bytes / G, e.batch,
          // Weights alone beyond HBM on Grace-Blackwell: the engines' CPU-memory offload would
          // be the only way, and it is not priced (GpuSpec::grace_host).
          p_.cluster.gpu.grace_host && e.weight_bytes > e.mem_capacity_bytes - e.reserve_bytes
              ? "; weights offloaded to the Grace CPU's memory are not modelled"
              : "");
    case Verdict::kTpot:
      return fmt::format("TPOT {:.1f} ms exceeds the SLO of {:.1f} ms at batch {}", e.tpot_s * 1e3,
                         p_.workload.tpot_ms, e.batch);
    case Verdict::kTtft:
      return fmt::format("TTFT {:.1f} ms exceeds the SLO of {:.1f} ms at batch {}", e.ttft_s * 1e3,
                         p_.workload.ttft_ms, e.batch);
    case Verdict::kNoBatch: return "no batch size satisfies memory and SLOs";
  }
  return "";
}

void Simulator::Explain(const Strategy& s, int batch, Detail* out) const {
  bool dk = true;
  if (!Prepare(s, batch, &out->program, &dk)) {
    // Structurally invalid strategy or batch < 1: nothing to explain.
    out->program.num_kinds = 0;
    out->program.embed.num_steps = out->program.lm_head.num_steps = out->program.pipe.num_steps = 0;
    return;
  }
  const Program& p = out->program;
  for (int k = 0; k < p.num_kinds; ++k) StepTimes(p.layers[k], dk, out->layer_step_s[k].data());
  StepTimes(p.embed, dk, out->embed_step_s.data());
  StepTimes(p.lm_head, dk, out->lm_head_step_s.data());
  StepTimes(p.pipe, dk, out->pipe_step_s.data());
  StepTimes(p.mtp, dk, out->mtp_step_s.data());
  const int L = p_.model.num_layers;
  for (int k = 0; k < p.num_kinds; ++k) out->layers_in_slowest_stage[k] = kind_prefix_[k][L];
  // What each step shows in the breakdown: ComputeTotals' costing (after AdpProgram, as there).
  const AdpCoeffs adp = AdpProgram(s, &out->dec_program);
  if (!adp.active) out->dec_program = Program{};  // no decode-only counterpart: no steps
  const Program& dec = out->dec_program;
  const bool tbo = s.overlap == Overlap::kTbo;
  auto shown = [&](const Section& sec, const Section& dsec, double* sec_out, double* dec_out) {
    double c = 0, a = 0;
    if (adp.active)
      CostAdp(sec, dsec, dk, adp, tbo, &c, &a, nullptr, nullptr, nullptr, nullptr, sec_out,
              dec_out);
    else
      CostSection(sec, dk, &c, &a, nullptr, tbo, nullptr, nullptr, nullptr, sec_out);
  };
  for (int k = 0; k < p.num_kinds; ++k)
    shown(p.layers[k], dec.layers[k], out->layer_shown_s[k].data(),
          out->layer_dec_shown_s[k].data());
  shown(p.embed, dec.embed, out->embed_shown_s.data(), out->embed_dec_shown_s.data());
  shown(p.lm_head, dec.lm_head, out->lm_head_shown_s.data(), out->lm_head_dec_shown_s.data());
  shown(p.pipe, dec.pipe, out->pipe_shown_s.data(), out->pipe_dec_shown_s.data());
  shown(p.mtp, dec.mtp, out->mtp_shown_s.data(), out->mtp_dec_shown_s.data());
}

}  // namespace l2s
