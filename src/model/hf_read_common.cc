// The helpers every HuggingFace family reader shares (hf_config.h); their contracts are in
// hf_readers.h.

#include <fmt/core.h>

#include <algorithm>
#include <string>
#include "model/hf_readers.h"

namespace l2s::hf {

Status ReadLayerIndexList(const ObjectReader& r, std::string_view key, int num_layers,
                          std::vector<bool>* flags) {
  flags->assign(num_layers, false);
  const json* v = r.Find(key);
  if (v == nullptr) return Status::Ok();
  const std::string what = fmt::format("a list of layer indices in [0, {}]", num_layers - 1);
  if (!v->is_array()) return r.Error(key, what, v);
  for (const json& e : *v) {
    if (!e.is_number_integer()) return r.Error(key, what, &e);
    int64_t i = e.get<int64_t>();
    if (i < 0 || i >= num_layers) return r.Error(key, what, &e);
    (*flags)[static_cast<size_t>(i)] = true;
  }
  return Status::Ok();
}

Status ReadLayerTypes(const ObjectReader& r, const json& types, int64_t window, ModelSpec* m) {
  const std::string what =
      fmt::format("a list of {} of \"full_attention\" / \"sliding_attention\"", m->num_layers);
  if (!types.is_array() || types.size() != static_cast<size_t>(m->num_layers))
    return r.Error("layer_types", what, &types);
  for (size_t i = 0; i < types.size(); ++i) {
    const json& t = types[i];
    if (!t.is_string()) return r.Error("layer_types", what, &t);
    const std::string& s = t.get_ref<const std::string&>();
    if (s == "sliding_attention") {
      if (window <= 0)
        return r.ErrorMsg("sliding_window",
                          "expected a positive integer when layer_types has sliding layers");
      m->layers[i].window = static_cast<int>(window);
    } else if (s == "full_attention" || s == "chunked_attention") {
      m->layers[i].window = 0;  // chunked attention is budgeted as full (see top of file)
    } else {
      return r.Error("layer_types", what, &t);
    }
  }
  return Status::Ok();
}

Status ReadCommon(const ObjectReader& r, ModelSpec* m,
                  std::string_view layers_key, int per_block, int64_t derived_layers) {
  int64_t layers = derived_layers;
  if (r.Has(layers_key) || derived_layers <= 0) {
    L2S_ASSIGN_OR_RETURN(layers, r.Int(layers_key, 1, L::kMaxLayers / per_block));
  }
  layers *= per_block;
  L2S_ASSIGN_OR_RETURN(m->hidden_size, r.Int("hidden_size", 1, L::kMaxHidden));
  L2S_ASSIGN_OR_RETURN(m->vocab_size, r.Int("vocab_size", 1, L::kMaxVocab));
  L2S_ASSIGN_OR_RETURN(int64_t heads, r.Int("num_attention_heads", 1, L::kMaxHeads));
  L2S_ASSIGN_OR_RETURN(int64_t kv, r.IntOr("num_key_value_heads", heads, 1, heads));
  L2S_ASSIGN_OR_RETURN(m->tied_embeddings, r.BoolOr("tie_word_embeddings", false));
  L2S_ASSIGN_OR_RETURN(m->max_context,
                       r.IntOr("max_position_embeddings", 0, 0, int64_t{1} << 40));
  m->num_layers = static_cast<int>(layers);
  m->num_heads = static_cast<int>(heads);
  m->num_kv_heads = static_cast<int>(kv);
  m->layers.assign(m->num_layers, LayerSpec{});
  return Status::Ok();
}

StatusOr<int64_t> ReadWindowOr(const ObjectReader& r, std::string_view key) {
  return r.IntOr(key, 0, 1, L::kMaxWindow);
}

Status ReadGqaHeads(const ObjectReader& r, ModelSpec* m) {
  m->attention = AttentionKind::kGqa;
  if (m->num_heads % m->num_kv_heads != 0)
    return r.Error("num_key_value_heads",
                   fmt::format("a divisor of num_attention_heads ({})", m->num_heads),
                   r.Find("num_key_value_heads"));
  return ReadHeadDim(r, m);
}

Status ReadHeadDim(const ObjectReader& r, ModelSpec* m) {
  if (r.Has("head_dim")) {
    L2S_ASSIGN_OR_RETURN(int64_t hd, r.Int("head_dim", 1, L::kMaxHeadDim));
    m->head_dim = static_cast<int>(hd);
  } else {
    if (m->hidden_size % m->num_heads != 0)
      return r.Error("num_attention_heads",
                     fmt::format("a divisor of hidden_size ({}) when head_dim is absent",
                                 m->hidden_size),
                     r.Find("num_attention_heads"));
    const int64_t hd = m->hidden_size / m->num_heads;
    if (hd > L::kMaxHeadDim)
      return r.Error("num_attention_heads",
                     fmt::format("at least hidden_size / {} when head_dim is absent",
                                 L::kMaxHeadDim),
                     r.Find("num_attention_heads"));
    m->head_dim = static_cast<int>(hd);
  }
  return Status::Ok();
}

Status ReadGqaAndBias(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
  L2S_ASSIGN_OR_RETURN(m->attention_bias, r.BoolOr("attention_bias", false));
  return Status::Ok();
}

Status ReadQwenWindows(const ObjectReader& r, ModelSpec* m) {
  L2S_ASSIGN_OR_RETURN(bool use_sw, r.BoolOr("use_sliding_window", false));
  int64_t window = 0;
  if (use_sw) {
    L2S_ASSIGN_OR_RETURN(window, r.Int("sliding_window", 1, L::kMaxWindow));
  }
  if (const json* types = r.Find("layer_types")) return ReadLayerTypes(r, *types, window, m);
  if (!use_sw) return Status::Ok();
  L2S_ASSIGN_OR_RETURN(int64_t max_window_layers,
                       r.IntOr("max_window_layers", 28, 0, L::kMaxLayers));
  for (int i = static_cast<int>(max_window_layers); i < m->num_layers; ++i)
    m->layers[i].window = static_cast<int>(window);
  return Status::Ok();
}

Status ReadExperts(const ObjectReader& r, std::string_view experts_key,
                   std::string_view topk_key, std::string_view ffn_key, ModelSpec* m) {
  L2S_ASSIGN_OR_RETURN(int64_t e, r.Int(experts_key, 1, L::kMaxExperts));
  L2S_ASSIGN_OR_RETURN(int64_t k, r.Int(topk_key, 1, e));
  L2S_ASSIGN_OR_RETURN(m->expert_ffn_size, r.Int(ffn_key, 1, L::kMaxFfn));
  m->num_experts = static_cast<int>(e);
  m->experts_per_token = static_cast<int>(k);
  return Status::Ok();
}

Status ReadDenseFfn(const ObjectReader& r, std::string_view key, ModelSpec* m) {
  if (m->num_dense_layers() == 0 && !r.Has(key)) return Status::Ok();
  L2S_ASSIGN_OR_RETURN(m->dense_ffn_size, r.Int(key, 1, L::kMaxFfn));
  return Status::Ok();
}

Status ReadDenseFfnAndMtp(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadDenseFfn(r, "intermediate_size", m));
  L2S_ASSIGN_OR_RETURN(int64_t mtp, r.IntOr("num_nextn_predict_layers", 0, 0, L::kMaxMtpLayers));
  m->mtp_layers = static_cast<int>(mtp);
  return Status::Ok();
}

