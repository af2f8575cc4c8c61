// GPU presets, clusters and the cluster JSON format.
#include "hw/hw.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace l2s {
namespace {

TEST(HwTest, GpuPresetFigures) {
  // HARDWARE.md: H100 SXM 989 / 1979 TFLOPS dense, 3.35 TB/s, 450 GB/s NVLink per direction;
  // aiconfigurator h100_sxm mem_capacity 85899345920 B = 80 GiB.
  StatusOr<GpuSpec> h100 = GpuPreset("h100");
  ASSERT_TRUE(h100.ok());
  EXPECT_DOUBLE_EQ(h100->bf16_flops, 989e12);
  EXPECT_DOUBLE_EQ(h100->fp8_flops, 1979e12);
  EXPECT_DOUBLE_EQ(h100->hbm_bytes, 85899345920.0);
  EXPECT_DOUBLE_EQ(h100->hbm_bw, 3.35e12);
  EXPECT_DOUBLE_EQ(h100->nvlink_bw, 450e9);
  EXPECT_EQ(h100->calibration, "h100_sxm");
  // aiconfigurator h200_sxm mem_capacity 151397597184 B = 141 GiB.
  EXPECT_DOUBLE_EQ(GpuPreset("h200")->hbm_bytes, 151397597184.0);
  EXPECT_EQ(GpuPreset("h200")->calibration, "h200_sxm");
  EXPECT_EQ(GpuPreset("h800")->calibration, "h100_sxm");
  EXPECT_DOUBLE_EQ(GpuPreset("h800")->nvlink_bw, 200e9);
  EXPECT_EQ(GpuPreset("a100")->calibration, "");
  // Blackwell presets name the kernel set fitted on their own tables (kernel_coeffs_blackwell.cc).
  EXPECT_EQ(GpuPreset("b200")->calibration, "b200_sxm");
  EXPECT_EQ(GpuPreset("gb200")->calibration, "gb200");
  EXPECT_EQ(GpuPreset("b300")->calibration, "b300_sxm");
  EXPECT_EQ(GpuPreset("gb300")->calibration, "gb300");
  EXPECT_EQ(GpuPreset("h20")->calibration, "");
  // A100 has no FP8: PeakFlops falls back to bf16.
  EXPECT_DOUBLE_EQ(GpuPreset("a100")->PeakFlops(DType::kFP8), 312e12);
  EXPECT_DOUBLE_EQ(GpuPreset("h100")->PeakFlops(DType::kFP8), 1979e12);
  for (const std::string& n : GpuPresetNames()) {
    StatusOr<GpuSpec> g = GpuPreset(n);
    ASSERT_TRUE(g.ok()) << n;
    EXPECT_EQ(g->name, n);
    EXPECT_GT(g->bf16_flops, 0);
    EXPECT_GE(g->fp8_flops == 0 ? 2 * g->bf16_flops : g->fp8_flops, 2 * g->bf16_flops * 0.99);
  }
  EXPECT_EQ(GpuPreset("v100").status().code(), Status::Code::kNotFound);
}

TEST(HwTest, BlackwellAndH20Presets) {
  // HARDWARE.md: B200 2250 / 4500 / FP4 9000 TFLOPS dense; GB200 (NVL72 rack totals / 72) 2500 /
  // 5000 / FP4 10000, 186 GB, 8 TB/s, 900 GB/s NVLink; H20 148 / 296, 96 GB, 4.0 TB/s, 450 GB/s.
  // name, TFLOPS bf16 / fp8 / fp4, HBM GiB, HBM TB/s, NVLink GB/s per direction.
  auto expect = [](const char* name, double bf16, double fp8, double fp4, double gib, double tbps,
                   double nvlink) {
    const GpuSpec g = *GpuPreset(name);
    EXPECT_DOUBLE_EQ(g.bf16_flops, bf16 * 1e12) << name;
    EXPECT_DOUBLE_EQ(g.fp8_flops, fp8 * 1e12) << name;
    EXPECT_DOUBLE_EQ(g.fp4_flops, fp4 * 1e12) << name;
    EXPECT_DOUBLE_EQ(g.hbm_bytes, gib * 1024 * 1024 * 1024) << name;
    EXPECT_DOUBLE_EQ(g.hbm_bw, tbps * 1e12) << name;
    EXPECT_DOUBLE_EQ(g.nvlink_bw, nvlink * 1e9) << name;
  };
  expect("b200", 2250, 4500, 9000, 180, 8.0, 900);
  expect("gb200", 2500, 5000, 10000, 186, 8.0, 900);
  expect("h20", 148, 296, 0, 96, 4.0, 450);
  const GpuSpec gb200 = *GpuPreset("gb200");
  const GpuSpec h20 = *GpuPreset("h20");
  // FP4 tensor cores only on Blackwell; elsewhere the FP4 peak falls back to FP8, then BF16.
  for (const char* n : {"h100", "h200", "h800", "h20", "a100"})
    EXPECT_EQ(GpuPreset(n)->fp4_flops, 0) << n;
  EXPECT_DOUBLE_EQ(gb200.PeakFlops(DType::kFP4), 10000e12);
  EXPECT_DOUBLE_EQ(h20.PeakFlops(DType::kFP4), 296e12);
  EXPECT_DOUBLE_EQ(GpuPreset("a100")->PeakFlops(DType::kFP4), 312e12);
  // gb200 ships in NVL72 racks: a plain gb200 cluster has 72-GPU NVLink domains, others 8.
  EXPECT_EQ(MakeCluster("gb200", 144)->gpus_per_domain, 72);
  EXPECT_EQ(MakeCluster("gb200", 144)->num_domains(), 2);
  EXPECT_EQ(MakeCluster("gb200", 4)->num_domains(), 1);
  EXPECT_EQ(MakeCluster("h20", 32)->gpus_per_domain, 8);
  EXPECT_EQ(MakeCluster("gb200", 16, 8)->gpus_per_domain, 8);  // explicit domain size wins
  // Cluster JSON: fp4_tflops overrides, and a gb200 cluster defaults to 72-GPU domains.
  StatusOr<ClusterSpec> j = ParseClusterJson(
      R"({"gpu": {"name": "h100", "fp4_tflops": 3958}, "num_gpus": 8})", "j.json");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_DOUBLE_EQ(j->gpu.fp4_flops, 3958e12);
  EXPECT_EQ(ParseClusterJson(R"({"gpu": "gb200", "num_gpus": 144})", "g.json")->gpus_per_domain, 72);
}

TEST(HwTest, BlackwellUltraAndInstinctPresets) {
  // HARDWARE.md (second part), with the choices gpus.cc names: name, TFLOPS bf16 / fp8 / fp4
  // (NVFP4 on Blackwell Ultra, MXFP4 on CDNA4, none on CDNA3), HBM GiB, HBM TB/s, fabric GB/s
  // per direction (NVLink, or the seven xGMI links' sum), link GB/s (mesh; 0 = switch), SMs/CUs,
  // TDP W (0 = not stated), NVLink-domain size.
  struct Want {
    const char* name;
    double bf16, fp8, fp4, gib, tbps, fabric, link;
    int sms;
    double tdp;
    int domain;
  };
  const Want wants[] = {
      {"b300", 2250, 4500, 14000, 275040.0 / 1024, 7.75, 900, 0, 160, 1100, 8},
      {"gb300", 2500, 5000, 15000, 284208.0 / 1024, 8.0, 900, 0, 160, 1400, 72},
      {"mi300x", 1307.4, 2614.9, 0, 192, 5.3, 448, 64, 304, 750, 8},
      {"mi325x", 1307.4, 2614.9, 0, 256, 6.0, 448, 64, 304, 0, 8},
      {"mi355x", 2500, 5000, 10000, 309220868096.0 / (1024.0 * 1024 * 1024), 8.0, 535.5, 76.5, 256,
       1400, 8},
  };
  for (const Want& w : wants) {
    const GpuSpec g = *GpuPreset(w.name);
    EXPECT_DOUBLE_EQ(g.bf16_flops, w.bf16 * 1e12) << w.name;
    EXPECT_DOUBLE_EQ(g.fp8_flops, w.fp8 * 1e12) << w.name;
    EXPECT_DOUBLE_EQ(g.fp4_flops, w.fp4 * 1e12) << w.name;
    EXPECT_NEAR(g.hbm_bytes, w.gib * 1024 * 1024 * 1024, 1.0) << w.name;
    EXPECT_DOUBLE_EQ(g.hbm_bw, w.tbps * 1e12) << w.name;
    EXPECT_NEAR(g.nvlink_bw, w.fabric * 1e9, 1.0) << w.name;
    EXPECT_DOUBLE_EQ(g.mesh_link_bw, w.link * 1e9) << w.name;
    EXPECT_EQ(g.sm_count, w.sms) << w.name;
    EXPECT_DOUBLE_EQ(g.tdp_w, w.tdp) << w.name;
    EXPECT_EQ(g.vendor, w.link > 0 ? "amd" : "nvidia") << w.name;
    EXPECT_EQ(MakeCluster(w.name, 8)->num_domains(), 1) << w.name;
    EXPECT_EQ(MakeCluster(w.name, 144)->gpus_per_domain, w.domain) << w.name;
  }
  // The mesh: a group of k GPUs of a node has k - 1 links; NVSwitch gives every group the full rate.
  const GpuSpec mi = *GpuPreset("mi300x");
  EXPECT_DOUBLE_EQ(mi.FabricBw(2), 64e9);
  EXPECT_DOUBLE_EQ(mi.FabricBw(4), 192e9);
  EXPECT_DOUBLE_EQ(mi.FabricBw(8), 448e9);
  EXPECT_DOUBLE_EQ(GpuPreset("b300")->FabricBw(2), 900e9);
  // MI300X has no FP4 matrix cores: an FP4 GEMM falls back to the FP8 rate.
  EXPECT_DOUBLE_EQ(mi.PeakFlops(DType::kFP4), 2614.9e12);
  StatusOr<ClusterSpec> nvl = LoadCluster("gb300-nvl72");
  ASSERT_TRUE(nvl.ok());
  EXPECT_EQ(nvl->num_gpus, 72);
  EXPECT_EQ(nvl->gpus_per_domain, 72);
  EXPECT_EQ(nvl->gpu.name, "gb300");
  EXPECT_DOUBLE_EQ(nvl->scaleout_bw, 100e9);
  // Cluster JSON: a mesh link override.
  StatusOr<ClusterSpec> j = ParseClusterJson(
      R"({"gpu": {"name": "mi300x", "mesh_link_gbps": 50}, "num_gpus": 8})", "j.json");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_DOUBLE_EQ(j->gpu.FabricBw(4), 150e9);
}

TEST(HwTest, MakeClusterNetworks) {
  StatusOr<ClusterSpec> c = MakeCluster("h100", 64);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->name, "h100-64");
  EXPECT_EQ(c->gpus_per_domain, 8);
  EXPECT_EQ(c->num_domains(), 8);
  EXPECT_DOUBLE_EQ(c->scaleout_bw, 50e9);  // 400 Gb/s NDR per GPU
  EXPECT_DOUBLE_EQ(c->scaleout_latency, 5e-6);
  EXPECT_GT(c->nvlink_latency, 0);
  EXPECT_LT(c->nvlink_latency, c->scaleout_latency);
  EXPECT_DOUBLE_EQ(MakeCluster("a100", 8)->scaleout_bw, 25e9);   // HDR 200 Gb/s
  EXPECT_DOUBLE_EQ(MakeCluster("b200", 8)->scaleout_bw, 100e9);  // CX8 800 Gb/s
  // One partial domain is fine; a partial domain after full ones is not.
  EXPECT_TRUE(MakeCluster("h100", 4).ok());
  EXPECT_EQ(MakeCluster("h100", 4)->num_domains(), 1);
  StatusOr<ClusterSpec> bad = MakeCluster("h100", 12);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("num_gpus"), std::string::npos);
  EXPECT_NE(bad.status().message().find("partial"), std::string::npos);
  EXPECT_FALSE(MakeCluster("h100", 0).ok());
  EXPECT_FALSE(MakeCluster("h100", 8, -1).ok());
  EXPECT_EQ(MakeCluster("h100", 8, 0)->gpus_per_domain, 8);  // 0 = the GPU type's own domain
  EXPECT_EQ(MakeCluster("tpu", 8).status().code(), Status::Code::kNotFound);
}

