// Readers of the families whose layers differ in kind: linear attention (Qwen3-Next / 3.5), Mamba
// (Jamba, Nemotron-H, Granite 4), heterogeneous blocks (Llama-Nemotron, LongCat-Flash) and
// DeepSeek-V4's compressed attention.
// Part of the HuggingFace config reader (hf_config.h); declarations in hf_readers.h.

#include <fmt/core.h>

#include <algorithm>
#include <string>
#include "model/hf_readers.h"

namespace l2s::hf {

namespace {

// The Mamba fields of `m` (values already range-checked by the reader).
void SetMamba(int version, int64_t heads, int64_t head_dim, int64_t state, int64_t groups,
              int64_t conv, int64_t dt_rank, int64_t chunk, ModelSpec* m) {
  m->mamba_version = version;
  m->mamba_heads = static_cast<int>(heads);
  m->mamba_head_dim = static_cast<int>(head_dim);
  m->mamba_state = static_cast<int>(state);
  m->mamba_groups = static_cast<int>(groups);
  m->mamba_conv_kernel = static_cast<int>(conv);
  m->mamba_dt_rank = static_cast<int>(dt_rank);
  m->mamba_chunk = static_cast<int>(chunk);
}

// The Mamba2 fields after the head count and head dim, under each config class's own key names
// (NemotronHConfig: ssm_state_size, n_groups, conv_kernel, chunk_size, use_conv_bias;
// GraniteMoeHybridConfig: mamba_d_state, ... with its mamba_ prefix) and defaults.
struct Mamba2Keys {
  const char* heads;  // named in the groups error
  const char* state;
  int64_t state_default;  // < 0: required
  const char* groups;
  const char* conv;
  const char* chunk;
  int64_t chunk_default;  // 0: none stated
  const char* conv_bias;
};

Status ReadMamba2Tail(const ObjectReader& r, const Mamba2Keys& k, int64_t heads, int64_t hd,
                      ModelSpec* m) {
  int64_t state = 0;
  if (k.state_default < 0) {
    L2S_ASSIGN_OR_RETURN(state, r.Int(k.state, 1, L::kMaxState));
  } else {
    L2S_ASSIGN_OR_RETURN(state, r.IntOr(k.state, k.state_default, 1, L::kMaxState));
  }
  L2S_ASSIGN_OR_RETURN(int64_t groups, r.IntOr(k.groups, 1, 1, heads));
  L2S_ASSIGN_OR_RETURN(int64_t conv, r.IntOr(k.conv, 4, 1, 64));
  L2S_ASSIGN_OR_RETURN(int64_t chunk, r.IntOr(k.chunk, k.chunk_default, 1, 1 << 16));
  if (heads % groups != 0)
    return r.Error(k.groups, fmt::format("a divisor of {} ({})", k.heads, heads),
                   r.Find(k.groups));
  SetMamba(2, heads, hd, state, groups, conv, 0, chunk, m);
  L2S_ASSIGN_OR_RETURN(m->mamba_conv_bias, r.BoolOr(k.conv_bias, true));
  L2S_ASSIGN_OR_RETURN(m->mamba_proj_bias, r.BoolOr("mamba_proj_bias", false));
  return Status::Ok();
}

}  // namespace

// Qwen3-Next (Qwen3NextConfig): layer_types ("linear_attention" / "full_attention") or every
// full_attention_interval-th layer full; full layers are gated GQA with q/k norm; linear layers
// are gated DeltaNet; FFNs as qwen3_moe plus one gated shared expert (shared_expert_gate [1, h]).
// Qwen3.5 / 3.6 (Qwen3_5TextConfig, Qwen3_5MoeTextConfig, `v35`): the same layers, every layer
// MoE (num_experts > 0, as qwen3_next) or, with num_experts absent or 0, every layer dense
// (intermediate_size); mtp_num_hidden_layers MTP layers (one full-attention decoder layer each,
// sharing the main model's embedding and head).
Status ReadQwen3Next(const ObjectReader& r, bool v35, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaAndBias(r, m));
  m->qk_norm = true;
  m->gated_attention = true;
  if (r.Has("layer_types")) {
    std::vector<int> t;
    L2S_RETURN_IF_ERROR(ReadLayerStrings(r, "layer_types", m->num_layers,
                                         {"full_attention", "linear_attention"}, &t));
    for (int i = 0; i < m->num_layers; ++i)
      m->layers[i].mixer = t[i] == 1 ? Mixer::kLinear : Mixer::kAttention;
  } else {
    L2S_ASSIGN_OR_RETURN(int64_t every,
                         r.Int("full_attention_interval", 1, L::kMaxLayers));
    for (int i = 0; i < m->num_layers; ++i)
      m->layers[i].mixer = (i + 1) % every == 0 ? Mixer::kAttention : Mixer::kLinear;
  }
  if (m->num_mixer_layers(Mixer::kLinear) > 0) {
    L2S_ASSIGN_OR_RETURN(int64_t kh, r.Int("linear_num_key_heads", 1, L::kMaxHeads));
    L2S_ASSIGN_OR_RETURN(int64_t vh, r.Int("linear_num_value_heads", 1, L::kMaxHeads));
    L2S_ASSIGN_OR_RETURN(int64_t kd, r.Int("linear_key_head_dim", 1, L::kMaxState));
    L2S_ASSIGN_OR_RETURN(int64_t vd, r.Int("linear_value_head_dim", 1, L::kMaxState));
    L2S_ASSIGN_OR_RETURN(int64_t conv, r.IntOr("linear_conv_kernel_dim", 4, 1, 64));
    if (vh % kh != 0)
      return r.Error("linear_num_key_heads",
                     fmt::format("a divisor of linear_num_value_heads ({})", vh),
                     r.Find("linear_num_key_heads"));
    m->linear_key_heads = static_cast<int>(kh);
    m->linear_value_heads = static_cast<int>(vh);
    m->linear_key_dim = static_cast<int>(kd);
    m->linear_value_dim = static_cast<int>(vd);
    m->linear_conv_kernel = static_cast<int>(conv);
  }
  if (v35) {
    L2S_ASSIGN_OR_RETURN(int64_t mtp, r.IntOr("mtp_num_hidden_layers", 0, 0, L::kMaxMtpLayers));
    m->mtp_layers = static_cast<int>(mtp);
    m->mtp_shares_embeddings = true;
    L2S_ASSIGN_OR_RETURN(int64_t experts, r.IntOr("num_experts", 0, 0, L::kMaxExperts));
    if (experts == 0) {
      L2S_ASSIGN_OR_RETURN(m->dense_ffn_size, r.Int("intermediate_size", 1, L::kMaxFfn));
      return Status::Ok();
    }
  }
  return ReadQwenSparseLayout(r, /*gated_shared=*/true, m);
}

