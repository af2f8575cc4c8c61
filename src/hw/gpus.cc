// GPU presets. Figures from ../shared/reference/HARDWARE.md (NVIDIA datasheets; dense tensor-core
// FLOP/s, never the 2x "with sparsity" figures) and NVIDIA aiconfigurator's system files copied
// in ../shared/calibration/<gpu>/system.yaml. Units: FLOP/s, bytes, bytes/s, seconds.
//
// HBM capacity: vendors write "80 GB" / "141 GB" but the devices expose about that many GiB
// (nvidia-smi reports 81559 MiB = 79.6 GiB on an H100 80GB). We use aiconfigurator's
// mem_capacity, which is in GiB: h100_sxm 85899345920 B = 80 GiB, h200_sxm 151397597184 B =
// 141 GiB, b200_sxm 193273528320 B = 180 GiB; H800 and A100 80GB are the same 80 GiB parts. H20
// (96 GB) and GB200 (186 GB) follow the same reading: 96 and 186 GiB.
//
// Kernel efficiencies: each preset's `calibration` names the kernel set fitted on its own tables
// in ../shared/calibration (tools/fit_kernels; kernels.cc CoeffsFor): h100_sxm, h200_sxm, and
// the Blackwell sets b200_sxm, gb200, b300_sxm, gb300 (kernel_coeffs_blackwell.cc). Collectives
// of the Blackwell parts still use the H100 lines at their own fabric rate (collectives.cc).
// GPUs without kernel tables of their own (a100, h20: calibration "") are priced by the same
// formulas with the H100 fit's efficiencies (fractions of peak) and this table's peaks and
// bandwidths. AMD GPUs (vendor "amd") take the H100 fit scaled by the MI300X measurements
// (kernels.h AmdKernelScales, collectives.h AmdCollectiveCoeffs).
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
  // AMD: compute units (HARDWARE.md: MI300X / MI325X 304 = 38 per XCD x 8 XCDs, MI355X 256 =
  // 32 x 8); Blackwell Ultra (B300, GB300) 160 SMs (HARDWARE.md, Hot Chips 2025 summaries).
  static constexpr Sms kSms[] = {{"h100", 132},  {"h200", 132},  {"h800", 132},  {"a100", 108},
                                 {"b200", 148},  {"gb200", 148}, {"h20", 78},    {"mi300x", 304},
                                 {"mi325x", 304}, {"mi355x", 256}, {"b300", 160}, {"gb300", 160}};
  for (const Sms& s : kSms)
    if (name == s.name) return s.sms;
  return 0;
}

GpuPresetEntry Entry(const char* name, double bf16_tflops, double fp8_tflops, double hbm_gib,
                     double hbm_tbps, double nvlink_gbps, const char* calibration,
                     double scaleout_gbps, double fp4_tflops = 0, int gpus_per_domain = 8) {
  GpuPresetEntry e;
  e.gpu.name = name;
  e.gpu.bf16_flops = bf16_tflops * kT;
  e.gpu.fp8_flops = fp8_tflops * kT;
  e.gpu.fp4_flops = fp4_tflops * kT;
  e.gpus_per_domain = gpus_per_domain;
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

// An AMD Instinct board: 8 GPUs per node joined by a point-to-point Infinity Fabric (xGMI) mesh,
// seven links per GPU, `link_gbps` per link and direction; nvlink_bw holds the seven links' sum.
GpuPresetEntry AmdEntry(const char* name, double bf16_tflops, double fp8_tflops, double fp4_tflops,
                        double hbm_gib, double hbm_tbps, double link_gbps, double tdp_w,
                        double scaleout_gbps) {
  constexpr int kMeshPeers = 7;
  GpuPresetEntry e = Entry(name, bf16_tflops, fp8_tflops, hbm_gib, hbm_tbps, kMeshPeers * link_gbps,
                           "", scaleout_gbps, fp4_tflops);
  e.gpu.mesh_link_bw = link_gbps * kG;
  e.gpu.tdp_w = tdp_w;
  e.gpu.vendor = "amd";
  return e;
}

GpuPresetEntry WithPower(GpuPresetEntry e, double tdp_w) {
  e.gpu.tdp_w = tdp_w;
  return e;
}

// An NVL72 rack's GPU: 18 compute trays of 4 GPUs (and 2 Grace CPUs) in one NVLink domain
// (HARDWARE.md, GB300 NVL72 rack; GB200 NVL72 the same tray): a host runs 4 GPUs.
GpuPresetEntry OnTraysOf4(GpuPresetEntry e) {
  e.gpus_per_host = 4;
  e.gpu.grace_host = true;
  return e;
}

}  // namespace