void SetAllMoe(ModelSpec* m) {
  for (LayerSpec& l : m->layers) l.ffn = FfnKind::kMoe;
}

Status ReadLayerStrings(const ObjectReader& r, std::string_view key, int num_layers,
                        std::initializer_list<std::string_view> allowed, std::vector<int>* out) {
  std::string names;
  for (std::string_view a : allowed) names += fmt::format("{}\"{}\"", names.empty() ? "" : " / ", a);
  const std::string what = fmt::format("a list of {} of {}", num_layers, names);
  const json* v = r.Find(key);
  if (v == nullptr) return r.Error(key, what, nullptr);
  if (!v->is_array()) return r.Error(key, what, v);
  if (v->size() != static_cast<size_t>(num_layers))
    return r.ErrorMsg(key, fmt::format("expected {} entries (one per layer, num_hidden_layers), "
                                       "got {}", num_layers, v->size()));
  out->assign(num_layers, 0);
  for (int i = 0; i < num_layers; ++i) {
    const json& e = (*v)[static_cast<size_t>(i)];
    int found = -1;
    if (e.is_string()) {
      int j = 0;
      for (std::string_view a : allowed) {
        if (e.get_ref<const std::string&>() == a) found = j;
        ++j;
      }
    }
    if (found < 0) return r.Error(key, what, &e);
    (*out)[static_cast<size_t>(i)] = found;
  }
  return Status::Ok();
}

Status ReadSparseAttention(const ObjectReader& r, int64_t heads_default, ModelSpec* m) {
  L2S_ASSIGN_OR_RETURN(int64_t topk, r.IntOr("index_topk", 2048, 1, L::kMaxWindow));
  L2S_ASSIGN_OR_RETURN(int64_t ih, r.IntOr("index_n_heads", heads_default, 1, L::kMaxHeads));
  L2S_ASSIGN_OR_RETURN(int64_t ihd, r.IntOr("index_head_dim", 128, 1, L::kMaxHeadDim));
  m->index_topk = static_cast<int>(topk);
  m->index_heads = static_cast<int>(ih);
  m->index_head_dim = static_cast<int>(ihd);
  std::vector<int> types(m->num_layers, 0);
  if (r.Has("indexer_types"))
    L2S_RETURN_IF_ERROR(
        ReadLayerStrings(r, "indexer_types", m->num_layers, {"full", "shared"}, &types));
  for (int i = 0; i < m->num_layers; ++i) {
    m->layers[i].mixer = Mixer::kSparse;
    m->layers[i].shared_indexer = types[i] == 1;
  }
  if (m->num_layers > 0 && m->layers[0].shared_indexer)
    return r.ErrorMsg("indexer_types", "expected \"full\" for layer 0 (a shared indexer reuses "
                                       "an earlier layer's)");
  return Status::Ok();
}