// Jamba (JambaConfig): layer i is attention iff i % attn_layer_period == attn_layer_offset, else
// Mamba (v1); its FFN is MoE iff i % expert_layer_period == expert_layer_offset (and
// num_experts > 1). Mamba: inner = mamba_expand * hidden, mamba_d_state, mamba_d_conv,
// mamba_dt_rank ("auto" = ceil(hidden / 16)).
Status ReadJamba(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
  L2S_ASSIGN_OR_RETURN(int64_t ap, r.IntOr("attn_layer_period", 8, 1, L::kMaxLayers));
  L2S_ASSIGN_OR_RETURN(int64_t ao, r.IntOr("attn_layer_offset", 4, 0, ap - 1));
  L2S_ASSIGN_OR_RETURN(int64_t ep, r.IntOr("expert_layer_period", 2, 1, L::kMaxLayers));
  L2S_ASSIGN_OR_RETURN(int64_t eo, r.IntOr("expert_layer_offset", 1, 0, ep - 1));
  L2S_ASSIGN_OR_RETURN(int64_t experts, r.IntOr("num_experts", 16, 1, L::kMaxExperts));
  L2S_ASSIGN_OR_RETURN(int64_t w, ReadWindowOr(r, "sliding_window"));
  for (int i = 0; i < m->num_layers; ++i) {
    LayerSpec& l = m->layers[i];
    l.mixer = i % ap == ao ? Mixer::kAttention : Mixer::kMamba;
    if (l.mixer == Mixer::kAttention) l.window = static_cast<int>(w);
    l.ffn = experts > 1 && i % ep == eo ? FfnKind::kMoe : FfnKind::kDense;
  }
  if (m->num_moe_layers() > 0)
    L2S_RETURN_IF_ERROR(
        ReadExperts(r, "num_experts", "num_experts_per_tok", "intermediate_size", m));
  L2S_RETURN_IF_ERROR(ReadDenseFfn(r, "intermediate_size", m));
  if (m->num_mixer_layers(Mixer::kMamba) == 0) return Status::Ok();
  L2S_ASSIGN_OR_RETURN(int64_t expand, r.IntOr("mamba_expand", 2, 1, 16));
  L2S_ASSIGN_OR_RETURN(int64_t state, r.IntOr("mamba_d_state", 16, 1, L::kMaxState));
  L2S_ASSIGN_OR_RETURN(int64_t conv, r.IntOr("mamba_d_conv", 4, 1, 64));
  int64_t dt_rank = (m->hidden_size + 15) / 16;
  const json* dtr = r.Find("mamba_dt_rank");
  if (dtr != nullptr && !(dtr->is_string() && dtr->get_ref<const std::string&>() == "auto")) {
    L2S_ASSIGN_OR_RETURN(dt_rank, r.Int("mamba_dt_rank", 1, L::kMaxHidden));
  }
  SetMamba(1, expand * m->hidden_size, 1, state, 1, conv, dt_rank, 0, m);
  L2S_ASSIGN_OR_RETURN(m->mamba_conv_bias, r.BoolOr("mamba_conv_bias", true));
  L2S_ASSIGN_OR_RETURN(m->mamba_proj_bias, r.BoolOr("mamba_proj_bias", false));
  return Status::Ok();
}

