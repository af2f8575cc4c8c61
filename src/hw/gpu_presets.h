// Internal to the hw layer: GPU presets together with the node network each GPU type ships with
// (used by MakeCluster and the cluster JSON defaults).
#pragma once

#include <string_view>
#include <vector>

#include "hw/hw.h"

namespace l2s::hw_internal {

struct GpuPresetEntry {
  GpuSpec gpu;
  double scaleout_bw = 0;       // bytes/s per GPU, one direction
  double nvlink_latency = 0;    // s
  double scaleout_latency = 0;  // s
  int gpus_per_domain = 8;      // GPUs of one NVLink domain this GPU type ships in (HGX: 8)
  int gpus_per_host = 0;        // GPUs of one host (server, compute tray); 0: the domain's
};

const std::vector<GpuPresetEntry>& GpuPresetTable();
// nullptr if `name` is not a GPU preset.
const GpuPresetEntry* FindGpuPreset(std::string_view name);

}  // namespace l2s::hw_internal
