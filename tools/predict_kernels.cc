// The cost model's price of single kernels, for checking it against a measurement of one's own
// (bench/device/: the GPU measurements of h200_kernels.py).
//   predict_kernels --gpu h200 --in measured.csv --out predicted.csv
// Reads rows `kind,dtype,m,n,k,...` (the columns h200_kernels.py writes) and writes them back with
// one more column, l2s_us:
//   gemm          m x n x k GEMM, weights of `dtype` (bf16 | fp8 per-tensor | fp4): GemmSeconds
//   attn_prefill  causal prefill FMHA, batch = m, heads = n, seq_len = k, kv_heads and head_dim
//                 from the `note` column ("kv_heads=8 head_dim=128"): AttnPrefillSeconds
//   copy          k bytes read and k written: ElementwiseSeconds(2 k)
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "hw/hw.h"
#include "sim/kernels.h"

namespace {

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) out.push_back(cell);
  return out;
}

double NoteValue(const std::string& note, const std::string& key, double fallback) {
  const auto at = note.find(key + "=");
  if (at == std::string::npos) return fallback;
  return std::stod(note.substr(at + key.size() + 1));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The cost model's price of single kernels (see the file's header)"};
  std::string gpu_name = "h200", in_path, out_path;
  app.add_option("--gpu", gpu_name, "GPU preset");
  app.add_option("--in", in_path, "measured CSV")->required();
  app.add_option("--out", out_path, "output CSV")->required();
  CLI11_PARSE(app, argc, argv);

  auto gpu = l2s::GpuPreset(gpu_name);
  if (!gpu.ok()) {
    std::cerr << "predict_kernels: " << gpu.status().message() << "\n";
    return 2;
  }
  std::ifstream in(in_path);
  if (!in) {
    std::cerr << "predict_kernels: cannot read " << in_path << "\n";
    return 2;
  }
  std::ofstream out(out_path);
  std::string line;
  const auto chomp = [](std::string& l) {  // Python's csv module ends lines with \r\n
    if (!l.empty() && l.back() == '\r') l.pop_back();
  };
  std::getline(in, line);
  chomp(line);
  out << line << ",l2s_us\n";
  int row = 1;
  while (std::getline(in, line)) {
    ++row;
    chomp(line);
    const auto c = SplitCsv(line);
    if (c.size() < 8) {
      std::cerr << "predict_kernels: " << in_path << " line " << row << ": fewer than 8 columns\n";
      return 2;
    }
    const std::string& kind = c[0];
    const double m = std::stod(c[2]), n = std::stod(c[3]), k = std::stod(c[4]);
    double s = 0;
    if (kind == "gemm") {
      const l2s::DType w = c[1] == "fp8"   ? l2s::DType::kFP8
                           : c[1] == "fp4" ? l2s::DType::kFP4
                                           : l2s::DType::kBF16;
      s = l2s::GemmSeconds(*gpu, m, n, k, w);
    } else if (kind == "attn_prefill") {
      s = l2s::AttnPrefillSeconds(*gpu, m, k, n, NoteValue(c[6], "kv_heads", n),
                                  NoteValue(c[6], "head_dim", 128), 0, l2s::DType::kBF16);
    } else if (kind == "copy") {
      s = l2s::ElementwiseSeconds(*gpu, 2 * k);
    } else {
      std::cerr << "predict_kernels: " << in_path << " line " << row << ": unknown kind '" << kind
                << "'\n";
      return 2;
    }
    out << line << fmt::format(",{:.3f}\n", s * 1e6);
  }
  return 0;
}