TEST(HwTest, ClusterPresets) {
  StatusOr<ClusterSpec> nvl = LoadCluster("gb200-nvl72");
  ASSERT_TRUE(nvl.ok());
  EXPECT_EQ(nvl->num_gpus, 72);
  EXPECT_EQ(nvl->gpus_per_domain, 72);
  EXPECT_EQ(nvl->num_domains(), 1);
  EXPECT_EQ(nvl->gpu.name, "gb200");
  for (const std::string& n : ClusterPresetNames()) {
    StatusOr<ClusterSpec> c = LoadCluster(n);
    ASSERT_TRUE(c.ok()) << n << ": " << c.status().ToString();
    EXPECT_EQ(c->name, n);
    EXPECT_TRUE(ValidateCluster(*c, n).ok());
  }
  EXPECT_EQ(LoadCluster("h200")->num_gpus, 8);
  EXPECT_EQ(LoadCluster("h100-256")->num_gpus, 256);
  EXPECT_FALSE(LoadCluster("h100-12").ok());
  EXPECT_FALSE(LoadCluster("h100-99999999999").ok());
  StatusOr<ClusterSpec> none = LoadCluster("no-such-cluster");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), Status::Code::kNotFound);
  EXPECT_NE(none.status().message().find("gb200-nvl72"), std::string::npos);

  StatusOr<ClusterSpec> two = ResizeCluster(*nvl, 144);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->num_domains(), 2);
  EXPECT_EQ(two->name, "gb200-nvl72-144");
  EXPECT_FALSE(ResizeCluster(*nvl, 100).ok());
  EXPECT_EQ(ResizeCluster(*LoadCluster("h100-64"), 128)->name, "h100-128");
}

