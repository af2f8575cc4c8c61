#include "model/json_fields.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>
#include <fstream>
#include <system_error>
#include <filesystem>

#include "common/text.h"

namespace l2s::jsonio {

using nlohmann::json;

namespace {

// Python's json module writes NaN, Infinity and -Infinity as bare tokens, and HuggingFace
// config.json files contain them (Nemotron-H: "time_step_limit": [0.0, Infinity]); they are not
// JSON. Outside string literals each such token becomes the string "NaN" / "Infinity" /
// "-Infinity", so the document parses and a reader that needs a number there reports the field
// ("expected a positive integer, got "Infinity""). `inserted` records, in order, the offsets in
// the rewritten text after which two quote characters were added, to map error offsets back.
std::string QuoteNonFiniteTokens(std::string_view text, std::vector<size_t>* inserted) {
  static constexpr std::string_view kTokens[] = {"-Infinity", "Infinity", "NaN"};
  std::string out;
  bool in_string = false;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[i + 1];
        i += 2;
        continue;
      }
      if (c == '"') in_string = false;
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      ++i;
      continue;
    }
    bool replaced = false;
    if (c == '-' || c == 'I' || c == 'N') {
      for (std::string_view tok : kTokens) {
        if (text.substr(i, tok.size()) != tok) continue;
        const size_t end = i + tok.size();
        if (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) ||
                                  text[end] == '_'))
          continue;
        out += '"';
        out += tok;
        out += '"';
        inserted->push_back(out.size());
        i = end;
        replaced = true;
        break;
      }
    }
    if (!replaced) {
      out += c;
      ++i;
    }
  }
  return out;
}

// "line L, column C" of the byte at 0-based offset `pos` of `text` (1-based, columns in bytes).
std::string LineColumn(std::string_view text, size_t pos) {
  pos = std::min(pos, text.size());
  size_t line = 1, col = 1;
  for (size_t i = 0; i < pos; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return fmt::format("line {}, column {}", line, col);
}

// The reason of a nlohmann exception without its "[json.exception.parse_error.101] parse error at
// line 1, column 2: " prefix, made printable.
std::string Reason(const std::string& what) {
  std::string r = what;
  if (r.rfind("[json.exception.", 0) == 0) {
    const size_t close = r.find("] ");
    if (close != std::string::npos) r = r.substr(close + 2);
  }
  if (r.rfind("parse error", 0) == 0) {
    const size_t colon = r.find(": ");
    if (colon != std::string::npos) r = r.substr(colon + 2);
  }
  return PrintableText(r);
}

// Offset of the first bracket nested deeper than kMaxDepth, or npos. Brackets inside strings do
// not count.
size_t TooDeep(std::string_view text) {
  int depth = 0;
  bool in_string = false, escape = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escape) escape = false;
      else if (c == '\\') escape = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}

}  // namespace

json::parser_callback_t TwiceGivenKey::Callback() {
  return [this](int /*depth*/, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      open_objects_.emplace_back();
    } else if (event == json::parse_event_t::object_end && !open_objects_.empty()) {
      open_objects_.pop_back();
    } else if (event == json::parse_event_t::key && !open_objects_.empty() && parsed.is_string() &&
               !open_objects_.back().insert(parsed.get<std::string>()).second && first_.empty()) {
      first_ = parsed.get<std::string>();
    }
    return true;
  };
}

