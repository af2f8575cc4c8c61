// fit_collectives: fits the collective latency model (src/sim/collectives.h) to nccl.csv,
// custom_allreduce.csv, deepep_ll.csv and deepep_normal.csv of <shared>/calibration/{h100_sxm,
// h200_sxm,b200_sxm,gb200,b300_sxm,gb300}/ and writes src/sim/collective_coeffs.cc.
//
//   fit_collectives [--shared DIR] [--out FILE]
//
// Every (operation, group size) curve — the minimum over kCollLines protocol lines
// t = lat + wire_bytes / busbw — is fitted on its own rows (nccl.csv: the fp16 ones) by a coordinate pattern
// search on the mean absolute log error; DeepEP dispatch/combine get one line each (normal mode:
// the num_sms = 20 rows, DeepEP's default SM budget). Coefficients are rounded to the 6 significant
// digits they are printed with before scoring. Deterministic.
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "fit_common.h"
#include "sim/calib_csv.h"
#include "sim/collectives.h"

namespace l2s {
namespace {

using fit::Num;
using fit::Param;

// DeepEP's default SM budget for the normal kernels (deep_ep.Buffer.num_sms = 20).
constexpr double kNormalSms = 20;
constexpr int kSizes[kCollSizes] = {2, 4, 8};

template <class T>
T Must(StatusOr<T> v) {
  if (!v.ok()) {
    fmt::print(stderr, "fit_collectives: {}\n", v.status().ToString());
    std::exit(1);
  }
  return std::move(v).value();
}

void FitCurve(CollCurve& curve, CollKind kind, int n, const std::vector<calib::CollRow>& rows) {
  std::vector<double> meas;
  double min_s = 1;
  for (const auto& r : rows) {
    meas.push_back(r.latency_s);
    min_s = std::min(min_s, r.latency_s);
  }
  // Start: a low-latency / low-bandwidth line, a middle one and a bulk one.
  const double lat0[kCollLines] = {0.9 * min_s, 2.0 * min_s, 5.0 * min_s};
  const double bw0[kCollLines] = {20e9, 150e9, 450e9};
  std::vector<Param> ps;
  for (int i = 0; i < kCollLines; ++i) {
    curve.line[i] = {lat0[i], bw0[i]};
    ps.push_back({&curve.line[i].lat_s, 0.1e-6, 1e-3, 0.1e-6});
    ps.push_back({&curve.line[i].busbw, 1e8, 5e12, 1e9});
  }
  auto f = [&] {
    return fit::MeanAbsLogError(
        rows.size(), [&](size_t i) { return CurveSeconds(curve, kind, n, rows[i].bytes); }, meas);
  };
  fit::PatternSearch(ps, f);
  fit::RoundAll(ps);
}

void FitLine(CollLine& line, const std::vector<double>& bytes, const std::vector<double>& meas) {
  line = {10e-6, 100e9};
  std::vector<Param> ps = {{&line.lat_s, 0.1e-6, 1e-3, 0.1e-6}, {&line.busbw, 1e8, 5e12, 1e9}};
  auto f = [&] {
    return fit::MeanAbsLogError(
        bytes.size(), [&](size_t i) { return line.lat_s + bytes[i] / line.busbw; }, meas);
  };
  fit::PatternSearch(ps, f);
  fit::RoundAll(ps);
}

struct ReportLine {
  std::string table;
  calib::ErrorSummary e;
};

struct GpuFit {
  CollectiveCoeffs c;
  std::vector<ReportLine> report;
  bool missing[kCollSizes] = {};  // group sizes without rows in this set's tables
  std::string borrowed;
};

GpuFit FitGpu(const std::string& shared, const char* set) {
  const std::string dir = shared + "/calibration/" + set;
  GpuFit out;
  CollectiveCoeffs& c = out.c;
  c.name = set;
  c.deepep_normal_sms = kNormalSms;
  c.nvlink_bw = Must(calib::CalibrationGpu(set)).nvlink_bw;

  const auto nccl = Must(calib::LoadNccl(dir));
  const auto custom = Must(calib::LoadCustomAllReduce(dir));
  const CollKind ops[4] = {CollKind::kAllReduce, CollKind::kAllGather, CollKind::kReduceScatter,
                           CollKind::kAllToAll};
  for (int o = 0; o < 4; ++o) {
    for (int s = 0; s < kCollSizes; ++s) {
      std::vector<calib::CollRow> rows;
      for (const auto& r : nccl) {
        // Fit the 2-byte (fp16) rows: inference moves bf16 activations, and int8 all-reduce runs
        // up to 25% slower at large sizes. All rows are scored below.
        if (r.kind == ops[o] && r.n == kSizes[s] && r.elem_bytes == 2) rows.push_back(r);
      }
      if (rows.empty()) {  // not measured (a 4-GPU tray has no n = 8): the caller fills it in
        out.missing[s] = true;
        continue;
      }
      FitCurve(c.nccl[o][s], ops[o], kSizes[s], rows);
    }
  }
  for (int s = 0; s < kCollSizes; ++s) {
    std::vector<calib::CollRow> rows;
    for (const auto& r : custom) {
      if (r.n == kSizes[s]) rows.push_back(r);
    }
    if (rows.empty()) {
      out.missing[s] = true;
      continue;
    }
    FitCurve(c.custom_ar[s], CollKind::kAllReduce, kSizes[s], rows);
  }

  // Score whole tables, and each operation of nccl.csv.
  auto score_coll = [&](const std::string& name, const std::vector<calib::CollRow>& rows,
                        bool custom_table, int op_filter, bool two_byte_only = false) {
    std::vector<double> p, m;
    for (const auto& r : rows) {
      if (two_byte_only && r.elem_bytes != 2) continue;
      const int o = r.kind == CollKind::kAllReduce ? 0
                    : r.kind == CollKind::kAllGather ? 1
                    : r.kind == CollKind::kReduceScatter ? 2 : 3;
      if (op_filter >= 0 && o != op_filter) continue;
      const int s = r.n == 2 ? 0 : r.n == 4 ? 1 : 2;
      if (out.missing[s]) continue;
      const CollCurve& curve = custom_table ? c.custom_ar[s] : c.nccl[o][s];
      p.push_back(CurveSeconds(curve, r.kind, r.n, r.bytes));
      m.push_back(r.latency_s);
    }
    out.report.push_back({name, calib::Summarize(p, m)});
  };
  score_coll("nccl (all rows)", nccl, false, -1);
  score_coll("nccl fp16 rows", nccl, false, -1, true);
  const char* op_names[4] = {"nccl all_reduce", "nccl all_gather", "nccl reduce_scatter",
                             "nccl alltoall"};
  for (int o = 0; o < 4; ++o) score_coll(op_names[o], nccl, false, o);
  score_coll("custom_allreduce", custom, true, -1);

  for (int ll = 0; ll < 2; ++ll) {
    const auto rows = Must(calib::LoadDeepEp(dir, ll == 1));
    for (int op = 0; op < 2; ++op) {
      std::vector<double> bytes, meas;
      for (const auto& r : rows) {
        if (ll == 0 && r.num_sms != kNormalSms) continue;
        bytes.push_back(op == 0 ? r.dispatch_bytes : r.combine_bytes);
        meas.push_back(op == 0 ? r.dispatch_s : r.combine_s);
      }
      CollLine& line = c.deepep[ll][op];
      FitLine(line, bytes, meas);
      std::vector<double> p;
      for (double b : bytes) p.push_back(line.lat_s + b / line.busbw);
      out.report.push_back({fmt::format("{} {}{}", ll ? "deepep_ll" : "deepep_normal",
                                        op == 0 ? "dispatch" : "combine",
                                        ll ? "" : " (num_sms 20)"),
                            calib::Summarize(p, meas)});
    }
  }
  return out;
}

std::string LineText(const CollLine& l) {
  return fmt::format("{{{}, {}}}", Num(l.lat_s), Num(l.busbw));
}
std::string CurveText(const CollCurve& c) {
  std::string s = "{{";
  for (int i = 0; i < kCollLines; ++i) s += (i ? ", " : "") + LineText(c.line[i]);
  return s + "}}";
}

std::string CoeffsText(const std::string& var, const GpuFit& g) {
  const CollectiveCoeffs& c = g.c;
  std::string s = fmt::format(
      "// {}: fit error per table (median |pred/meas - 1|, share within 25%):\n", c.name);
  for (const ReportLine& r : g.report) {
    s += fmt::format("//   {:<34} rows {:>4}  median {:5.1f}%  within25 {:5.1f}%\n", r.table,
                     r.e.rows, 100 * r.e.median_ape, 100 * r.e.within25);
  }
  s += fmt::format("constexpr CollectiveCoeffs {} = {{\n    .name = \"{}\",\n", var, c.name);
  s += "    // {lat_s, busbw} lines per curve; rows n = 2, 4, 8\n    .nccl = {\n";
  const char* ops[4] = {"all_reduce", "all_gather", "reduce_scatter", "alltoall"};
  for (int o = 0; o < 4; ++o) {
    s += fmt::format("        {{  // {}\n", ops[o]);
    for (int n = 0; n < kCollSizes; ++n) s += "            " + CurveText(c.nccl[o][n]) + ",\n";
    s += "        },\n";
  }
  s += "    },\n    .custom_ar = {\n";
  for (int n = 0; n < kCollSizes; ++n) s += "        " + CurveText(c.custom_ar[n]) + ",\n";
  s += "    },\n    // [normal, low-latency][dispatch, combine]\n";
  s += fmt::format("    .deepep = {{{{{}, {}}}, {{{}, {}}}}},\n", LineText(c.deepep[0][0]),
                   LineText(c.deepep[0][1]), LineText(c.deepep[1][0]), LineText(c.deepep[1][1]));
  s += fmt::format("    .deepep_normal_sms = {},\n", Num(c.deepep_normal_sms));
  s += fmt::format("    .nvlink_bw = {},\n", Num(c.nvlink_bw));
  s += fmt::format("    .borrowed = \"{}\",\n}};\n", g.borrowed);
  return s;
}

}  // namespace
}  // namespace l2s

