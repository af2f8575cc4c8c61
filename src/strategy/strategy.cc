#include "strategy/strategy.h"

#include <charconv>
#include <limits>
#include <string>
#include <system_error>

#include <fmt/format.h>

namespace l2s {
namespace {

// Names in Op order; index = static_cast<int>(op).
constexpr std::array<std::string_view, kNumOps> kOpNames = {
    "embed",    "attn_qkv",    "attn_core",   "attn_out",   "moe_router", "moe_ffn1",
    "moe_ffn2", "shared_ffn1", "shared_ffn2", "dense_ffn1", "dense_ffn2", "lm_head",
};
constexpr std::array<std::string_view, 3> kDimNames = {"dim0", "dim1", "none"};

std::string_view Trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n";
  const size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(kSpace);
  return s.substr(b, e - b + 1);
}

// Parses a whole decimal integer (optional leading '-'); false on junk, empty input or overflow.
bool ParseInt(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  const char* first = s.data();
  const char* last = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(first, last, *out);
  return ec == std::errc() && ptr == last;
}

Status FieldError(std::string_view key, std::string_view expected, std::string_view got) {
  return Status::ParseError(
      fmt::format("strategy text: '{}' expects {}, got '{}'", key, expected, got));
}

}  // namespace

std::string_view OpName(Op op) {
  const int i = static_cast<int>(op);
  return (i >= 0 && i < kNumOps) ? kOpNames[i] : std::string_view("?");
}

bool ParseOp(std::string_view s, Op* out) {
  for (int i = 0; i < kNumOps; ++i) {
    if (kOpNames[i] == s) {
      *out = static_cast<Op>(i);
      return true;
    }
  }
  return false;
}

std::string_view DimName(Dim d) {
  const int i = static_cast<int>(d);
  return (i >= 0 && i < 3) ? kDimNames[i] : std::string_view("?");
}

bool ParseDim(std::string_view s, Dim* out) {
  for (int i = 0; i < 3; ++i) {
    if (kDimNames[i] == s) {
      *out = static_cast<Dim>(i);
      return true;
    }
  }
  return false;
}

namespace {
constexpr std::array<std::string_view, 3> kOverlapNames = {"none", "tbo", "sbo"};
}  // namespace

std::string_view OverlapName(Overlap o) {
  const int i = static_cast<int>(o);
  return (i >= 0 && i < 3) ? kOverlapNames[i] : std::string_view("?");
}

bool ParseOverlap(std::string_view s, Overlap* out) {
  for (int i = 0; i < 3; ++i) {
    if (kOverlapNames[i] == s) {
      *out = static_cast<Overlap>(i);
      return true;
    }
  }
  return false;
}

std::array<Dim, kNumOps> MegatronDims() {
  std::array<Dim, kNumOps> d{};
  auto set = [&d](Op op, Dim v) { d[static_cast<int>(op)] = v; };
  // Vocab-parallel embedding: each GPU holds a slice of the vocabulary rows (dim0 of the table),
  // looks up the tokens that fall in its slice and contributes a partial sum (all-reduce).
  set(Op::kEmbed, Dim::kDim0);
  set(Op::kAttnQkv, Dim::kDim1);   // column parallel: Q/K/V split by heads
  set(Op::kAttnCore, Dim::kDim0);  // each GPU attends over its own heads
  set(Op::kAttnOut, Dim::kDim0);   // row parallel: partial sums, one all-reduce
  set(Op::kMoeRouter, Dim::kNone); // replicated router
  set(Op::kMoeFfn1, Dim::kDim1);
  set(Op::kMoeFfn2, Dim::kDim0);
  set(Op::kSharedFfn1, Dim::kDim1);
  set(Op::kSharedFfn2, Dim::kDim0);
  set(Op::kDenseFfn1, Dim::kDim1);
  set(Op::kDenseFfn2, Dim::kDim0);
  set(Op::kLmHead, Dim::kDim1);    // vocab-parallel output projection (split on N = vocab)
  return d;
}

std::array<Dim, kNumOps> PaperMlpVariantDims() {
  std::array<Dim, kNumOps> d = MegatronDims();
  d[static_cast<int>(Op::kMoeFfn2)] = Dim::kDim1;
  d[static_cast<int>(Op::kSharedFfn2)] = Dim::kDim1;
  d[static_cast<int>(Op::kDenseFfn2)] = Dim::kDim1;
  return d;
}

std::string ToText(const Strategy& s) {
  std::string out = DegreesText(s);
  for (int i = 0; i < kNumOps; ++i) {
    out += ',';
    out += kOpNames[i];
    out += '=';
    out += DimName(s.dims[i]);
  }
  return out;
}

