// The engine limits trtllm-bench sets itself when a benchmark command gives none.
//
// `trtllm-bench throughput` without --max_batch_size / --max_num_tokens estimates both from the
// checkpoint, the GPUs and the dataset's mean lengths (TensorRT-LLM, tensorrt_llm/bench/build/
// tuning.py, calc_engine_setting + finetune_setting; called from bench/benchmark/utils/general.py
// for the PyTorch backend and from `trtllm-bench build --dataset` for engines). The measured rows
// of TensorRT-LLM's performance overview (../shared/reference, source "trtllm-bench") state no
// limits, so they ran with this estimate. It is reproduced here step by step:
//
//   bytes per KV token  = 2 x layers x max(tp, kv_heads) x head_size x kv bytes   (GiB: / 2^30)
//       head_size: the config's head_dim, else hidden / heads. MLA configs (DeepSeek) carry no
//       head_dim, so the estimate counts 128 heads x 56 for a 576-wide latent (25x the real KV).
//   engine GiB          = stored elements x bytes per element / 2^30
//       stored elements: what the safetensors headers count. Packed FP4 (NVFP4) weights are
//       two values per U8 element plus one FP8 scale per 16 values: 1/2 + 1/16 element per
//       weight; everything else one element per weight (the MTP module included).
//       bytes per element by quantisation: none 2, FP8 1, NVFP4 0.5; other quantisations (the
//       native MXFP4 of gpt-oss) are not tuned: TensorRT-LLM's BuildConfig defaults (2048, 8192).
//   KV GiB              = (GPU GiB x tp x pp - engine GiB) x kv_fraction
//   requests            = KV GiB / (bytes per KV token x (isl + osl))
//   raw batch           = min(requests, 4096) / pp;   raw tokens = min(raw batch x (1 + isl/osl), 32768)
//   max batch           = raw < 256: max(64, 32 ceil(raw/32)); < 1024: 128 ceil(raw/128);
//                         else 256 ceil(raw/256)
//   max num tokens      = raw < 4096: max(2048, 256 ceil(raw/256)); < 8192: 512 ceil(raw/512);
//                         else 1024 ceil(raw/1024); without chunked prefill at least isl + max batch.
//
// GPU GiB: NVML's total memory; the GPU table's figure in GiB (H200 141, NVML 140.4).
// kv_fraction: --kv_cache_free_gpu_mem_fraction; the overview uses 0.95 "in many cases" (0.90
// is the flag's default). With attention data parallelism `tp` is the whole attention-DP group
// (DEP4 runs --tp 4 --ep 4), and each rank's scheduler applies the limits to its own requests.
#pragma once

#include <cstdint>

#include "common/dtype.h"
#include "common/status.h"
#include "hw/hw.h"
#include "model/model.h"

namespace l2s {

struct TrtllmBenchInput {
  DType weight = DType::kBF16;  // the checkpoint's quantisation (fp4 of a model whose own format
                                // is not fp4 = NVIDIA's NVFP4 checkpoint)
  DType kv = DType::kBF16;      // KV-cache dtype the run uses
  int tp = 1;                   // --tp (tp x attention dp)
  int pp = 1;                   // --pp
  int64_t isl = 0, osl = 0;     // the dataset's mean lengths
  double kv_fraction = 0.95;
  bool chunked_prefill = false;  // trtllm-bench's default: off
};

struct TrtllmBenchLimits {
  int max_batch = 0;       // per scheduler (per attention-dp rank)
  int max_num_tokens = 0;
  bool tuned = false;      // false: the quantisation is not tuned, BuildConfig's defaults
  double engine_gib = 0;   // the estimate's inputs, for reports and tests
  double kv_requests = 0;
};

// Fails (one line) when the estimate leaves no room for one request, as trtllm-bench does.
StatusOr<TrtllmBenchLimits> TrtllmBenchSettings(const ModelSpec& m, const GpuSpec& gpu,
                                                const TrtllmBenchInput& in);

// The number of requests of each dataset of TensorRT-LLM's performance overview: its
// "Preparing a Dataset" table ($num_requests per input/output length, docs/source/performance/
// perf-overview.md; the same figures in every version from v0.15 to v1.0: 30,000 for 128/128,
// 3,000 for 128/2048, 2048/128, 1000/1000 and 500/2000, 1,500 for 128/4096, 1000/2000, 2048/2048
// and 5000/500, 1,000 for 20000/2000). Each `trtllm-bench throughput` run queues all of them at
// once. 0 for a length pair the table does not list.
int64_t PerfOverviewRequests(int64_t isl, int64_t osl);

}  // namespace l2s
