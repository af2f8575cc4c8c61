// Clusters: presets, MakeCluster, cluster JSON. GPU figures live in gpus.cc.
#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <set>

#include "common/text.h"
#include "hw/gpu_presets.h"
#include "hw/hw.h"
#include "model/json_fields.h"

namespace l2s {
namespace {

using hw_internal::FindGpuPreset;
using hw_internal::GpuPresetEntry;
using hw_internal::GpuPresetTable;
using jsonio::ObjectReader;
using nlohmann::json;

constexpr int kMaxGpus = 1 << 24;        // far above any cluster (~24k GPUs in the paper)
constexpr int kMaxDomain = 1 << 16;
constexpr int kHgxNode = 8;              // GPUs per HGX/DGX node (HARDWARE.md)
constexpr int kNvl72Domain = 72;         // GB200 NVL72: 72 GPUs in one NVLink domain
constexpr double kUs = 1e-6;
constexpr double kG = 1e9;
constexpr double kGiBytes = 1024.0 * 1024.0 * 1024.0;

// Range of each hardware figure a cluster file may give (docs/LIMITS.md). The lower bounds are
// far below any accelerator l2s could plan for, and keep every simulated time and throughput a
// number that prints (1e-300 TFLOPS would give 0 tokens/s and 300-digit latencies).
struct FigureRange {
  const char* key;
  double lo, hi;
};
constexpr FigureRange kBf16Tflops{"bf16_tflops", 0.1, 1e6};
constexpr FigureRange kFp8Tflops{"fp8_tflops", 0.1, 1e6};  // or 0: no FP8 tensor cores
constexpr FigureRange kHbmGib{"hbm_gib", 0.1, 1e6};
constexpr FigureRange kHbmTbps{"hbm_tbps", 0.01, 1e3};
constexpr FigureRange kNvlinkGbps{"nvlink_gbps", 0.1, 1e6};
constexpr FigureRange kScaleoutGbps{"scaleout_gbps_per_gpu", 0.1, 1e6};
// Calibration table sets the simulator has ("" = none: the H100 set's shapes, this GPU's peaks);
// sim/kernels.h FittedCalibrationSets lists the same (kernels_fit_test checks).
const std::set<std::string> kCalibrationSets = {"",         "h100_sxm", "h200_sxm", "b200_sxm",
                                                "gb200",    "b300_sxm", "gb300"};

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

ClusterSpec FromEntry(const GpuPresetEntry& e, int num_gpus, int per_domain) {
  ClusterSpec c;
  c.name = fmt::format("{}-{}", e.gpu.name, num_gpus);
  c.gpu = e.gpu;
  c.num_gpus = num_gpus;
  c.gpus_per_domain = per_domain;
  c.gpus_per_host = e.gpus_per_host;
  c.scaleout_bw = e.scaleout_bw;
  c.nvlink_latency = e.nvlink_latency;
  c.scaleout_latency = e.scaleout_latency;
  return c;
}

// GB200 / GB300 NVL72: 72 GPUs sharing one NVLink 5 domain.
ClusterSpec Nvl72(const char* gpu) {
  ClusterSpec c = FromEntry(*FindGpuPreset(gpu), kNvl72Domain, kNvl72Domain);
  c.name = fmt::format("{}-nvl72", gpu);
  return c;
}

// "<gpu>-<N>" -> (gpu, N); false if `s` does not have that shape with a GPU preset prefix.
bool SplitGpuCount(std::string_view s, std::string_view* gpu, std::string_view* count) {
  const size_t dash = s.rfind('-');
  if (dash == std::string_view::npos || dash + 1 >= s.size()) return false;
  *gpu = s.substr(0, dash);
  *count = s.substr(dash + 1);
  for (char ch : *count)
    if (ch < '0' || ch > '9') return false;
  return FindGpuPreset(*gpu) != nullptr;
}

Status CheckKeys(const ObjectReader& r, const json& obj, const std::set<std::string>& allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (allowed.count(it.key()) == 0) {
      std::vector<std::string> names(allowed.begin(), allowed.end());
      // The nearest field within a misspelling or sharing its first word ("price_per_gpu_hr").
      const std::string& key = it.key();
      const std::string word = key.substr(0, key.find('_'));
      const int at = NearestIndex(names.size(), 1 << 29, [&](size_t i) {
        const int d = EditDistance(key, names[i]);
        const bool near = d <= std::max(1, MaxTypoDistance(key.size())) ||
                          (word.size() >= 3 && names[i].rfind(word + "_", 0) == 0 &&
                           key.size() > word.size());
        return near ? d : -1;
      });
      std::string hint = at < 0 ? std::string()
                                : fmt::format(" (did you mean \"{}\"?)",
                                              names[static_cast<size_t>(at)]);
      // The flag --gpus-per-node is the NVLink domain; a file's "gpus_per_node" may mean either.
      if (key == "gpus_per_node" && allowed.count("gpus_per_domain") > 0)
        hint = " (did you mean \"gpus_per_domain\", the NVLink domain as --gpus-per-node sets it, "
               "or \"gpus_per_host\"?)";
      return r.ErrorMsg(key,
                        fmt::format("unknown field{}; expected one of {}", hint, Join(names)));
    }
  }
  return Status::Ok();
}

// The "gpu" field: a preset name, or an object overriding a preset or defining a new GPU.
// *preset is set to the preset the GPU starts from (nullptr for a new GPU).
StatusOr<GpuSpec> ReadGpu(const ObjectReader& r, const GpuPresetEntry** preset) {
  const json* g = r.Find("gpu");
  const std::string what =
      fmt::format("a GPU preset ({}) or an object with a \"name\"", Join(GpuPresetNames()));
  if (g == nullptr) return r.Error("gpu", what, nullptr);
  if (g->is_string()) {
    *preset = FindGpuPreset(g->get_ref<const std::string&>());
    if (*preset == nullptr) return r.Error("gpu", what, g);
    return (*preset)->gpu;
  }
  if (!g->is_object()) return r.Error("gpu", what, g);
  ObjectReader gr(*g, r.source(), "gpu.");
  L2S_RETURN_IF_ERROR(CheckKeys(gr, *g, {"name", "bf16_tflops", "fp8_tflops", "fp4_tflops",
                                         "hbm_gib", "hbm_tbps", "nvlink_gbps", "calibration",
                                         "mesh_link_gbps", "tdp_w"}));
  L2S_ASSIGN_OR_RETURN(std::string name, gr.String("name"));
  *preset = FindGpuPreset(name);
  GpuSpec gpu;
  if (*preset != nullptr) gpu = (*preset)->gpu;
  gpu.name = name;
  const bool custom = *preset == nullptr;
  // A new GPU needs every figure; a preset takes only the overrides given.
  auto figure = [&](const FigureRange& f, double scale, double* out) -> Status {
    if (!custom && !gr.Has(f.key)) return Status::Ok();
    L2S_ASSIGN_OR_RETURN(double v, gr.Number(f.key, f.lo, f.hi));
    *out = v * scale;
    return Status::Ok();
  };
  L2S_RETURN_IF_ERROR(figure(kBf16Tflops, 1e12, &gpu.bf16_flops));
  L2S_RETURN_IF_ERROR(figure(kHbmGib, kGiBytes, &gpu.hbm_bytes));
  L2S_RETURN_IF_ERROR(figure(kHbmTbps, 1e12, &gpu.hbm_bw));
  L2S_RETURN_IF_ERROR(figure(kNvlinkGbps, kG, &gpu.nvlink_bw));
  if (gr.Has("fp8_tflops")) {
    L2S_ASSIGN_OR_RETURN(double fp8, gr.Number("fp8_tflops", 0, kFp8Tflops.hi));
    if (fp8 != 0 && fp8 < kFp8Tflops.lo)
      return gr.Error("fp8_tflops", fmt::format("0 (no FP8) or a number in [{}, {}]", kFp8Tflops.lo, kFp8Tflops.hi),
                      gr.Find("fp8_tflops"));
    gpu.fp8_flops = fp8 * 1e12;
  }
  if (gr.Has("fp4_tflops")) {
    L2S_ASSIGN_OR_RETURN(double fp4, gr.Number("fp4_tflops", 0, 1e6));
    gpu.fp4_flops = fp4 * 1e12;
  }
  if (gr.Has("tdp_w")) {  // board power, W (0 = not stated)
    L2S_ASSIGN_OR_RETURN(double tdp, gr.Number("tdp_w", 0, 1e5));
    gpu.tdp_w = tdp;
  }
  if (gr.Has("mesh_link_gbps")) {  // 0 = switched fabric
    L2S_ASSIGN_OR_RETURN(double link, gr.Number("mesh_link_gbps", 0, kNvlinkGbps.hi));
    gpu.mesh_link_bw = link * kG;
  }
  L2S_ASSIGN_OR_RETURN(gpu.calibration, gr.StringOr("calibration", gpu.calibration));
  if (kCalibrationSets.count(gpu.calibration) == 0)
    return gr.Error("calibration",
                    "one of \"h100_sxm\", \"h200_sxm\", \"b200_sxm\", \"gb200\", \"b300_sxm\", "
                    "\"gb300\" or \"\" (none)",
                    gr.Find("calibration"));
  return gpu;
}

Status FieldError(std::string_view source, std::string_view field, std::string_view expected,
                  std::string_view got) {
  return Status::InvalidArgument(
      fmt::format("{}: field \"{}\": expected {}, got {}", source, field, expected, got));
}

// "unknown GPU ..." with the preset it is nearest to: the same name in another case ("H100"), a
// preset the name starts with ("h100-sxm") or that starts with it ("mi355"), or one within a
// misspelling (common/text.h MaxTypoDistance).
std::string UnknownGpu(std::string_view name) {
  const std::string low = AsciiLower(name);
  const std::vector<std::string> names = GpuPresetNames();
  const int i = NearestIndex(names.size(), std::max(1, MaxTypoDistance(low.size())), [&](size_t i) {
    const std::string& n = names[i];
    const bool prefix = low.size() >= 3 && (low.rfind(n, 0) == 0 || n.rfind(low, 0) == 0);
    return low == n ? 0 : prefix ? 1 : EditDistance(low, n);
  });
  const std::string best = i < 0 ? std::string() : names[static_cast<size_t>(i)];
  return fmt::format("unknown GPU \"{}\"{}; GPU presets: {}", PrintableText(name),
                     best.empty() ? "" : fmt::format(" (did you mean {}?)", best), Join(names));
}

}  // namespace

