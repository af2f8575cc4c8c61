// fit_kernels: fits the kernel latency model (src/sim/kernels.h) to the measured tables in
// <shared>/calibration/<set>/ and writes the coefficient files of src/sim/:
//
//   fit_kernels [--shared DIR] --out src/sim/kernel_coeffs.cc          (h100_sxm, h200_sxm)
//   fit_kernels --sets auto --out src/sim/kernel_coeffs_blackwell.cc   (every other directory)
//
// `--sets auto` fits every directory of <shared>/calibration other than the two Hopper sets that
// calib::CalibrationGpu knows the peaks of (b200_sxm, gb200, b300_sxm, gb300; a directory it does
// not know, e.g. a100_sxm, is named on stderr and skipped). A sub-model whose table (or whose rows
// of that kind) a directory lacks is not fitted: it is taken from the nearest measured generation
// that has it (the sibling Blackwell part, then the other Blackwell pair, then H200, then H100)
// and the set's `borrowed` field says so.
//
// Each sub-model (GEMM per implementation, prefill/decode attention per dtype, MLA prefill/decode
// per cache dtype) is fitted on its own table rows by a coordinate pattern search minimising the
// mean absolute log error; coefficients are rounded to the 6 significant digits they are printed
// with before the error report, so the report describes exactly the file written. Deterministic.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "fit_common.h"
#include "sim/calib_csv.h"
#include "sim/kernels.h"

