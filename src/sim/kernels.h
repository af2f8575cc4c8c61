// Per-GPU kernel latency model: roofline with efficiencies fitted to the measured tables in
// ../shared/calibration/<gpu>/ (coefficients in kernel_coeffs.cc, written by tools/fit_kernels,
// fit error checked by kernels_fit_test.cc; the forms are documented in docs/dev/COST_MODEL.md,
// section "Kernels"). All functions are O(1), allocation-free and return seconds. Shapes are
// PER GPU (after sharding). Every function is monotone non-decreasing in m, n, k, count, batch,
// seq_len, kv_len and bytes, and never slower with more bandwidth or FLOP/s (tested).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/dtype.h"
#include "hw/hw.h"

namespace l2s {

// Number of log2(m) knots of the GEMM compute-efficiency ramp: m = 2^0 ... 2^15 (= 32768, the
// largest m measured); efficiency is interpolated linearly in m between knots, constant above.
inline constexpr int kGemmKnots = 16;
// Knots of the GEMM memory-bandwidth ramp over log2(bytes moved): 2^16 (64 KiB) ... 2^33 (8 GiB).
inline constexpr int kMemKnots = 18;
inline constexpr double kMemKnot0Bytes = 65536.0;
// Knots of the prefill-attention efficiency ramp over log2(seq_len): 2^0 ... 2^15.
inline constexpr int kAttnKnots = 16;
// Knots of the decode-attention bandwidth ramp over log2(keys): 2^0 ... 2^17 (= 131072).
inline constexpr int kDecodeKnots = 18;

// The GEMM implementations that were measured (gemm.csv `dtype`).
enum class GemmKind : unsigned char {
  kBF16,      // bf16 x bf16 -> bf16
  kFP8,       // per-tensor FP8 weights, dynamic activation quantisation included
  kFP8Block,  // DeepSeek-style 128x128 block-scaled FP8 weights, 1x128 activation groups
  kFP4,       // NVFP4 weights and activations (block scales), at the FP4 peak: the Blackwell
              // tables' `nvfp4` rows; its coefficients are KernelCoeffs::gemm_fp4
};
// The kinds of KernelCoeffs::gemm (kFP4, fitted only where FP4 rows were measured, has its own
// member).
inline constexpr int kNumGemmKinds = 3;

// One GEMM implementation on one GPU:
//   t = overhead_s + quant_bytes_per_elem * m * k / hbm_bw
//       + smax( 2 m (N' + n_half)(K' + k_half) / (peak * eff_compute(m)),
//               bytes / (hbm_bw * eff_mem(bytes)) )
// with N' = n rounded up to tile_n, K' = k rounded up to tile_k, eff_compute(m) and
// eff_mem(bytes) knot tables (linear between knots), bytes = m k act_bytes (X) + n k weight
// bytes (W) + 2 m n (bf16 Y), and smax(a, b) = (a^8 + b^8)^(1/8).
struct GemmCoeffs {
  double overhead_s;
  double quant_bytes_per_elem;     // activation quantisation traffic, per element of X (fp8 paths)
  double act_bytes;                // bytes per element of X as the GEMM kernel reads it
  double tile_n, tile_k;           // padding granularity of N and K
  double n_half, k_half;           // small-N / small-K efficiency loss (per-tile fixed cost)
  double eff_compute[kGemmKnots];  // fraction of peak at m = 2^j; eff[j] <= eff[j+1] <= 2 eff[j]
  // Achieved fraction of HBM bandwidth at bytes = 2^(16+j): small transfers cannot hide the
  // DRAM latency, mid-sized ones partly hit L2; eff[j+1] <= 2 eff[j].
  double eff_mem[kMemKnots];
};

// Prefill (context) FMHA on one GPU:
//   t = overhead_s + tok_s * batch * seq * (heads + 2 kv_heads)
//       + smax( flops / (peak * eff_seq(seq) * hd/(hd + hd_half) * u/(u + par_half)),
//               bytes / (hbm_bw * eff_mem) )
// flops = 4 * batch * heads * head_dim * keys, keys = sum over query positions of attended keys
// (seq^2/2 causal; with a window W each query sees at most W' = W + window_pad keys:
// W' seq - W'^2/2 once seq > W'), u = batch * heads (independent problems for the SMs),
// bytes = batch * seq * head_dim * (4 heads + kv_heads * 2 * (2 + kv_bytes)) (Q, O, K/V read in
// bf16, K/V written to the cache).
struct AttnPrefillCoeffs {
  double overhead_s;
  double tok_s;                  // per (token x head) fixed cost: RoPE, KV-cache write setup
  double eff_mem;
  double hd_half;                // small head_dim loss
  double par_half;               // too few (sequence, head) problems to fill the GPU
  double window_pad;             // extra keys a windowed kernel visits per query (tile edge)
  double eff_seq[kAttnKnots];    // fraction of peak at seq = 2^j; eff[j] <= eff[j+1] <= 2 eff[j]
};

// Decode attention (one query token per sequence) on one GPU. Two kernel paths: the grouped one
// (TRT-LLM XQA: 1 < heads/kv_heads <= max_group, one stream per (sequence, kv head) sharing K/V
// among its g = heads/kv_heads query heads on tensor cores) and the per-head one (MMHA: MHA, or
// groups larger than max_group; one stream per (sequence, query head), CUDA cores).
//
// Grouped path (p = 0): a wave model of the CTAs XQA launches. Each stream's keys are split into
// nb blocks by XQA's multi-block rule (TensorRT-LLM decoderXQA computeMultiBlockCount, taken in
// continuous form so that time stays monotone):
//   nb = max(1, min(keys/128, sqrt(8 keys/128)));  if streams nb > 8 sms: nb = 8 sms / streams;
//   nb = max(1, min(nb, 6000 / batch))
// (128 = kMinHistoryTokensPerBlock, 8 = kTargetWaveFactor waves, 6000 = the workspace's
// sub-sequences; sms = gpu.sm_count, 132 for the calibration GPUs). ctas = streams nb, each
// walking kpc = keys / nb keys; slots = ctas_per_sm * sms CTAs run at once. One CTA takes
//   tau = seq_s[0] + kpc * smax( 2 head_dim kv_bytes_per_elem / cta_bw,
//                                4 g head_dim * slots / (peak_bf16 * eff_compute[0]) )
// (a fixed prologue/epilogue, then per key its K/V bytes at one CTA's read rate or its MMA work at
// one slot's share of the fitted tensor rate), and
//   t = overhead_s + smax( max(1, ctas / slots) * tau,
//                          kv_bytes / (hbm_bw * eff_keys[0](kpc)) + qo_bytes / hbm_bw ).
// With many streams the fixed cost and the MMA work are shared by all slots (the attention runs at
// the tensor and HBM rates); with few, one CTA's latency sets the time. The achieved HBM fraction
// follows the keys each CTA walks (short walks stream less efficiently); knots above the longest
// walk measured hold the last measured value.
//
// Per-head path (p = 1):
//   t = overhead_s + seq_s[1] * streams
//       + smax( flops / (peak_bf16 * eff_compute[1]),
//               kv_bytes / (hbm_bw * eff_keys[1](keys))
//               + (kv_bytes * par_half[1] / ctas + qo_bytes) / hbm_bw ),
//   ctas = streams * min(keys / block_keys[1], max_blocks[1]).
// kv_bytes = batch * keys * 2 * kv_heads * head_dim * kv_bytes_per_elem, qo_bytes = 4 batch heads
// head_dim, flops = 4 * batch * heads * head_dim * keys; keys = kv_len, or with a window W
// min(kv_len, W) + window_skip * (kv_len - min(kv_len, W)) (the kernel still walks the pages it
// skips). eff_keys[1] is a knot table over keys (eff_keys[0] over kpc); eff_keys[j+1] <= 2 eff_keys[j]
// keeps the time non-decreasing in kv_len. MLA decode (MlaDecodeSecondsWith) keeps the per-head form's terms with
// index 0 (its own fit; cta_bw and ctas_per_sm are unused there).
struct AttnDecodeCoeffs {
  double overhead_s;
  double max_group;       // largest heads/kv_heads the grouped kernel takes
  double window_skip;
  double seq_s[2];        // [0] grouped: fixed time of one CTA; [1] per-head: per stream
  double eff_compute[2];
  double par_half[2];     // per-head path (and MLA)
  double block_keys[2];   // per-head path (and MLA)
  double max_blocks[2];   // per-head path (and MLA)
  // Achieved fraction of HBM bandwidth at keys (grouped path: keys per CTA) = 2^j. Above 1 where
  // the KV cache of a measured shape is small enough to stay in the 50 MB L2 across the
  // back-to-back timed calls.
  double eff_keys[2][kDecodeKnots];
  double cta_bw;          // grouped path: bytes/s one CTA reads K/V at
  double ctas_per_sm;     // grouped path: CTAs resident per SM
};

// MLA prefill (non-absorbed; q/k head dim qk, v head dim v):
//   flops = batch * heads * (2 qk + 2 v) * keys, keys = seq^2/2; same form as AttnPrefillCoeffs.
// MLA decode (absorbed; latent cache of latent + rope per token):
//   flops = batch * heads * keys * (2 (latent + rope) + 2 latent), bytes = batch * keys *
//   (latent + rope) * kv_bytes; the per-head form of AttnDecodeCoeffs with the index-0 terms
//   (seq_s, eff_compute, par_half, block_keys, max_blocks, eff_keys over keys) and one stream per
//   sequence (absorbed MLA is MQA over the latent cache; its own fit, not the XQA wave model).
struct KernelCoeffs {
  const char* name;  // calibration set, e.g. "h100_sxm"
  GemmCoeffs gemm[kNumGemmKinds];
  AttnPrefillCoeffs attn_prefill[2];  // [0] bf16 FMHA, [1] fp8 FMHA
  AttnDecodeCoeffs attn_decode[2];    // [0] bf16 KV cache, [1] fp8 KV cache
  AttnPrefillCoeffs mla_prefill[2];   // [0] bf16 latent cache, [1] fp8 latent cache (bf16 compute)
  AttnDecodeCoeffs mla_decode[2];     // [0] bf16 latent cache, [1] fp8 latent cache
  // --- memory-bound elementwise (norms, activations, residual adds) ---
  double elementwise_eff_mem;
  double elementwise_overhead_s;
  // NVFP4 GEMMs (GemmKind::kFP4), fitted on the set's own `nvfp4` rows (the Blackwell tables);
  // has_gemm_fp4 false: no such rows, and FP4 GEMMs run the FP8 fit's form at the FP4 peak.
  GemmCoeffs gemm_fp4 = {};
  bool has_gemm_fp4 = false;
  // Sub-models this set did not fit on its own tables and took from another set (the nearest
  // measured generation), with the reason, e.g. "mla_decode fp8 from h200_sxm (no rows)";
  // "" when every sub-model is the set's own. CalibrationNote prints it.
  const char* borrowed = "";
};

// The coefficients of one GEMM kind of a set (kFP4: gemm_fp4).
inline const GemmCoeffs& GemmOf(const KernelCoeffs& c, GemmKind kind) {
  return kind == GemmKind::kFP4 ? c.gemm_fp4 : c.gemm[static_cast<int>(kind)];
}
inline GemmCoeffs& GemmOf(KernelCoeffs& c, GemmKind kind) {
  return kind == GemmKind::kFP4 ? c.gemm_fp4 : c.gemm[static_cast<int>(kind)];
}

// The coefficient set for a GPU: its own calibration set when one was fitted (gpu.calibration
// names it: h100_sxm, h200_sxm, b200_sxm, gb200, b300_sxm, gb300), otherwise the H100 set
// (efficiencies carry over; peaks and bandwidths come from the GpuSpec). O(1): a few string
// comparisons on gpu.calibration.
const KernelCoeffs& CoeffsFor(const GpuSpec& gpu);
// The fitted sets themselves (kernel_coeffs.cc: Hopper; kernel_coeffs_blackwell.cc: B200, GB200,
// B300, GB300, looked up by calibration name, nullptr when no such set was generated).
const KernelCoeffs& H100Coeffs();
const KernelCoeffs& H200Coeffs();
const KernelCoeffs* BlackwellCoeffs(std::string_view set);
// The calibration names that have a fitted set (CoeffsFor resolves each to its own).
const std::vector<std::string>& FittedCalibrationSets();

// AMD Instinct GPUs have no kernel tables. Their set is the H100 fit with three factors, each the
// ratio of an MI300X measurement's fraction of peak (../shared/calibration/OTHER-MEASUREMENTS.md
// section 1) to the H100 fit's fraction at the same shape:
//   gemm: hipBLASLt FP8 m = n = k = 8192, 1159.23 of 2614.9 TFLOPS -> every GEMM eff_compute;
//   attn: FlashAttention-2, head_dim 64, batch 2, seq 8192, 328.6 of 1307.4 TFLOPS -> the
//         prefill eff_seq of FMHA and MLA;
//   mem:  HBM stream copy 4.11 of 5.3 TB/s against H100's 2.935 of 3.35 -> every memory
//         efficiency (GEMM eff_mem, decode eff_keys and cta_bw, prefill eff_mem, elementwise).
// MI325X (the same die) and MI355X (CDNA4, no measured kernels) take the same set at their own
// peaks: the nearest measured generation's efficiencies.
struct AmdKernelScales {
  double gemm = 1, attn = 1, mem = 1;
};
inline constexpr double kMi300xGemmTflops = 1159.23, kMi300xFp8Tflops = 2614.9;
inline constexpr double kMi300xFa2Tflops = 328.6, kMi300xBf16Tflops = 1307.4;
const AmdKernelScales& AmdScales();
const KernelCoeffs& AmdKernelCoeffs();
// One line saying where `gpu`'s kernel efficiencies come from (describe / plan print it), e.g.
// "mi355x: no kernel tables; efficiencies of the h100_sxm fit scaled by MI300X measurements ...".
std::string CalibrationNote(const GpuSpec& gpu);

// Y[m,n] = X[m,k] W[k,n] with weights in `weight` dtype; `count` independent GEMMs of the same
// shape (grouped experts). FP8 weights use the per-tensor FP8 fit (GemmKind::kFP8). FP4 weights on
// a GPU with FP4 tensor cores (Blackwell, CDNA4: gpu.fp4_flops > 0) run the set's NVFP4 fit
// (GemmKind::kFP4) where it has one (has_gemm_fp4: the Blackwell sets), else the FP8 fit's form at
// the FP4 peak with FP4 weight bytes (CDNA4); on other GPUs with FP8 the FP8 fit at the FP8 peak with FP4 weight bytes
// (weight-only FP4). Without FP8 tensor cores the bf16 fit runs with the stored weight bytes
// (weight-only quantisation).
// `block_scaled`: FP8 weights with block scales (a checkpoint with quantization_config
// weight_block_size, ModelSpec::weight_block_scaled) run the block-scaled FP8 fit
// (GemmKind::kFP8Block: DeepGEMM-style kernels with 1x128 activation groups) instead of the
// per-tensor one on the Blackwell sets, whose fp8_block rows measured DeepGEMM (calibration
// README; the H100/H200 rows are TensorRT-LLM's torch-flow Linear, and the derived AMD and
// tableless sets are anchored on per-tensor FP8 figures: all keep the per-tensor form); ignored
// for other dtypes.
// `experts`: the routed experts' grouped GEMM of an MoE layer. With FP4 weights it keeps the FP8
// form at the FP4 peak even on a set with an NVFP4 fit: the fit is of dense GEMMs, and against the
// measured fused MoE op (moe.csv nvfp4, DeepSeek shape, B300, EP 1/4/8, 1-4,096 tokens) it would
// price the two expert GEMMs up to 46% above the whole measured op, while the FP8 form stays 7-35%
// below it (the rest being routing and permutation): docs/dev/COST_MODEL.md "Weight formats".
double GemmSeconds(const GpuSpec& gpu, double m, double n, double k, DType weight, double count = 1,
                   bool block_scaled = false, bool experts = false);
// The same with the coefficient set given (the simulator resolves CoeffsFor once per problem).
double GemmSecondsFor(const KernelCoeffs& c, const GpuSpec& gpu, double m, double n, double k,
                      DType weight, double count = 1, bool block_scaled = false,
                      bool experts = false);

// Explicit implementation and coefficients (the fitter and the fit tests use these; GemmSeconds is
// GemmSecondsWith(CoeffsFor(gpu), gpu, ..., kind for `weight`, BytesPerElement(weight), count)).
// `count` GEMMs share one launch: the overhead is paid once, everything else count times.
double GemmSecondsWith(const KernelCoeffs& c, const GpuSpec& gpu, double m, double n, double k,
                       GemmKind kind, double weight_bytes, double count = 1);

// Prefill (context) attention: `batch` sequences of `seq_len` new tokens, causal, no prefix.
// Heads are per GPU. window = 0 for full attention. `compute` is the FMHA precision (an FP8 KV
// cache on Hopper runs FP8 FMHA: pass kFP8 then).
double AttnPrefillSeconds(const GpuSpec& gpu, double batch, double seq_len, double heads,
                          double kv_heads, double head_dim, double window, DType compute);
// Decode attention: one new token per sequence attending kv_len cached keys.
double AttnDecodeSeconds(const GpuSpec& gpu, double batch, double kv_len, double heads,
                         double kv_heads, double head_dim, double window, DType kv);
// MLA with DeepSeek-V3 geometry generalised by the ModelSpec dims passed in. The measured MLA
// attention always computes in bf16; for prefill `compute` = kFP8 selects the fit for an FP8
// latent cache (its write and handling make prefill ~19% slower at the median), kBF16 the bf16
// one. For decode `kv` is the latent-cache dtype.
// `math` is the precision of the attention math: kBF16 (what the tables measured) or kFP8 (an FP8
// MLA kernel, e.g. FlashMLA's FP8 path: QK^T and PV on the FP8 tensor cores). No FP8-math MLA
// table was measured, so the FP8 kernel is assumed to reach the same fraction of the FP8 peak as
// the measured kernel reaches of the bf16 peak (the assumption FP4 GEMMs make); its bytes are
// unchanged.
double MlaPrefillSeconds(const GpuSpec& gpu, double batch, double seq_len, double heads,
                         double qk_head_dim, double v_head_dim, DType compute,
                         DType math = DType::kBF16);
double MlaDecodeSeconds(const GpuSpec& gpu, double batch, double kv_len, double heads,
                        double latent_dim, double rope_dim, DType kv, DType math = DType::kBF16);

// XQA's multi-block split (TensorRT-LLM decoderXQA computeMultiBlockCount) in continuous form:
// blocks per stream for `keys` keys, `streams` (sequence, kv head) pairs of `batch` sequences on a
// GPU of `sms` SMs (the formula under AttnDecodeCoeffs). At least 1.
double XqaBlocksPerStream(double keys, double streams, double batch, double sms);
// SMs of the calibration GPUs (H100 SXM and H200 SXM), used where a GpuSpec has no sm_count.
inline constexpr double kCalibSmCount = 132;

// Explicit-coefficient forms of the attention models (fitter / tests).
double AttnPrefillSecondsWith(const AttnPrefillCoeffs& c, const GpuSpec& gpu, double batch,
                              double seq_len, double heads, double kv_heads, double head_dim,
                              double window, DType compute, DType kv);
double AttnDecodeSecondsWith(const AttnDecodeCoeffs& c, const GpuSpec& gpu, double batch,
                             double kv_len, double heads, double kv_heads, double head_dim,
                             double window, DType kv);
double MlaPrefillSecondsWith(const AttnPrefillCoeffs& c, const GpuSpec& gpu, double batch,
                             double seq_len, double heads, double qk_head_dim, double v_head_dim,
                             DType compute);
double MlaDecodeSecondsWith(const AttnDecodeCoeffs& c, const GpuSpec& gpu, double batch,
                            double kv_len, double heads, double latent_dim, double rope_dim,
                            DType kv, DType math = DType::kBF16);

// A memory-bound kernel that moves `bytes` through HBM (norm, activation, residual add).
double ElementwiseSeconds(const GpuSpec& gpu, double bytes);
double ElementwiseSecondsWith(const KernelCoeffs& c, const GpuSpec& gpu, double bytes);

}  // namespace l2s