std::vector<std::string> GpuPresetNames() {
  std::vector<std::string> names;
  for (const GpuPresetEntry& e : GpuPresetTable()) names.push_back(e.gpu.name);
  return names;
}

StatusOr<GpuSpec> GpuPreset(std::string_view name) {
  if (const GpuPresetEntry* e = FindGpuPreset(name)) return e->gpu;
  return Status::NotFound(UnknownGpu(name));
}

std::vector<std::string> ClusterPresetNames() {
  return {"gb200-nvl72", "h100-8", "h100-64", "h100-1024", "h200-8", "h200-64",
          "h800-2048", "a100-64", "b200-8", "gb300-nvl72", "b300-8", "mi300x-8", "mi325x-8",
          "mi355x-8"};
}

Status ValidateCluster(const ClusterSpec& c, std::string_view source) {
  if (c.num_gpus < 1 || c.num_gpus > kMaxGpus)
    return FieldError(source, "num_gpus", fmt::format("an integer in [1, {}]", kMaxGpus),
                      std::to_string(c.num_gpus));
  if (c.gpus_per_domain < 1 || c.gpus_per_domain > kMaxDomain)
    return FieldError(source, "gpus_per_domain", fmt::format("an integer in [1, {}]", kMaxDomain),
                      std::to_string(c.gpus_per_domain));
  if (c.num_gpus % c.gpus_per_domain != 0 && c.num_gpus > c.gpus_per_domain)
    return FieldError(
        source, "num_gpus",
        fmt::format("a multiple of gpus_per_domain ({}), or fewer GPUs than one domain",
                    c.gpus_per_domain),
        fmt::format("{}: the last NVLink domain would be partial ({} of {} GPUs)", c.num_gpus,
                    c.num_gpus % c.gpus_per_domain, c.gpus_per_domain));
  auto in_range = [&](const char* field, double v, const FigureRange& f, double scale) -> Status {
    if (std::isfinite(v) && v >= f.lo * scale && v <= f.hi * scale) return Status::Ok();
    return FieldError(source, field, fmt::format("a number in [{}, {}]", f.lo, f.hi),
                      fmt::format("{}", v / scale));
  };
  auto non_negative = [&](const char* field, double v) -> Status {
    if (std::isfinite(v) && v >= 0) return Status::Ok();
    return FieldError(source, field, "a non-negative number", fmt::format("{}", v));
  };
  L2S_RETURN_IF_ERROR(in_range("gpu.bf16_tflops", c.gpu.bf16_flops, kBf16Tflops, 1e12));
  L2S_RETURN_IF_ERROR(non_negative("gpu.fp8_tflops", c.gpu.fp8_flops));
  if (c.gpu.fp8_flops > 0) L2S_RETURN_IF_ERROR(in_range("gpu.fp8_tflops", c.gpu.fp8_flops, kFp8Tflops, 1e12));
  L2S_RETURN_IF_ERROR(in_range("gpu.hbm_gib", c.gpu.hbm_bytes, kHbmGib, kGiBytes));
  L2S_RETURN_IF_ERROR(in_range("gpu.hbm_tbps", c.gpu.hbm_bw, kHbmTbps, 1e12));
  L2S_RETURN_IF_ERROR(in_range("gpu.nvlink_gbps", c.gpu.nvlink_bw, kNvlinkGbps, kG));
  L2S_RETURN_IF_ERROR(in_range("scaleout_gbps_per_gpu", c.scaleout_bw, kScaleoutGbps, kG));
  if (c.gpu.fp4_flops > 0) L2S_RETURN_IF_ERROR(in_range("gpu.fp4_tflops", c.gpu.fp4_flops, kFp8Tflops, 1e12));
  L2S_RETURN_IF_ERROR(non_negative("nvlink_latency_us", c.nvlink_latency));
  L2S_RETURN_IF_ERROR(non_negative("scaleout_latency_us", c.scaleout_latency));
  return Status::Ok();
}

