#include "sim/calib_csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/core.h>

#include "hw/hw.h"

namespace l2s::calib {
namespace {

std::vector<std::string_view> SplitLine(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      out.push_back(line.substr(start));
      return out;
    }
    out.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

double ParseNumber(std::string_view s) {
  double v = 0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || ptr != end || s.empty()) return std::numeric_limits<double>::quiet_NaN();
  return v;
}

// Column indices of `names` in `t`, or NotFound naming the first missing one.
Status FindCols(const CsvTable& t, const std::vector<std::string_view>& names,
                const std::string& path, std::vector<int>* cols) {
  cols->clear();
  for (std::string_view n : names) {
    const int c = t.Col(n);
    if (c < 0) return Status::NotFound(fmt::format("{}: no column '{}'", path, n));
    cols->push_back(c);
  }
  return Status::Ok();
}

// Numeric cell that must be finite and >= 0.
Status NumCell(const CsvTable& t, int row, int col, const std::string& path, double* v) {
  *v = t.Num(row, col);
  if (!std::isfinite(*v) || *v < 0) {
    return Status::ParseError(fmt::format("{}: row {} column {}: '{}' is not a non-negative number",
                                          path, row + 2, t.header()[col], t.Str(row, col)));
  }
  return Status::Ok();
}

StatusOr<DType> DtypeCell(const CsvTable& t, int row, int col, const std::string& path) {
  const std::optional<DType> d = ParseDType(t.Str(row, col));
  if (!d) {
    return Status::ParseError(
        fmt::format("{}: row {}: unknown dtype '{}'", path, row + 2, t.Str(row, col)));
  }
  return *d;
}

// Reads `file` in `dir` and checks the columns; on success fills table, path and cols.
Status Open(const std::string& dir, const char* file, const std::vector<std::string_view>& names,
            CsvTable* table, std::string* path, std::vector<int>* cols) {
  *path = dir + "/" + file;
  StatusOr<CsvTable> t = CsvTable::Read(*path);
  if (!t.ok()) return t.status();
  *table = std::move(t).value();
  return FindCols(*table, names, *path, cols);
}

#define L2S_RETURN_IF_ERROR(expr)      \
  do {                                 \
    const Status s_ = (expr);          \
    if (!s_.ok()) return s_;           \
  } while (0)

StatusOr<std::vector<AttnRow>> LoadAttention(const std::string& dir, bool context) {
  CsvTable t;
  std::string path;
  std::vector<int> c;
  L2S_RETURN_IF_ERROR(Open(dir, context ? "context_attention.csv" : "generation_attention.csv",
                           {"batch", context ? "seq_len" : "past_kv_len", "num_heads",
                            "num_kv_heads", "head_dim", "window_size", "attn_dtype",
                            "kv_cache_dtype", "latency_us"},
                           &t, &path, &c));
  std::vector<AttnRow> rows(t.num_rows());
  for (int i = 0; i < t.num_rows(); ++i) {
    AttnRow& r = rows[i];
    double* nums[] = {&r.batch, &r.len, &r.heads, &r.kv_heads, &r.head_dim, &r.window};
    for (int j = 0; j < 6; ++j) L2S_RETURN_IF_ERROR(NumCell(t, i, c[j], path, nums[j]));
    StatusOr<DType> attn = DtypeCell(t, i, c[6], path);
    if (!attn.ok()) return attn.status();
    StatusOr<DType> kv = DtypeCell(t, i, c[7], path);
    if (!kv.ok()) return kv.status();
    r.kv = *kv;
    r.attn = *attn;
    r.compute = (*attn == DType::kBF16 && *kv == DType::kBF16) ? DType::kBF16 : DType::kFP8;
    // README caveat 1's exception: the Blackwell FlashInfer rows (head_dim 512, or 256 with a
    // 1024 window; no such shapes in the Hopper tables) have no FP8 FMHA, so bf16/fp8 computes bf16.
    if (*attn == DType::kBF16 && (r.head_dim == 512 || (r.head_dim == 256 && r.window == 1024)))
      r.compute = DType::kBF16;
    if (!context) {
      r.len += 1;  // past_kv_len cached keys + the new token
      r.compute = DType::kBF16;  // decode attention always computes in bf16
    }
    double us = 0;
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[8], path, &us));
    r.latency_s = us * 1e-6;
  }
  return rows;
}