Status ReadMlpLayerTypes(const ObjectReader& r, ModelSpec* m) {
  if (!r.Has("mlp_layer_types")) return Status::Ok();
  std::vector<int> t;
  L2S_RETURN_IF_ERROR(ReadLayerStrings(r, "mlp_layer_types", m->num_layers, {"dense", "sparse"}, &t));
  for (int i = 0; i < m->num_layers; ++i)
    m->layers[i].ffn = t[i] == 1 ? FfnKind::kMoe : FfnKind::kDense;
  return ReadDenseFfn(r, "intermediate_size", m);
}

Status ReadFirstDenseLayout(const ObjectReader& r, std::string_view shared_key, ModelSpec* m) {
  L2S_ASSIGN_OR_RETURN(int64_t shared, r.IntOr(shared_key, 0, 0, L::kMaxSharedExperts));
  m->num_shared_experts = static_cast<int>(shared);
  m->shared_ffn_size = shared > 0 ? m->expert_ffn_size : 0;
  L2S_ASSIGN_OR_RETURN(int64_t first_dense, r.IntOr("first_k_dense_replace", 0, 0, m->num_layers));
  for (int i = 0; i < m->num_layers; ++i)
    m->layers[i].ffn = i >= first_dense ? FfnKind::kMoe : FfnKind::kDense;
  return ReadDenseFfnAndMtp(r, m);
}

Status ReadMla(const ObjectReader& r, ModelSpec* m) {
  m->attention = AttentionKind::kMla;
  m->num_kv_heads = m->num_heads;  // MLA decompresses K/V per head; num_key_value_heads unused
  L2S_ASSIGN_OR_RETURN(int64_t q_lora, r.IntOr("q_lora_rank", 0, 0, L::kMaxLoraRank));
  L2S_ASSIGN_OR_RETURN(int64_t kv_lora, r.Int("kv_lora_rank", 1, L::kMaxLoraRank));
  L2S_ASSIGN_OR_RETURN(int64_t nope, r.Int("qk_nope_head_dim", 0, L::kMaxHeadDim));
  L2S_ASSIGN_OR_RETURN(int64_t rope, r.Int("qk_rope_head_dim", 0, L::kMaxHeadDim));
  L2S_ASSIGN_OR_RETURN(int64_t v_dim, r.Int("v_head_dim", 1, L::kMaxHeadDim));
  if (nope + rope <= 0 || nope + rope > L::kMaxHeadDim)
    return r.Error("qk_nope_head_dim",
                   fmt::format("qk_nope_head_dim + qk_rope_head_dim in [1, {}]", L::kMaxHeadDim),
                   r.Find("qk_nope_head_dim"));
  m->q_lora_rank = static_cast<int>(q_lora);
  m->kv_lora_rank = static_cast<int>(kv_lora);
  m->qk_nope_head_dim = static_cast<int>(nope);
  m->qk_rope_head_dim = static_cast<int>(rope);
  m->v_head_dim = static_cast<int>(v_dim);
  m->head_dim = static_cast<int>(nope + rope);
  L2S_ASSIGN_OR_RETURN(m->attention_bias, r.BoolOr("attention_bias", false));
  return Status::Ok();
}

Status ReadQwenSparseLayout(const ObjectReader& r, bool gated_shared, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(
      ReadExperts(r, "num_experts", "num_experts_per_tok", "moe_intermediate_size", m));
  L2S_ASSIGN_OR_RETURN(int64_t step, r.IntOr("decoder_sparse_step", 1, 1, L::kMaxLayers));
  std::vector<bool> mlp_only;
  L2S_RETURN_IF_ERROR(ReadLayerIndexList(r, "mlp_only_layers", m->num_layers, &mlp_only));
  for (int i = 0; i < m->num_layers; ++i)
    m->layers[i].ffn = !mlp_only[i] && (i + 1) % step == 0 ? FfnKind::kMoe : FfnKind::kDense;
  if (gated_shared) {
    L2S_ASSIGN_OR_RETURN(int64_t shared,
                         r.IntOr("shared_expert_intermediate_size", 0, 0, L::kMaxFfn));
    m->num_shared_experts = shared > 0 ? 1 : 0;
    m->shared_ffn_size = shared;
    if (shared > 0) m->misc_params_per_moe_layer = m->hidden_size;  // shared_expert_gate
  }
  return ReadDenseFfn(r, "intermediate_size", m);
}

}  // namespace l2s::hf