const char* ScaleUpName(const GpuSpec& g) {
  return g.vendor == "amd" ? "Infinity Fabric" : "NVLink";
}

int HostGpus(const ClusterSpec& c) {
  const int d = std::max(1, c.gpus_per_domain);
  return c.gpus_per_host > 0 && c.gpus_per_host < d && d % c.gpus_per_host == 0 ? c.gpus_per_host
                                                                                : d;
}

StatusOr<ClusterSpec> MakeCluster(std::string_view gpu, int num_gpus, int gpus_per_node) {
  const GpuPresetEntry* e = FindGpuPreset(gpu);
  if (e == nullptr)
    return Status::NotFound(UnknownGpu(gpu));
  ClusterSpec c = FromEntry(*e, num_gpus, gpus_per_node == 0 ? e->gpus_per_domain : gpus_per_node);
  L2S_RETURN_IF_ERROR(ValidateCluster(c, c.name));
  return c;
}

int DefaultGpusPerDomain(std::string_view gpu) {
  const GpuPresetEntry* e = FindGpuPreset(gpu);
  return e != nullptr ? e->gpus_per_domain : kHgxNode;
}

StatusOr<ClusterSpec> ResizeCluster(const ClusterSpec& c, int num_gpus) {
  ClusterSpec r = c;
  r.num_gpus = num_gpus;
  if (num_gpus != c.num_gpus) {
    const std::string default_name = fmt::format("{}-{}", c.gpu.name, c.num_gpus);
    r.name = c.name == default_name ? fmt::format("{}-{}", c.gpu.name, num_gpus)
                                    : fmt::format("{}-{}", c.name, num_gpus);
  }
  L2S_RETURN_IF_ERROR(ValidateCluster(r, r.name));
  return r;
}

