// Collective latency model: (1) the committed coefficients (collective_coeffs.cc) against
// nccl.csv, custom_allreduce.csv and the DeepEP tables (skipped without ../shared), (2)
// hand-derived cases, (3) invariants (latency floor, monotone in bytes, crossing domains never
// faster than staying inside one, expert imbalance bounds).
#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hw/hw.h"
#include "sim/calib_csv.h"
#include "sim/collectives.h"
#include "sim/moe_load.h"
#include "strategy/test_models.h"

namespace l2s {
namespace {

GpuSpec H100() { return testing::H100Gpu(); }
GpuSpec H200() { return testing::H200Gpu(); }
// HGX nodes of 8 GPUs, one 400 Gb/s NIC (50e9 B/s) per GPU, a few us per scale-out hop.
ClusterSpec Cluster(const GpuSpec& gpu, int num_gpus, int per_domain = 8) {
  ClusterSpec c;
  c.name = "test";
  c.gpu = gpu;
  c.num_gpus = num_gpus;
  c.gpus_per_domain = per_domain;
  c.scaleout_bw = 50e9;
  c.nvlink_latency = 3e-6;
  c.scaleout_latency = 5e-6;
  return c;
}

const std::string kShared = L2S_SHARED_DIR;
bool HaveShared() { return std::filesystem::exists(kShared + "/calibration/h100_sxm/nccl.csv"); }

void Report(const std::string& set, const std::string& table, const std::vector<double>& pred,
            const std::vector<double>& meas) {
  const calib::ErrorSummary e = calib::Summarize(pred, meas);
  std::cout << "[fit] " << set << " " << table << ": rows " << e.rows << ", median |err| "
            << 100 * e.median_ape << "%, within 25% " << 100 * e.within25 << "%\n";
  EXPECT_GT(e.rows, 0u) << table;
  EXPECT_LE(e.median_ape, 0.15) << set << " " << table;
}

// ---- (1) fit error of the committed coefficients ----------------------------------------------

class CollectiveFit : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (!HaveShared()) GTEST_SKIP() << "no calibration data at " << kShared;
    set_ = GetParam();
    dir_ = kShared + "/calibration/" + set_;
    gpu_ = std::string(set_) == "h200_sxm" ? H200() : H100();
  }
  std::string set_, dir_;
  GpuSpec gpu_;
};

// nccl.csv rows are single-node NCCL runs; inside one domain CollectiveSeconds uses the custom
// all-reduce for n <= 8, so the NCCL curves are scored directly.
TEST_P(CollectiveFit, Nccl) {
  auto rows = calib::LoadNccl(dir_);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  const CollectiveCoeffs& c = CollectiveCoeffsFor(gpu_);
  const char* names[4] = {"nccl all_reduce", "nccl all_gather", "nccl reduce_scatter",
                          "nccl alltoall"};
  std::vector<double> all_p, all_m;
  for (int o = 0; o < 4; ++o) {
    std::vector<double> p, m;
    for (const auto& r : *rows) {
      const int op = r.kind == CollKind::kAllReduce ? 0
                     : r.kind == CollKind::kAllGather ? 1
                     : r.kind == CollKind::kReduceScatter ? 2 : 3;
      if (op != o) continue;
      const int s = r.n == 2 ? 0 : r.n == 4 ? 1 : 2;
      p.push_back(CurveSeconds(c.nccl[o][s], r.kind, r.n, r.bytes));
      m.push_back(r.latency_s);
    }
    Report(set_, names[o], p, m);
    all_p.insert(all_p.end(), p.begin(), p.end());
    all_m.insert(all_m.end(), m.begin(), m.end());
  }
  Report(set_, "nccl.csv (all rows)", all_p, all_m);
  // Non-all-reduce collectives go through CollectiveSeconds unchanged inside one node.
  const ClusterSpec node = Cluster(gpu_, 8);
  for (const auto& r : *rows) {
    if (r.kind == CollKind::kAllReduce) continue;
    const int s = r.n == 2 ? 0 : r.n == 4 ? 1 : 2;
    const int o = r.kind == CollKind::kAllGather ? 1 : r.kind == CollKind::kReduceScatter ? 2 : 3;
    EXPECT_DOUBLE_EQ(CollectiveSeconds(node, r.kind, {r.n, 1}, r.bytes),
                     CurveSeconds(c.nccl[o][s], r.kind, r.n, r.bytes));
  }
}