StatusOr<std::vector<MlaRow>> LoadMla(const std::string& dir, bool context) {
  CsvTable t;
  std::string path;
  std::vector<int> c;
  L2S_RETURN_IF_ERROR(Open(dir, context ? "context_mla.csv" : "generation_mla.csv",
                           {"batch", context ? "seq_len" : "past_kv_len", "num_heads",
                            "kv_cache_dtype", "latency_us"},
                           &t, &path, &c));
  std::vector<MlaRow> rows(t.num_rows());
  for (int i = 0; i < t.num_rows(); ++i) {
    MlaRow& r = rows[i];
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[0], path, &r.batch));
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[1], path, &r.len));
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[2], path, &r.heads));
    StatusOr<DType> kv = DtypeCell(t, i, c[3], path);
    if (!kv.ok()) return kv.status();
    r.kv = *kv;
    if (!context) r.len += 1;
    double us = 0;
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[4], path, &us));
    r.latency_s = us * 1e-6;
  }
  return rows;
}

}  // namespace

// ---- CsvTable -----------------------------------------------------------------------------------

StatusOr<CsvTable> CsvTable::Parse(std::string_view text, std::string_view source_name) {
  CsvTable t;
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const std::vector<std::string_view> cells = SplitLine(line);
    if (t.header_.empty()) {
      for (std::string_view c : cells) t.header_.emplace_back(c);
      continue;
    }
    if (cells.size() != t.header_.size()) {
      return Status::ParseError(fmt::format("{}:{}: {} cells, header has {}", source_name, line_no,
                                            cells.size(), t.header_.size()));
    }
    for (std::string_view c : cells) {
      t.cells_.emplace_back(c);
      t.nums_.push_back(ParseNumber(c));
    }
    ++t.num_rows_;
  }
  if (t.header_.empty()) return Status::ParseError(fmt::format("{}: empty file", source_name));
  return t;
}

StatusOr<CsvTable> CsvTable::Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("cannot open {}", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::IoError(fmt::format("error reading {}", path));
  return Parse(ss.str(), path);
}

int CsvTable::Col(std::string_view name) const {
  for (size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return static_cast<int>(i);
  }
  return -1;
}

// ---- loaders ------------------------------------------------------------------------------------

StatusOr<std::vector<GemmRow>> LoadGemm(const std::string& dir) {
  CsvTable t;
  std::string path;
  std::vector<int> c;
  L2S_RETURN_IF_ERROR(Open(dir, "gemm.csv", {"dtype", "m", "n", "k", "latency_us"}, &t, &path, &c));
  std::vector<GemmRow> rows;
  rows.reserve(t.num_rows());
  for (int i = 0; i < t.num_rows(); ++i) {
    const std::string_view d = t.Str(i, c[0]);
    GemmRow& r = rows.emplace_back();
    if (d == "bfloat16") {
      r.kind = GemmKind::kBF16;
    } else if (d == "fp8") {
      r.kind = GemmKind::kFP8;
    } else if (d == "fp8_block") {
      r.kind = GemmKind::kFP8Block;
    } else if (d == "nvfp4") {
      r.kind = GemmKind::kFP4;
    } else {
      return Status::ParseError(fmt::format("{}: row {}: unknown GEMM dtype '{}'", path, i + 2, d));
    }
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[1], path, &r.m));
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[2], path, &r.n));
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[3], path, &r.k));
    double us = 0;
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[4], path, &us));
    r.latency_s = us * 1e-6;
  }
  return rows;
}

StatusOr<std::vector<AttnRow>> LoadContextAttention(const std::string& dir) {
  return LoadAttention(dir, true);
}
StatusOr<std::vector<AttnRow>> LoadGenerationAttention(const std::string& dir) {
  return LoadAttention(dir, false);
}
StatusOr<std::vector<MlaRow>> LoadContextMla(const std::string& dir) { return LoadMla(dir, true); }
StatusOr<std::vector<MlaRow>> LoadGenerationMla(const std::string& dir) {
  return LoadMla(dir, false);
}