namespace {

// One cluster object (the top level of a cluster file, or one entry of "pools").
StatusOr<ClusterSpec> ClusterFromObject(const json& root, std::string_view source_name,
                                        const std::string& prefix) {
  ObjectReader r(root, source_name, prefix);
  L2S_RETURN_IF_ERROR(CheckKeys(r, root, {"name", "gpu", "num_gpus", "gpus_per_domain", "gpus_per_host",
                                          "scaleout_gbps_per_gpu", "nvlink_latency_us",
                                          "scaleout_latency_us", "price_per_gpu_hour"}));
  const GpuPresetEntry* preset = nullptr;
  L2S_ASSIGN_OR_RETURN(GpuSpec gpu, ReadGpu(r, &preset));
  L2S_ASSIGN_OR_RETURN(int64_t n, r.Int("num_gpus", 1, kMaxGpus));
  L2S_ASSIGN_OR_RETURN(int64_t per_domain,
                       r.IntOr("gpus_per_domain", preset != nullptr ? preset->gpus_per_domain : kHgxNode,
                               1, kMaxDomain));
  ClusterSpec c;
  c.gpu = gpu;
  c.num_gpus = static_cast<int>(n);
  c.gpus_per_domain = static_cast<int>(per_domain);
  // Where a launch places processes: the preset's host (an NVL72 tray of 4) when its domain is
  // kept, else the domain; a file may state it (a divisor of the domain).
  const int64_t host_default =
      preset != nullptr && preset->gpus_per_host > 0 && per_domain % preset->gpus_per_host == 0
          ? preset->gpus_per_host
          : per_domain;
  L2S_ASSIGN_OR_RETURN(int64_t per_host, r.IntOr("gpus_per_host", host_default, 1, per_domain));
  if (per_domain % per_host != 0)
    return Status::InvalidArgument(fmt::format(
        "{}: field \"gpus_per_host\": expected a divisor of gpus_per_domain ({}), got {}",
        prefix.empty() ? std::string(source_name) : fmt::format("{}: {}", source_name, prefix),
        per_domain, per_host));
  c.gpus_per_host = per_host == per_domain ? 0 : static_cast<int>(per_host);  // 0: the domain
  L2S_ASSIGN_OR_RETURN(c.name, r.StringOr("name", fmt::format("{}-{}", gpu.name, n)));
  if (preset != nullptr) {
    L2S_ASSIGN_OR_RETURN(double so, r.NumberOr(kScaleoutGbps.key, preset->scaleout_bw / kG,
                                               kScaleoutGbps.lo, kScaleoutGbps.hi));
    c.scaleout_bw = so * kG;
  } else {
    L2S_ASSIGN_OR_RETURN(double so, r.Number(kScaleoutGbps.key, kScaleoutGbps.lo, kScaleoutGbps.hi));
    c.scaleout_bw = so * kG;
  }
  const double nv_default_us = preset != nullptr ? preset->nvlink_latency / kUs : 3.0;
  const double so_default_us = preset != nullptr ? preset->scaleout_latency / kUs : 5.0;
  L2S_ASSIGN_OR_RETURN(double nv_us, r.NumberOr("nvlink_latency_us", nv_default_us, 0, 1e6));
  L2S_ASSIGN_OR_RETURN(double so_us, r.NumberOr("scaleout_latency_us", so_default_us, 0, 1e6));
  c.nvlink_latency = nv_us * kUs;
  c.scaleout_latency = so_us * kUs;
  L2S_ASSIGN_OR_RETURN(c.price_per_gpu_hour, r.NumberOr("price_per_gpu_hour", 0, 0, 1e6));
  L2S_RETURN_IF_ERROR(ValidateCluster(c, prefix.empty() ? std::string(source_name)
                                                        : fmt::format("{}: {}", source_name, prefix)));
  return c;
}

StatusOr<json> ParseObject(std::string_view json_text, std::string_view source_name) {
  L2S_ASSIGN_OR_RETURN(json root, jsonio::Parse(json_text, source_name));
  if (!root.is_object())
    return Status::InvalidArgument(fmt::format("{}: expected a JSON object at the top level, got {}",
                                               source_name, jsonio::Snippet(root)));
  return root;
}

}  // namespace