TEST(HwTest, ClusterJsonGood) {
  StatusOr<ClusterSpec> c = ParseClusterJson(
      R"({"gpu": "h100", "num_gpus": 64, "gpus_per_domain": 8, "scaleout_gbps_per_gpu": 50,
          "nvlink_latency_us": 3, "scaleout_latency_us": 5})",
      "cluster.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(*c, *MakeCluster("h100", 64));

  // Overrides of a preset GPU; defaults for the rest.
  c = ParseClusterJson(
      R"({"name": "fat-h100", "gpu": {"name": "h100", "hbm_gib": 94, "hbm_tbps": 3.9},
          "num_gpus": 16})",
      "cluster.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->name, "fat-h100");
  EXPECT_DOUBLE_EQ(c->gpu.hbm_bytes, 94 * kGiB);
  EXPECT_DOUBLE_EQ(c->gpu.hbm_bw, 3.9e12);
  EXPECT_DOUBLE_EQ(c->gpu.bf16_flops, 989e12);
  EXPECT_EQ(c->gpu.calibration, "h100_sxm");
  EXPECT_DOUBLE_EQ(c->scaleout_bw, 50e9);

  // A new GPU with every figure.
  c = ParseClusterJson(
      R"({"gpu": {"name": "mi300x", "bf16_tflops": 1307, "fp8_tflops": 2615, "hbm_gib": 192,
                  "hbm_tbps": 5.3, "nvlink_gbps": 448}, "num_gpus": 8,
          "scaleout_gbps_per_gpu": 50})",
      "cluster.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->gpu.name, "mi300x");
  EXPECT_EQ(c->gpu.calibration, "");
  EXPECT_DOUBLE_EQ(c->gpu.nvlink_bw, 448e9);

  // From a file.
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("l2s_hw_test_" + std::to_string(::getpid()) + ".json"))
                               .string();
  { std::ofstream(path) << R"({"gpu": "h200", "num_gpus": 4})"; }
  StatusOr<ClusterSpec> f = LoadCluster(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->num_gpus, 4);
  EXPECT_EQ(f->gpu.name, "h200");
}

