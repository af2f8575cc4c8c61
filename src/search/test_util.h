// Small problems for the search tests (header-only, not part of the library): hand-built shrunken
// models whose spaces are small enough to enumerate, an H100 cluster whose memory can be
// squeezed, and the beyond-paper serve problem the tests and bench/search_bench.cc share.
#pragma once

#include <string>
#include <utility>

#include "hw/hw.h"
#include "model/model.h"
#include "model/presets.h"
#include "sim/simulator.h"
#include "strategy/space.h"
#include "strategy/strategy.h"
#include "strategy/test_models.h"

namespace l2s::testing {

inline Problem MakeProblem(ModelSpec m, int gpus, Mode mode) {
  Problem p;
  p.model = std::move(m);
  p.cluster = H100s(gpus);
  p.workload.mode = mode;
  p.workload.weight = p.model.weight_dtype;
  p.workload.context = 4096;
  p.workload.isl = 512;
  p.workload.osl = 128;
  p.workload.max_batch = 8;
  return p;
}

// The beyond-paper serve problem of docs/dev/RESULTS.md: preset `model` served 2,048 in / 512 out
// with TTFT <= 2 s and TPOT <= 50 ms on `gpus` GPUs of type `gpu` (weights in the model's dtype).
inline Problem RealServe(const std::string& model, const std::string& gpu, int gpus) {
  Problem p;
  p.model = *ModelPreset(model);
  p.cluster = *MakeCluster(gpu, gpus);
  p.workload.mode = Mode::kServe;
  p.workload.isl = 2048;
  p.workload.osl = 512;
  p.workload.ttft_ms = 2000;
  p.workload.tpot_ms = 50;
  p.workload.weight = p.model.weight_dtype;
  return p;
}

// Dense GQA (Llama-like, shrunk): 8 heads, 2 KV heads.
inline ModelSpec TinyDense(int layers) {
  ModelSpec m;
  m.name = "tiny-dense";
  m.architecture = "llama";
  m.num_layers = layers;
  m.hidden_size = 2048;
  m.vocab_size = 32000;
  m.num_heads = 8;
  m.num_kv_heads = 2;
  m.head_dim = 256;
  m.gated_ffn = true;
  m.dense_ffn_size = 5632;
  m.layers.assign(layers, LayerSpec{});
  return m;
}

// MoE with GQA attention, every layer MoE, 8 experts top-2; `window` > 0 makes every other
// layer sliding-window (two layer kinds).
inline ModelSpec TinyMoe(int layers, int window = 0) {
  ModelSpec m = TinyDense(layers);
  m.name = "tiny-moe";
  m.architecture = "mixtral";
  m.num_experts = 8;
  m.experts_per_token = 2;
  m.expert_ffn_size = 1408;
  m.layers.assign(layers, LayerSpec{FfnKind::kMoe, 0});
  for (int i = 1; i < layers; i += 2) m.layers[i].window = window;
  return m;
}

// DeepSeek-like (shrunk): MLA, 8 heads, 8 routed experts top-2 plus one shared expert; the first
// `dense_layers` layers dense.
inline ModelSpec TinyMla(int layers, int dense_layers) {
  ModelSpec m;
  m.name = "tiny-mla";
  m.architecture = "deepseek_v3";
  m.num_layers = layers;
  m.hidden_size = 2048;
  m.vocab_size = 32000;
  m.attention = AttentionKind::kMla;
  m.num_heads = 8;
  m.num_kv_heads = 8;
  m.head_dim = 192;
  m.q_lora_rank = 512;
  m.kv_lora_rank = 256;
  m.qk_nope_head_dim = 128;
  m.qk_rope_head_dim = 64;
  m.v_head_dim = 128;
  m.gated_ffn = true;
  m.dense_ffn_size = 5632;
  m.num_experts = 8;
  m.experts_per_token = 2;
  m.expert_ffn_size = 1024;
  m.num_shared_experts = 1;
  m.shared_ffn_size = 1024;
  m.layers.assign(layers, LayerSpec{FfnKind::kMoe, 0});
  for (int i = 0; i < dense_layers && i < layers; ++i) m.layers[i].ffn = FfnKind::kDense;
  return m;
}

// Squeezes HBM so that memory binds for part of the space: capacity = reserve + `frac` of what
// a single-GPU-style reference strategy (pp = tp = 1, Megatron dims, batch 1) needs beyond the
// reserve on this cluster. frac < 1 rejects that reference; larger GPU groups still fit.
inline void SqueezeMemory(Problem* p, double frac) {
  Simulator sim(*p);
  Strategy ref;
  ref.pp = 1;
  ref.tp = 1;
  ref.dp = p->cluster.num_gpus;
  ref.ep = 1;
  ref.dims = MegatronDims();
  ClearAbsentOps(p->model, &ref);
  const Evaluation e = sim.EvaluateAtBatch(ref, 1);
  p->cluster.gpu.hbm_bytes = e.reserve_bytes + frac * (e.mem_bytes - e.reserve_bytes);
}

// Sets a TPOT or TTFT SLO at `frac` of what a middle-of-the-road strategy achieves.
inline void BindSlo(Problem* p, bool ttft, double frac) {
  Simulator sim(*p);
  Strategy ref;
  ref.pp = 1;
  ref.tp = 1;
  ref.dp = p->cluster.num_gpus;
  ref.ep = 1;
  ref.dims = MegatronDims();
  ClearAbsentOps(p->model, &ref);
  const Evaluation e = sim.EvaluateAtBatch(ref, 2);
  if (ttft) p->workload.ttft_ms = e.ttft_s * 1e3 * frac;
  else p->workload.tpot_ms = e.tpot_s * 1e3 * frac;
}

}  // namespace l2s::testing