StatusOr<json> Parse(std::string_view text, std::string_view source) {
  const std::string src = PrintableText(source);
  if (text.size() > kMaxFileBytes)
    return Status::ParseError(fmt::format("{}: {} bytes is more than the {} bytes a JSON input may "
                                          "have",
                                          src, text.size(), kMaxFileBytes));
  // Deep nesting would recurse through every later walk of the value (dump, destruction).
  if (const size_t at = TooDeep(text); at != std::string_view::npos)
    return Status::ParseError(fmt::format("{}: malformed JSON at {}: nested deeper than {} levels",
                                          src, LineColumn(text, at), kMaxDepth));
  std::vector<size_t> inserted;
  const std::string rewritten = QuoteNonFiniteTokens(text, &inserted);
  // Offset in the caller's text of an offset in the rewritten one.
  auto original = [&](size_t byte) {
    size_t shift = 0;
    for (size_t at : inserted) {
      if (at > byte) break;
      shift += 2;
    }
    return byte - std::min(shift, byte);
  };
  // Exceptions are caught here and turned into a Status; none escapes.
  try {
    // nlohmann keeps the last of two equal keys in one object; in a hand-written config or
    // cluster file the other one is a silent mistake, so two are an error.
    TwiceGivenKey twice;
    json j = json::parse(rewritten.begin(), rewritten.end(), twice.Callback());
    if (!twice.first().empty())
      return Status::ParseError(fmt::format("{}: key \"{}\" is given twice in one object", src,
                                            PrintableText(twice.first())));
    return j;
  } catch (const json::parse_error& e) {
    // e.byte is the 1-based position of the last character read, in the rewritten text.
    return Status::ParseError(fmt::format("{}: malformed JSON at {}: {}", src,
                                          LineColumn(text, original(e.byte > 0 ? e.byte - 1 : 0)),
                                          Reason(e.what())));
  } catch (const std::exception& e) {
    return Status::ParseError(fmt::format("{}: malformed JSON: {}", src, Reason(e.what())));
  }
}

StatusOr<std::string> ReadFile(const std::string& path) {
  const std::string shown = PrintableText(path);
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) return Status::NotFound(fmt::format("{}: no such file", shown));
  if (std::filesystem::is_directory(st))
    return Status::IoError(fmt::format("{}: is a directory, expected a JSON file", shown));
  // Devices, FIFOs and sockets may never end (/dev/zero, a pipe): only regular files are read.
  if (!std::filesystem::is_regular_file(st))
    return Status::IoError(fmt::format("{}: not a regular file, expected a JSON file", shown));
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(fmt::format("{}: cannot open for reading", shown));
  // Read in chunks, stopping one chunk past the bound (the file may grow while it is read).
  std::string text;
  char chunk[1 << 16];
  while (text.size() <= kMaxFileBytes && in.read(chunk, sizeof chunk).gcount() > 0)
    text.append(chunk, static_cast<size_t>(in.gcount()));
  if (in.bad()) return Status::IoError(fmt::format("{}: read failed", shown));
  if (text.size() > kMaxFileBytes)
    return Status::IoError(fmt::format("{}: larger than {} bytes, the most a JSON input may have",
                                       shown, kMaxFileBytes));
  return text;
}

std::string Snippet(const json& v) {
  // ensure_ascii + replace: dump() cannot throw on odd strings.
  std::string s = v.dump(-1, ' ', true, json::error_handler_t::replace);
  constexpr size_t kMax = 40;
  if (s.size() > kMax) s = s.substr(0, kMax - 3) + "...";
  return s;
}

std::string IntExpectation(int64_t lo, int64_t hi) {
  constexpr int64_t kHuge = int64_t{1} << 40;
  if (lo == 1 && hi >= kHuge) return "a positive integer";
  if (lo == 0 && hi >= kHuge) return "a non-negative integer";
  if (lo == 1) return fmt::format("a positive integer (at most {})", hi);
  if (lo == 0) return fmt::format("a non-negative integer (at most {})", hi);
  return fmt::format("an integer in [{}, {}]", lo, hi);
}

ObjectReader::ObjectReader(const json& obj, std::string_view source, std::string prefix)
    : obj_(obj), source_(source), prefix_(std::move(prefix)) {}

const json* ObjectReader::Find(std::string_view key) const {
  if (!obj_.is_object()) return nullptr;
  auto it = obj_.find(key);
  if (it == obj_.end() || it->is_null()) return nullptr;
  return &*it;
}