const std::vector<GpuPresetEntry>& GpuPresetTable() {
  static const std::vector<GpuPresetEntry> kTable = {
      // H100 SXM: 989 / 1979 TFLOPS dense, 80 GiB HBM3, 3.35 TB/s, NVLink 4 450 GB/s per
      // direction (900 GB/s both ways); one ConnectX-7 NDR 400 Gb/s NIC per GPU = 50 GB/s
      // (DGX H100 user guide; aiconfigurator h100_sxm inter_node_bw 50e9).
      // Board power: 700 W (NVIDIA H100 SXM5 datasheet, "Max TDP up to 700W").
      WithPower(Entry("h100", 989, 1979, 80, 3.35, 450, "h100_sxm", 50), 700),
      // H200 SXM: same compute and NVLink as H100; 141 GiB HBM3e at 4.8 TB/s; same CX7 NDR
      // network (aiconfigurator h200_sxm).
      // Board power: 700 W (NVIDIA H200 SXM datasheet, "up to 700W").
      WithPower(Entry("h200", 989, 1979, 141, 4.8, 450, "h200_sxm", 50), 700),
      // H800 SXM: H100 compute and memory, export-limited NVLink ~200 GB/s per direction
      // (HARDWARE.md; DeepSeek quotes ~160 GB/s achieved); DeepSeek's H800 nodes have one
      // 400 Gb/s IB NIC per GPU = 50 GB/s. Calibrated with the H100 tables (same GPU die).
      // Board power: the H100 SXM board's 700 W (same board).
      WithPower(Entry("h800", 989, 1979, 80, 3.35, 200, "h100_sxm", 50), 700),
      // A100 SXM 80GB: 312 TFLOPS bf16, no FP8 tensor cores, 2.04 TB/s, NVLink 3 300 GB/s per
      // direction; DGX A100 ships one HDR 200 Gb/s NIC per GPU = 25 GB/s. No calibration tables.
      // Board power: 400 W (NVIDIA A100 80GB SXM datasheet, "Max TDP 400W").
      WithPower(Entry("a100", 312, 0, 80, 2.04, 300, "", 25), 400),
      // B200: ~2250 / ~4500 TFLOPS dense, FP4 (NVFP4/MXFP4) 9000 dense (HARDWARE.md;
      // aiconfigurator b200_sxm fp4_tc_flops 9e15), 180 GiB (aiconfigurator b200_sxm mem_capacity;
      // the datasheet range is 180-192 GB), 8 TB/s (datasheet; aiconfigurator uses 7.7), NVLink 5
      // 900 GB/s per direction, ConnectX-8 800 Gb/s per GPU = 100 GB/s (aiconfigurator b200_sxm
      // inter_node_bw). Kernel set b200_sxm (its own tables).
      // Board power: 1,000 W (NVIDIA HGX B200: 8 x 1,000 W GPUs; DGX B200 ~14.3 kW in all).
      WithPower(Entry("b200", 2250, 4500, 180, 8.0, 900, "b200_sxm", 100, 9000), 1000),
      // GB200 (one GPU of an NVL72 rack): 2500 / 5000 TFLOPS dense, FP4 10000 (HARDWARE.md: the
      // NVL72 datasheet's rack totals / 72), 186 GiB HBM3e at 8 TB/s, NVLink 5 900 GB/s per
      // direction with all 72 GPUs of a rack in one NVLink domain. Scale-out between racks: one
      // ConnectX-7 400 Gb/s NIC per GPU = 50 GB/s (the NVL72 compute tray's NICs; HARDWARE.md
      // states none for GB200, so this is the H100 figure, used only beyond 72 GPUs).
      // Board power: 1,200 W per Blackwell GPU of the GB200 superchip (NVIDIA GB200 NVL72
      // configurations; the Grace CPU and switch trays are not counted).
      OnTraysOf4(WithPower(Entry("gb200", 2500, 5000, 186, 8.0, 900, "gb200", 50, 10000, 72), 1200)),
      // H20: Hopper with about 15% of H100's FLOPs: 148 / 296 TFLOPS dense, no FP4; 96 GiB HBM3
      // at 4.0 TB/s; NVLink 450 GB/s per direction (HARDWARE.md, NVIDIA H20 datasheet). Scale-out:
      // HARDWARE.md states none for H20; HGX H20 servers are the HGX H100 platform, taken with its
      // one 400 Gb/s NIC per GPU = 50 GB/s.
      // Board power: 400 W (NVIDIA H20 datasheet).
      WithPower(Entry("h20", 148, 296, 96, 4.0, 450, "", 50), 400),
      // ---- Blackwell Ultra and AMD Instinct (HARDWARE.md, second part; where sources disagree
      // the choice is made here, once, and named). ----
      // B300 (HGX, sm103): 2250 / 4500 / 14000 TFLOPS dense BF16 / FP8 / NVFP4 (Verda, "without
      // sparsity"; aiconfigurator b300_sxm system.yaml the same). HBM: sources say 270 GB
      // (Verda; NVIDIA's MLPerf "B300-SXM-270GB") or 288 GB (Lockwood, Cisco): we take what the
      // device exposes, aiconfigurator's mem_capacity 288,400,343,040 B = 275,040 MiB reported by
      // nvidia-smi = 268.6 GiB (the "270 GB" reading). Bandwidth 7.75 TB/s (system.yaml: 62 TB/s
      // / 8; Verda 7.7, Lockwood 8). TDP: 1,100 W (Verda, system.yaml) rather than Lockwood's
      // "1,400 W maximum". NVLink 5 900 GB/s per direction, 8-GPU domain; ConnectX-8 800 Gb/s per
      // GPU = 100 GB/s (system.yaml inter_node_bw).
      WithPower(Entry("b300", 2250, 4500, 275040.0 / 1024.0, 7.75, 900, "b300_sxm", 100, 14000), 1100),
      // GB300 (one GPU of an NVL72 rack): 2500 / 5000 / 15000 TFLOPS dense (Verda; system.yaml).
      // HBM: 279 GB (Verda), 288 GB (LMSYS, NVIDIA MLPerf "GB300-288GB"): we take aiconfigurator's
      // mem_capacity, 284,208 MiB reported by nvidia-smi = 277.5 GiB. 8 TB/s; 1,400 W (Verda,
      // Azure's power limit). 72 GPUs in one NVLink 5 domain at 900 GB/s per direction; between
      // racks one ConnectX-8 800 Gb/s NIC per GPU = 100 GB/s (system.yaml inter_rack_bw).
      OnTraysOf4(WithPower(Entry("gb300", 2500, 5000, 284208.0 / 1024.0, 8.0, 900, "gb300", 100, 15000, 72), 1400)),
      // MI300X (CDNA3): 1307.4 / 2614.9 TFLOPS dense BF16 / FP8, no FP4 matrix cores; 192 GB
      // HBM3 read as 192 GiB (the devices expose about that, as for NVIDIA's parts) at 5.3 TB/s
      // (Oracle's 5.2 is the other reading); 750 W. xGMI: 7 links per GPU, 16 lanes x 32 Gb/s =
      // 128 GB/s both ways = 64 GB/s per direction per link (448 GB/s over all seven). Scale-out:
      // one 400 Gb/s NIC per GPU = 50 GB/s (MoRI's benchmark nodes: 8 x ConnectX-7 400G).
      AmdEntry("mi300x", 1307.4, 2614.9, 0, 192, 5.3, 64, 750, 50),
      // MI325X: MI300X compute (1307 / 2615 TFLOPS, same die and xGMI); 256 GB HBM3E (256 GiB) at
      // 6.0 TB/s. Power is not stated in HARDWARE.md (0 = unknown).
      AmdEntry("mi325x", 1307.4, 2614.9, 0, 256, 6.0, 64, 0, 50),
      // MI355X (CDNA4): FP8 5,000 TFLOPS dense (ISSCC 2026: "five petaflops"; 8,192 FLOPs/clock/CU
      // x 256 CUs), MXFP4 10,000 dense (AMD: "up to 10 petaFLOPS MXFP4/MXFP6"; the 20 PF figures
      // are read as with sparsity); BF16 2,500 = FP8 / 2 (CDNA's matrix cores run 16-bit at half
      // the FP8 rate: MI300X 1307 / 2615). 288 GB HBM3E (rocm-smi: 309,220,868,096 B = 288.0 GiB)
      // at 8 TB/s; 1,400 W. xGMI mesh of 8, ~153 GB/s both ways per link = 76.5 GB/s per
      // direction (Hume Consulting; a secondary source). Scale-out: 8 x 400 GbE Pollara NICs
      // per node = 50 GB/s per GPU (InferenceX MI355X cluster).
      AmdEntry("mi355x", 2500, 5000, 10000, 309220868096.0 / kGiBytes, 8.0, 76.5, 1400, 50),
  };
  return kTable;
}

const GpuPresetEntry* FindGpuPreset(std::string_view name) {
  for (const GpuPresetEntry& e : GpuPresetTable())
    if (e.gpu.name == name) return &e;
  return nullptr;
}

}  // namespace l2s::hw_internal
