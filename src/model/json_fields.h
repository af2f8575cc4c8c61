// Typed, non-throwing access to the fields of a JSON object (nlohmann::json), for the config
// readers of the model and hw layers. Every failure is a Status whose message is ONE line naming
// the source file, the field and what was expected, e.g.
//   config.json: field "num_attention_heads": expected a positive integer, got "x"
// Absent fields and JSON null are treated alike ("not set"), as HuggingFace writes null for unset
// optional fields.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <set>
#include <vector>

#include "common/status.h"

namespace l2s::jsonio {

// Bounds of a JSON input (docs/LIMITS.md): its size, and how deep arrays and objects may nest.
constexpr size_t kMaxFileBytes = size_t{16} << 20;
constexpr int kMaxDepth = 64;

// Parses `text`; never throws. ParseError names `source`, the line and column of the problem
// and the reason; inputs over kMaxFileBytes or nested deeper than kMaxDepth are ParseErrors.
StatusOr<nlohmann::json> Parse(std::string_view text, std::string_view source);
// The first key given twice in one object of a text being parsed (nlohmann alone keeps the last
// of two): pass Callback() to nlohmann::json::parse, then read first() ("" when none). Parse
// makes such a key an error; a reader with its own messages (strategy JSON) uses this directly.
class TwiceGivenKey {
 public:
  nlohmann::json::parser_callback_t Callback();
  const std::string& first() const { return first_; }

 private:
  std::vector<std::set<std::string>> open_objects_;  // the keys of each object being read
  std::string first_;
};
// Reads a whole regular file of at most kMaxFileBytes. NotFound if it does not exist, IoError if
// it is a directory, a device, a FIFO or a socket, larger than the bound, or cannot be read.
StatusOr<std::string> ReadFile(const std::string& path);
// Short JSON rendering of a value for error messages (at most ~40 characters).
std::string Snippet(const nlohmann::json& v);

class ObjectReader {
 public:
  // `obj` must outlive the reader. `prefix` is prepended to field names in messages
  // ("text_config." for Llama 4). If `obj` is not an object every field reads as absent.
  ObjectReader(const nlohmann::json& obj, std::string_view source, std::string prefix = "");

  // The field, or nullptr when absent or null.
  const nlohmann::json* Find(std::string_view key) const;
  bool Has(std::string_view key) const { return Find(key) != nullptr; }

  // Integers (a float with an integral value such as 32.0 is accepted) within [lo, hi].
  StatusOr<int64_t> Int(std::string_view key, int64_t lo, int64_t hi) const;
  StatusOr<int64_t> IntOr(std::string_view key, int64_t dflt, int64_t lo, int64_t hi) const;
  // Finite numbers within [lo, hi].
  StatusOr<double> Number(std::string_view key, double lo, double hi) const;
  StatusOr<double> NumberOr(std::string_view key, double dflt, double lo, double hi) const;
  // Finite numbers in (0, hi].
  StatusOr<double> Positive(std::string_view key, double hi) const;
  StatusOr<double> PositiveOr(std::string_view key, double dflt, double hi) const;
  StatusOr<bool> BoolOr(std::string_view key, bool dflt) const;
  StatusOr<std::string> String(std::string_view key) const;
  StatusOr<std::string> StringOr(std::string_view key, std::string dflt) const;

  // "<source>: field "<prefix><key>": expected <expected>, got <snippet of got>" (or "is missing").
  Status Error(std::string_view key, std::string_view expected,
               const nlohmann::json* got) const;
  Status ErrorMsg(std::string_view key, std::string_view message) const;
  std::string FieldName(std::string_view key) const { return prefix_ + std::string(key); }
  std::string_view source() const { return source_; }

 private:
  const nlohmann::json& obj_;
  std::string source_;
  std::string prefix_;
};

// Wording of an integer range for messages: "a positive integer", "an integer in [0, 8]" ...
std::string IntExpectation(int64_t lo, int64_t hi);

}  // namespace l2s::jsonio

// `lhs = value of expr` or return its Status from the enclosing function (which returns Status or
// a StatusOr).
#define L2S_JSON_CONCAT_INNER_(a, b) a##b
#define L2S_JSON_CONCAT_(a, b) L2S_JSON_CONCAT_INNER_(a, b)
#define L2S_ASSIGN_OR_RETURN(lhs, expr) \
  L2S_ASSIGN_OR_RETURN_IMPL_(L2S_JSON_CONCAT_(l2s_statusor_, __LINE__), lhs, expr)
#define L2S_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
#define L2S_RETURN_IF_ERROR(expr)            \
  do {                                       \
    ::l2s::Status l2s_status_ = (expr);      \
    if (!l2s_status_.ok()) return l2s_status_; \
  } while (0)
