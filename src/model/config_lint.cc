#include "model/config_lint.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>

#include "common/text.h"
#include "model/counts.h"
#include "model/json_fields.h"

namespace l2s {
namespace {

using nlohmann::json;

// Every key the HF reader (hf_config.cc, hf_read_*.cc, hf_quant.cc) reads at the top level of a
// config or under text_config (nested keys of quantization_config and block_configs are not
// linted). config_lint_test checks this list against the string literals of those files: a key
// the importer starts to read goes here.
const std::vector<std::string_view> kImporterKeys = {
    "architectures", "attention_bias", "attention_head_dim", "audio_config", "attention_k_eq_v", "attn_layer_offset",
    "attention_out_bias", "attn_layer_period", "attn_type_list", "block_configs", "chunk_size",
    "compress_ratios",
    "conv_kernel",
    "decoder_sparse_step", "enable_moe_block", "expand", "expert_ffn_hidden_size",
    "expert_layer_offset", "expert_layer_period", "experts_per_token", "ffn_hidden_size",
    "first_k_dense_replace", "full_attention_interval", "global_head_dim", "hc_mult", "head_dim",
    "hidden_size", "hidden_size_per_layer_input", "hybrid_override_pattern", "index_head_dim",
    "index_n_heads", "index_topk", "indexer_types", "interleave_moe_layer_step",
    "intermediate_size", "intermediate_size_mlp", "kv_lora_rank", "layer_types",
    "layers_block_type", "linear_conv_kernel_dim", "linear_key_head_dim", "linear_num_key_heads",
    "linear_num_value_heads", "linear_value_head_dim", "mamba_conv_bias", "mamba_d_conv",
    "mamba_chunk_size", "mamba_d_head", "mamba_d_state", "mamba_dt_rank", "mamba_expand",
    "mamba_head_dim", "mamba_n_groups", "mamba_n_heads", "mamba_num_heads",
    "mamba_proj_bias", "max_position_embeddings", "max_window_layers", "mlp_bias",
    "mlp_layer_types", "mlp_only_layers", "model_type", "moe_intermediate_size",
    "moe_k", "moe_latent_size", "moe_layer_end_index", "moe_layer_freq", "moe_layer_interval",
    "moe_layer_start_index", "moe_layers", "moe_num_experts", "moe_num_shared_experts", "mtp_num_hidden_layers", "moe_router_enable_expert_bias",
    "moe_shared_expert_intermediate_size", "moe_topk", "n_groups", "n_routed_experts",
    "n_shared_experts", "num_attention_heads", "num_experts", "num_experts_per_tok",
    "num_global_key_value_heads", "num_hash_layers", "num_hidden_layers", "num_key_value_heads",
    "num_kv_shared_layers", "num_layers", "num_local_experts", "num_nextn_predict_layers",
    "num_shared_experts", "o_groups", "o_lora_rank", "q_lora_rank", "qk_nope_head_dim",
    "qk_norm_type", "qk_rope_head_dim",
    "quantization_config", "shared_expert_intermediate_size", "shared_intermediate_size",
    "sliding_window", "sliding_window_pattern", "ssm_state_size", "text_config",
    "tie_word_embeddings", "top_k_experts", "topk_method", "use_bias", "use_conv_bias",
    "use_double_wide_mlp", "use_qk_norm", "use_qkv_bias", "use_routing_bias",
    "use_sliding_window", "v_head_dim", "vision_config", "vocab_size", "zero_expert_num",
    "zero_expert_type",
};

// Keys the importer deliberately does not read: HuggingFace's PretrainedConfig attributes
// (generation defaults, token ids, labels, bookkeeping), the training-only settings of the
// families it supports (dropout, losses, initialisation), and what does not change the weights'
// shapes or the serving cost model (rope settings, norms' epsilon, activations, towers of
// multimodal wrappers). Every key of the configs in ../shared/models/hf is either read or here.
const std::vector<std::string_view> kIgnoredKeys = {
    // bookkeeping
    "_name_or_path", "_commit_hash", "_attn_implementation", "_attn_implementation_autoset",
    "auto_map", "transformers_version", "torch_dtype", "dtype", "use_cache",
    "torchscript", "use_bfloat16", "tf_legacy_loss", "pruned_heads", "return_dict",
    "output_hidden_states", "output_attentions", "output_scores", "return_dict_in_generate",
    "is_encoder_decoder", "is_decoder", "cross_attention_hidden_size", "add_cross_attention",
    "tie_encoder_decoder", "chunk_size_feed_forward", "finetuning_task", "id2label", "label2id",
    "num_labels", "tokenizer_class", "prefix", "task_specific_params", "problem_type",
    "cache_implementation", "use_return_dict",
    // generation defaults
    "max_length", "min_length", "do_sample", "early_stopping", "num_beams", "num_beam_groups",
    "diversity_penalty", "temperature", "top_k", "top_p", "typical_p", "repetition_penalty",
    "length_penalty", "no_repeat_ngram_size", "encoder_no_repeat_ngram_size", "bad_words_ids",
    "num_return_sequences", "forced_bos_token_id", "forced_eos_token_id", "remove_invalid_values",
    "exponential_decay_length_penalty", "suppress_tokens", "begin_suppress_tokens",
    // token ids
    "bos_token_id", "eos_token_id", "pad_token_id", "sep_token_id", "decoder_start_token_id",
    "image_token_id", "image_token_index", "video_token_id", "audio_token_id", "boi_token_id",
    "eoi_token_id", "boa_token_id", "eoa_token_id", "eoa_token_index",
    "vision_soft_tokens_per_image",
    // training-only: dropout, losses, initialisation, parallel layout of the training run
    "attention_dropout", "hidden_dropout", "embd_pdrop", "resid_pdrop", "embedding_dropout",
    "output_dropout", "initializer_range", "aux_loss_alpha", "seq_aux", "router_aux_loss_coef",
    "router_z_loss_coef", "router_jitter_noise", "output_router_logits", "pretraining_tp",
    "ep_size", "rescale_prenorm_residual", "residual_in_fp32", "use_mamba_kernels",
    // activations, norms, position encoding, routing details (no effect on shapes or cost)
    "hidden_act", "hidden_activation", "mlp_hidden_act", "mamba_hidden_act", "rms_norm_eps",
    "layer_norm_eps", "layer_norm_epsilon", "norm_eps", "rope_theta", "rope_scaling",
    "rope_parameters", "rotary_dim", "partial_rotary_factor", "original_max_position_embeddings",
    "initial_context_length", "attention_chunk_size", "final_logit_softcapping",
    "attn_logit_softcapping", "query_pre_attn_scalar", "use_bidirectional_attention",
    "attention_method", "mla_scale_kv_lora", "mla_scale_q_lora", "norm_head", "norm_softmax",
    "norm_topk_prob", "routed_scaling_factor", "scoring_func", "n_group", "topk_group",
    "swiglu_limit", "num_logits_to_keep", "time_step_floor", "time_step_limit", "time_step_max",
    "time_step_min", "time_step_rank",
    // DeepSeek-V4: hyper-connection numerics, the compressed layers' rope base, and the experts'
    // storage format (fp4; l2s plans one weight format per deployment, docs/MODELS.md)
    "hc_eps", "hc_sinkhorn_iters", "compress_rope_theta", "expert_dtype",
    // Gemma 4's per-layer-input table: its vocabulary (the importer reads its width,
    // hidden_size_per_layer_input, and takes vocab_size for the rows)
    "vocab_size_per_layer_input",
    // MTP fields of families whose MTP module l2s does not model
    "num_mtp_modules", "use_mtp", "mtp_transformer_layers",
    // Granite's scalar multipliers, OLMoE's activation clamp, PhiMoE's lm_head bias (vocab_size
    // values, not counted), SmolLM3's NoPE layers, ERNIE's routing floor, the VL wrappers' tokens
    "embedding_multiplier", "residual_multiplier", "attention_multiplier", "logits_scaling",
    "clip_qkv", "lm_head_bias", "logit_scale", "no_rope_layers", "no_rope_layer_interval", "moe_norm_min",
    "vision_start_token_id", "vision_end_token_id", "vision_token_id",
    "projector_hidden_act", "vision_feature_layer", "vision_feature_select_strategy",
    "multimodal_projector_bias", "spatial_merge_size", "attn_output_gate",
};

// Keys linted per object (real configs have under 300): a 16 MiB file of short keys would
// otherwise cost minutes of edit distances.
constexpr size_t kMaxLintedKeys = 4096;

// torch dtype names HuggingFace accepts for torch_dtype / dtype.
const std::vector<std::string_view> kTorchDtypes = {
    "auto",  "bfloat16", "float16", "float32",       "float64",     "half",
    "float", "double",   "int8",    "float8_e4m3fn", "float8_e5m2",
};


// The nearest candidate within MaxTypoDistance(key) (case-insensitive; ties: the earlier
// candidate), skipping those `skip` returns true for. "" when none.
template <typename Skip>
std::string_view Nearest(std::string_view key, const std::vector<std::string_view>& candidates,
                         Skip skip) {
  const std::string k = AsciiLower(key);
  const int limit = MaxTypoDistance(key.size());
  const int i = NearestIndex(candidates.size(), limit, [&](size_t i) {
    const std::string_view c = candidates[i];
    // Cheap bound first: the distance is at least the length difference.
    const size_t lo = std::min(key.size(), c.size()), hi = std::max(key.size(), c.size());
    if (hi - lo > static_cast<size_t>(limit) || skip(c)) return -1;
    return EditDistance(k, AsciiLower(c));
  });
  return i < 0 ? std::string_view() : candidates[static_cast<size_t>(i)];
}

void LintObject(const json& obj, std::string_view source, const std::string& prefix,
                std::vector<std::string>* out) {
  if (!obj.is_object()) return;
  // Known keys in one list, importer's first: a tie goes to the key l2s reads.
  static const std::vector<std::string_view> known = [] {
    std::vector<std::string_view> k = kImporterKeys;
    k.insert(k.end(), kIgnoredKeys.begin(), kIgnoredKeys.end());
    return k;
  }();
  size_t checked = 0;
  for (const auto& [key, value] : obj.items()) {
    if (++checked > kMaxLintedKeys) break;  // bounds the work on a hostile file
    if (IsKnownHfKey(key)) continue;
    // A known key the object already sets is not what this one meant.
    const std::string_view near =
        Nearest(key, known, [&](std::string_view c) { return obj.contains(std::string(c)); });
    if (near.empty()) continue;
    out->push_back(fmt::format("{}: unknown field \"{}{}\" (did you mean \"{}{}\"?); it is ignored",
                               source, prefix, PrintableText(key), prefix, near));
  }
  for (const char* key : {"torch_dtype", "dtype"}) {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) continue;
    if (it->is_string() &&
        std::find(kTorchDtypes.begin(), kTorchDtypes.end(), it->get_ref<const std::string&>()) !=
            kTorchDtypes.end())
      continue;
    std::string expected;
    for (std::string_view d : kTorchDtypes) expected += fmt::format("{}{}", expected.empty() ? "" : ", ", d);
    std::string hint;
    if (it->is_string()) {
      const std::string_view near =
          Nearest(it->get_ref<const std::string&>(), kTorchDtypes, [](std::string_view) { return false; });
      if (!near.empty()) hint = fmt::format("did you mean \"{}\"?; ", near);
    }
    out->push_back(fmt::format(
        "{}: field \"{}{}\": unrecognised value {} ({}expected one of {}); it is ignored", source,
        prefix, key, jsonio::Snippet(*it), hint, expected));
  }
}

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A decimal number "12" or "1.6" at name[*i]; advances *i.
bool ReadNumber(std::string_view s, size_t* i, double* out) {
  const size_t from = *i;
  while (*i < s.size() && IsDigit(s[*i])) ++*i;
  if (*i == from) return false;
  if (*i + 1 < s.size() && s[*i] == '.' && IsDigit(s[*i + 1])) {
    ++*i;
    while (*i < s.size() && IsDigit(s[*i])) ++*i;
  }
  *out = std::strtod(std::string(s.substr(from, *i - from)).c_str(), nullptr);
  return true;
}

double UnitScale(char c) {
  switch (c) {
    case 'm': case 'M': return 1e6;
    case 'b': case 'B': return 1e9;
    case 't': case 'T': return 1e12;
  }
  return 0;
}

std::string FormatParams(double n) {
  if (n >= 1e12) return fmt::format("{:.2f}T", n / 1e12);
  if (n >= 1e9) return fmt::format("{:.1f}B", n / 1e9);
  return fmt::format("{:.0f}M", n / 1e6);
}

// The warning for one comparison, or "".
std::string Compare(std::string_view name, double computed, double named, std::string_view token,
                    bool active) {
  if (!(named > 0) || !(computed > 0)) return "";
  const double ratio = computed / named;
  if (ratio >= 0.5 && ratio <= 2.0) return "";
  return fmt::format(
      "{}: the config gives {} {}parameters, {:.{}f}x the {} in its name; check hidden_size, "
      "intermediate_size, num_hidden_layers and the expert counts",
      PrintableText(name), FormatParams(computed), active ? "active " : "", ratio,
      ratio < 0.1 ? 3 : 1, token);
}

}  // namespace

