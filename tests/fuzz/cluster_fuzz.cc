// Fuzz target: ParseClusterJson never crashes, throws or hits UB; an error is one line; a cluster
// it accepts passes ValidateCluster and has counts and figures a simulator can use.
// Seeds: tests/fuzz/corpus/cluster.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "hw/hw.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using l2s_fuzz::Require;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  l2s::StatusOr<l2s::ClusterSpec> c = l2s::ParseClusterJson(text, "fuzz.json");
  if (!c.ok()) {
    l2s_fuzz::CheckError(c.status());
    return 0;
  }
  Require(l2s::ValidateCluster(*c, "fuzz.json").ok(), "accepted cluster validates");
  Require(c->num_gpus >= 1 && c->gpus_per_domain >= 1, "positive counts");
  Require(c->num_domains() >= 1 && c->num_domains() <= c->num_gpus, "domains in [1, gpus]");
  for (double v : {c->gpu.bf16_flops, c->gpu.hbm_bytes, c->gpu.hbm_bw, c->gpu.nvlink_bw,
                   c->scaleout_bw})
    Require(std::isfinite(v) && v > 0, "positive finite figures");
  // Resizing to any count the CLI accepts is an error or a valid cluster, never UB.
  for (int n : {1, 7, 8, 1024, 1 << 24}) {
    l2s::StatusOr<l2s::ClusterSpec> r = l2s::ResizeCluster(*c, n);
    if (!r.ok()) l2s_fuzz::CheckError(r.status());
  }
  return 0;
}