StatusOr<std::vector<CollRow>> LoadNccl(const std::string& dir) {
  CsvTable t;
  std::string path;
  std::vector<int> c;
  L2S_RETURN_IF_ERROR(Open(dir, "nccl.csv",
                           {"operation", "num_gpus", "message_bytes", "latency_us", "dtype"}, &t,
                           &path, &c));
  std::vector<CollRow> rows(t.num_rows());
  for (int i = 0; i < t.num_rows(); ++i) {
    CollRow& r = rows[i];
    const std::string_view op = t.Str(i, c[0]);
    if (op == "all_reduce") {
      r.kind = CollKind::kAllReduce;
    } else if (op == "all_gather") {
      r.kind = CollKind::kAllGather;
    } else if (op == "reduce_scatter") {
      r.kind = CollKind::kReduceScatter;
    } else if (op == "alltoall") {
      r.kind = CollKind::kAllToAll;
    } else {
      return Status::ParseError(fmt::format("{}: row {}: unknown operation '{}'", path, i + 2, op));
    }
    double n = 0, us = 0;
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[1], path, &n));
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[2], path, &r.bytes));
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[3], path, &us));
    r.n = static_cast<int>(n);
    r.latency_s = us * 1e-6;
    const std::string_view dt = t.Str(i, c[4]);
    if (dt == "fp16" || dt == "bfloat16") {
      r.elem_bytes = 2;
    } else if (dt == "int8") {
      r.elem_bytes = 1;
    } else {
      return Status::ParseError(fmt::format("{}: row {}: unknown dtype '{}'", path, i + 2, dt));
    }
  }
  return rows;
}

StatusOr<std::vector<CollRow>> LoadCustomAllReduce(const std::string& dir) {
  CsvTable t;
  std::string path;
  std::vector<int> c;
  L2S_RETURN_IF_ERROR(
      Open(dir, "custom_allreduce.csv", {"num_gpus", "message_bytes", "latency_us"}, &t, &path, &c));
  std::vector<CollRow> rows(t.num_rows());
  for (int i = 0; i < t.num_rows(); ++i) {
    CollRow& r = rows[i];
    r.kind = CollKind::kAllReduce;
    r.elem_bytes = 2;  // bf16
    double n = 0, us = 0;
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[0], path, &n));
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[1], path, &r.bytes));
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[2], path, &us));
    r.n = static_cast<int>(n);
    r.latency_s = us * 1e-6;
  }
  return rows;
}

StatusOr<std::vector<DeepEpRow>> LoadDeepEp(const std::string& dir, bool low_latency) {
  CsvTable t;
  std::string path;
  std::vector<int> c;
  std::vector<std::string_view> names = {"hidden_size", "num_tokens_per_rank", "topk",
                                         "num_experts", "dispatch_us", "combine_us"};
  if (!low_latency) names.push_back("num_sms");
  L2S_RETURN_IF_ERROR(Open(dir, low_latency ? "deepep_ll.csv" : "deepep_normal.csv", names, &t,
                           &path, &c));
  std::vector<DeepEpRow> rows(t.num_rows());
  for (int i = 0; i < t.num_rows(); ++i) {
    DeepEpRow& r = rows[i];
    double dispatch_us = 0, combine_us = 0;
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[0], path, &r.hidden));
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[1], path, &r.tokens));
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[2], path, &r.topk));
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[3], path, &r.experts));
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[4], path, &dispatch_us));
    L2S_RETURN_IF_ERROR(NumCell(t, i, c[5], path, &combine_us));
    r.num_sms = 0;
    if (!low_latency) L2S_RETURN_IF_ERROR(NumCell(t, i, c[6], path, &r.num_sms));
    r.dispatch_bytes = r.tokens * r.topk * r.hidden * 1.0;  // fp8 payload
    r.combine_bytes = r.tokens * r.topk * r.hidden * 2.0;   // bf16 payload
    r.dispatch_s = dispatch_us * 1e-6;
    r.combine_s = combine_us * 1e-6;
  }
  return rows;
}

// ---- predictions --------------------------------------------------------------------------------

double Predict(const KernelCoeffs& c, const GpuSpec& gpu, const GemmRow& r) {
  // The measured weights are stored in the GEMM's own format: bf16 2 bytes, fp8 1 byte (the
  // fp8_block scales, 4 bytes per 128x128 block, are negligible), nvfp4 the FP4 bytes the
  // simulator counts for FP4 weights (BytesPerElement).
  const double weight_bytes = r.kind == GemmKind::kBF16 ? 2.0
                              : r.kind == GemmKind::kFP4 ? BytesPerElement(DType::kFP4)
                                                         : 1.0;
  return GemmSecondsWith(c, gpu, r.m, r.n, r.k, r.kind, weight_bytes);
}

