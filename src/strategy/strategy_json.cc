#include "strategy/strategy_json.h"

#include <cstdint>
#include <limits>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/json_fields.h"

namespace l2s {
namespace {

using nlohmann::json;

// Reads a JSON integer in [lo, int max] into *out; false for other types or out of range.
bool GetInt(const json& v, int64_t lo, int* out) {
  if (!v.is_number_integer()) return false;
  int64_t x = 0;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int>::max())) return false;
    x = static_cast<int64_t>(u);
  } else {
    x = v.get<int64_t>();
  }
  if (x < lo || x > std::numeric_limits<int>::max()) return false;
  *out = static_cast<int>(x);
  return true;
}

Status KeyError(std::string_view key, std::string_view expected, const json& got) {
  return Status::ParseError(
      fmt::format("strategy json: '{}' expects {}, got {}", key, expected, got.dump()));
}

}  // namespace

json ToJson(const Strategy& s) {
  json dims = json::object();
  for (int i = 0; i < kNumOps; ++i) {
    dims[std::string(OpName(static_cast<Op>(i)))] = std::string(DimName(s.dims[i]));
  }
  json j = json::object();
  j["pp"] = s.pp;
  j["tp"] = s.tp;
  j["dp"] = s.dp;
  j["ep"] = s.ep;
  if (s.batch == 0) {
    j["batch"] = "auto";
  } else {
    j["batch"] = s.batch;
  }
  j["sp"] = s.sp;
  if (s.slots != 0) j["expert_slots"] = s.slots;
  if (s.overlap != Overlap::kNone) j["overlap"] = std::string(OverlapName(s.overlap));
  if (s.mtp != 0) j["mtp"] = s.mtp;
  j["dims"] = std::move(dims);
  return j;
}

StatusOr<Strategy> FromJson(const json& j, int total_gpus) {
  if (total_gpus < 0) {
    return Status::InvalidArgument(
        fmt::format("strategy json: total GPU count must be >= 0, got {}", total_gpus));
  }
  if (!j.is_object()) {
    return Status::ParseError(
        fmt::format("strategy json: expected an object, got {}", j.type_name()));
  }
  Strategy s;
  s.dims = MegatronDims();
  bool dp_given = false;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    if (key == "pp" || key == "tp" || key == "dp" || key == "ep") {
      int* dst = key == "pp" ? &s.pp : key == "tp" ? &s.tp : key == "dp" ? &s.dp : &s.ep;
      if (!GetInt(v, 1, dst)) return KeyError(key, "a positive integer", v);
      dp_given = dp_given || key == "dp";
    } else if (key == "batch") {
      if (v.is_string() && v.get<std::string>() == "auto") {
        s.batch = 0;
      } else if (!GetInt(v, 0, &s.batch)) {
        return KeyError(key, "a positive integer or \"auto\"", v);
      }
    } else if (key == "sp") {
      if (!v.is_boolean()) return KeyError(key, "true or false", v);
      s.sp = v.get<bool>();
    } else if (key == "expert_slots") {
      if (!GetInt(v, 0, &s.slots)) return KeyError(key, "a non-negative integer", v);
    } else if (key == "overlap") {
      if (!v.is_string() || !ParseOverlap(v.get<std::string>(), &s.overlap)) {
        return KeyError(key, "\"none\", \"tbo\" or \"sbo\"", v);
      }
    } else if (key == "mtp") {
      if (!GetInt(v, 0, &s.mtp) || s.mtp > kMaxMtpTokens) {
        return KeyError(key, fmt::format("an integer in 0..{}", kMaxMtpTokens), v);
      }
    } else if (key == "dims") {
      if (!v.is_object()) return KeyError(key, "an object of operator: dim", v);
      for (auto d = v.begin(); d != v.end(); ++d) {
        Op op{};
        if (!ParseOp(d.key(), &op)) {
          return Status::ParseError(fmt::format(
              "strategy json: unknown operator '{}' in dims (expected embed, attn_qkv, ...)",
              d.key()));
        }
        Dim dim{};
        if (!d.value().is_string() || !ParseDim(d.value().get<std::string>(), &dim)) {
          return KeyError(fmt::format("dims.{}", d.key()), "\"dim0\", \"dim1\" or \"none\"",
                          d.value());
        }
        s.set_dim(op, dim);
      }
    } else {
      return Status::ParseError(fmt::format(
          "strategy json: unknown key '{}' (expected pp, tp, dp, ep, batch, sp, expert_slots, "
          "overlap, mtp or dims)", key));
    }
  }
  if (!dp_given && total_gpus > 0) {
    const int64_t per_dp = static_cast<int64_t>(s.pp) * s.tp;
    if (total_gpus % per_dp != 0) {
      return Status::InvalidArgument(fmt::format(
          "strategy json: dp not given and pp*tp = {} does not divide the {} GPUs", per_dp,
          total_gpus));
    }
    s.dp = static_cast<int>(total_gpus / per_dp);
  }
  return s;
}

std::string ToJsonText(const Strategy& s) { return ToJson(s).dump(); }

StatusOr<Strategy> FromJsonText(std::string_view text, int total_gpus) {
  // A parsed json object keeps only the last of duplicate keys, so duplicates are caught while
  // parsing (jsonio::TwiceGivenKey).
  jsonio::TwiceGivenKey twice;
  json j = json::parse(text.begin(), text.end(), twice.Callback(), /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::ParseError("strategy json: malformed JSON text");
  }
  if (!twice.first().empty()) {
    return Status::ParseError(fmt::format("strategy json: key '{}' given twice", twice.first()));
  }
  return FromJson(j, total_gpus);
}

}  // namespace l2s