// Where a launch places processes (HostGpus): an HGX node is its NVLink domain; an NVL72 rack is
// one domain of 18 compute trays of 4 GPUs (HARDWARE.md); a file may state its own host size.
TEST(HwTest, HostsOfANvlinkDomain) {
  EXPECT_EQ(HostGpus(*MakeCluster("h100", 64)), 8);
  EXPECT_EQ(HostGpus(*LoadCluster("gb300-nvl72")), 4);
  EXPECT_EQ(HostGpus(*LoadCluster("gb200-nvl72")), 4);
  EXPECT_EQ(HostGpus(*MakeCluster("gb300", 144)), 4);
  EXPECT_EQ(HostGpus(*MakeCluster("gb300", 8, 8)), 4);  // a domain of 8: still trays of 4
  EXPECT_EQ(HostGpus(*MakeCluster("gb300", 6, 6)), 6);  // 4 does not divide 6: the domain
  StatusOr<ClusterSpec> c = ParseClusterJson(
      R"({"gpu": "gb300", "num_gpus": 72, "gpus_per_domain": 72, "gpus_per_host": 8})", "c.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(HostGpus(*c), 8);
  c = ParseClusterJson(R"({"gpu": "gb300", "num_gpus": 72, "gpus_per_domain": 72})", "c.json");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, *MakeCluster("gb300", 72));
  c = ParseClusterJson(R"({"gpu": "h100", "num_gpus": 16, "gpus_per_host": 3})", "c.json");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "c.json: field \"gpus_per_host\": expected a divisor of gpus_per_domain (8), got 3");
}