// Nemotron-H (NemotronHConfig): one mixer per block, one norm per block. hybrid_override_pattern
// ("M" Mamba2, "*" attention, "-" MLP, "E" MoE) or layers_block_type ("mamba" / "attention" /
// "mlp" / "moe"), one entry per layer. MLP and experts are non-gated (relu2). MoE: routed experts
// of moe_intermediate_size (in moe_latent_size when set: latent MoE), shared experts of
// moe_shared_expert_intermediate_size, score-correction bias.
Status ReadNemotronH(const ObjectReader& r, ModelSpec* m) {
  m->gated_ffn = false;
  m->norms_per_sublayer = 1;
  std::vector<int> kinds;  // 0 M, 1 *, 2 -, 3 E
  if (const json* p = r.Find("hybrid_override_pattern")) {
    const std::string what =
        fmt::format("a string of {} characters from M * - E (one per layer)", m->num_layers);
    if (!p->is_string()) return r.Error("hybrid_override_pattern", what, p);
    const std::string& s = p->get_ref<const std::string&>();
    if (s.size() != static_cast<size_t>(m->num_layers))
      return r.ErrorMsg("hybrid_override_pattern",
                        fmt::format("expected {} characters (one per layer, num_hidden_layers), "
                                    "got {}", m->num_layers, s.size()));
    for (char c : s) {
      const size_t k = std::string_view("M*-E").find(c);
      if (k == std::string_view::npos)
        return r.ErrorMsg("hybrid_override_pattern",
                          fmt::format("expected only M, *, - and E, got '{}'", c));
      kinds.push_back(static_cast<int>(k));
    }
  } else if (r.Has("layers_block_type")) {
    L2S_RETURN_IF_ERROR(ReadLayerStrings(r, "layers_block_type", m->num_layers,
                                         {"mamba", "attention", "mlp", "moe"}, &kinds));
  } else {
    return r.Error("hybrid_override_pattern",
                   "a string of M * - E (or layers_block_type), one per layer", nullptr);
  }
  for (int i = 0; i < m->num_layers; ++i) {
    LayerSpec& l = m->layers[i];
    l.mixer = kinds[i] == 0 ? Mixer::kMamba : kinds[i] == 1 ? Mixer::kAttention : Mixer::kNone;
    l.ffn = kinds[i] == 2 ? FfnKind::kDense : kinds[i] == 3 ? FfnKind::kMoe : FfnKind::kNone;
  }
  if (m->num_mixer_layers(Mixer::kAttention) > 0) {
    if (r.Has("attention_head_dim") && !r.Has("head_dim")) {
      L2S_ASSIGN_OR_RETURN(int64_t hd, r.Int("attention_head_dim", 1, L::kMaxHeadDim));
      m->head_dim = static_cast<int>(hd);
      if (m->num_heads % m->num_kv_heads != 0)
        return r.Error("num_key_value_heads",
                       fmt::format("a divisor of num_attention_heads ({})", m->num_heads),
                       r.Find("num_key_value_heads"));
    } else {
      L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
    }
    L2S_ASSIGN_OR_RETURN(m->attention_bias, r.BoolOr("attention_bias", false));
    L2S_ASSIGN_OR_RETURN(int64_t w, ReadWindowOr(r, "sliding_window"));
    for (LayerSpec& l : m->layers)
      if (l.mixer == Mixer::kAttention) l.window = static_cast<int>(w);
  } else {
    m->head_dim = static_cast<int>(std::max<int64_t>(1, m->hidden_size / m->num_heads));
  }
  if (m->num_dense_layers() > 0) {
    L2S_ASSIGN_OR_RETURN(m->dense_ffn_size, r.Int("intermediate_size", 1, L::kMaxFfn));
    L2S_ASSIGN_OR_RETURN(m->dense_ffn_bias, r.BoolOr("mlp_bias", false));
  }
  if (m->num_moe_layers() > 0) {
    L2S_RETURN_IF_ERROR(
        ReadExperts(r, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", m));
    L2S_ASSIGN_OR_RETURN(int64_t shared, r.IntOr("n_shared_experts", 0, 0, L::kMaxSharedExperts));
    if (shared > 0) {
      L2S_ASSIGN_OR_RETURN(m->shared_ffn_size,
                           r.Int("moe_shared_expert_intermediate_size", 1, L::kMaxFfn));
    }
    m->num_shared_experts = static_cast<int>(shared);
    L2S_ASSIGN_OR_RETURN(m->moe_latent_size, r.IntOr("moe_latent_size", 0, 1, L::kMaxHidden));
    m->router_bias = true;  // e_score_correction_bias
  }
  if (m->num_mixer_layers(Mixer::kMamba) > 0) {
    L2S_ASSIGN_OR_RETURN(int64_t hd, r.Int("mamba_head_dim", 1, L::kMaxHeadDim));
    // NemotronHConfig: mamba_num_heads, else expand x hidden / mamba_head_dim.
    L2S_ASSIGN_OR_RETURN(int64_t expand, r.IntOr("expand", 2, 1, 16));
    int64_t heads = expand * m->hidden_size / hd;
    if (r.Has("mamba_num_heads") || heads < 1) {
      L2S_ASSIGN_OR_RETURN(heads, r.Int("mamba_num_heads", 1, 4 * L::kMaxHidden));
    }
    static constexpr Mamba2Keys kKeys{"mamba_num_heads", "ssm_state_size", -1,  "n_groups",
                                      "conv_kernel",     "chunk_size",     0,   "use_conv_bias"};
    L2S_RETURN_IF_ERROR(ReadMamba2Tail(r, kKeys, heads, hd, m));
  }
  return Status::Ok();
}

// Llama-Nemotron (DeciLMConfig, model_type nemotron-nas): a llama whose every layer has its own
// block_configs entry: attention {no_op, replace_with_linear, n_heads_in_group, window_length},
// ffn {no_op, replace_with_linear, ffn_mult}. KV heads = heads / n_heads_in_group; FFN width =
// 2 * ffn_mult * hidden / 3 rounded up to a multiple of 256 (DeciLM's _ffn_mult_to_intermediate
// _size). Norms: one before each present sublayer. replace_with_linear: the sublayer is one
// hidden x hidden matrix.
Status ReadDeciLm(const ObjectReader& r, ModelSpec* m) {
  L2S_ASSIGN_OR_RETURN(m->attention_bias, r.BoolOr("attention_bias", false));
  L2S_ASSIGN_OR_RETURN(m->dense_ffn_bias, r.BoolOr("mlp_bias", false));
  const json* blocks = r.Find("block_configs");
  const std::string what = fmt::format("a list of {} block configs (one per layer)", m->num_layers);
  if (blocks == nullptr || !blocks->is_array()) return r.Error("block_configs", what, blocks);
  if (blocks->size() != static_cast<size_t>(m->num_layers))
    return r.ErrorMsg("block_configs", fmt::format("expected {} entries (one per layer, "
                                                   "num_hidden_layers), got {}",
                                                   m->num_layers, blocks->size()));
  L2S_RETURN_IF_ERROR(ReadHeadDim(r, m));
  int64_t max_ffn = 0;
  int first_kv = 0;
  for (int i = 0; i < m->num_layers; ++i) {
    const std::string at = fmt::format("block_configs[{}].", i);
    const json& b = (*blocks)[static_cast<size_t>(i)];
    if (!b.is_object()) return r.Error("block_configs", what, &b);
    const json* a = b.contains("attention") ? &b["attention"] : nullptr;
    const json* f = b.contains("ffn") ? &b["ffn"] : nullptr;
    if (a == nullptr || !a->is_object())
      return ObjectReader(b, r.source(), r.FieldName(at)).Error("attention", "an object", a);
    if (f == nullptr || !f->is_object())
      return ObjectReader(b, r.source(), r.FieldName(at)).Error("ffn", "an object", f);
    ObjectReader ar(*a, r.source(), r.FieldName(at + "attention."));
    ObjectReader fr(*f, r.source(), r.FieldName(at + "ffn."));
    LayerSpec& l = m->layers[i];
    L2S_ASSIGN_OR_RETURN(bool a_noop, ar.BoolOr("no_op", false));
    L2S_ASSIGN_OR_RETURN(bool a_lin, ar.BoolOr("replace_with_linear", false));
    L2S_ASSIGN_OR_RETURN(bool f_noop, fr.BoolOr("no_op", false));
    L2S_ASSIGN_OR_RETURN(bool f_lin, fr.BoolOr("replace_with_linear", false));
    if (a_noop || a_lin) {
      l.mixer = Mixer::kNone;
      l.attn_linear = a_lin && !a_noop;
    } else {
      L2S_ASSIGN_OR_RETURN(int64_t group, ar.Int("n_heads_in_group", 1, m->num_heads));
      if (m->num_heads % group != 0)
        return ar.Error("n_heads_in_group",
                        fmt::format("a divisor of num_attention_heads ({})", m->num_heads),
                        ar.Find("n_heads_in_group"));
      l.kv_heads = static_cast<int>(m->num_heads / group);
      if (first_kv == 0) first_kv = l.kv_heads;
      L2S_ASSIGN_OR_RETURN(int64_t w, ReadWindowOr(ar, "window_length"));
      l.window = static_cast<int>(w);
    }
    if (f_noop || f_lin) {
      l.ffn = FfnKind::kNone;
      l.ffn_linear = f_lin && !f_noop;
    } else {
      L2S_ASSIGN_OR_RETURN(double mult, fr.Positive("ffn_mult", 64.0));
      const int64_t raw = static_cast<int64_t>(2.0 * mult * static_cast<double>(m->hidden_size) / 3.0);
      const int64_t ffn = (raw + 255) / 256 * 256;
      if (ffn < 1 || ffn > L::kMaxFfn)
        return fr.Error("ffn_mult", fmt::format("a multiplier giving an FFN width in [1, {}]",
                                                L::kMaxFfn), fr.Find("ffn_mult"));
      l.ffn_size = ffn;
      max_ffn = std::max(max_ffn, ffn);
    }
  }
  // Model-wide values: the first attention layer's KV heads, the widest FFN (every layer carries
  // its own; these only describe the model).
  m->num_kv_heads = first_kv > 0 ? first_kv : m->num_heads;
  for (LayerSpec& l : m->layers)
    if (l.kv_heads == m->num_kv_heads) l.kv_heads = 0;
  m->dense_ffn_size = max_ffn;
  for (LayerSpec& l : m->layers)
    if (l.ffn_size == max_ffn) l.ffn_size = 0;
  return Status::Ok();
}

// LongCat-Flash (LongcatFlashConfig): num_layers blocks, each two MLA sublayers with a dense MLP
// (ffn_hidden_size) each, and a shortcut-connected MoE beside the first sublayer's MLP
// (n_routed_experts of expert_ffn_hidden_size, moe_topk, zero_expert_num identity experts).
// Modelled as 2 x num_layers layers alternating MLA + MoE-with-the-MLP-as-shared-expert and
// MLA + dense MLP; the router scores real and zero experts with a score-correction bias.
Status ReadLongcatFlash(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadMla(r, m));
  L2S_RETURN_IF_ERROR(
      ReadExperts(r, "n_routed_experts", "moe_topk", "expert_ffn_hidden_size", m));
  L2S_ASSIGN_OR_RETURN(int64_t zero, r.IntOr("zero_expert_num", 0, 0, L::kMaxExperts));
  L2S_ASSIGN_OR_RETURN(std::string zt, r.StringOr("zero_expert_type", "identity"));
  if (zero > 0 && zt != "identity")
    return r.Error("zero_expert_type", "\"identity\"", r.Find("zero_expert_type"));
  if (m->experts_per_token > m->num_experts + zero)
    return r.Error("moe_topk", "at most n_routed_experts + zero_expert_num", r.Find("moe_topk"));
  m->num_zero_experts = static_cast<int>(zero);
  L2S_ASSIGN_OR_RETURN(m->dense_ffn_size, r.Int("ffn_hidden_size", 1, L::kMaxFfn));
  m->num_shared_experts = 1;
  m->shared_ffn_size = m->dense_ffn_size;
  m->router_bias = true;
  for (int i = 0; i < m->num_layers; ++i)
    m->layers[i].ffn = i % 2 == 0 ? FfnKind::kMoe : FfnKind::kDense;
  m->mtp_layers = 0;
  return Status::Ok();
}

// Granite 4.0 hybrid (GraniteMoeHybridConfig): layer_types ("mamba" / "attention"; absent = every
// layer Mamba) choose each layer's mixer: Mamba2 (mamba_n_heads of mamba_d_head, "auto" = expand x
// hidden / heads; mamba_d_state, mamba_n_groups, mamba_d_conv, mamba_chunk_size, mamba_conv_bias,
// mamba_proj_bias) or GQA attention (attention_bias). Every layer then has a shared MLP of
// shared_intermediate_size and, when num_local_experts > 0, MoE beside it (num_local_experts of
// intermediate_size, top num_experts_per_tok); with no experts that MLP is the layer's dense FFN.
Status ReadGraniteMoeHybrid(const ObjectReader& r, ModelSpec* m) {
  std::vector<int> kinds(m->num_layers, 0);  // 0 mamba, 1 attention
  if (r.Has("layer_types")) {
    L2S_RETURN_IF_ERROR(
        ReadLayerStrings(r, "layer_types", m->num_layers, {"mamba", "attention"}, &kinds));
  }
  for (int i = 0; i < m->num_layers; ++i)
    m->layers[i].mixer = kinds[i] == 1 ? Mixer::kAttention : Mixer::kMamba;
  L2S_RETURN_IF_ERROR(ReadGqaAndBias(r, m));
  L2S_ASSIGN_OR_RETURN(int64_t shared, r.IntOr("shared_intermediate_size", 1024, 1, L::kMaxFfn));
  L2S_ASSIGN_OR_RETURN(int64_t experts, r.IntOr("num_local_experts", 8, 0, L::kMaxExperts));
  if (experts > 0) {
    L2S_RETURN_IF_ERROR(
        ReadExperts(r, "num_local_experts", "num_experts_per_tok", "intermediate_size", m));
    SetAllMoe(m);
    m->num_shared_experts = 1;
    m->shared_ffn_size = shared;
  } else {
    m->dense_ffn_size = shared;
  }
  if (m->num_mixer_layers(Mixer::kMamba) > 0) {
    L2S_ASSIGN_OR_RETURN(int64_t heads, r.IntOr("mamba_n_heads", 128, 1, 4 * L::kMaxHidden));
    L2S_ASSIGN_OR_RETURN(int64_t expand, r.IntOr("mamba_expand", 2, 1, 16));
    // As GraniteMoeHybridConfig checks: heads x head dim = mamba_expand x hidden_size.
    const int64_t inner = expand * m->hidden_size;
    int64_t hd = inner / heads;
    const json* d_head = r.Find("mamba_d_head");
    if (d_head != nullptr && !(d_head->is_string() && d_head->get<std::string>() == "auto")) {
      L2S_ASSIGN_OR_RETURN(hd, r.Int("mamba_d_head", 1, L::kMaxHeadDim));
    }
    if (hd * heads != inner || hd > L::kMaxHeadDim)
      return r.Error("mamba_n_heads",
                     fmt::format("heads that split mamba_expand x hidden_size ({}) into heads of "
                                 "mamba_d_head (1 to {})", inner, L::kMaxHeadDim),
                     r.Find("mamba_n_heads"));
    static constexpr Mamba2Keys kKeys{"mamba_n_heads", "mamba_d_state",    256, "mamba_n_groups",
                                      "mamba_d_conv",  "mamba_chunk_size", 256, "mamba_conv_bias"};
    L2S_RETURN_IF_ERROR(ReadMamba2Tail(r, kKeys, heads, hd, m));
  }
  return Status::Ok();
}

// DeepSeek-V4 (the released config.json and inference/model.py): attention with one shared KV
// vector of head_dim per token (num_key_value_heads must be 1), q through a q_lora_rank latent,
// output through o_groups groups of o_lora_rank (wo_a) and wo_b. compress_ratios gives each layer
// (entries past num_hidden_layers belong to the MTP layers and are not read): 0 = attention over
// the last sliding_window tokens only; r > 0 = also over the KV pooled every r tokens, where
// r == 4 adds an indexer (index_n_heads x index_head_dim) choosing index_topk pooled entries.
// Every layer is MoE (DeepSeek-V3 style: n_shared_experts of moe_intermediate_size, a
// score-correction bias), the first num_hash_layers routing by token id. hc_mult residual streams
// carry per-layer mixing weights: 2 x ((2 + hc) hc x hc hidden + (2 + hc) hc + 3) parameters.
Status ReadDeepseekV4(const ObjectReader& r, ModelSpec* m) {
  if (m->num_kv_heads != 1)
    return r.Error("num_key_value_heads", "1 (DeepSeek-V4 attention shares one KV head)",
                   r.Find("num_key_value_heads"));
  L2S_ASSIGN_OR_RETURN(int64_t hd, r.Int("head_dim", 2, L::kMaxHeadDim));
  L2S_ASSIGN_OR_RETURN(int64_t rope, r.Int("qk_rope_head_dim", 0, hd - 1));
  L2S_ASSIGN_OR_RETURN(int64_t q_lora, r.Int("q_lora_rank", 1, L::kMaxLoraRank));
  L2S_ASSIGN_OR_RETURN(int64_t o_lora, r.Int("o_lora_rank", 1, L::kMaxLoraRank));
  L2S_ASSIGN_OR_RETURN(int64_t groups, r.Int("o_groups", 1, m->num_heads));
  if (m->num_heads % groups != 0)
    return r.Error("o_groups", fmt::format("a divisor of num_attention_heads ({})", m->num_heads),
                   r.Find("o_groups"));
  L2S_ASSIGN_OR_RETURN(int64_t window, r.Int("sliding_window", 1, L::kMaxWindow));
  L2S_ASSIGN_OR_RETURN(int64_t hc, r.Int("hc_mult", 1, 64));
  m->attention = AttentionKind::kMla;
  m->num_kv_heads = m->num_heads;  // the MLA convention (model.h)
  m->head_dim = static_cast<int>(hd);
  m->qk_rope_head_dim = static_cast<int>(rope);
  m->qk_nope_head_dim = static_cast<int>(hd - rope);
  m->kv_lora_rank = static_cast<int>(hd - rope);
  m->v_head_dim = static_cast<int>(hd);
  m->q_lora_rank = static_cast<int>(q_lora);
  m->o_lora_rank = static_cast<int>(o_lora);
  m->o_groups = static_cast<int>(groups);
  m->hc_mult = static_cast<int>(hc);
  m->attention_sinks = true;  // attn_sink, one logit per head
  const int64_t mix = (2 + hc) * hc;
  m->misc_params_per_layer = 2 * (mix * hc * m->hidden_size + mix + 3);

  const json* ratios = r.Find("compress_ratios");
  const std::string what = fmt::format(
      "a list of at least {} (num_hidden_layers) integers in [0, 65536]", m->num_layers);
  if (ratios == nullptr || !ratios->is_array()) return r.Error("compress_ratios", what, ratios);
  if (ratios->size() < static_cast<size_t>(m->num_layers))
    return r.ErrorMsg("compress_ratios",
                      fmt::format("expected at least {} entries (one per layer, "
                                  "num_hidden_layers), got {}",
                                  m->num_layers, ratios->size()));
  bool any_indexer = false;
  for (int i = 0; i < m->num_layers; ++i) {
    const json& e = (*ratios)[static_cast<size_t>(i)];
    if (!e.is_number_integer() || e.get<int64_t>() < 0 || e.get<int64_t>() > 65536)
      return r.Error("compress_ratios", what, &e);
    LayerSpec& l = m->layers[i];
    l.ffn = FfnKind::kMoe;
    l.window = static_cast<int>(window);
    l.compress_ratio = static_cast<int>(e.get<int64_t>());
    l.mixer = l.compress_ratio == 4 ? Mixer::kSparse : Mixer::kAttention;
    any_indexer |= l.compress_ratio == 4;
  }
  if (any_indexer) {
    L2S_ASSIGN_OR_RETURN(int64_t topk, r.Int("index_topk", 1, L::kMaxWindow));
    L2S_ASSIGN_OR_RETURN(int64_t ih, r.Int("index_n_heads", 1, L::kMaxHeads));
    L2S_ASSIGN_OR_RETURN(int64_t ihd, r.Int("index_head_dim", 1, L::kMaxHeadDim));
    m->index_topk = static_cast<int>(topk);
    m->index_heads = static_cast<int>(ih);
    m->index_head_dim = static_cast<int>(ihd);
  }
  L2S_RETURN_IF_ERROR(
      ReadExperts(r, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", m));
  L2S_ASSIGN_OR_RETURN(int64_t shared, r.Int("n_shared_experts", 0, L::kMaxSharedExperts));
  m->num_shared_experts = static_cast<int>(shared);
  m->shared_ffn_size = shared > 0 ? m->expert_ffn_size : 0;
  m->router_bias = true;  // score-correction bias on the non-hash layers
  L2S_ASSIGN_OR_RETURN(int64_t hash, r.IntOr("num_hash_layers", 0, 0, m->num_layers));
  m->num_hash_layers = static_cast<int>(hash);
  L2S_ASSIGN_OR_RETURN(int64_t mtp, r.IntOr("num_nextn_predict_layers", 0, 0, L::kMaxMtpLayers));
  m->mtp_layers = static_cast<int>(mtp);
  m->mtp_shares_embeddings = true;
  return Status::Ok();
}

}  // namespace l2s::hf
