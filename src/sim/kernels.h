// Per-GPU kernel latency model: roofline with efficiencies fitted to the measured tables in
// ../shared/calibration/<gpu>/ (coefficients in kernel_coeffs.cc, refit by tools/fit_kernels.py,
// fit error checked by kernels_fit_test.cc). All functions are O(1), allocation-free and
// return seconds. Shapes are PER GPU (after sharding).
#pragma once

#include "common/dtype.h"
#include "hw/hw.h"

namespace l2s {

// Fitted coefficients for one calibration set (one GPU type). Plain data; see kernel_coeffs.cc.
struct KernelCoeffs {
  const char* name;  // calibration set, e.g. "h100_sxm"
  // --- GEMM: t = max(flops / (peak * eff_c), bytes / (hbm_bw * eff_m)) + overhead ---
  double gemm_overhead_s[3];      // per dtype (bf16, fp8, fp4->fp8 path)
  double gemm_eff_compute[3];     // asymptotic compute efficiency for large shapes, per dtype
  double gemm_eff_memory;         // achieved fraction of HBM bandwidth
  double gemm_tile_m, gemm_tile_n, gemm_tile_k;  // tile quantisation (padded dims)
  double gemm_m_half;             // M at which compute efficiency is half of asymptotic
  // Further shape terms may be added by the fitter; keep them O(1) to evaluate.
  double gemm_extra[8];
  // --- attention ---
  double attn_overhead_s;
  double attn_prefill_eff[3];     // FMHA compute efficiency per compute dtype
  double attn_decode_eff_mem;     // KV-read bandwidth efficiency
  double attn_extra[8];
  double mla_overhead_s;
  double mla_prefill_eff;
  double mla_decode_eff_mem;
  double mla_extra[8];
  // --- memory-bound elementwise (norms, activations, residual adds) ---
  double elementwise_eff_mem;
  double elementwise_overhead_s;
};

// The coefficient set for a GPU: its own calibration set when one was fitted (gpu.calibration),
// otherwise the H100 set (efficiencies carry over; peaks and bandwidths come from the GpuSpec).
const KernelCoeffs& CoeffsFor(const GpuSpec& gpu);

// Y[m,n] = X[m,k] W[k,n] with weights in `weight` dtype (fp8/fp4 weights run an fp8 GEMM on GPUs
// that have fp8, bf16 otherwise); `count` independent GEMMs of the same shape (grouped experts).
double GemmSeconds(const GpuSpec& gpu, double m, double n, double k, DType weight, double count = 1);

// Prefill (context) attention: `batch` sequences of `seq_len` new tokens, causal, no prefix.
// Heads are per GPU. window = 0 for full attention.
double AttnPrefillSeconds(const GpuSpec& gpu, double batch, double seq_len, double heads,
                          double kv_heads, double head_dim, double window, DType compute);
// Decode attention: one new token per sequence attending kv_len cached keys.
double AttnDecodeSeconds(const GpuSpec& gpu, double batch, double kv_len, double heads,
                         double kv_heads, double head_dim, double window, DType kv);
// MLA with DeepSeek-V3 geometry generalised by the ModelSpec dims passed in.
double MlaPrefillSeconds(const GpuSpec& gpu, double batch, double seq_len, double heads,
                         double qk_head_dim, double v_head_dim, DType compute);
double MlaDecodeSeconds(const GpuSpec& gpu, double batch, double kv_len, double heads,
                        double latent_dim, double rope_dim, DType kv);

// A memory-bound kernel that moves `bytes` through HBM (norm, activation, residual add).
double ElementwiseSeconds(const GpuSpec& gpu, double bytes);

}  // namespace l2s