StatusOr<ClusterSpec> ParseClusterJson(std::string_view json_text, std::string_view source_name) {
  L2S_ASSIGN_OR_RETURN(json root, ParseObject(json_text, source_name));
  if (root.contains("pools"))
    return Status::InvalidArgument(fmt::format(
        "{}: declares several GPU pools (\"pools\"); only a disaggregated serve plan (l2s plan "
        "--mode serve --serving disagg|auto) can use such a cluster",
        source_name));
  return ClusterFromObject(root, source_name, "");
}

int ClusterPools::total_gpus() const {
  int n = 0;
  for (const ClusterSpec& p : pools) n += p.num_gpus;
  return n;
}

StatusOr<ClusterPools> ParseClusterPoolsJson(std::string_view json_text,
                                             std::string_view source_name) {
  L2S_ASSIGN_OR_RETURN(json root, ParseObject(json_text, source_name));
  ObjectReader r(root, source_name);
  L2S_RETURN_IF_ERROR(
      CheckKeys(r, root, {"name", "pools", "num_gpus", "link_gbps_per_gpu", "link_latency_us"}));
  ClusterPools out;
  L2S_ASSIGN_OR_RETURN(out.name, r.StringOr("name", std::string(source_name)));
  const json* pools = r.Find("pools");
  if (pools == nullptr || !pools->is_array() || pools->size() < 2)
    return r.Error("pools", "an array of at least two pool objects", pools);
  std::set<std::string> names;
  for (size_t i = 0; i < pools->size(); ++i) {
    const json& pj = (*pools)[i];
    const std::string prefix = fmt::format("pools[{}].", i);
    if (!pj.is_object())
      return Status::InvalidArgument(fmt::format("{}: field \"{}\": expected a pool object, got {}",
                                                 source_name, prefix, jsonio::Snippet(pj)));
    if (!pj.contains("name"))
      return Status::InvalidArgument(
          fmt::format("{}: field \"{}name\": every pool needs a name", source_name, prefix));
    L2S_ASSIGN_OR_RETURN(ClusterSpec c, ClusterFromObject(pj, source_name, prefix));
    if (!names.insert(c.name).second)
      return Status::InvalidArgument(fmt::format(
          "{}: field \"{}name\": pool name \"{}\" is used twice", source_name, prefix, c.name));
    out.pools.push_back(std::move(c));
  }
  if (r.Has("num_gpus")) {
    L2S_ASSIGN_OR_RETURN(int64_t n, r.Int("num_gpus", 1, kMaxGpus));
    if (n != out.total_gpus())
      return Status::InvalidArgument(fmt::format(
          "{}: field \"num_gpus\": the pools do not add up: num_gpus is {} but the pools hold {}",
          source_name, n, out.total_gpus()));
  }
  // The link a KV transfer between two pools crosses: by default the slower of the pools'
  // scale-out NICs and the larger of their latencies.
  double def_bw = out.pools[0].scaleout_bw, def_lat = out.pools[0].scaleout_latency;
  for (const ClusterSpec& c : out.pools) {
    def_bw = std::min(def_bw, c.scaleout_bw);
    def_lat = std::max(def_lat, c.scaleout_latency);
  }
  L2S_ASSIGN_OR_RETURN(double bw, r.NumberOr("link_gbps_per_gpu", def_bw / kG, kScaleoutGbps.lo,
                                             kScaleoutGbps.hi));
  L2S_ASSIGN_OR_RETURN(double lat, r.NumberOr("link_latency_us", def_lat / kUs, 0, 1e6));
  out.link_bw = bw * kG;
  out.link_latency = lat * kUs;
  return out;
}