std::string DegreesText(const Strategy& s) {
  std::string out = fmt::format("pp={},tp={},dp={},ep={},batch=", s.pp, s.tp, s.dp, s.ep);
  if (s.batch == 0) {
    out += "auto";
  } else {
    out += fmt::format("{}", s.batch);
  }
  out += s.sp ? ",sp=on" : ",sp=off";
  if (s.slots != 0) out += fmt::format(",slots={}", s.slots);
  if (s.overlap != Overlap::kNone) out += fmt::format(",overlap={}", OverlapName(s.overlap));
  if (s.mtp != 0) out += fmt::format(",mtp={}", s.mtp);
  return out;
}

StatusOr<Strategy> FromText(std::string_view text, int total_gpus) {
  if (total_gpus < 0) {
    return Status::InvalidArgument(
        fmt::format("strategy text: total GPU count must be >= 0, got {}", total_gpus));
  }
  Strategy s;
  s.dims = MegatronDims();
  // Keys seen so far: 9 scalar fields, then the 12 ops.
  enum Field { kFPp, kFTp, kFDp, kFEp, kFBatch, kFSp, kFSlots, kFOverlap, kFMtp, kNumScalar };
  constexpr std::array<std::string_view, kNumScalar> kScalarNames = {
      "pp", "tp", "dp", "ep", "batch", "sp", "slots", "overlap", "mtp"};
  std::array<bool, kNumScalar + kNumOps> seen{};

  if (Trim(text).empty()) text = {};
  size_t pos = 0;
  int entry = 0;
  while (!text.empty()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view token = Trim(text.substr(pos, comma - pos));
    ++entry;
    pos = comma + 1;
    if (token.empty()) {
      return Status::ParseError(
          fmt::format("strategy text: entry {} is empty (expected key=value)", entry));
    }
    const size_t eq = token.find('=');
    if (eq == std::string_view::npos) {
      return Status::ParseError(
          fmt::format("strategy text: entry '{}' is not of the form key=value", token));
    }
    const std::string_view key = Trim(token.substr(0, eq));
    const std::string_view value = Trim(token.substr(eq + 1));

    int field = -1;
    for (int i = 0; i < kNumScalar; ++i) {
      if (kScalarNames[i] == key) field = i;
    }
    Op op{};
    if (field < 0 && ParseOp(key, &op)) field = kNumScalar + static_cast<int>(op);
    if (field < 0) {
      return Status::ParseError(fmt::format(
          "strategy text: unknown key '{}' (expected pp, tp, dp, ep, batch, sp, slots, overlap, "
          "mtp or an operator name such as attn_qkv)",
          key));
    }
    if (seen[field]) {
      return Status::ParseError(fmt::format("strategy text: key '{}' given twice", key));
    }
    seen[field] = true;

    if (field <= kFEp) {
      int64_t v = 0;
      if (!ParseInt(value, &v) || v <= 0 || v > std::numeric_limits<int>::max()) {
        return FieldError(key, "a positive integer", value);
      }
      int* dst = field == kFPp ? &s.pp : field == kFTp ? &s.tp : field == kFDp ? &s.dp : &s.ep;
      *dst = static_cast<int>(v);
    } else if (field == kFBatch) {
      int64_t v = 0;
      if (value == "auto") {
        s.batch = 0;
      } else if (ParseInt(value, &v) && v >= 0 && v <= std::numeric_limits<int>::max()) {
        s.batch = static_cast<int>(v);  // 0 is accepted as a synonym of auto
      } else {
        return FieldError(key, "a positive integer or auto", value);
      }
    } else if (field == kFSlots || field == kFMtp) {
      int64_t v = 0;
      const int64_t hi = field == kFMtp ? kMaxMtpTokens : std::numeric_limits<int>::max();
      if (!ParseInt(value, &v) || v < 0 || v > hi) {
        return FieldError(key,
                          field == kFMtp ? fmt::format("an integer in 0..{}", kMaxMtpTokens)
                                         : std::string("a non-negative integer"),
                          value);
      }
      (field == kFMtp ? s.mtp : s.slots) = static_cast<int>(v);
    } else if (field == kFOverlap) {
      if (!ParseOverlap(value, &s.overlap)) return FieldError(key, "none, tbo or sbo", value);
    } else if (field == kFSp) {
      if (value == "on") {
        s.sp = true;
      } else if (value == "off") {
        s.sp = false;
      } else {
        return FieldError(key, "on or off", value);
      }
    } else {
      Dim d{};
      if (!ParseDim(value, &d)) return FieldError(key, "dim0, dim1 or none", value);
      s.set_dim(op, d);
    }
    if (comma == text.size()) break;
  }

  if (!seen[kFDp] && total_gpus > 0) {
    const int64_t per_dp = static_cast<int64_t>(s.pp) * s.tp;
    if (total_gpus % per_dp != 0) {
      return Status::InvalidArgument(fmt::format(
          "strategy text: dp not given and pp*tp = {} does not divide the {} GPUs", per_dp,
          total_gpus));
    }
    s.dp = static_cast<int>(total_gpus / per_dp);
  }
  return s;
}

}  // namespace l2s