int main(int argc, char** argv) {
  CLI::App app{"Fit the collective latency model to the calibration tables"};
  std::string shared = L2S_SHARED_DIR;
  std::string out_path;
  app.add_option("--shared", shared, "shared reference data directory");
  app.add_option("--out", out_path, "write the coefficient file here (default: stdout)");
  CLI11_PARSE(app, argc, argv);

  // Every NVIDIA set with communication tables. GB200 / GB300 were measured on one 4-GPU compute
  // tray (n = 2, 4): their n = 8 curves are those of the 8-GPU HGX node of the same NVLink
  // generation (B200 / B300: the same NVLink 5 switch and per-GPU bandwidth), named in `borrowed`.
  struct Set {
    const char* dir;
    const char* var;
    const char* sibling;  // where curves this set did not measure come from
  };
  const Set sets[] = {{"h100_sxm", "kH100", nullptr},    {"h200_sxm", "kH200", nullptr},
                      {"b200_sxm", "kB200Sxm", nullptr}, {"gb200", "kGb200", "b200_sxm"},
                      {"b300_sxm", "kB300Sxm", nullptr}, {"gb300", "kGb300", "b300_sxm"}};
  std::vector<l2s::GpuFit> fits;
  for (const Set& st : sets) {
    l2s::GpuFit f = l2s::FitGpu(shared, st.dir);
    for (int n = 0; n < l2s::kCollSizes; ++n) {
      if (!f.missing[n]) continue;
      if (st.sibling == nullptr) {
        fmt::print(stderr, "fit_collectives: {} has no rows for n = {}\n", st.dir, l2s::kSizes[n]);
        return 1;
      }
      const l2s::GpuFit* sib = nullptr;
      for (size_t i = 0; i < fits.size(); ++i)
        if (std::string(sets[i].dir) == st.sibling) sib = &fits[i];
      if (sib == nullptr || sib->missing[n]) {
        fmt::print(stderr, "fit_collectives: no {} curves for n = {}\n", st.sibling, l2s::kSizes[n]);
        return 1;
      }
      for (int o = 0; o < 4; ++o) f.c.nccl[o][n] = sib->c.nccl[o][n];
      f.c.custom_ar[n] = sib->c.custom_ar[n];
      f.borrowed += fmt::format("{}nccl and custom all-reduce n = {} from {} (not measured on a "
                                "4-GPU tray)", f.borrowed.empty() ? "" : "; ", l2s::kSizes[n],
                                st.sibling);
    }
    if (st.sibling != nullptr || std::string(st.dir).rfind("b", 0) == 0) {
      // Blackwell: the DeepEP dispatch / combine lines stay the H100 set's at this GPU's NVLink
      // bandwidth. Its own DeepEP tables (fitted and reported above) measure DeepEP's kernels at
      // their default 20 SMs, which reach about the same bus bandwidth as on H100 (SM-bound:
      // normal dispatch 337-417 GB/s against H100's 370); the simulator applies the dispatch model
      // to every engine, and TensorRT-LLM's wide-EP rows (its own NVLink all-to-all, of which no
      // table exists) fall 7-16 points with them (docs/dev/VALIDATION.md).
      const double sc = f.c.nvlink_bw / fits[0].c.nvlink_bw;
      for (int ll = 0; ll < 2; ++ll)
        for (int op = 0; op < 2; ++op) {
          f.c.deepep[ll][op] = fits[0].c.deepep[ll][op];
          f.c.deepep[ll][op].busbw *= sc;
        }
      f.borrowed += fmt::format("{}DeepEP lines from h100_sxm at x{} bandwidth (own DeepEP tables "
                                "fitted, not applied)", f.borrowed.empty() ? "" : "; ", sc);
    }
    fits.push_back(std::move(f));
  }
  std::string text =
      "// GENERATED by tools/fit_collectives from ../shared/calibration/{h100_sxm,h200_sxm,b200_sxm,\n"
      "// gb200,b300_sxm,gb300}/{nccl,custom_allreduce,deepep_ll,deepep_normal}.csv — do not edit by\n"
      "// hand; rerun `fit_collectives --out src/sim/collective_coeffs.cc`. Model:\n"
      "// src/sim/collectives.h; method and caveats: docs/dev/COST_MODEL.md (Collectives).\n"
      "#include <string_view>\n\n#include \"sim/collectives.h\"\n\nnamespace l2s {\nnamespace {\n\n";
  for (size_t i = 0; i < fits.size(); ++i) text += l2s::CoeffsText(sets[i].var, fits[i]) + "\n";
  text +=
      "}  // namespace\n\nconst CollectiveCoeffs& H100CollectiveCoeffs() { return kH100; }\n"
      "const CollectiveCoeffs& H200CollectiveCoeffs() { return kH200; }\n"
      "const CollectiveCoeffs* BlackwellCollectiveCoeffs(std::string_view set) {\n";
  for (size_t i = 2; i < fits.size(); ++i)
    text += fmt::format("  if (set == \"{}\") return &{};\n", sets[i].dir, sets[i].var);
  text += "  return nullptr;\n}\n\n}  // namespace l2s\n";
  for (const auto& g : fits) {
    for (const auto& r : g.report) {
      fmt::print("{:<9} {:<34} rows {:>5}  median {:5.1f}%  within25 {:5.1f}%  p90 {:6.1f}%  bias {:.3f}\n",
                 g.c.name, r.table, r.e.rows, 100 * r.e.median_ape, 100 * r.e.within25,
                 100 * r.e.p90_ape, r.e.median_ratio);
    }
  }
  if (out_path.empty()) {
    fmt::print("{}", text);
  } else {
    std::ofstream f(out_path);
    f << text;
    if (!f) {
      fmt::print(stderr, "fit_collectives: cannot write {}\n", out_path);
      return 1;
    }
  }
  return 0;
}