const std::vector<std::string_view>& HfImporterKeys() { return kImporterKeys; }
const std::vector<std::string_view>& HfIgnoredKeys() { return kIgnoredKeys; }

bool IsKnownHfKey(std::string_view key) {
  static const std::set<std::string_view> known = [] {
    std::set<std::string_view> s(kImporterKeys.begin(), kImporterKeys.end());
    s.insert(kIgnoredKeys.begin(), kIgnoredKeys.end());
    return s;
  }();
  return known.count(key) > 0;
}

std::vector<std::string> LintHfConfig(const json& root, std::string_view source) {
  std::vector<std::string> out;
  LintObject(root, source, "", &out);
  if (root.is_object()) {
    const auto tc = root.find("text_config");
    if (tc != root.end() && tc->is_object()) LintObject(*tc, source, "text_config.", &out);
  }
  return out;
}

std::optional<NamedSize> ParseNamedSize(std::string_view s) {
  NamedSize ns;
  bool experts = false;
  for (size_t i = 0; i < s.size(); ++i) {
    // Tokens start after a separator ("3.1" is one word: its "1" starts nothing).
    if (i > 0 && (IsAlnum(s[i - 1]) || s[i - 1] == '.')) continue;
    size_t j = i;
    const bool active = s[j] == 'A' || s[j] == 'a';
    if (active) ++j;
    double a = 0, b = 1;
    if (!ReadNumber(s, &j, &a)) continue;
    if (!active && j < s.size() && (s[j] == 'x' || s[j] == 'X') && j + 1 < s.size() &&
        IsDigit(s[j + 1])) {
      ++j;
      if (!ReadNumber(s, &j, &b)) continue;
    }
    if (j >= s.size()) continue;
    const char unit = s[j++];
    if (j < s.size() && IsAlnum(s[j])) continue;  // tokens end before a separator
    const std::string token(s.substr(i, j - i));
    if (!active && (unit == 'E' || unit == 'e') && b == 1) {
      experts = true;  // "128E": the number of experts
      continue;
    }
    const double scale = UnitScale(unit);
    if (scale == 0) continue;
    const double n = a * b * scale;
    if (active) {
      if (ns.active_params == 0) ns.active_params = n, ns.active_token = token;
    } else if (ns.total_params == 0) {
      ns.total_params = n;
      ns.total_token = token;
    }
  }
  // Llama 4 style "17B-128E": the size is the active one.
  if (experts && ns.active_params == 0 && ns.total_params > 0) {
    ns.active_params = ns.total_params;
    ns.active_token = ns.total_token;
    ns.total_params = 0;
    ns.total_token.clear();
  }
  if (ns.total_params == 0 && ns.active_params == 0) return std::nullopt;
  return ns;
}

std::string NamedSizeWarning(const ModelSpec& m, std::string_view name) {
  const std::optional<NamedSize> ns = ParseNamedSize(name);
  if (!ns) return "";
  const ParamCounts c = CountParams(m);
  std::string w = Compare(name, static_cast<double>(c.total), ns->total_params, ns->total_token,
                          false);
  if (w.empty())
    w = Compare(name, static_cast<double>(c.active), ns->active_params, ns->active_token, true);
  return w;
}

std::vector<std::string> ConfigModelNames(const json& root, std::string_view fallback) {
  std::vector<std::string> names;
  if (root.is_object()) {
    const auto it = root.find("_name_or_path");
    if (it != root.end() && it->is_string() && !it->get_ref<const std::string&>().empty())
      names.push_back(it->get<std::string>());
  }
  names.emplace_back(fallback);
  return names;
}

}  // namespace l2s
