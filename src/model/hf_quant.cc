// Weight formats: quantization_config (fp8, fp4, per-block fp8, modelopt, compressed-tensors) and
// Model Optimizer's hf_quant_config.json.
// Part of the HuggingFace config reader (hf_config.h); declarations in hf_readers.h.

#include <fmt/core.h>

#include <string>

#include "model/hf_config.h"
#include "model/hf_readers.h"

namespace l2s::hf {

namespace {

// Marks attention unquantized when a list of module patterns that stay unquantized
// (modules_to_not_convert, ignore, exclude_modules) names self_attn.
Status ReadUnquantizedModules(const ObjectReader& q, std::string_view key, ModelSpec* m) {
  const json* keep = q.Find(key);
  if (keep == nullptr) return Status::Ok();
  const char* what = "a list of module name patterns";
  if (!keep->is_array()) return q.Error(key, what, keep);
  for (const json& e : *keep) {
    if (!e.is_string()) return q.Error(key, what, &e);
    if (e.get_ref<const std::string&>().find("self_attn") != std::string::npos)
      m->attention_unquantized = true;
  }
  return Status::Ok();
}

constexpr const char* kPlannedFormats =
    "l2s prices bf16, fp8 and fp4 weights; to plan the model in one of them, drop "
    "quantization_config from a copy of the config and pass --dtype";

// NVIDIA TensorRT Model Optimizer's quant_algo (config.json quantization_config with quant_method
// "modelopt", or hf_quant_config.json's "quantization"): FP8* -> fp8 (FP8_PB* per-block scaled),
// NVFP4* / MXFP4 -> fp4 (NVFP4's 16-element FP8 scales are 1/32 byte per weight more than the
// MXFP4 l2s prices: 2%); the integer and mixed schemes are Unsupported.
Status ApplyModeloptAlgo(const ObjectReader& q, std::string_view key, ModelSpec* m) {
  L2S_ASSIGN_OR_RETURN(std::string algo, q.String(key));
  if (algo.rfind("FP8", 0) == 0) {
    m->weight_dtype = DType::kFP8;
    m->weight_block_scaled = algo.rfind("FP8_PB", 0) == 0;
  } else if (algo.rfind("NVFP4", 0) == 0 || algo == "MXFP4") {
    m->weight_dtype = DType::kFP4;
  } else {
    return Status::Unsupported(fmt::format(
        "{}: field \"{}\": quant_algo {} is not modelled (FP8*, NVFP4* and MXFP4 are); {}",
        q.source(), q.FieldName(key), jsonio::Snippet(*q.Find(key)), kPlannedFormats));
  }
  return Status::Ok();
}

// compressed-tensors (llm-compressor): every config_groups entry's weights {num_bits, type,
// strategy}: 8-bit float -> fp8 (strategy "block" -> per-block scaled), 4-bit float -> fp4
// (NVFP4); integer weights (W4A16, W8A8-int) are Unsupported. All groups must agree.
Status ReadCompressedTensors(const ObjectReader& q, ModelSpec* m) {
  const json* groups = q.Find("config_groups");
  const char* what = "an object of quantization groups, each with weights {num_bits, type}";
  if (groups == nullptr || !groups->is_object() || groups->empty())
    return q.Error("config_groups", what, groups);
  const std::string groups_field = q.FieldName("config_groups");
  std::string seen;
  for (const auto& [name, g] : groups->items()) {
    if (!g.is_object()) return q.Error("config_groups", what, &g);
    ObjectReader gr(g, q.source(), fmt::format("{}.{}.", groups_field, name));
    const json* w = gr.Find("weights");
    if (w == nullptr || !w->is_object()) return gr.Error("weights", "{num_bits, type}", w);
    ObjectReader wr(*w, q.source(), fmt::format("{}.{}.weights.", groups_field, name));
    L2S_ASSIGN_OR_RETURN(int64_t bits, wr.Int("num_bits", 1, 32));
    L2S_ASSIGN_OR_RETURN(std::string type, wr.StringOr("type", "int"));
    L2S_ASSIGN_OR_RETURN(std::string strategy, wr.StringOr("strategy", "tensor"));
    const std::string format = fmt::format("{}-bit {}", bits, type);
    if (!seen.empty() && seen != format)
      return Status::Unsupported(fmt::format(
          "{}: field \"{}\": groups of {} and {} weights (one weight format per model is "
          "planned); {}", q.source(), groups_field, seen, format, kPlannedFormats));
    seen = format;
    if (type == "float" && bits == 8) {
      m->weight_dtype = DType::kFP8;
      m->weight_block_scaled = strategy == "block";
    } else if (type == "float" && bits == 4) {
      m->weight_dtype = DType::kFP4;
    } else {
      return Status::Unsupported(fmt::format(
          "{}: field \"{}.{}.weights\": {} weights are not modelled; {}", q.source(),
          groups_field, name, format, kPlannedFormats));
    }
  }
  return ReadUnquantizedModules(q, "ignore", m);
}

}  // namespace

Status ReadQuantization(const ObjectReader& top, ModelSpec* m) {
  const json* qc = top.Find("quantization_config");
  if (qc == nullptr) return Status::Ok();
  if (!qc->is_object()) return top.Error("quantization_config", "an object", qc);
  ObjectReader q(*qc, top.source(), "quantization_config.");
  L2S_ASSIGN_OR_RETURN(std::string method, q.String("quant_method"));
  if (method == "fp8" || method == "fbgemm_fp8") {
    m->weight_dtype = DType::kFP8;
    m->weight_block_scaled = q.Find("weight_block_size") != nullptr;
  } else if (method == "mxfp4") {
    m->weight_dtype = DType::kFP4;
  } else if (method == "modelopt") {
    L2S_RETURN_IF_ERROR(ApplyModeloptAlgo(q, "quant_algo", m));
    return ReadUnquantizedModules(q, "ignore", m);
  } else if (method == "compressed-tensors") {
    return ReadCompressedTensors(q, m);
  } else {
    return Status::Unsupported(fmt::format(
        "{}: field \"quantization_config.quant_method\": expected one of fp8, fbgemm_fp8, "
        "mxfp4, modelopt, compressed-tensors, got {}; {}",
        top.source(), jsonio::Snippet(*q.Find("quant_method")), kPlannedFormats));
  }
  return ReadUnquantizedModules(q, "modules_to_not_convert", m);
}

}  // namespace l2s::hf

namespace l2s {

using namespace hf;  // NOLINT: this library's reader helpers above

Status ApplyHfQuantConfig(std::string_view json_text, std::string_view source_name,
                          ModelSpec* m) {
  L2S_ASSIGN_OR_RETURN(json root, jsonio::Parse(json_text, source_name));
  if (!root.is_object())
    return Status::InvalidArgument(fmt::format("{}: expected a JSON object at the top level, got {}",
                                               source_name, jsonio::Snippet(root)));
  ObjectReader top(root, source_name);
  const json* q = top.Find("quantization");
  if (q == nullptr || !q->is_object())
    return top.Error("quantization", "an object with quant_algo", q);
  ObjectReader qr(*q, source_name, "quantization.");
  L2S_RETURN_IF_ERROR(ApplyModeloptAlgo(qr, "quant_algo", m));
  return ReadUnquantizedModules(qr, "exclude_modules", m);
}

}  // namespace l2s
