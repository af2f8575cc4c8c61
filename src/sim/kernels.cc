// Kernel latency model (see kernels.h for the formulas and docs/dev/COST_MODEL.md "Kernels" for the
// reasoning). Hot path: no allocation, no transcendental calls (sqrt only).
#include "sim/kernels.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include <fmt/core.h>

#include "sim/collectives.h"

namespace l2s {
namespace {

// Smooth maximum (a^8 + b^8)^(1/8): equals max(a, b) when one term dominates and is at most
// 2^(1/8) = 1.09x max(a, b) at the roofline ridge, where compute and memory overlap imperfectly.
// Monotone non-decreasing in both arguments.
inline double SmoothMax(double a, double b) {
  const double hi = std::max(a, b);
  if (hi <= 0) return 0;
  const double r = std::min(a, b) / hi;
  const double r2 = r * r;
  const double r4 = r2 * r2;
  return hi * std::sqrt(std::sqrt(std::sqrt(1.0 + r4 * r4)));
}

// x rounded up to a multiple of `tile` (tile <= 1 means no padding).
inline double RoundUp(double x, double tile) {
  if (tile <= 1) return x;
  return std::ceil(x / tile) * tile;
}

// Piecewise-linear interpolation of a knot table over x = 2^0 ... 2^(N-1): table[0] below 1,
// table[N-1] above 2^(N-1). Writing x = f * 2^e with f in [0.5, 1) (frexp), x lies in
// [2^(e-1), 2^e) and its position inside that octave is 2f - 1. The exponent and mantissa are
// read from the IEEE-754 bits (x > 1 is normal here; +inf has the largest exponent and takes the
// last knot), which is exactly frexp's result without its library call (sim_bench).
template <int N>
inline double Knot(const double (&table)[N], double x) {
  if (!(x > 1)) return table[0];
  const uint64_t bits = std::bit_cast<uint64_t>(x);
  const int e = static_cast<int>((bits >> 52) & 0x7ff) - 1022;  // frexp's exponent
  const int j = e - 1;
  if (j >= N - 1) return table[N - 1];
  // 2f - 1 = (mantissa in [1, 2)) - 1: the significand bits over 2^52.
  const double frac = static_cast<double>(bits & ((uint64_t{1} << 52) - 1)) * 0x1p-52;
  return table[j] + (table[j + 1] - table[j]) * frac;
}

// Keys attended, summed over the query positions of one causal sequence of `seq` tokens; with a
// window W each query sees at most W keys (W = 0: full attention). Continuous form: seq^2/2
// (full), W*seq - W^2/2 once seq > W.
inline double CausalKeys(double seq, double window) {
  if (window <= 0 || seq <= window) return 0.5 * seq * seq;
  return window * seq - 0.5 * window * window;
}

inline DType ComputeOf(GemmKind kind) {
  return kind == GemmKind::kBF16 ? DType::kBF16
         : kind == GemmKind::kFP4 ? DType::kFP4
                                  : DType::kFP8;
}

}  // namespace

const KernelCoeffs& CoeffsFor(const GpuSpec& gpu) {
  if (gpu.vendor == "amd") return AmdKernelCoeffs();
  const std::string& s = gpu.calibration;
  if (s.empty() || s == "h100_sxm") return H100Coeffs();
  if (s == "h200_sxm") return H200Coeffs();
  if (const KernelCoeffs* b = BlackwellCoeffs(s)) return *b;
  return H100Coeffs();
}

const std::vector<std::string>& FittedCalibrationSets() {
  static const std::vector<std::string> kSets = [] {
    std::vector<std::string> v = {"h100_sxm", "h200_sxm"};
    for (const char* s : {"b200_sxm", "gb200", "b300_sxm", "gb300"})
      if (BlackwellCoeffs(s) != nullptr) v.emplace_back(s);
    return v;
  }();
  return kSets;
}

namespace {

// The H100 SXM as the H100 fit was made on (HARDWARE.md; calib_csv.cc CalibrationGpu).
GpuSpec H100Spec() {
  GpuSpec g;
  g.name = "h100";
  g.bf16_flops = 989e12;
  g.fp8_flops = 1979e12;
  g.hbm_bytes = 80.0 * 1024 * 1024 * 1024;
  g.hbm_bw = 3.35e12;
  g.nvlink_bw = 450e9;
  g.calibration = "h100_sxm";
  return g;
}

AmdKernelScales MakeAmdScales() {
  AmdKernelScales r;
  const KernelCoeffs& h = H100Coeffs();
  const GpuSpec h100 = H100Spec();
  // GEMM: hipBLASLt FP8 8192^3 on MI300X reaches 1159.23 of 2614.9 TFLOPS; the H100 fit's FP8
  // GEMM at the same shape, its fraction of 1979.
  const double n = 8192;
  const double h_frac = 2 * n * n * n /
                        GemmSecondsWith(h, h100, n, n, n, GemmKind::kFP8, 1.0) / h100.fp8_flops;
  r.gemm = (kMi300xGemmTflops / kMi300xFp8Tflops) / h_frac;
  // Prefill attention: FlashAttention-2 at head_dim 64, batch 2, seq 8192 reaches 328.6 of
  // 1307.4 TFLOPS; the H100 fit's bf16 FMHA efficiency there (32 heads: a 2048-wide model).
  const AttnPrefillCoeffs& a = h.attn_prefill[0];
  const double units = 2.0 * 32.0;
  const double a_eff = Knot(a.eff_seq, 8192.0) * 64.0 / (64.0 + a.hd_half) * units /
                       (units + a.par_half);
  r.attn = (kMi300xFa2Tflops / kMi300xBf16Tflops) / a_eff;
  // Memory: HBM stream copy 4.11 of 5.3 TB/s on MI300X; H100 2.935 of 3.35 (HARDWARE.md).
  r.mem = (4.11 / 5.3) / (2.935 / 3.35);
  return r;
}

KernelCoeffs MakeAmdCoeffs() {
  const AmdKernelScales r = AmdScales();
  KernelCoeffs c = H100Coeffs();
  c.name = "amd (h100_sxm scaled)";
  for (GemmCoeffs& g : c.gemm) {
    for (double& e : g.eff_compute) e *= r.gemm;
    for (double& e : g.eff_mem) e *= r.mem;
  }
  for (AttnPrefillCoeffs* p : {&c.attn_prefill[0], &c.attn_prefill[1], &c.mla_prefill[0],
                               &c.mla_prefill[1]}) {
    for (double& e : p->eff_seq) e *= r.attn;
    p->eff_mem *= r.mem;
  }
  for (AttnDecodeCoeffs* d : {&c.attn_decode[0], &c.attn_decode[1], &c.mla_decode[0],
                              &c.mla_decode[1]}) {
    for (auto& row : d->eff_keys)
      for (double& e : row) e *= r.mem;
    d->cta_bw *= r.mem;
  }
  c.elementwise_eff_mem *= r.mem;
  return c;
}

}  // namespace

const AmdKernelScales& AmdScales() {
  static const AmdKernelScales kScales = MakeAmdScales();
  return kScales;
}

const KernelCoeffs& AmdKernelCoeffs() {
  static const KernelCoeffs kAmd = MakeAmdCoeffs();
  return kAmd;
}

std::string CalibrationNote(const GpuSpec& gpu) {
  if (gpu.vendor == "amd") {
    const AmdKernelScales& r = AmdScales();
    return fmt::format(
        "{}: no kernel tables; efficiencies of the h100_sxm fit scaled by MI300X measurements "
        "(GEMM x{:.3f} from hipBLASLt FP8 8192^3, attention x{:.3f} from FlashAttention-2, memory "
        "x{:.3f} from HBM copy; OTHER-MEASUREMENTS.md section 1){}; collectives: h100_sxm lines "
        "x{:.3f} (RCCL all-reduce share of the xGMI mesh)",
        gpu.name, r.gemm, r.attn, r.mem,
        gpu.name == "mi300x" ? "" : ", applied to this GPU's peaks as to MI300X's (nearest measured generation)",
        AmdCollectiveScale());
  }
  if (gpu.calibration.empty())
    return fmt::format("{}: no kernel tables of its own; efficiencies of the h100_sxm fit at this GPU's peaks",
                       gpu.name);
  const KernelCoeffs& c = CoeffsFor(gpu);
  if (gpu.calibration != c.name)
    return fmt::format("{}: kernel tables {} have no fitted set; efficiencies of the {} fit at this GPU's peaks",
                       gpu.name, gpu.calibration, c.name);
  // The set fitted on the GPU's own tables names itself; sub-models it took from another GPU's
  // set (tools/fit_kernels: no rows of that kind) are named with the set they came from.
  std::string note = fmt::format("{}: kernel tables {}", gpu.name, c.name);
  if (c.borrowed[0] != '\0') note += fmt::format("; taken from another GPU's set: {}", c.borrowed);
  return note;
}

// The calibration GPUs (H100 SXM and H200 SXM: kCalibSmCount = 132 SMs, 989 / 1979 dense TFLOPS
// bf16 / fp8, HARDWARE.md): their tensor rate per SM, for the per-SM transfer below.
constexpr double kCalibBf16Flops = 989e12, kCalibFp8Flops = 1979e12;

// Per-SM rate of `gpu` at `peak_flops` relative to the calibration GPU's at the same GEMM kind: the
// factor by which fixed per-tile times weigh more (> 1) or less (< 1) in units of tensor work.
// 1 for GPUs with kernel tables of their own (gpu.calibration) and when the SM count is unknown.
inline double PerSmRateRatio(const GpuSpec& gpu, GemmKind kind, double peak_flops) {
  if (!gpu.calibration.empty() || gpu.sm_count <= 0) return 1.0;
  const double ref = kind == GemmKind::kBF16 ? kCalibBf16Flops : kCalibFp8Flops;
  return peak_flops * kCalibSmCount / (ref * gpu.sm_count);
}

// GemmSecondsWith at an explicit tensor-core peak (FP4 GEMMs run the FP8 form at the FP4 peak).
double GemmSecondsAtPeak(const KernelCoeffs& c, const GpuSpec& gpu, double m, double n, double k,
                         GemmKind kind, double weight_bytes, double count, double peak_flops) {
  const GemmCoeffs& g = GemmOf(c, kind);
  const double n_pad = RoundUp(n, g.tile_n);
  const double k_pad = RoundUp(k, g.tile_k);
  const double eff = Knot(g.eff_compute, m);
  // FLOPs of the padded problem, inflated by the per-tile fixed cost of small N / K.
  const double flops = 2.0 * m * (n_pad + g.n_half) * (k_pad + g.k_half);
  double compute_s = flops / (peak_flops * eff);
  // GPUs without tables of their own (per-SM transfer, docs/dev/COST_MODEL.md "Kernels"): the fitted
  // losses below the asymptotic efficiency eff_max (the small-m ramp, the per-tile n_half / k_half
  // costs) are fixed times on an SM, so they keep the time they take on an SM of the calibration
  // GPU, while the ideal work runs at this GPU's peak:
  //   t = W / (peak eff_max) + s (flops / eff - W / eff_max) / peak,  W = 2 m N' K',
  // s = PerSmRateRatio (H20 0.25: its SMs are 4x slower, so the same fixed time is less tensor
  // work; B200 2.0). s = 1 is the fitted form exactly; t is non-increasing in the peak.
  const double s = PerSmRateRatio(gpu, kind, peak_flops);
  if (s != 1.0) {
    const double inv_max = 1.0 / g.eff_compute[kGemmKnots - 1];
    const double ideal = 2.0 * m * n_pad * k_pad * inv_max;
    compute_s = (ideal + s * (flops / eff - ideal)) / peak_flops;
  }
  const double bytes = m * k * g.act_bytes + n * k * weight_bytes + 2.0 * m * n;  // X, W, Y (bf16)
  // A grouped GEMM (count > 1: an MoE layer's experts) is one launch streaming every group's
  // operands: its memory efficiency is the fit's at the whole launch's bytes.
  const double memory_s =
      bytes / (gpu.hbm_bw * Knot(g.eff_mem, std::max(1.0, count) * bytes * (1.0 / kMemKnot0Bytes)));
  const double quant_s = g.quant_bytes_per_elem * m * k / gpu.hbm_bw;
  return g.overhead_s + count * (quant_s + SmoothMax(compute_s, memory_s));
}

double GemmSecondsWith(const KernelCoeffs& c, const GpuSpec& gpu, double m, double n, double k,
                       GemmKind kind, double weight_bytes, double count) {
  return GemmSecondsAtPeak(c, gpu, m, n, k, kind, weight_bytes, count,
                           gpu.PeakFlops(ComputeOf(kind)));
}

double GemmSecondsFor(const KernelCoeffs& c, const GpuSpec& gpu, double m, double n, double k,
                      DType weight, double count, bool block_scaled, bool experts) {
  // The fp8_block rows measured DeepGEMM, the block-scaled kernels the engines run, only on the
  // Blackwell tables (calibration README: on H100/H200 they are TensorRT-LLM's torch-flow Linear);
  // elsewhere the per-tensor fit stands in (the derived AMD / tableless sets are anchored on
  // per-tensor FP8 figures).
  if (weight == DType::kFP8 && block_scaled && gpu.fp8_flops > 0 &&
      BlackwellCoeffs(gpu.calibration) == &c)
    return GemmSecondsWith(c, gpu, m, n, k, GemmKind::kFP8Block, 1.0, count);
  if (weight == DType::kFP4 && gpu.fp4_flops > 0) {
    // FP4 tensor cores: a dense GEMM runs the set's own NVFP4 fit (the Blackwell tables); the
    // routed experts' grouped GEMM (kernels.h: checked against the measured MoE op) and a set
    // without FP4 rows (CDNA4's, derived from H100) run the FP8 fit's form (efficiency ramps,
    // tiles, fixed costs, activation quantisation) at the FP4 peak with FP4 weight bytes.
    if (c.has_gemm_fp4 && !experts)
      return GemmSecondsWith(c, gpu, m, n, k, GemmKind::kFP4, BytesPerElement(DType::kFP4), count);
    return GemmSecondsAtPeak(c, gpu, m, n, k, GemmKind::kFP8, BytesPerElement(DType::kFP4), count,
                             gpu.fp4_flops);
  }
  const bool fp8_path = weight != DType::kBF16 && gpu.fp8_flops > 0;
  return GemmSecondsWith(c, gpu, m, n, k, fp8_path ? GemmKind::kFP8 : GemmKind::kBF16,
                         BytesPerElement(weight), count);
}

double GemmSeconds(const GpuSpec& gpu, double m, double n, double k, DType weight, double count,
                   bool block_scaled, bool experts) {
  return GemmSecondsFor(CoeffsFor(gpu), gpu, m, n, k, weight, count, block_scaled, experts);
}

double AttnPrefillSecondsWith(const AttnPrefillCoeffs& c, const GpuSpec& gpu, double batch,
                              double seq_len, double heads, double kv_heads, double head_dim,
                              double window, DType compute, DType kv) {
  const double w = window > 0 ? window + c.window_pad : 0;
  const double keys = CausalKeys(seq_len, w);                      // per sequence
  const double flops = 4.0 * batch * heads * head_dim * keys;       // QK^T and PV, 2 FLOPs/MAC
  const double units = batch * heads;  // independent (sequence, head) problems to spread over SMs
  const double eff = Knot(c.eff_seq, seq_len) * head_dim / (head_dim + c.hd_half) *
                     units / (units + c.par_half);
  const double compute_s = flops / (gpu.PeakFlops(compute) * eff);
  // Q read + O write (bf16), K/V read (bf16) and written to the cache in the kv dtype.
  const double bytes = batch * seq_len * head_dim *
                       (4.0 * heads + kv_heads * 2.0 * (2.0 + BytesPerElement(kv)));
  const double memory_s = bytes / (gpu.hbm_bw * c.eff_mem);
  return c.overhead_s + c.tok_s * batch * seq_len * (heads + 2.0 * kv_heads) +
         SmoothMax(compute_s, memory_s);
}

// XQA's multi-block split (kernels.h). The engine floors the cut to an integer; the real-valued
// form keeps streams x nb, and so the time, monotone in the batch.
double XqaBlocksPerStream(double keys, double streams, double batch, double sms) {
  double nb = keys / 128.0;                   // kMinHistoryTokensPerBlock
  if (nb > 8.0) nb = std::sqrt(8.0 * nb);      // bound the final reduction (sqrt(8 nb) < nb)
  nb = std::max(nb, 1.0);
  const double waves = streams * nb / sms;
  if (waves > 8.0) nb = std::max(nb * 8.0 / waves, 1.0);  // kTargetWaveFactor
  return std::max(std::min(nb, 6000.0 / std::max(batch, 1.0)), 1.0);  // workspace sub-sequences
}

double AttnDecodeSecondsWith(const AttnDecodeCoeffs& c, const GpuSpec& gpu, double batch,
                             double kv_len, double heads, double kv_heads, double head_dim,
                             double window, DType kv) {
  const double in_window = window > 0 ? std::min(kv_len, window) : kv_len;
  const double keys = in_window + c.window_skip * (kv_len - in_window);
  const bool grouped = heads > kv_heads && heads <= c.max_group * kv_heads;
  const int p = grouped ? 0 : 1;
  const double kv_elem = BytesPerElement(kv);
  const double kv_read = batch * keys * 2.0 * kv_heads * head_dim * kv_elem;
  const double qo_bytes = batch * 4.0 * heads * head_dim;  // q read, o write (bf16)
  if (grouped) {
    // Wave model of XQA's CTAs (kernels.h).
    const double streams = batch * kv_heads;
    const double sms = gpu.sm_count > 0 ? gpu.sm_count : kCalibSmCount;
    const double nb = XqaBlocksPerStream(keys, streams, batch, sms);
    const double hbm_s = kv_read / (gpu.hbm_bw * Knot(c.eff_keys[0], keys / nb));
    const double ctas = streams * nb;
    const double slots = c.ctas_per_sm * sms;
    const double per_key_s =
        SmoothMax(2.0 * head_dim * kv_elem / c.cta_bw,
                  4.0 * (heads / kv_heads) * head_dim * slots /
                      (gpu.PeakFlops(DType::kBF16) * c.eff_compute[0]));
    const double tau = c.seq_s[0] + keys / nb * per_key_s;
    const double cta_s = std::max(1.0, ctas / slots) * tau;
    return c.overhead_s + SmoothMax(cta_s, hbm_s + qo_bytes / gpu.hbm_bw);
  }
  const double hbm_s = kv_read / (gpu.hbm_bw * Knot(c.eff_keys[1], keys));
  const double streams = batch * heads;
  const double flops = 4.0 * batch * heads * head_dim * keys;
  const double compute_s = flops / (gpu.PeakFlops(DType::kBF16) * c.eff_compute[p]);
  const double ctas = streams * std::min(keys / c.block_keys[p], c.max_blocks[p]);
  const double memory_s =
      hbm_s + (kv_read * c.par_half[p] / std::max(ctas, 1e-9) + qo_bytes) / gpu.hbm_bw;
  return c.overhead_s + c.seq_s[p] * streams + SmoothMax(compute_s, memory_s);
}

double MlaPrefillSecondsWith(const AttnPrefillCoeffs& c, const GpuSpec& gpu, double batch,
                             double seq_len, double heads, double qk_head_dim, double v_head_dim,
                             DType compute) {
  const double keys = CausalKeys(seq_len, 0);
  const double flops = batch * heads * (2.0 * qk_head_dim + 2.0 * v_head_dim) * keys;
  const double units = batch * heads;
  const double eff = Knot(c.eff_seq, seq_len) * units / (units + c.par_half);
  const double compute_s = flops / (gpu.PeakFlops(compute) * eff);
  // q, k (qk dim) and v, o (v dim) per head and token, bf16.
  const double bytes = batch * seq_len * heads * 2.0 * (2.0 * qk_head_dim + 2.0 * v_head_dim);
  const double memory_s = bytes / (gpu.hbm_bw * c.eff_mem);
  return c.overhead_s + c.tok_s * batch * seq_len * heads + SmoothMax(compute_s, memory_s);
}

double MlaDecodeSecondsWith(const AttnDecodeCoeffs& c, const GpuSpec& gpu, double batch,
                            double kv_len, double heads, double latent_dim, double rope_dim,
                            DType kv, DType math) {
  const double width = latent_dim + rope_dim;
  const double flops = batch * heads * kv_len * (2.0 * width + 2.0 * latent_dim);
  const double peak = math == DType::kBF16 ? gpu.bf16_flops : gpu.PeakFlops(math);
  const double compute_s = flops / (peak * c.eff_compute[0]);
  const double kv_read = batch * kv_len * width * BytesPerElement(kv);
  const double qo_bytes = batch * heads * 2.0 * (width + latent_dim);
  const double streams = batch;  // one latent stream per sequence
  const double ctas = streams * std::min(kv_len / c.block_keys[0], c.max_blocks[0]);
  const double memory_s = kv_read / (gpu.hbm_bw * Knot(c.eff_keys[0], kv_len)) +
                          (kv_read * c.par_half[0] / std::max(ctas, 1e-9) + qo_bytes) / gpu.hbm_bw;
  return c.overhead_s + c.seq_s[0] * streams + SmoothMax(compute_s, memory_s);
}

double AttnPrefillSeconds(const GpuSpec& gpu, double batch, double seq_len, double heads,
                          double kv_heads, double head_dim, double window, DType compute) {
  const int i = compute == DType::kBF16 ? 0 : 1;
  return AttnPrefillSecondsWith(CoeffsFor(gpu).attn_prefill[i], gpu, batch, seq_len, heads,
                                kv_heads, head_dim, window, compute,
                                compute == DType::kBF16 ? DType::kBF16 : DType::kFP8);
}

double AttnDecodeSeconds(const GpuSpec& gpu, double batch, double kv_len, double heads,
                         double kv_heads, double head_dim, double window, DType kv) {
  const int i = kv == DType::kBF16 ? 0 : 1;
  return AttnDecodeSecondsWith(CoeffsFor(gpu).attn_decode[i], gpu, batch, kv_len, heads, kv_heads,
                               head_dim, window, kv);
}

double MlaPrefillSeconds(const GpuSpec& gpu, double batch, double seq_len, double heads,
                         double qk_head_dim, double v_head_dim, DType compute, DType math) {
  const int i = compute == DType::kBF16 ? 0 : 1;
  return MlaPrefillSecondsWith(CoeffsFor(gpu).mla_prefill[i], gpu, batch, seq_len, heads,
                               qk_head_dim, v_head_dim, math);
}

double MlaDecodeSeconds(const GpuSpec& gpu, double batch, double kv_len, double heads,
                        double latent_dim, double rope_dim, DType kv, DType math) {
  const int i = kv == DType::kBF16 ? 0 : 1;
  return MlaDecodeSecondsWith(CoeffsFor(gpu).mla_decode[i], gpu, batch, kv_len, heads, latent_dim,
                              rope_dim, kv, math);
}

double ElementwiseSecondsWith(const KernelCoeffs& c, const GpuSpec& gpu, double bytes) {
  return c.elementwise_overhead_s + bytes / (gpu.hbm_bw * c.elementwise_eff_mem);
}

double ElementwiseSeconds(const GpuSpec& gpu, double bytes) {
  return ElementwiseSecondsWith(CoeffsFor(gpu), gpu, bytes);
}

}  // namespace l2s