namespace l2s {
namespace {

using fit::Num;
using fit::Param;

template <class T>
T Must(StatusOr<T> v) {
  if (!v.ok()) {
    fmt::print(stderr, "fit_kernels: {}\n", v.status().ToString());
    std::exit(1);
  }
  return std::move(v).value();
}

// Indices of the rows of `all` that `keep` accepts.
template <class Row>
std::vector<Row> Select(const std::vector<Row>& all, const std::function<bool(const Row&)>& keep) {
  std::vector<Row> out;
  for (const Row& r : all) {
    if (keep(r)) out.push_back(r);
  }
  return out;
}

template <class Row>
std::vector<double> Latencies(const std::vector<Row>& rows) {
  std::vector<double> v;
  v.reserve(rows.size());
  for (const Row& r : rows) v.push_back(r.latency_s);
  return v;
}

// Knot-table constraint that keeps time monotone in the knot variable x when time ~ x / eff(x):
// eff may at most double per octave (linear interpolation between knots 2^j and 2^(j+1); the
// worst point is the upper knot). `ramp` additionally requires eff non-decreasing (a physical
// ramp: more rows or tokens never lower a kernel's efficiency); it also pins knots the data cannot
// identify (e.g. compute efficiency at m where every measured GEMM is memory-bound).
template <int N>
bool RampOk(const double (&t)[N], bool ramp) {
  for (int j = 0; j + 1 < N; ++j) {
    if (t[j + 1] > 2.0 * t[j]) return false;
    if (ramp && t[j + 1] < t[j]) return false;
  }
  return true;
}

// ---- GEMM ---------------------------------------------------------------------------------------

void InitGemm(GemmCoeffs& g, GemmKind kind) {
  g.overhead_s = 3e-6;
  g.quant_bytes_per_elem = kind == GemmKind::kBF16 ? 0.0 : 4.0;
  // Bytes per element of X as the kernel reads it: bf16, FP8, or NVFP4 (two values per byte and
  // one FP8 scale per 16).
  g.act_bytes = kind == GemmKind::kBF16 ? 2.0 : kind == GemmKind::kFP4 ? 0.5 + 1.0 / 16 : 1.0;
  for (int j = 0; j < kMemKnots; ++j) g.eff_mem[j] = 0.8;
  g.tile_n = 1;
  g.tile_k = 1;
  g.n_half = 0;
  g.k_half = 0;
  for (int j = 0; j < kGemmKnots; ++j) {
    const double m = std::ldexp(1.0, j);
    g.eff_compute[j] = 0.8 * m / (m + 256.0);
  }
}

void FitGemm(KernelCoeffs& c, const GpuSpec& gpu, const std::vector<calib::GemmRow>& rows,
             GemmKind kind) {
  GemmCoeffs& g = GemmOf(c, kind);
  const std::vector<double> meas = Latencies(rows);
  std::vector<Param> ps = {
      {&g.overhead_s, 0.5e-6, 50e-6, 1e-6},
      {&g.n_half, 0, 8192, 16},
      {&g.k_half, 0, 8192, 16},
      {&g.tile_n, 1, 256, 0, {1, 16, 32, 64, 128, 256}},
      {&g.tile_k, 1, 256, 0, {1, 16, 32, 64, 128, 256}},
  };
  if (kind != GemmKind::kBF16) ps.push_back({&g.quant_bytes_per_elem, 0, 100, 0.5});
  for (int j = 0; j < kGemmKnots; ++j) ps.push_back({&g.eff_compute[j], 1e-5, 1.0, 0.0});
  // Up to 1.5: small operands of the measured shapes can stay in the 50 MB L2.
  for (int j = 0; j < kMemKnots; ++j) ps.push_back({&g.eff_mem[j], 0.01, 1.5, 0.0});
  auto f = [&] {
    return fit::MeanAbsLogError(
        rows.size(), [&](size_t i) { return calib::Predict(c, gpu, rows[i]); }, meas);
  };
  fit::PatternSearch(ps, f, [&] { return RampOk(g.eff_compute, true) && RampOk(g.eff_mem, false); });
  fit::RoundAll(ps);
  fit::FixRamp(g.eff_compute, true);
  fit::FixRamp(g.eff_mem, false);
}

// ---- attention ----------------------------------------------------------------------------------

void InitPrefill(AttnPrefillCoeffs& a) {
  a.overhead_s = 10e-6;
  a.tok_s = 0;
  a.eff_mem = 0.5;
  a.hd_half = 16;
  a.par_half = 8;
  a.window_pad = 64;
  for (int j = 0; j < kAttnKnots; ++j) {
    const double s = std::ldexp(1.0, j);
    a.eff_seq[j] = 0.6 * s / (s + 512.0);
  }
}

void InitDecode(AttnDecodeCoeffs& a, bool mla) {
  a.overhead_s = 8e-6;
  // The grouped (XQA) path: the tables show a 3-10x slowdown between heads/kv_heads = 32 and 48
  // at the same KV volume, so groups above 32 take the per-head path. Fixed, not searched.
  a.max_group = 32;
  a.window_skip = 0.1;
  for (int p = 0; p < 2; ++p) {
    a.seq_s[p] = 20e-9;
    a.eff_compute[p] = p == 0 ? 0.3 : 0.02;
    a.par_half[p] = 64;
    a.block_keys[p] = 256;
    a.max_blocks[p] = 64;
    for (int j = 0; j < kDecodeKnots; ++j) a.eff_keys[p][j] = 0.8;
  }
  // Attention's grouped path is the XQA wave model (kernels.h): start from a few microseconds per
  // CTA, one CTA reading tens of GB/s, two CTAs per SM, a tenth of the tensor peak. MLA decode
  // keeps the per-head form with index 0 and does not use cta_bw / ctas_per_sm.
  a.cta_bw = mla ? 0 : 20e9;
  a.ctas_per_sm = mla ? 0 : 2;
  if (!mla) {
    a.seq_s[0] = 2e-6;
    a.eff_compute[0] = 0.1;
  }
}

template <class Row>
void FitPrefill(AttnPrefillCoeffs& a, const std::vector<Row>& rows,
                const std::function<double(const Row&)>& pred, bool mla) {
  const std::vector<double> meas = Latencies(rows);
  std::vector<Param> ps = {
      {&a.overhead_s, 0.5e-6, 100e-6, 1e-6},
      {&a.tok_s, 0, 1e-6, 1e-12},
      {&a.eff_mem, 0.05, 1.0, 0.0},
      {&a.par_half, 0, 1e6, 1},
  };
  if (!mla) {
    ps.push_back({&a.hd_half, 0, 1024, 4});
    ps.push_back({&a.window_pad, 0, 4096, 16});
  }
  for (int j = 0; j < kAttnKnots; ++j) ps.push_back({&a.eff_seq[j], 1e-6, 1.0, 0.0});
  auto f = [&] {
    return fit::MeanAbsLogError(rows.size(), [&](size_t i) { return pred(rows[i]); }, meas);
  };
  fit::PatternSearch(ps, f, [&] { return RampOk(a.eff_seq, true); });
  fit::RoundAll(ps);
  fit::FixRamp(a.eff_seq, true);
}

template <class Row>
void FitDecode(AttnDecodeCoeffs& a, const std::vector<Row>& rows,
               const std::function<double(const Row&)>& pred, bool mla) {
  const std::vector<double> meas = Latencies(rows);
  std::vector<Param> ps = {{&a.overhead_s, 0.5e-6, 100e-6, 1e-6}};
  if (!mla) ps.push_back({&a.window_skip, 0, 1, 0.01});
  for (int p = 0; p < (mla ? 1 : 2); ++p) {
    const bool waves = !mla && p == 0;  // attention's grouped path: the XQA wave model (kernels.h)
    ps.push_back({&a.seq_s[p], 0, waves ? 1e-4 : 1e-6, waves ? 1e-8 : 1e-10});
    ps.push_back({&a.eff_compute[p], 1e-4, 1.0, 0.0});
    if (waves) {
      ps.push_back({&a.cta_bw, 1e8, 1e13, 1e8});
      ps.push_back({&a.ctas_per_sm, 0.25, 64, 0.25});
      a.par_half[0] = a.block_keys[0] = a.max_blocks[0] = 0;  // not in the wave model
    } else {
      ps.push_back({&a.par_half[p], 0, 1e6, 1});
      ps.push_back({&a.block_keys[p], 1, 1e5, 1});
      ps.push_back({&a.max_blocks[p], 1, 1e5, 1});
    }
    for (int j = 0; j < kDecodeKnots; ++j) ps.push_back({&a.eff_keys[p][j], 0.05, 3.0, 0.0});
  }
  auto f = [&] {
    return fit::MeanAbsLogError(rows.size(), [&](size_t i) { return pred(rows[i]); }, meas);
  };
  // eff_keys is not a ramp: small KV caches are served from L2 (see kernels.h).
  fit::PatternSearch(ps, f, [&] { return RampOk(a.eff_keys[0], false) && RampOk(a.eff_keys[1], false); });
  fit::RoundAll(ps);
  fit::FixRamp(a.eff_keys[0], false);
  fit::FixRamp(a.eff_keys[1], false);
}

// The grouped decode path reads its HBM efficiency at the keys one CTA walks (kernels.h). The
// tables measure long contexts only at small batches, where XQA splits them into many blocks, so
// the longest walk measured is a few thousand keys; the knots above it take no part in the fit
// and would keep their start value. They hold the last measured knot instead (constant
// extrapolation), which a long-context, large-batch decode in the simulator then reads.
void HoldUnmeasuredWalkKnots(AttnDecodeCoeffs& a, const std::vector<calib::AttnRow>& rows,
                             double sms) {
  double max_kpc = 1;
  for (const calib::AttnRow& r : rows) {
    if (!(r.heads > r.kv_heads && r.heads <= a.max_group * r.kv_heads)) continue;  // grouped only
    const double in_window = r.window > 0 ? std::min(r.len, r.window) : r.len;
    const double keys = in_window + a.window_skip * (r.len - in_window);
    const double nb = XqaBlocksPerStream(keys, r.batch * r.kv_heads, r.batch, sms);
    max_kpc = std::max(max_kpc, keys / nb);
  }
  // Knot j covers [2^j, 2^(j+1)); the one just above max_kpc is the last one any row reads.
  const int top = std::min(kDecodeKnots - 1, static_cast<int>(std::ceil(std::log2(max_kpc))));
  for (int j = top + 1; j < kDecodeKnots; ++j) a.eff_keys[0][j] = a.eff_keys[0][top];
}

// ---- report -------------------------------------------------------------------------------------

struct ReportLine {
  std::string table;
  calib::ErrorSummary e;
};

// --dump DIR: per-row predictions for residual analysis (one CSV per table and GPU).
std::string g_dump_dir;
thread_local std::string g_dump_set;
std::vector<std::string> g_only;  // --only: development aid, fit a subset of the sub-models
bool Want(const char* part) {
  if (g_only.empty()) return true;
  for (const std::string& o : g_only) {
    if (o == part) return true;
  }
  return false;
}

std::string RowText(const calib::GemmRow& r) {
  return fmt::format("{},{},{},{}", static_cast<int>(r.kind), r.m, r.n, r.k);
}
std::string RowText(const calib::AttnRow& r) {
  return fmt::format("{},{},{},{},{},{},{},{}", r.batch, r.len, r.heads, r.kv_heads, r.head_dim,
                     r.window, DTypeName(r.attn), DTypeName(r.kv));
}
std::string RowText(const calib::MlaRow& r) {
  return fmt::format("{},{},{},{}", r.batch, r.len, r.heads, DTypeName(r.kv));
}

template <class Row>
ReportLine Score(const std::string& name, const std::vector<Row>& rows,
                 const std::function<double(const Row&)>& pred) {
  std::vector<double> p, m;
  std::ofstream dump;
  if (!g_dump_dir.empty()) {
    std::string file = g_dump_set + "_" + name;
    for (char& ch : file) {
      if (ch == ' ' || ch == '/') ch = '_';
    }
    dump.open(g_dump_dir + "/" + file + ".csv");
  }
  for (const Row& r : rows) {
    p.push_back(pred(r));
    m.push_back(r.latency_s);
    if (dump.is_open()) dump << RowText(r) << "," << m.back() * 1e6 << "," << p.back() * 1e6 << "\n";
  }
  return {name, calib::Summarize(p, m)};
}

// ---- output -------------------------------------------------------------------------------------

template <int N>
std::string Arr(const double (&t)[N]) {
  std::string s = "{";
  for (int j = 0; j < N; ++j) s += (j ? ", " : "") + Num(t[j]);
  return s + "}";
}

std::string GemmText(const GemmCoeffs& g) {
  return fmt::format(
      "      {{.overhead_s = {}, .quant_bytes_per_elem = {}, .act_bytes = {},\n"
      "       .tile_n = {}, .tile_k = {}, .n_half = {}, .k_half = {},\n"
      "       .eff_compute = {},\n"
      "       .eff_mem = {}}}",
      Num(g.overhead_s), Num(g.quant_bytes_per_elem), Num(g.act_bytes), Num(g.tile_n),
      Num(g.tile_k), Num(g.n_half), Num(g.k_half), Arr(g.eff_compute), Arr(g.eff_mem));
}

std::string PrefillText(const AttnPrefillCoeffs& a) {
  return fmt::format(
      "      {{.overhead_s = {}, .tok_s = {}, .eff_mem = {}, .hd_half = {}, .par_half = {},\n"
      "       .window_pad = {},\n       .eff_seq = {}}}",
      Num(a.overhead_s), Num(a.tok_s), Num(a.eff_mem), Num(a.hd_half), Num(a.par_half),
      Num(a.window_pad), Arr(a.eff_seq));
}

std::string DecodeText(const AttnDecodeCoeffs& a) {
  return fmt::format(
      "      {{.overhead_s = {}, .max_group = {}, .window_skip = {},\n"
      "       .seq_s = {}, .eff_compute = {}, .par_half = {},\n"
      "       .block_keys = {}, .max_blocks = {},\n"
      "       .eff_keys = {{{},\n                    {}}},\n"
      "       .cta_bw = {}, .ctas_per_sm = {}}}",
      Num(a.overhead_s), Num(a.max_group), Num(a.window_skip), Arr(a.seq_s), Arr(a.eff_compute),
      Arr(a.par_half), Arr(a.block_keys), Arr(a.max_blocks),
      Arr(a.eff_keys[0]), Arr(a.eff_keys[1]), Num(a.cta_bw), Num(a.ctas_per_sm));
}

std::string CoeffsText(const std::string& var, const KernelCoeffs& c,
                       const std::vector<ReportLine>& report) {
  std::string s = fmt::format("// {}: fit error per table (median |pred/meas - 1|, share within 25%):\n",
                              c.name);
  for (const ReportLine& r : report) {
    s += fmt::format("//   {:<34} rows {:>6}  median {:5.1f}%  within25 {:5.1f}%\n", r.table,
                     r.e.rows, 100 * r.e.median_ape, 100 * r.e.within25);
  }
  s += fmt::format("constexpr KernelCoeffs {} = {{\n    .name = \"{}\",\n    .gemm = {{\n", var,
                   c.name);
  for (int i = 0; i < kNumGemmKinds; ++i) s += GemmText(c.gemm[i]) + (i + 1 < kNumGemmKinds ? ",\n" : "},\n");
  s += "    .attn_prefill = {\n" + PrefillText(c.attn_prefill[0]) + ",\n" +
       PrefillText(c.attn_prefill[1]) + "},\n";
  s += "    .attn_decode = {\n" + DecodeText(c.attn_decode[0]) + ",\n" +
       DecodeText(c.attn_decode[1]) + "},\n";
  s += "    .mla_prefill = {\n" + PrefillText(c.mla_prefill[0]) + ",\n" +
       PrefillText(c.mla_prefill[1]) + "},\n";
  s += "    .mla_decode = {\n" + DecodeText(c.mla_decode[0]) + ",\n" +
       DecodeText(c.mla_decode[1]) + "},\n";
  s += fmt::format("    .elementwise_eff_mem = {},\n    .elementwise_overhead_s = {},\n",
                   Num(c.elementwise_eff_mem), Num(c.elementwise_overhead_s));
  if (c.has_gemm_fp4)
    s += "    .gemm_fp4 =\n" + GemmText(c.gemm_fp4) + ",\n    .has_gemm_fp4 = true,\n";
  s += "};\n";
  return s;
}

// The sub-models of a set, in KernelCoeffs order, by the names `borrowed` and the report use.
constexpr int kNumSubModels = kNumGemmKinds + 8;
const char* const kSubModelNames[kNumSubModels] = {
    "gemm bfloat16",       "gemm fp8",          "gemm fp8_block",      "attn_prefill bf16",
    "attn_prefill fp8",    "attn_decode kv bf16", "attn_decode kv fp8", "mla_prefill kv bf16",
    "mla_prefill kv fp8",  "mla_decode kv bf16",  "mla_decode kv fp8"};

struct GpuFit {
  KernelCoeffs c;
  std::vector<ReportLine> report;
  bool own[kNumSubModels] = {};  // fitted on this set's own rows
  std::string missing[kNumSubModels];  // why not, when !own
  std::string borrowed;          // KernelCoeffs::borrowed text
};

// Copies sub-model `i` of `from` into `to`.
void CopySubModel(KernelCoeffs& to, const KernelCoeffs& from, int i) {
  if (i < kNumGemmKinds) {
    to.gemm[i] = from.gemm[i];
    return;
  }
  const int j = i - kNumGemmKinds;
  switch (j / 2) {
    case 0: to.attn_prefill[j % 2] = from.attn_prefill[j % 2]; break;
    case 1: to.attn_decode[j % 2] = from.attn_decode[j % 2]; break;
    case 2: to.mla_prefill[j % 2] = from.mla_prefill[j % 2]; break;
    default: to.mla_decode[j % 2] = from.mla_decode[j % 2]; break;
  }
}

// A table the directory may lack: no file means no rows (the sub-models it feeds are borrowed).
template <class Row>
std::vector<Row> Optional(StatusOr<std::vector<Row>> v, const std::string& set, const char* table,
                          std::string* why) {
  if (v.ok()) return std::move(v).value();
  fmt::print(stderr, "fit_kernels: {}: {} ({}): its sub-models are taken from another set\n", set,
             table, v.status().ToString());
  *why = fmt::format("no {}", table);
  return {};
}

GpuFit FitGpu(const std::string& shared, const char* set, double stream_eff) {
  const std::string dir = shared + "/calibration/" + set;
  const GpuSpec gpu = Must(calib::CalibrationGpu(set));
  const double sms = gpu.sm_count > 0 ? gpu.sm_count : kCalibSmCount;
  GpuFit out;
  g_dump_set = set;
  KernelCoeffs& c = out.c;
  c.name = set;

  double min_bf16_s = 1;
  if (Want("gemm")) {
  std::string why;
  const auto gemm = Optional(calib::LoadGemm(dir), set, "gemm.csv", &why);
  const char* gemm_names[] = {"gemm bfloat16", "gemm fp8", "gemm fp8_block"};
  for (const auto& r : gemm) {
    if (r.kind == GemmKind::kBF16) min_bf16_s = std::min(min_bf16_s, r.latency_s);
  }
  for (int i = 0; i < kNumGemmKinds; ++i) {
    const GemmKind kind = static_cast<GemmKind>(i);
    const auto rows = Select<calib::GemmRow>(gemm, [&](const auto& r) { return r.kind == kind; });
    InitGemm(c.gemm[i], kind);
    if (rows.empty()) {
      out.missing[i] = why.empty() ? "no rows" : why;
      continue;
    }
    out.own[i] = true;
    FitGemm(c, gpu, rows, kind);
    out.report.push_back(Score<calib::GemmRow>(
        gemm_names[i], rows, [&](const auto& r) { return calib::Predict(c, gpu, r); }));
    fmt::print(stderr, "{} {} median {:.1f}%\n", set, gemm_names[i], 100 * out.report.back().e.median_ape);
  }
  // NVFP4 (GemmKind::kFP4): fitted where the set measured it on FP4 tensor cores; a set without
  // such rows keeps has_gemm_fp4 false (its FP4 GEMMs run the FP8 fit's form at the FP4 peak),
  // and nothing is borrowed for it.
  const auto fp4_rows =
      Select<calib::GemmRow>(gemm, [&](const auto& r) { return r.kind == GemmKind::kFP4; });
  if (!fp4_rows.empty() && gpu.fp4_flops > 0) {
    InitGemm(c.gemm_fp4, GemmKind::kFP4);
    FitGemm(c, gpu, fp4_rows, GemmKind::kFP4);
    c.has_gemm_fp4 = true;
    out.report.push_back(Score<calib::GemmRow>(
        "gemm nvfp4", fp4_rows, [&](const auto& r) { return calib::Predict(c, gpu, r); }));
    fmt::print(stderr, "{} gemm nvfp4 median {:.1f}%\n", set, 100 * out.report.back().e.median_ape);
  }

  }
  if (Want("prefill")) {
  std::string why;
  const auto ctx = Optional(calib::LoadContextAttention(dir), set, "context_attention.csv", &why);
  for (int i = 0; i < 2; ++i) {
    const DType compute = i == 0 ? DType::kBF16 : DType::kFP8;
    const auto rows = Select<calib::AttnRow>(ctx, [&](const auto& r) { return r.compute == compute; });
    InitPrefill(c.attn_prefill[i]);
    if (rows.empty()) {
      out.missing[kNumGemmKinds + i] = why.empty() ? "no rows" : why;
      continue;
    }
    out.own[kNumGemmKinds + i] = true;
    FitPrefill<calib::AttnRow>(
        c.attn_prefill[i], rows, [&](const auto& r) { return calib::PredictContext(c, gpu, r); },
        false);
  }
  for (auto [attn, kv, name] : {std::tuple{DType::kBF16, DType::kBF16, "context_attention bf16/bf16"},
                                std::tuple{DType::kBF16, DType::kFP8, "context_attention bf16/fp8"},
                                std::tuple{DType::kFP8, DType::kFP8, "context_attention fp8/fp8"}}) {
    const auto rows =
        Select<calib::AttnRow>(ctx, [&](const auto& r) { return r.attn == attn && r.kv == kv; });
    if (rows.empty()) continue;
    out.report.push_back(Score<calib::AttnRow>(
        name, rows, [&](const auto& r) { return calib::PredictContext(c, gpu, r); }));
    fmt::print(stderr, "{} {} median {:.1f}%\n", set, name, 100 * out.report.back().e.median_ape);
  }

  }
  if (Want("decode")) {
  std::string why;
  const auto gen =
      Optional(calib::LoadGenerationAttention(dir), set, "generation_attention.csv", &why);
  for (int i = 0; i < 2; ++i) {
    const DType kv = i == 0 ? DType::kBF16 : DType::kFP8;
    const auto rows = Select<calib::AttnRow>(gen, [&](const auto& r) { return r.kv == kv; });
    InitDecode(c.attn_decode[i], false);
    if (rows.empty()) {
      out.missing[kNumGemmKinds + 2 + i] = why.empty() ? "no rows" : why;
      continue;
    }
    out.own[kNumGemmKinds + 2 + i] = true;
    FitDecode<calib::AttnRow>(
        c.attn_decode[i], rows, [&](const auto& r) { return calib::PredictGeneration(c, gpu, r); },
        false);
    HoldUnmeasuredWalkKnots(c.attn_decode[i], rows, sms);
    out.report.push_back(Score<calib::AttnRow>(
        i == 0 ? "generation_attention kv bf16" : "generation_attention kv fp8", rows,
        [&](const auto& r) { return calib::PredictGeneration(c, gpu, r); }));
    fmt::print(stderr, "{} {} median {:.1f}%\n", set, out.report.back().table,
               100 * out.report.back().e.median_ape);
  }

  }
  if (Want("mla")) {
  std::string cwhy, gwhy;
  const auto cmla = Optional(calib::LoadContextMla(dir), set, "context_mla.csv", &cwhy);
  const auto gmla = Optional(calib::LoadGenerationMla(dir), set, "generation_mla.csv", &gwhy);
  for (int i = 0; i < 2; ++i) {
    const DType kv = i == 0 ? DType::kBF16 : DType::kFP8;
    const auto crows = Select<calib::MlaRow>(cmla, [&](const auto& r) { return r.kv == kv; });
    InitPrefill(c.mla_prefill[i]);
    c.mla_prefill[i].hd_half = 0;
    c.mla_prefill[i].window_pad = 0;
    if (crows.empty()) {
      out.missing[kNumGemmKinds + 4 + i] = cwhy.empty() ? "no rows" : cwhy;
    } else {
    out.own[kNumGemmKinds + 4 + i] = true;
    FitPrefill<calib::MlaRow>(
        c.mla_prefill[i], crows, [&](const auto& r) { return calib::PredictContextMla(c, gpu, r); },
        true);
    out.report.push_back(Score<calib::MlaRow>(
        i == 0 ? "context_mla kv bf16" : "context_mla kv fp8", crows,
        [&](const auto& r) { return calib::PredictContextMla(c, gpu, r); }));
    }
    const auto grows = Select<calib::MlaRow>(gmla, [&](const auto& r) { return r.kv == kv; });
    InitDecode(c.mla_decode[i], true);
    c.mla_decode[i].window_skip = 0;
    if (grows.empty()) {
      out.missing[kNumGemmKinds + 6 + i] = gwhy.empty() ? "no rows" : gwhy;
      continue;
    }
    out.own[kNumGemmKinds + 6 + i] = true;
    FitDecode<calib::MlaRow>(
        c.mla_decode[i], grows, [&](const auto& r) { return calib::PredictGenerationMla(c, gpu, r); },
        true);
    out.report.push_back(Score<calib::MlaRow>(
        i == 0 ? "generation_mla kv bf16" : "generation_mla kv fp8", grows,
        [&](const auto& r) { return calib::PredictGenerationMla(c, gpu, r); }));
  }

  }
  // Elementwise kernels have no table: achieved STREAM bandwidth from HARDWARE.md, and the
  // smallest kernel time measured anywhere in gemm.csv (bf16) as the launch floor.
  c.elementwise_eff_mem = fit::Round6(stream_eff);
  c.elementwise_overhead_s = fit::Round6(min_bf16_s);
  return out;
}

}  // namespace

// The nearest measured generation for a set's missing sub-models: the sibling Blackwell part
// (same die: B200 <-> GB200, B300 <-> GB300), the other Blackwell pair, then H200, then H100.
std::vector<std::string> FallbackOrder(const std::string& set) {
  if (set == "b200_sxm") return {"gb200", "b300_sxm", "gb300", "h200_sxm", "h100_sxm"};
  if (set == "gb200") return {"b200_sxm", "gb300", "b300_sxm", "h200_sxm", "h100_sxm"};
  if (set == "b300_sxm") return {"gb300", "b200_sxm", "gb200", "h200_sxm", "h100_sxm"};
  if (set == "gb300") return {"b300_sxm", "gb200", "b200_sxm", "h200_sxm", "h100_sxm"};
  return {"h200_sxm", "h100_sxm"};
}

// Accessor-free variable name: "b300_sxm" -> "kB300Sxm".
std::string VarName(const std::string& set) {
  std::string v = "k";
  bool up = true;
  for (char ch : set) {
    if (ch == '_') {
      up = true;
      continue;
    }
    v += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
    up = false;
  }
  return v;
}

// Every set other than the Hopper ones (kernel_coeffs.cc): fitted in parallel (`jobs` at a time),
// missing sub-models borrowed, written to one file with BlackwellCoeffs(set).
int FitOthers(const std::string& shared, std::vector<std::string> sets, int jobs,
              const std::string& out_path) {
  if (sets.size() == 1 && sets[0] == "auto") {
    sets.clear();
    std::vector<std::string> dirs;
    for (const auto& e : std::filesystem::directory_iterator(shared + "/calibration"))
      if (e.is_directory()) dirs.push_back(e.path().filename().string());
    std::sort(dirs.begin(), dirs.end());
    for (const std::string& d : dirs) {
      if (d == "h100_sxm" || d == "h200_sxm") continue;  // kernel_coeffs.cc
      if (!calib::CalibrationGpu(d).ok()) {
        fmt::print(stderr, "fit_kernels: {}: no GPU peaks for this set (calib::CalibrationGpu); skipped\n", d);
        continue;
      }
      sets.push_back(d);
    }
  }
  // No STREAM figure is published for the Blackwell parts; the elementwise efficiency is the
  // H100 reading's (2.935 / 3.35, the lower of the two Hopper readings).
  std::vector<GpuFit> fits(sets.size());
  std::vector<std::thread> pool;
  size_t next = 0;
  std::mutex mu;
  for (int t = 0; t < std::max(1, jobs); ++t) {
    pool.emplace_back([&] {
      for (;;) {
        size_t i;
        {
          std::lock_guard<std::mutex> lock(mu);
          if (next >= sets.size()) return;
          i = next++;
        }
        fits[i] = FitGpu(shared, sets[i].c_str(), 2.935 / 3.35);
      }
    });
  }
  for (std::thread& t : pool) t.join();

  // Borrow: the first set in FallbackOrder that fitted the sub-model on its own rows.
  for (size_t i = 0; i < sets.size(); ++i) {
    GpuFit& g = fits[i];
    for (int m = 0; m < kNumSubModels; ++m) {
      if (g.own[m]) continue;
      for (const std::string& from : FallbackOrder(sets[i])) {
        const KernelCoeffs* src = nullptr;
        for (size_t k = 0; k < sets.size(); ++k)
          if (sets[k] == from && fits[k].own[m]) src = &fits[k].c;
        if (from == "h100_sxm") src = &H100Coeffs();
        if (from == "h200_sxm") src = &H200Coeffs();
        if (src == nullptr) continue;
        CopySubModel(g.c, *src, m);
        g.borrowed += fmt::format("{}{} from {} ({})", g.borrowed.empty() ? "" : ", ",
                                  kSubModelNames[m], from, g.missing[m]);
        break;
      }
    }
  }

  std::string names;
  for (const std::string& set : sets) names += (names.empty() ? "" : ",") + set;
  std::string text = fmt::format(
      "// GENERATED by tools/fit_kernels from ../shared/calibration/{{{}}}/*.csv —\n"
      "// do not edit by hand; rerun `fit_kernels --sets auto --out src/sim/kernel_coeffs_blackwell.cc`\n"
      "// (fits every calibration directory other than h100_sxm/h200_sxm, which kernel_coeffs.cc holds,\n"
      "// that calib::CalibrationGpu has peaks for). Efficiencies are fractions of each set's own peaks\n"
      "// (calib_csv.cc CalibrationGpu). A sub-model without rows of its own is taken from the nearest\n"
      "// measured generation and named in the set's `borrowed`. Model forms: src/sim/kernels.h;\n"
      "// method: docs/dev/COST_MODEL.md (Kernels).\n"
      "#include <string_view>\n\n#include \"sim/kernels.h\"\n\nnamespace l2s {{\nnamespace {{\n\n",
      names);
  std::string lookup;
  for (size_t i = 0; i < sets.size(); ++i) {
    GpuFit& g = fits[i];
    std::string body = CoeffsText(VarName(sets[i]), g.c, g.report);
    if (!g.borrowed.empty()) {
      // The borrowed sub-models, after the fit report; and the field itself, before the closing.
      const size_t at = body.find("constexpr KernelCoeffs");
      body.insert(at, fmt::format("//   taken from another set: {}\n", g.borrowed));
      const size_t end = body.rfind("};");
      body.insert(end, fmt::format("    .borrowed = \"{}\",\n", g.borrowed));
    }
    text += body + "\n";
    lookup += fmt::format("  if (set == \"{}\") return &{};\n", sets[i], VarName(sets[i]));
    for (const auto& r : g.report)
      fmt::print("{:<9} {:<34} rows {:>6}  median {:5.1f}%  within25 {:5.1f}%  p90 {:6.1f}%  bias {:.3f}\n",
                 g.c.name, r.table, r.e.rows, 100 * r.e.median_ape, 100 * r.e.within25,
                 100 * r.e.p90_ape, r.e.median_ratio);
    if (!g.borrowed.empty()) fmt::print("{:<9} borrowed: {}\n", g.c.name, g.borrowed);
  }
  text += "}  // namespace\n\nconst KernelCoeffs* BlackwellCoeffs(std::string_view set) {\n" + lookup +
          "  return nullptr;\n}\n\n}  // namespace l2s\n";
  if (out_path.empty()) {
    fmt::print("{}", text);
    return 0;
  }
  std::ofstream f(out_path);
  f << text;
  return f ? 0 : 1;
}

}  // namespace l2s

