// Hand-built ModelSpecs for tests of the strategy and simulator layers (kept independent of the
// preset tables so that a preset typo cannot hide a layout bug). Figures from the HF configs.
#pragma once

#include "hw/hw.h"
#include "model/model.h"

namespace l2s::testing {

// H100 / H200 SXM with the figures of ../shared/reference/HARDWARE.md (dense FLOP/s, HBM bytes
// and bytes/s, NVLink one way).
inline GpuSpec H100Gpu() {
  GpuSpec g;
  g.name = "h100";
  g.bf16_flops = 989e12;
  g.fp8_flops = 1979e12;
  g.hbm_bytes = 80 * kGiB;
  g.hbm_bw = 3.35e12;
  g.nvlink_bw = 450e9;
  g.calibration = "h100_sxm";
  return g;
}
inline GpuSpec H200Gpu() {
  GpuSpec g = H100Gpu();
  g.name = "h200";
  g.hbm_bytes = 141e9;
  g.hbm_bw = 4.8e12;
  g.calibration = "h200_sxm";
  return g;
}

// H100 SXM nodes of 8 with a 50 GB/s NIC per GPU.
inline ClusterSpec H100s(int n) {
  ClusterSpec c;
  c.name = "h100-test";
  c.gpu = H100Gpu();
  c.num_gpus = n;
  c.gpus_per_domain = 8;
  c.scaleout_bw = 50e9;
  c.nvlink_latency = 3e-6;
  c.scaleout_latency = 5e-6;
  return c;
}

// Llama-3.1-70B: 80 layers, hidden 8192, 64 heads, 8 KV heads, head_dim 128, FFN 28672 (SwiGLU),
// vocab 128256, untied.
inline ModelSpec Llama70B() {
  ModelSpec m;
  m.name = "llama-70b-test";
  m.architecture = "llama";
  m.num_layers = 80;
  m.hidden_size = 8192;
  m.vocab_size = 128256;
  m.num_heads = 64;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.gated_ffn = true;
  m.dense_ffn_size = 28672;
  m.layers.assign(80, LayerSpec{});
  return m;
}

// Llama-3.1-8B: 32 layers, hidden 4096, 32 heads, 8 KV heads, FFN 14336, vocab 128256.
inline ModelSpec Llama8B() {
  ModelSpec m = Llama70B();
  m.name = "llama-8b-test";
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.num_heads = 32;
  m.dense_ffn_size = 14336;
  m.layers.assign(32, LayerSpec{});
  return m;
}

// DeepSeek-V3: 61 layers (3 dense + 58 MoE), hidden 7168, MLA (q_lora 1536, kv_lora 512,
// nope 128, rope 64, v 128), 128 heads, dense FFN 18432, 256 experts top-8 of 2048, one shared
// expert of 2048, vocab 129280, FP8 weights.
inline ModelSpec DeepSeekV3() {
  ModelSpec m;
  m.name = "deepseek-v3-test";
  m.architecture = "deepseek_v3";
  m.num_layers = 61;
  m.hidden_size = 7168;
  m.vocab_size = 129280;
  m.attention = AttentionKind::kMla;
  m.num_heads = 128;
  m.num_kv_heads = 128;
  m.head_dim = 192;
  m.q_lora_rank = 1536;
  m.kv_lora_rank = 512;
  m.qk_nope_head_dim = 128;
  m.qk_rope_head_dim = 64;
  m.v_head_dim = 128;
  m.gated_ffn = true;
  m.dense_ffn_size = 18432;
  m.num_experts = 256;
  m.experts_per_token = 8;
  m.expert_ffn_size = 2048;
  m.num_shared_experts = 1;
  m.shared_ffn_size = 2048;
  m.weight_dtype = DType::kFP8;
  m.layers.assign(61, LayerSpec{FfnKind::kMoe, 0});
  for (int i = 0; i < 3; ++i) m.layers[i].ffn = FfnKind::kDense;
  return m;
}

// The paper's synthetic GPT-MoE: hidden 12288, 96 heads (MHA, head_dim 128), 16 experts top-2 of
// FFN 49152 (GELU, two matrices), vocab 51200, every layer MoE.
inline ModelSpec GptMoe(int layers) {
  ModelSpec m;
  m.name = "gpt-moe-test";
  m.architecture = "gpt_moe";
  m.synthetic = true;
  m.num_layers = layers;
  m.hidden_size = 12288;
  m.vocab_size = 51200;
  m.num_heads = 96;
  m.num_kv_heads = 96;
  m.head_dim = 128;
  m.gated_ffn = false;
  m.num_experts = 16;
  m.experts_per_token = 2;
  m.expert_ffn_size = 49152;
  m.layers.assign(layers, LayerSpec{FfnKind::kMoe, 0});
  return m;
}

// DeepSeek-V3.2 (HF config): DeepSeekV3 with DeepSeek Sparse Attention on every layer (indexer of
// 64 heads x 128, top-2048).
inline ModelSpec DeepSeekV32() {
  ModelSpec m = DeepSeekV3();
  m.name = "deepseek-v3.2-test";
  m.architecture = "deepseek_v32";
  m.index_topk = 2048;
  m.index_heads = 64;
  m.index_head_dim = 128;
  for (LayerSpec& l : m.layers) l.mixer = Mixer::kSparse;
  return m;
}

// Qwen3-Next-80B-A3B (HF config): 48 layers, every 4th gated full attention (16 heads of 256, 2
// KV heads, q/k norm), the others gated DeltaNet (16 key heads and 32 value heads of 128, conv
// 4); hidden 2048, every layer MoE: 512 experts top-10 of 512 plus one shared expert of 512.
inline ModelSpec Qwen3Next() {
  ModelSpec m;
  m.name = "qwen3-next-test";
  m.architecture = "qwen3_next";
  m.num_layers = 48;
  m.hidden_size = 2048;
  m.vocab_size = 151936;
  m.num_heads = 16;
  m.num_kv_heads = 2;
  m.head_dim = 256;
  m.qk_norm = true;
  m.gated_attention = true;
  m.linear_key_heads = 16;
  m.linear_value_heads = 32;
  m.linear_key_dim = 128;
  m.linear_value_dim = 128;
  m.linear_conv_kernel = 4;
  m.num_experts = 512;
  m.experts_per_token = 10;
  m.expert_ffn_size = 512;
  m.num_shared_experts = 1;
  m.shared_ffn_size = 512;
  m.misc_params_per_moe_layer = 2048;  // shared_expert_gate
  m.layers.assign(48, LayerSpec{FfnKind::kMoe, 0});
  for (int i = 0; i < 48; ++i) m.layers[i].mixer = (i + 1) % 4 == 0 ? Mixer::kAttention : Mixer::kLinear;
  return m;
}

// A Nemotron-H-style hybrid (shrunk from Nemotron-H-56B's HF config, hidden 8192): blocks of one
// mixer each in the pattern "M-M*-": Mamba2 (128 heads of 64, state 128, 8 groups, conv 4,
// chunk 128), relu2 MLP 32768, GQA attention (64 heads of 128, 8 KV heads).
inline ModelSpec NemotronH() {
  ModelSpec m;
  m.name = "nemotron-h-test";
  m.architecture = "nemotron_h";
  m.num_layers = 6;
  m.hidden_size = 8192;
  m.vocab_size = 131072;
  m.num_heads = 64;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.gated_ffn = false;
  m.dense_ffn_size = 32768;
  m.mamba_version = 2;
  m.mamba_heads = 128;
  m.mamba_head_dim = 64;
  m.mamba_state = 128;
  m.mamba_groups = 8;
  m.mamba_conv_kernel = 4;
  m.mamba_chunk = 128;
  m.mamba_conv_bias = true;
  const char* pattern = "M-M*-M";
  m.layers.assign(6, LayerSpec{});
  for (int i = 0; i < 6; ++i) {
    LayerSpec& l = m.layers[i];
    l.mixer = pattern[i] == 'M' ? Mixer::kMamba : pattern[i] == '*' ? Mixer::kAttention : Mixer::kNone;
    l.ffn = pattern[i] == '-' ? FfnKind::kDense : FfnKind::kNone;
  }
  return m;
}

}  // namespace l2s::testing