bool IsClusterPoolsFile(std::string_view path) {
  std::error_code ec;
  const std::string p(path);
  if (p.empty() || !std::filesystem::is_regular_file(p, ec)) return false;
  StatusOr<std::string> text = jsonio::ReadFile(p);
  if (!text.ok()) return false;
  StatusOr<json> root = ParseObject(*text, p);
  return root.ok() && root->contains("pools");
}

StatusOr<ClusterPools> LoadClusterPools(std::string_view path) {
  L2S_ASSIGN_OR_RETURN(std::string text, jsonio::ReadFile(std::string(path)));
  return ParseClusterPoolsJson(text, path);
}

StatusOr<ClusterSpec> LoadCluster(std::string_view preset_or_path) {
  if (preset_or_path == "gb200-nvl72") return Nvl72("gb200");
  if (preset_or_path == "gb300-nvl72") return Nvl72("gb300");
  if (FindGpuPreset(preset_or_path) != nullptr) return MakeCluster(preset_or_path, kHgxNode);
  std::string_view gpu, count;
  if (SplitGpuCount(preset_or_path, &gpu, &count)) {
    int n = 0;
    auto [ptr, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
    if (ec != std::errc() || ptr != count.data() + count.size() || n < 1 || n > kMaxGpus)
      return Status::InvalidArgument(fmt::format(
          "cluster \"{}\": expected a GPU count in [1, {}] after \"{}-\"", preset_or_path,
          kMaxGpus, gpu));
    return MakeCluster(gpu, n);
  }
  const std::string path(preset_or_path);
  std::error_code ec;
  if (!path.empty() && std::filesystem::exists(path, ec)) {
    L2S_ASSIGN_OR_RETURN(std::string text, jsonio::ReadFile(path));
    return ParseClusterJson(text, path);
  }
  return Status::NotFound(fmt::format(
      "unknown cluster \"{}\": not a preset and no such file; presets: {} (also <gpu> or "
      "<gpu>-<N> for gpu in {})",
      preset_or_path, Join(ClusterPresetNames()), Join(GpuPresetNames())));
}

}  // namespace l2s