int main(int argc, char** argv) {
  CLI::App app{"Fit the kernel latency model to the calibration tables"};
  std::string shared = L2S_SHARED_DIR;
  std::string out_path;
  app.add_option("--shared", shared, "shared reference data directory");
  app.add_option("--out", out_path, "write the coefficient file here (default: stdout)");
  app.add_option("--dump", l2s::g_dump_dir, "write per-row predictions (CSV) into this directory");
  app.add_option("--only", l2s::g_only, "fit only these sub-models (gemm, prefill, decode, mla)");
  std::vector<std::string> sets;
  int jobs = 1;
  app.add_option("--sets", sets,
                 "fit these sets (or 'auto': every directory but h100_sxm/h200_sxm) into the "
                 "second file (kernel_coeffs_blackwell.cc) instead of the H100/H200 file");
  app.add_option("--jobs", jobs, "sets fitted at once (threads); the result does not depend on it");
  CLI11_PARSE(app, argc, argv);
  if (!sets.empty()) return l2s::FitOthers(shared, sets, jobs, out_path);

  // HARDWARE.md "HBM achieved": H100 2.90-2.97 TB/s of 3.35 (stream copy/triad) -> midpoint
  // 2.935/3.35; H200 4.0-4.15 of 4.8 -> 4.075/4.8.
  const l2s::GpuFit h100 = l2s::FitGpu(shared, "h100_sxm", 2.935 / 3.35);
  const l2s::GpuFit h200 = l2s::FitGpu(shared, "h200_sxm", 4.075 / 4.8);

  std::string text =
      "// GENERATED by tools/fit_kernels from ../shared/calibration/{h100_sxm,h200_sxm}/*.csv —\n"
      "// do not edit by hand; rerun `fit_kernels --out src/sim/kernel_coeffs.cc`. Model forms:\n"
      "// src/sim/kernels.h; method and caveats: docs/dev/COST_MODEL.md (Kernels).\n"
      "#include \"sim/kernels.h\"\n\nnamespace l2s {\nnamespace {\n\n";
  text += l2s::CoeffsText("kH100", h100.c, h100.report) + "\n";
  text += l2s::CoeffsText("kH200", h200.c, h200.report) + "\n";
  text +=
      "}  // namespace\n\nconst KernelCoeffs& H100Coeffs() { return kH100; }\n"
      "const KernelCoeffs& H200Coeffs() { return kH200; }\n\n}  // namespace l2s\n";
  for (const auto* g : {&h100, &h200}) {
    for (const auto& r : g->report) {
      fmt::print("{:<9} {:<34} rows {:>6}  median {:5.1f}%  within25 {:5.1f}%  p90 {:6.1f}%  bias {:.3f}\n",
                 g->c.name, r.table, r.e.rows, 100 * r.e.median_ape, 100 * r.e.within25,
                 100 * r.e.p90_ape, r.e.median_ratio);
    }
  }
  if (out_path.empty()) {
    fmt::print("{}", text);
  } else {
    std::ofstream f(out_path);
    f << text;
    if (!f) {
      fmt::print(stderr, "fit_kernels: cannot write {}\n", out_path);
      return 1;
    }
  }
  return 0;
}