TEST_P(CollectiveFit, CustomAllReduceThroughCollectiveSeconds) {
  auto rows = calib::LoadCustomAllReduce(dir_);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  const ClusterSpec node = Cluster(gpu_, 8);
  std::vector<double> p, m;
  for (const auto& r : *rows) {
    p.push_back(CollectiveSeconds(node, CollKind::kAllReduce, {r.n, 1}, r.bytes));
    m.push_back(r.latency_s);
  }
  Report(set_, "custom_allreduce", p, m);
}

TEST_P(CollectiveFit, DeepEp) {
  const ClusterSpec node = Cluster(gpu_, 8);
  for (bool ll : {true, false}) {
    auto rows = calib::LoadDeepEp(dir_, ll);
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    const double sms = CollectiveCoeffsFor(gpu_).deepep_normal_sms;
    for (CollKind k : {CollKind::kDispatch, CollKind::kCombine}) {
      std::vector<double> p, m;
      for (const auto& r : *rows) {
        if (!ll && r.num_sms != sms) continue;  // normal mode: the SM budget that was fitted
        const bool d = k == CollKind::kDispatch;
        p.push_back(CollectiveSeconds(node, k, {8, 1}, d ? r.dispatch_bytes : r.combine_bytes, ll));
        m.push_back(d ? r.dispatch_s : r.combine_s);
      }
      Report(set_, std::string(ll ? "deepep_ll " : "deepep_normal ") + CollKindName(k), p, m);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Gpus, CollectiveFit, ::testing::Values("h100_sxm", "h200_sxm"));

// ---- (2) hand-derived cases ---------------------------------------------------------------------

// The line with the largest bus bandwidth of a curve (the bulk protocol).
CollLine BulkLine(const CollCurve& c) {
  CollLine best = c.line[0];
  for (const CollLine& l : c.line) {
    if (l.busbw > best.busbw) best = l;
  }
  return best;
}

// 8-GPU all-reduce of 1 GiB in one node (TRT-LLM custom all-reduce, bulk line):
//   t = lat + 2 (n-1)/n * bytes / busbw = lat + 1.75 * 1073741824 / busbw
// e.g. busbw 436e9 B/s -> 1.879e9 / 436e9 = 4.31 ms; measured 4007.8 us (README: busbw 469 GB/s).
TEST(CollectiveModel, AllReduce1GiBMatchesBusBandwidth) {
  for (const GpuSpec& gpu : {H100(), H200()}) {
    const ClusterSpec node = Cluster(gpu, 8);
    const CollLine bulk = BulkLine(CollectiveCoeffsFor(gpu).custom_ar[2]);
    const double bytes = 1073741824.0;
    const double t = CollectiveSeconds(node, CollKind::kAllReduce, {8, 1}, bytes);
    EXPECT_NEAR(t, bulk.lat_s + 1.75 * bytes / bulk.busbw, 1e-9) << gpu.name;
    const double busbw = 1.75 * bytes / t;
    std::cout << "[model] " << gpu.name << " 8-GPU all-reduce 1 GiB: " << t * 1e6
              << " us, bus bandwidth " << busbw / 1e9 << " GB/s (measured 4007.8 us, 469 GB/s)\n";
    EXPECT_NEAR(t / 4007.8e-6, 1.0, 0.10) << gpu.name;
  }
}

// Tiny messages cost the latency floor: the smallest line latency, independent of size.
TEST(CollectiveModel, LatencyFloorForTinyMessages) {
  const ClusterSpec node = Cluster(H100(), 8);
  const CollectiveCoeffs& c = CollectiveCoeffsFor(node.gpu);
  double floor_s = 1;
  for (const CollLine& l : c.custom_ar[2].line) {
    if (l.busbw > 0) floor_s = std::min(floor_s, l.lat_s);
  }
  const double t1 = CollectiveSeconds(node, CollKind::kAllReduce, {8, 1}, 1);
  const double t256 = CollectiveSeconds(node, CollKind::kAllReduce, {8, 1}, 256);
  EXPECT_GE(t1, floor_s);
  EXPECT_NEAR(t1 / floor_s, 1.0, 0.01);
  EXPECT_NEAR(t256 / t1, 1.0, 0.02);
  // README: 16 KiB all-reduce on 8 GPUs, custom 3.56 us vs NCCL 18.98 us.
  EXPECT_NEAR(CollectiveSeconds(node, CollKind::kAllReduce, {8, 1}, 16384) / 3.56e-6, 1.0, 0.15);
  EXPECT_GT(t1, 1e-6);
  EXPECT_LT(t1, 10e-6);
  EXPECT_EQ(CollectiveSeconds(node, CollKind::kAllReduce, {8, 1}, 0), 0.0);
  EXPECT_EQ(CollectiveSeconds(node, CollKind::kAllReduce, {1, 1}, 1e6), 0.0);
}

// Across domains, point-to-point pays the NCCL software floor (smallest latency of the 2-GPU
// all-to-all curve), one scale-out hop and the bytes at 86% of the NIC rate:
//   64 MiB: floor + 5 us + 67108864 / (50e9 * 43/50) = floor + 5 us + 1560.7 us.
TEST(CollectiveModel, SendRecvAcrossDomains) {
  const ClusterSpec c = Cluster(H100(), 16);
  double floor_s = 1;
  for (const CollLine& l : CollectiveCoeffsFor(c.gpu).nccl[3][0].line) {
    if (l.busbw > 0) floor_s = std::min(floor_s, l.lat_s);
  }
  EXPECT_NEAR(CollectiveSeconds(c, CollKind::kSendRecv, {2, 2}, 67108864.0),
              floor_s + 5e-6 + 67108864.0 / 43e9, 1e-12);
  // Inside the node: the 2-GPU all-to-all of a 2x buffer (same bytes each way), far faster.
  EXPECT_LT(CollectiveSeconds(c, CollKind::kSendRecv, {2, 1}, 67108864.0), 0.5e-3);
}

// Dispatch across 2 domains (EP16): half of each rank's copies leave the node over the NIC.
//   t = lat + scaleout_latency + max(0.5 * bytes / busbw_nvlink, 0.5 * bytes / 43e9)
TEST(CollectiveModel, DispatchAcrossDomains) {
  const ClusterSpec c = Cluster(H100(), 16);
  const CollLine l = CollectiveCoeffsFor(c.gpu).deepep[1][0];
  const double bytes = 128.0 * 8 * 7168;  // 128 tokens x top-8 x hidden 7168, fp8
  const double expected =
      l.lat_s + 5e-6 + std::max(0.5 * bytes / l.busbw, 0.5 * bytes / 43e9);
  EXPECT_NEAR(CollectiveSeconds(c, CollKind::kDispatch, {16, 2}, bytes, true), expected, 1e-12);
  // README: DeepEP LL, hidden 7168, 256 experts, top-8, 128 tokens: dispatch 36.7 us on EP8.
  EXPECT_NEAR(CollectiveSeconds(c, CollKind::kDispatch, {8, 1}, bytes, true) / 36.7e-6, 1.0, 0.25);
}

TEST(CollectiveModel, NormalDispatchInsideADomainFollowsDistinctDestinationRanks) {
  // The DeepEP lines were fitted on 8 ranks. A token's top-8 copies reach on average
  // R(8, n) = (n - 1)(1 - (1 - 1/n)^8) other ranks of n, and the high-throughput kernels send it
  // once to each: R(8, 8) = 7 x (1 - 0.875^8) = 4.594738, R(8, 4) = 3 x (1 - 0.75^8) = 2.699661,
  // R(8, 72) = 71 x (1 - (71/72)^8) = 7.515871. On a switch the per-rank bandwidth is the same for
  // every group, so the bandwidth term scales by R(8, n) / R(8, 8).
  const ClusterSpec c = Cluster(H100(), 72, 72);
  for (CollKind k : {CollKind::kDispatch, CollKind::kCombine}) {
    const CollLine l = CollectiveCoeffsFor(c.gpu).deepep[0][k == CollKind::kDispatch ? 0 : 1];
    const double bytes = 4096.0 * 8 * 7168;
    const double bw_s = bytes / l.busbw;
    EXPECT_NEAR(CollectiveSeconds(c, k, {8, 1, 8}, bytes, false), l.lat_s + bw_s, 1e-12);
    EXPECT_NEAR(CollectiveSeconds(c, k, {4, 1, 8}, bytes, false),
                l.lat_s + bw_s * 2.699661 / 4.594738, 1e-6 * bw_s);
    EXPECT_NEAR(CollectiveSeconds(c, k, {72, 1, 8}, bytes, false),
                l.lat_s + bw_s * 7.515871 / 4.594738, 1e-6 * bw_s);
    // Unknown fan-out and the low-latency kernels (every copy sent): the fitted per-rank rate.
    EXPECT_NEAR(CollectiveSeconds(c, k, {4, 1, 0}, bytes, false), l.lat_s + bw_s, 1e-12);
    const CollLine ll = CollectiveCoeffsFor(c.gpu).deepep[1][k == CollKind::kDispatch ? 0 : 1];
    EXPECT_NEAR(CollectiveSeconds(c, k, {4, 1, 8}, bytes, true), ll.lat_s + bytes / ll.busbw,
                1e-12);
  }
}

// HARDWARE.md: 4 nodes / 32 GPUs over 3.2 Tb/s InfiniBand reach ~331 GB/s all-reduce bus bandwidth
// at large sizes. Hierarchical model at 1 GiB: the scale-out phase moves
// 2 (4-1)/4 * 2^30 / 8 bytes per GPU at 43 GB/s = 3.75 ms; the NVLink reduce-scatter + all-gather
// overlap with it. The bound below is loose on purpose; the test prints the value.
TEST(CollectiveModel, ThirtyTwoGpuAllReduceNearPublishedBusBandwidth) {
  const ClusterSpec c = Cluster(H100(), 32);
  const double bytes = 1073741824.0;
  const double t = CollectiveSeconds(c, CollKind::kAllReduce, {32, 4}, bytes);
  const double busbw = 2.0 * 31 / 32 * bytes / t;
  std::cout << "[model] 32-GPU (4 x 8) all-reduce of 1 GiB: " << t * 1e6 << " us, bus bandwidth "
            << busbw / 1e9 << " GB/s (HARDWARE.md: ~331 GB/s)\n";
  EXPECT_NEAR(busbw / 331e9, 1.0, 0.35);
}

// Blackwell presets run the NCCL and custom all-reduce curves fitted on their own tables
// (tools/fit_collectives), at bandwidth scale 1 (the set's nvlink_bw is the preset's); a 4-GPU
// tray set (gb300) takes its n = 8 curves from the HGX node of its generation (b300_sxm). The
// fitted curves reproduce measured rows of ../shared/calibration/b300_sxm: custom_allreduce.csv
// n = 8, 16,384 B: 5.784 us (H100: 3.559); nccl.csv all_gather n = 8, fp16, 16,384 B: 16.68 us.
TEST(CollectiveModel, BlackwellOwnCurves) {
  const ClusterSpec b300 = MakeCluster("b300", 8).value();
  const CollectiveCoeffs& c = CollectiveCoeffsFor(b300.gpu);
  EXPECT_STREQ(c.name, "b300_sxm");
  EXPECT_DOUBLE_EQ(c.nvlink_bw, b300.gpu.nvlink_bw);
  EXPECT_NEAR(CollectiveSeconds(b300, CollKind::kAllReduce, {8, 1}, 16384) / 5.784e-6, 1.0, 0.15);
  EXPECT_NEAR(CollectiveSeconds(b300, CollKind::kAllGather, {8, 1}, 16384) / 16.68e-6, 1.0, 0.15);
  EXPECT_DOUBLE_EQ(CollectiveSeconds(b300, CollKind::kAllReduce, {8, 1}, 16384),
                   CurveSeconds(c.custom_ar[2], CollKind::kAllReduce, 8, 16384));
  const CollectiveCoeffs* gb = BlackwellCollectiveCoeffs("gb300");
  ASSERT_NE(gb, nullptr);
  for (int l = 0; l < kCollLines; ++l) {
    EXPECT_EQ(gb->custom_ar[2].line[l].lat_s, c.custom_ar[2].line[l].lat_s);
    EXPECT_EQ(gb->nccl[0][2].line[l].busbw, c.nccl[0][2].line[l].busbw);
  }
  EXPECT_NE(std::string(gb->borrowed).find("n = 8 from b300_sxm"), std::string::npos);
  // DeepEP: the H100 lines at the NVLink ratio (900 / 450).
  const CollectiveCoeffs& h = H100CollectiveCoeffs();
  EXPECT_EQ(c.deepep[1][0].lat_s, h.deepep[1][0].lat_s);
  EXPECT_NEAR(c.deepep[1][0].busbw, 2.0 * h.deepep[1][0].busbw, 1.0);
  EXPECT_EQ(BlackwellCollectiveCoeffs("h100_sxm"), nullptr);
}

// GPUs without tables: same latencies, bandwidth scaled by nvlink_bw / 450e9.
TEST(CollectiveModel, OtherGpusScaleBandwidth) {
  GpuSpec a100 = H100();
  a100.name = "a100";
  a100.nvlink_bw = 300e9;
  a100.calibration = "a100";
  const ClusterSpec ca = Cluster(a100, 8), ch = Cluster(H100(), 8);
  const CollCurve& curve = CollectiveCoeffsFor(a100).nccl[1][2];
  EXPECT_EQ(&CollectiveCoeffsFor(a100), &H100CollectiveCoeffs());
  // Tiny all-gather: latency only, unchanged.
  EXPECT_NEAR(CollectiveSeconds(ca, CollKind::kAllGather, {8, 1}, 1024) /
                  CollectiveSeconds(ch, CollKind::kAllGather, {8, 1}, 1024), 1.0, 0.01);
  // Huge all-gather: wire time x 450/300.
  const CollLine bulk = BulkLine(curve);
  const double bytes = 4e9, wire = bytes * 7.0 / 8.0;
  EXPECT_NEAR(CollectiveSeconds(ca, CollKind::kAllGather, {8, 1}, bytes),
              bulk.lat_s + wire / (bulk.busbw * 300.0 / 450.0), 1e-9);
}

// Sampling term of the expert load (moe_load.h) with uniform popularity (sigma 0): copies = 1024
// over ep = 8 -> mean 128, sd sqrt(1024 * 1/8 * 7/8) = 10.583, sqrt(2 ln 8) = 2.0393 ->
// 1 + 2.0393 * 10.583 / 128 = 1.16861.
TEST(CollectiveModel, ExpertImbalance) {
  auto uniform = [](double copies, int ep) { return MoeImbalance({copies, 256, ep, 0, 0.0}); };
  EXPECT_NEAR(uniform(1024, 8), 1.16861, 1e-4);
  EXPECT_EQ(uniform(1000, 1), 1.0);
  EXPECT_EQ(uniform(0, 16), 16.0);     // nothing routed: clamp to the worst case
  EXPECT_EQ(uniform(0.01, 16), 16.0);  // formula above ep: clamped
  double prev = 1e9;
  for (double copies = 1; copies < 1e7; copies *= 1.7) {
    for (int ep : {2, 8, 64, 256}) {
      const double r = uniform(copies, ep);
      EXPECT_GE(r, 1.0);
      EXPECT_LE(r, ep);
    }
    const double r = uniform(copies, 32);
    EXPECT_LE(r, prev);  // more tokens -> better balanced
    prev = r;
  }
  EXPECT_LT(uniform(1e7, 32), 1.01);
}

// ---- (3) invariants -----------------------------------------------------------------------------

const CollKind kKinds[] = {CollKind::kAllReduce, CollKind::kAllGather, CollKind::kReduceScatter,
                           CollKind::kAllToAll,  CollKind::kSendRecv,  CollKind::kDispatch,
                           CollKind::kCombine};

TEST(CollectiveModel, MonotoneInBytes) {
  for (const GpuSpec& gpu : {H100(), H200()}) {
    const ClusterSpec c = Cluster(gpu, 256);
    for (CollKind k : kKinds) {
      for (GroupPlacement g : {GroupPlacement{2, 1}, GroupPlacement{8, 1}, GroupPlacement{6, 1},
                               GroupPlacement{72, 1}, GroupPlacement{16, 2}, GroupPlacement{32, 4},
                               GroupPlacement{64, 64}, GroupPlacement{2, 2}}) {
        for (bool decode : {true, false}) {
          double prev = 0;
          for (double b = 1; b < 3e10; b *= 1.37) {
            const double t = CollectiveSeconds(c, k, g, b, decode);
            ASSERT_TRUE(std::isfinite(t)) << CollKindName(k);
            EXPECT_GE(t, prev * (1 - 1e-12))
                << CollKindName(k) << " n=" << g.n << " d=" << g.n_domains << " bytes " << b;
            prev = t;
          }
        }
      }
    }
  }
}

TEST(CollectiveModel, CrossingDomainsNeverFaster) {
  for (const GpuSpec& gpu : {H100(), H200()}) {
    const ClusterSpec c = Cluster(gpu, 512);
    for (CollKind k : kKinds) {
      for (int n : {2, 4, 8, 16, 32, 64}) {
        for (int d = 2; d <= n; d *= 2) {
          for (bool decode : {true, false}) {
            for (double b = 1; b < 3e10; b *= 2.3) {
              const double inside = CollectiveSeconds(c, k, {n, 1}, b, decode);
              const double across = CollectiveSeconds(c, k, {n, d}, b, decode);
              EXPECT_GE(across, inside * (1 - 1e-12))
                  << CollKindName(k) << " n=" << n << " d=" << d << " bytes " << b;
            }
          }
        }
      }
    }
  }
}

TEST(CollectiveModel, ClampsOddPlacements) {
  const ClusterSpec c = Cluster(H100(), 16);
  EXPECT_EQ(CollectiveSeconds(c, CollKind::kAllGather, {0, 1}, 1e6), 0.0);
  EXPECT_DOUBLE_EQ(CollectiveSeconds(c, CollKind::kAllGather, {4, 9}, 1e6),
                   CollectiveSeconds(c, CollKind::kAllGather, {4, 4}, 1e6));
  EXPECT_DOUBLE_EQ(CollectiveSeconds(c, CollKind::kAllGather, {4, 0}, 1e6),
                   CollectiveSeconds(c, CollKind::kAllGather, {4, 1}, 1e6));
  EXPECT_EQ(CollectiveSeconds(c, CollKind::kAllReduce, {8, 1}, -5), 0.0);
  EXPECT_STREQ(CollKindName(CollKind::kCombine), "combine");
}


// ---- AMD Infinity Fabric mesh (point-to-point links, no switch) --------------------------------

namespace mesh {

// One protocol line with no latency at the calibration NVLink rate: the time of a collective is
// its wire bytes over the fabric bandwidth of its group, exactly.
CollectiveCoeffs PureBandwidth() {
  CollectiveCoeffs c = H100CollectiveCoeffs();
  const CollCurve one = {{{0.0, kCalibNvlinkBw}, {0.0, 0.0}, {0.0, 0.0}}};
  for (auto& kind : c.nccl)
    for (CollCurve& cv : kind) cv = one;
  for (CollCurve& cv : c.custom_ar) cv = one;
  return c;
}

ClusterSpec Mi300x8() {
  GpuSpec g = H100();
  g.name = "mesh";
  g.nvlink_bw = 7 * 64e9;   // seven xGMI links of 64 GB/s per direction
  g.mesh_link_bw = 64e9;
  return Cluster(g, 8);
}

}  // namespace mesh

TEST(CollectivesMesh, FabricBandwidthOfAGroup) {
  const ClusterSpec c = mesh::Mi300x8();
  EXPECT_DOUBLE_EQ(c.gpu.FabricBw(2), 64e9);
  EXPECT_DOUBLE_EQ(c.gpu.FabricBw(4), 192e9);
  EXPECT_DOUBLE_EQ(c.gpu.FabricBw(8), 448e9);
  EXPECT_DOUBLE_EQ(H100().FabricBw(2), 450e9);  // a switch: every group the full rate
  EXPECT_DOUBLE_EQ(H100().FabricBw(4), 450e9);
}

TEST(CollectivesMesh, HandDerived) {
  const CollectiveCoeffs cc = mesh::PureBandwidth();
  const ClusterSpec c = mesh::Mi300x8();
  const double b = 1e9;
  // All-reduce over 4 of the 8 GPUs: wire 2 x 3/4 x 1 GB = 1.5 GB per GPU over the 3 links
  // among the four (192 GB/s): 7.8125 ms. The other four GPUs' links carry nothing of it.
  EXPECT_NEAR(CollectiveSecondsWith(cc, c, CollKind::kAllReduce, {4, 1}, b), 1.5e9 / 192e9, 1e-12);
  // Over all 8: 2 x 7/8 GB over 7 links (448 GB/s): 3.90625 ms.
  EXPECT_NEAR(CollectiveSecondsWith(cc, c, CollKind::kAllReduce, {8, 1}, b), 1.75e9 / 448e9, 1e-12);
  // All-to-all across the mesh: each rank sends 1 GB / 8 to each of 7 peers, each over that
  // pair's single link: (1e9 / 8) / 64e9 = 1.953125 ms.
  EXPECT_NEAR(CollectiveSecondsWith(cc, c, CollKind::kAllToAll, {8, 1}, b), (b / 8) / 64e9, 1e-12);
  // All-to-all among 2: 1/2 GB each way over the one link.
  EXPECT_NEAR(CollectiveSecondsWith(cc, c, CollKind::kAllToAll, {2, 1}, b), 0.5e9 / 64e9, 1e-12);
  // Send/recv of 1 GB to a peer: one link, 15.625 ms (on NVSwitch the full 450 GB/s).
  EXPECT_NEAR(CollectiveSecondsWith(cc, c, CollKind::kSendRecv, {2, 1}, b), b / 64e9, 1e-12);
  const ClusterSpec h = Cluster(H100(), 8);
  EXPECT_NEAR(CollectiveSecondsWith(cc, h, CollKind::kSendRecv, {2, 1}, b), b / 450e9, 1e-12);
  EXPECT_NEAR(CollectiveSecondsWith(cc, h, CollKind::kAllReduce, {4, 1}, b), 1.5e9 / 450e9, 1e-12);
}

TEST(CollectivesMesh, SmallerGroupsAreSlowerPerByteOnAMeshOnly) {
  // Invariant over sizes: on the mesh, the bandwidth time of a group grows as the group shrinks
  // (fewer links), on a switch it does not.
  const ClusterSpec m = mesh::Mi300x8();
  const ClusterSpec h = Cluster(H100(), 8);
  const CollectiveCoeffs cc = mesh::PureBandwidth();
  for (double b : {1e6, 1e8, 4e9}) {
    const double m2 = CollectiveSecondsWith(cc, m, CollKind::kAllGather, {2, 1}, b) / 0.5;
    const double m4 = CollectiveSecondsWith(cc, m, CollKind::kAllGather, {4, 1}, b) / 0.75;
    const double m8 = CollectiveSecondsWith(cc, m, CollKind::kAllGather, {8, 1}, b) / 0.875;
    EXPECT_GT(m2, m4);
    EXPECT_GT(m4, m8);
    const double h2 = CollectiveSecondsWith(cc, h, CollKind::kAllGather, {2, 1}, b) / 0.5;
    const double h8 = CollectiveSecondsWith(cc, h, CollKind::kAllGather, {8, 1}, b) / 0.875;
    EXPECT_NEAR(h2, h8, 1e-12 * h8);
  }
}

TEST(CollectivesMesh, AmdSetScalesH100ByRccl) {
  // One factor: RCCL's 316.82 GB/s of the 448 GB/s mesh over the H100 fit's best 8-GPU
  // all-reduce line as a share of 450 GB/s (4.5e11 in the committed fit: 1.0).
  const double best = 4.5e11;
  EXPECT_NEAR(AmdCollectiveScale(), (316.82e9 / 448e9) / (best / 450e9), 1e-9);
  const CollectiveCoeffs& a = AmdCollectiveCoeffs();
  const CollectiveCoeffs& h = H100CollectiveCoeffs();
  EXPECT_DOUBLE_EQ(a.nccl[0][2].line[2].busbw, h.nccl[0][2].line[2].busbw * AmdCollectiveScale());
  EXPECT_DOUBLE_EQ(a.nccl[0][2].line[2].lat_s, h.nccl[0][2].line[2].lat_s);
  GpuSpec amd = mesh::Mi300x8().gpu;
  amd.vendor = "amd";
  EXPECT_EQ(&CollectiveCoeffsFor(amd), &AmdCollectiveCoeffs());
  // An 8-GPU RCCL all-reduce of 8 GB on the fitted set: within 5% of the measured 316.82 GB/s
  // bus bandwidth (the large-message line dominates).
  const double t = CollectiveSecondsWith(a, mesh::Mi300x8(), CollKind::kAllReduce, {8, 1}, 8e9);
  const double busbw = 2.0 * 7 / 8 * 8e9 / t;
  EXPECT_NEAR(busbw / 316.82e9, 1.0, 0.05) << busbw;
}

}  // namespace
}  // namespace l2s