double PredictContext(const KernelCoeffs& c, const GpuSpec& gpu, const AttnRow& r) {
  const int i = r.compute == DType::kBF16 ? 0 : 1;
  return AttnPrefillSecondsWith(c.attn_prefill[i], gpu, r.batch, r.len, r.heads, r.kv_heads,
                                r.head_dim, r.window, r.compute, r.kv);
}

double PredictGeneration(const KernelCoeffs& c, const GpuSpec& gpu, const AttnRow& r) {
  const int i = r.kv == DType::kBF16 ? 0 : 1;
  return AttnDecodeSecondsWith(c.attn_decode[i], gpu, r.batch, r.len, r.heads, r.kv_heads,
                               r.head_dim, r.window, r.kv);
}

double PredictContextMla(const KernelCoeffs& c, const GpuSpec& gpu, const MlaRow& r) {
  const int i = r.kv == DType::kBF16 ? 0 : 1;
  return MlaPrefillSecondsWith(c.mla_prefill[i], gpu, r.batch, r.len, r.heads, kMlaQkHeadDim,
                               kMlaVHeadDim, DType::kBF16);
}

double PredictGenerationMla(const KernelCoeffs& c, const GpuSpec& gpu, const MlaRow& r) {
  const int i = r.kv == DType::kBF16 ? 0 : 1;
  return MlaDecodeSecondsWith(c.mla_decode[i], gpu, r.batch, r.len, r.heads, kMlaLatent, kMlaRope,
                              r.kv);
}

// ---- reference hardware -------------------------------------------------------------------------

StatusOr<GpuSpec> CalibrationGpu(std::string_view set) {
  GpuSpec g;
  // HARDWARE.md (NVIDIA H100/H200 datasheets; aiconfigurator systems/h100_sxm.yaml, h200_sxm.yaml).
  g.bf16_flops = 989e12;
  g.fp8_flops = 1979e12;
  g.nvlink_bw = 450e9;
  if (set == "h100_sxm") {
    g.name = "h100";
    g.hbm_bytes = 80.0 * kGiB;
    g.hbm_bw = 3.35e12;
  } else if (set == "h200_sxm") {
    g.name = "h200";
    g.hbm_bytes = 141e9;
    g.hbm_bw = 4.8e12;
  } else {
    // The Blackwell sets are fitted at their presets' figures (src/hw/gpus.cc, with the sources of
    // each and the choice where sources disagree), so that each preset reproduces its own tables.
    bool found = false;
    for (const std::string& name : GpuPresetNames()) {
      StatusOr<GpuSpec> p = GpuPreset(name);
      if (!set.empty() && p.ok() && p->calibration == set) {
        g = *p;
        found = true;
        break;
      }
    }
    if (!found) return Status::NotFound(fmt::format("no calibration GPU '{}'", set));
  }
  g.calibration = std::string(set);
  return g;
}

StatusOr<ClusterSpec> CalibrationNode(std::string_view set, int num_gpus) {
  StatusOr<GpuSpec> g = CalibrationGpu(set);
  if (!g.ok()) return g.status();
  if (num_gpus < 1) return Status::InvalidArgument("num_gpus must be >= 1");
  ClusterSpec c;
  c.name = fmt::format("{}x{}", set, num_gpus);
  c.gpu = *g;
  c.num_gpus = num_gpus;
  c.gpus_per_domain = 8;
  c.scaleout_bw = 50e9;  // one ConnectX-7 400 Gb/s NIC per GPU (DGX H100 user guide)
  return c;
}

// ---- errors -------------------------------------------------------------------------------------

ErrorSummary Summarize(const std::vector<double>& pred_s, const std::vector<double>& meas_s) {
  ErrorSummary s;
  const size_t n = std::min(pred_s.size(), meas_s.size());
  s.rows = n;
  if (n == 0) return s;
  std::vector<double> ape(n), ratio(n);
  size_t within = 0;
  for (size_t i = 0; i < n; ++i) {
    ratio[i] = pred_s[i] / meas_s[i];
    ape[i] = std::fabs(ratio[i] - 1.0);
    if (ape[i] <= 0.25) ++within;
  }
  auto quantile = [](std::vector<double>& v, double q) {
    const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5));
    std::nth_element(v.begin(), v.begin() + k, v.end());
    return v[k];
  };
  s.median_ape = quantile(ape, 0.5);
  s.p90_ape = quantile(ape, 0.9);
  s.median_ratio = quantile(ratio, 0.5);
  s.within25 = static_cast<double>(within) / n;
  return s;
}

}  // namespace l2s::calib
