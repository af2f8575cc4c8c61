// Calibration tables (../shared/calibration/<gpu>/*.csv, see its README.md): a small CSV reader,
// typed loaders that turn each table into model inputs (one struct per row, sizes per GPU, times in
// seconds), and error summaries. Used by the fit tests (src/sim/*_test.cc) and the fitters
// (tools/fit_kernels.cc, tools/fit_collectives.cc), so both score exactly the same rows the same
// way. Not on the simulator's hot path.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/dtype.h"
#include "common/status.h"
#include "hw/hw.h"
#include "sim/collectives.h"
#include "sim/kernels.h"

namespace l2s::calib {

// A parsed CSV file: a header line, then rows of comma-separated cells (no quoting: the
// calibration tables never need it). Every row must have as many cells as the header.
class CsvTable {
 public:
  static StatusOr<CsvTable> Parse(std::string_view text, std::string_view source_name);
  static StatusOr<CsvTable> Read(const std::string& path);

  int num_rows() const { return num_rows_; }
  int num_cols() const { return static_cast<int>(header_.size()); }
  const std::vector<std::string>& header() const { return header_; }
  int Col(std::string_view name) const;  // -1 when absent
  std::string_view Str(int row, int col) const { return cells_[Index(row, col)]; }
  double Num(int row, int col) const { return nums_[Index(row, col)]; }  // NaN if not a number

 private:
  size_t Index(int row, int col) const { return static_cast<size_t>(row) * header_.size() + col; }
  std::vector<std::string> header_;
  std::vector<std::string> cells_;  // row-major, num_rows x num_cols
  std::vector<double> nums_;        // same layout, NaN where a cell is not numeric
  int num_rows_ = 0;
};

// --- typed rows -------------------------------------------------------------------------------
struct GemmRow {
  GemmKind kind;
  double m, n, k;
  double latency_s;
};
// Context and generation attention. For generation rows `len` = past_kv_len + 1 (the keys the new
// token attends); for context rows `len` = seq_len. `compute` is the FMHA precision: fp8 when
// attn_dtype is fp8 OR the KV cache is fp8 (README caveat 1: on Hopper bf16/fp8 rows run FP8 FMHA).
struct AttnRow {
  double batch, len, heads, kv_heads, head_dim, window;
  DType attn;     // attn_dtype column as measured
  DType compute;  // FMHA precision the model uses
  DType kv;
  double latency_s;
};
// MLA with DeepSeek-V3 geometry (qk 192, v 128, latent 512, rope 64).
struct MlaRow {
  double batch, len, heads;
  DType kv;
  double latency_s;
};
inline constexpr double kMlaQkHeadDim = 192, kMlaVHeadDim = 128, kMlaLatent = 512, kMlaRope = 64;

struct CollRow {
  CollKind kind;
  int n;               // GPUs in the group (one NVLink node)
  double bytes;        // nccl-tests convention (see collectives.h)
  int elem_bytes;      // 2 for fp16/bf16, 1 for int8
  double latency_s;
};
// DeepEP: bytes per rank as collectives.h defines them for dispatch/combine (local routes
// included): dispatch = tokens * topk * hidden (fp8), combine = tokens * topk * hidden * 2 (bf16).
struct DeepEpRow {
  double hidden, tokens, topk, experts, num_sms;
  double dispatch_bytes, combine_bytes;
  double dispatch_s, combine_s;
};

// `gpu_dir` is e.g. "<shared>/calibration/h100_sxm".
StatusOr<std::vector<GemmRow>> LoadGemm(const std::string& gpu_dir);
StatusOr<std::vector<AttnRow>> LoadContextAttention(const std::string& gpu_dir);
StatusOr<std::vector<AttnRow>> LoadGenerationAttention(const std::string& gpu_dir);
StatusOr<std::vector<MlaRow>> LoadContextMla(const std::string& gpu_dir);
StatusOr<std::vector<MlaRow>> LoadGenerationMla(const std::string& gpu_dir);
StatusOr<std::vector<CollRow>> LoadNccl(const std::string& gpu_dir);
StatusOr<std::vector<CollRow>> LoadCustomAllReduce(const std::string& gpu_dir);
StatusOr<std::vector<DeepEpRow>> LoadDeepEp(const std::string& gpu_dir, bool low_latency);

// --- model predictions for one row (explicit coefficients) ------------------------------------
double Predict(const KernelCoeffs& c, const GpuSpec& gpu, const GemmRow& r);
double PredictContext(const KernelCoeffs& c, const GpuSpec& gpu, const AttnRow& r);
double PredictGeneration(const KernelCoeffs& c, const GpuSpec& gpu, const AttnRow& r);
double PredictContextMla(const KernelCoeffs& c, const GpuSpec& gpu, const MlaRow& r);
double PredictGenerationMla(const KernelCoeffs& c, const GpuSpec& gpu, const MlaRow& r);

// The GPUs the tables were measured on, with the public figures the fits are relative to
// (HARDWARE.md / the tables' system.yaml): h100_sxm 989e12 bf16 / 1979e12 fp8 FLOP/s, 3.35e12 B/s
// HBM, 80 GiB, NVLink 450e9 B/s; h200_sxm the same with 141e9 bytes and 4.8e12 B/s; any other
// set (b200_sxm, gb200, b300_sxm, gb300) the GPU preset whose kernel set it is (src/hw/gpus.cc).
// Scale-out 50e9 B/s per GPU (one 400 Gb/s NIC per GPU). Unknown names give NotFound.
StatusOr<GpuSpec> CalibrationGpu(std::string_view set);
StatusOr<ClusterSpec> CalibrationNode(std::string_view set, int num_gpus);

// --- errors ------------------------------------------------------------------------------------
struct ErrorSummary {
  size_t rows = 0;
  double median_ape = 0;   // median |pred/meas - 1|
  double within25 = 0;     // share of rows with |pred/meas - 1| <= 0.25
  double p90_ape = 0;      // 90th percentile of |pred/meas - 1|
  double median_ratio = 1; // median pred/meas (bias)
};
ErrorSummary Summarize(const std::vector<double>& pred_s, const std::vector<double>& meas_s);

}  // namespace l2s::calib