Status ObjectReader::Error(std::string_view key, std::string_view expected,
                           const json* got) const {
  if (got == nullptr)
    return Status::InvalidArgument(fmt::format("{}: field \"{}\": required field is missing "
                                               "(expected {})",
                                               source_, FieldName(key), expected));
  return Status::InvalidArgument(fmt::format("{}: field \"{}\": expected {}, got {}", source_,
                                             FieldName(key), expected, Snippet(*got)));
}

Status ObjectReader::ErrorMsg(std::string_view key, std::string_view message) const {
  return Status::InvalidArgument(
      fmt::format("{}: field \"{}\": {}", source_, FieldName(key), message));
}

StatusOr<int64_t> ObjectReader::Int(std::string_view key, int64_t lo, int64_t hi) const {
  const json* v = Find(key);
  // Wrong type or missing: the kind of value; wrong value: the range.
  const std::string kind = lo >= 1 ? "a positive integer"
                           : lo == 0 ? "a non-negative integer"
                                     : "an integer";
  const std::string what = IntExpectation(lo, hi);
  if (v == nullptr) return Error(key, kind, nullptr);
  int64_t x = 0;
  if (v->is_number_integer() && v->is_number_unsigned()) {
    uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) return Error(key, what, v);
    x = static_cast<int64_t>(u);
  } else if (v->is_number_integer()) {
    x = v->get<int64_t>();
  } else if (v->is_number_float()) {
    double d = v->get<double>();
    // Only integral values that fit the range; the range check is done in double first so the
    // cast below is always defined.
    if (!std::isfinite(d) || d != std::floor(d)) return Error(key, kind, v);
    if (d < static_cast<double>(lo) || d > static_cast<double>(hi)) return Error(key, what, v);
    x = static_cast<int64_t>(d);
  } else {
    return Error(key, kind, v);
  }
  if (x < lo || x > hi) return Error(key, what, v);
  return x;
}

StatusOr<int64_t> ObjectReader::IntOr(std::string_view key, int64_t dflt, int64_t lo,
                                      int64_t hi) const {
  if (!Has(key)) return dflt;
  return Int(key, lo, hi);
}

StatusOr<double> ObjectReader::Number(std::string_view key, double lo, double hi) const {
  const json* v = Find(key);
  const std::string what = fmt::format("a number in [{}, {}]", lo, hi);
  if (v == nullptr) return Error(key, what, nullptr);
  if (!v->is_number()) return Error(key, what, v);
  double d = v->get<double>();
  if (!std::isfinite(d) || d < lo || d > hi) return Error(key, what, v);
  return d;
}

StatusOr<double> ObjectReader::NumberOr(std::string_view key, double dflt, double lo,
                                        double hi) const {
  if (!Has(key)) return dflt;
  return Number(key, lo, hi);
}

StatusOr<double> ObjectReader::Positive(std::string_view key, double hi) const {
  const json* v = Find(key);
  const std::string what = fmt::format("a positive number (at most {})", hi);
  if (v == nullptr) return Error(key, "a positive number", nullptr);
  if (!v->is_number()) return Error(key, "a positive number", v);
  double d = v->get<double>();
  if (!std::isfinite(d) || d <= 0 || d > hi) return Error(key, what, v);
  return d;
}

StatusOr<double> ObjectReader::PositiveOr(std::string_view key, double dflt, double hi) const {
  if (!Has(key)) return dflt;
  return Positive(key, hi);
}

StatusOr<bool> ObjectReader::BoolOr(std::string_view key, bool dflt) const {
  const json* v = Find(key);
  if (v == nullptr) return dflt;
  if (!v->is_boolean()) return Error(key, "true or false", v);
  return v->get<bool>();
}

StatusOr<std::string> ObjectReader::String(std::string_view key) const {
  const json* v = Find(key);
  if (v == nullptr || !v->is_string()) return Error(key, "a string", v);
  return v->get<std::string>();
}

StatusOr<std::string> ObjectReader::StringOr(std::string_view key, std::string dflt) const {
  if (!Has(key)) return dflt;
  return String(key);
}

}  // namespace l2s::jsonio
