// GPU presets. Figures from ../shared/reference/HARDWARE.md (NVIDIA datasheets; dense tensor-core
// FLOP/s, never the 2x "with sparsity" figures) and NVIDIA aiconfigurator's system files copied
// in ../shared/calibration/<gpu>/system.yaml. Units: FLOP/s, bytes, bytes/s, seconds.
//
// HBM capacity: vendors write "80 GB" / "141 GB" but the devices expose about that many GiB
// (nvidia-smi reports 81559 MiB = 79.6 GiB on an H100 80GB). We use aiconfigurator's
// mem_capacity, which is in GiB: h100_sxm 85899345920 B = 80 GiB, h200_sxm 151397597184 B =
// 141 GiB, b200_sxm 193273528320 B = 180 GiB; H800 and A100 80GB are the same 80 GiB parts.
//
// Latencies: HARDWARE.md gives "a few microseconds per hop" for InfiniBand; we take 5 us per
// scale-out hop and 3 us per NVLink collective step (an NVSwitch hop is below an IB hop). These
// are floors for the simulator's collective model; its fitted NCCL terms (calibration/nccl.csv)
// refine them for H100/H200.
#include "hw/gpu_presets.h"

namespace l2s::hw_internal {
namespace {

constexpr double kT = 1e12;   // tera (FLOP/s or bytes/s)
constexpr double kG = 1e9;    // giga
constexpr double kUs = 1e-6;  // seconds per microsecond
constexpr double kGiBytes = 1024.0 * 1024.0 * 1024.0;

constexpr double kNvlinkLatency = 3 * kUs;
constexpr double kIbLatency = 5 * kUs;

// Streaming multiprocessors per GPU (NVIDIA's architecture whitepapers and datasheets: H100 /
// H800 / H200 SXM 132, A100 108, B200 and GB200's B200 148, H20 78); communication kernels that
// run beside GEMMs (DeepEP) take some of them (sim: overlap).
int SmCountFor(std::string_view name) {
  struct Sms {
    const char* name;
    int sms;
  };
  static constexpr Sms kSms[] = {{"h100", 132}, {"h200", 132}, {"h800", 132}, {"a100", 108},
                                 {"b200", 148}, {"gb200", 148}, {"h20", 78}};
  for (const Sms& s : kSms)
    if (name == s.name) return s.sms;
  return 0;
}

GpuPresetEntry Entry(const char* name, double bf16_tflops, double fp8_tflops, double hbm_gib,
                     double hbm_tbps, double nvlink_gbps, const char* calibration,
                     double scaleout_gbps) {
  GpuPresetEntry e;
  e.gpu.name = name;
  e.gpu.bf16_flops = bf16_tflops * kT;
  e.gpu.fp8_flops = fp8_tflops * kT;
  e.gpu.hbm_bytes = hbm_gib * kGiBytes;
  e.gpu.hbm_bw = hbm_tbps * kT;
  e.gpu.nvlink_bw = nvlink_gbps * kG;
  e.gpu.calibration = calibration;
  e.gpu.sm_count = SmCountFor(name);
  e.scaleout_bw = scaleout_gbps * kG;
  e.nvlink_latency = kNvlinkLatency;
  e.scaleout_latency = kIbLatency;
  return e;
}

}  // namespace

const std::vector<GpuPresetEntry>& GpuPresetTable() {
  static const std::vector<GpuPresetEntry> kTable = {
      // H100 SXM: 989 / 1979 TFLOPS dense, 80 GiB HBM3, 3.35 TB/s, NVLink 4 450 GB/s per
      // direction (900 GB/s both ways); one ConnectX-7 NDR 400 Gb/s NIC per GPU = 50 GB/s
      // (DGX H100 user guide; aiconfigurator h100_sxm inter_node_bw 50e9).
      Entry("h100", 989, 1979, 80, 3.35, 450, "h100_sxm", 50),
      // H200 SXM: same compute and NVLink as H100; 141 GiB HBM3e at 4.8 TB/s; same CX7 NDR
      // network (aiconfigurator h200_sxm).
      Entry("h200", 989, 1979, 141, 4.8, 450, "h200_sxm", 50),
      // H800 SXM: H100 compute and memory, export-limited NVLink ~200 GB/s per direction
      // (HARDWARE.md; DeepSeek quotes ~160 GB/s achieved); DeepSeek's H800 nodes have one
      // 400 Gb/s IB NIC per GPU = 50 GB/s. Calibrated with the H100 tables (same GPU die).
      Entry("h800", 989, 1979, 80, 3.35, 200, "h100_sxm", 50),
      // A100 SXM 80GB: 312 TFLOPS bf16, no FP8 tensor cores, 2.04 TB/s, NVLink 3 300 GB/s per
      // direction; DGX A100 ships one HDR 200 Gb/s NIC per GPU = 25 GB/s. No calibration tables.
      Entry("a100", 312, 0, 80, 2.04, 300, "", 25),
      // B200: ~2250 / ~4500 TFLOPS dense, 180 GiB (aiconfigurator b200_sxm mem_capacity; the
      // datasheet range is 180-192 GB), 8 TB/s (datasheet; aiconfigurator uses 7.7), NVLink 5
      // 900 GB/s per direction, ConnectX-8 800 Gb/s per GPU = 100 GB/s (aiconfigurator b200_sxm
      // inter_node_bw). No kernel tables in ../shared/calibration for B200.
      Entry("b200", 2250, 4500, 180, 8.0, 900, "", 100),
  };
  return kTable;
}

const GpuPresetEntry* FindGpuPreset(std::string_view name) {
  for (const GpuPresetEntry& e : GpuPresetTable())
    if (e.gpu.name == name) return &e;
  return nullptr;
}

}  // namespace l2s::hw_internal