TEST(HwTest, ClusterJsonBad) {
  struct Case {
    const char* json;
    Status::Code code;
    const char* field;  // must appear quoted in the message ("" = only the source)
  };
  const Case cases[] = {
      {R"({"gpu": "h100", "num_gpus": 64,)", Status::Code::kParseError, ""},
      {R"([1])", Status::Code::kInvalidArgument, ""},
      {R"({"num_gpus": 64})", Status::Code::kInvalidArgument, "gpu"},
      {R"({"gpu": "h100"})", Status::Code::kInvalidArgument, "num_gpus"},
      {R"({"gpu": "tpu-v5", "num_gpus": 8})", Status::Code::kInvalidArgument, "gpu"},
      {R"({"gpu": 7, "num_gpus": 8})", Status::Code::kInvalidArgument, "gpu"},
      {R"({"gpu": "h100", "num_gpus": "many"})", Status::Code::kInvalidArgument, "num_gpus"},
      {R"({"gpu": "h100", "num_gpus": 0})", Status::Code::kInvalidArgument, "num_gpus"},
      {R"({"gpu": "h100", "num_gpus": -8})", Status::Code::kInvalidArgument, "num_gpus"},
      {R"({"gpu": "h100", "num_gpus": 12})", Status::Code::kInvalidArgument, "num_gpus"},
      {R"({"gpu": "h100", "num_gpus": 8, "gpus_per_domain": 0})",
       Status::Code::kInvalidArgument, "gpus_per_domain"},
      {R"({"gpu": "h100", "num_gpus": 8, "scaleout_gbps_per_gpu": 0})",
       Status::Code::kInvalidArgument, "scaleout_gbps_per_gpu"},
      {R"({"gpu": "h100", "num_gpus": 8, "nvlink_latency_us": -1})",
       Status::Code::kInvalidArgument, "nvlink_latency_us"},
      {R"({"gpu": "h100", "num_gpus": 8, "gpus_per_node": 8})", Status::Code::kInvalidArgument,
       "gpus_per_node"},
      {R"({"gpu": {"hbm_gib": 80}, "num_gpus": 8})", Status::Code::kInvalidArgument, "gpu.name"},
      {R"({"gpu": {"name": "h100", "hbm_gib": "lots"}, "num_gpus": 8})",
       Status::Code::kInvalidArgument, "gpu.hbm_gib"},
      {R"({"gpu": {"name": "x1", "bf16_tflops": 100, "hbm_gib": 80, "hbm_tbps": 2},
           "num_gpus": 8, "scaleout_gbps_per_gpu": 50})",
       Status::Code::kInvalidArgument, "gpu.nvlink_gbps"},
      {R"({"gpu": {"name": "x1", "bf16_tflops": 100, "hbm_gib": 80, "hbm_tbps": 2,
                   "nvlink_gbps": 100}, "num_gpus": 8})",
       Status::Code::kInvalidArgument, "scaleout_gbps_per_gpu"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json);
    StatusOr<ClusterSpec> r = ParseClusterJson(c.json, "cluster.json");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), c.code) << r.status().ToString();
    const std::string& msg = r.status().message();
    EXPECT_EQ(msg.rfind("cluster.json", 0), 0u) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    if (*c.field) {
      EXPECT_NE(msg.find(std::string("\"") + c.field + "\""), std::string::npos) << msg;
    }
  }
  EXPECT_EQ(LoadCluster("/nonexistent/cluster.json").status().code(), Status::Code::kNotFound);
  // An unknown field names the field it may mean: within a misspelling, or sharing its first
  // word; gpus_per_node both meanings; nothing when none is near.
  auto message = [](const char* json) {
    return ParseClusterJson(json, "c.json").status().message();
  };
  EXPECT_NE(message(R"({"gpu": "h100", "num_gpus": 8, "price_per_gpu_hr": 2})")
                .find("unknown field (did you mean \"price_per_gpu_hour\"?); expected one of"),
            std::string::npos);
  EXPECT_NE(message(R"({"gpu": "h100", "num_gpu": 8})").find("(did you mean \"num_gpus\"?)"),
            std::string::npos);
  EXPECT_NE(message(R"({"gpu": "h100", "num_gpus": 8, "gpus_per_node": 8})")
                .find("(did you mean \"gpus_per_domain\", the NVLink domain as --gpus-per-node "
                      "sets it, or \"gpus_per_host\"?)"),
            std::string::npos);
  EXPECT_NE(message(R"({"gpu": "h100", "num_gpus": 8, "foo": 1})")
                .find("\"foo\": unknown field; expected one of"),
            std::string::npos);
}

// An unknown GPU name says the preset it is nearest to: another case, a preset it starts with or
// that starts with it, a misspelling; nothing when none is near.
TEST(GpuPresetTest, UnknownNameSuggestsTheNearestPreset) {
  auto head = [](std::string_view name) {
    const StatusOr<GpuSpec> g = GpuPreset(name);
    EXPECT_FALSE(g.ok()) << name;
    const std::string m = g.status().message();
    return m.substr(0, m.find("; GPU presets: "));
  };
  EXPECT_EQ(head("H100"), "unknown GPU \"H100\" (did you mean h100?)");
  EXPECT_EQ(head("h100-sxm"), "unknown GPU \"h100-sxm\" (did you mean h100?)");
  EXPECT_EQ(head("mi355"), "unknown GPU \"mi355\" (did you mean mi355x?)");
  EXPECT_EQ(head("b300x"), "unknown GPU \"b300x\" (did you mean b300?)");
  EXPECT_EQ(head("nosuch"), "unknown GPU \"nosuch\"");
  EXPECT_EQ(MakeCluster("H200", 8, 0).status().message().substr(0, 39),
            "unknown GPU \"H200\" (did you mean h200?)");
}

}  // namespace
}  // namespace l2s
