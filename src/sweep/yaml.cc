// The YAML subset reader (yaml.h): a line-based recursive descent over indentation.
#include "sweep/yaml.h"

#include <fmt/core.h>

#include <cctype>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace l2s::sweep {
namespace {

using nlohmann::json;

struct Line {
  int number = 0;   // 1-based
  int indent = 0;   // leading spaces
  std::string text; // without indentation and comment, right-trimmed
};

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

// Drops a `#` comment that is outside quotes and starts a line or follows a space.
std::string StripComment(const std::string& s) {
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
      return s.substr(0, i);
    }
  }
  return s;
}

class Parser {
 public:
  Parser(std::vector<Line> lines, std::string name) : lines_(std::move(lines)), name_(std::move(name)) {}

  StatusOr<json> Document() {
    if (lines_.empty()) return json::object();
    json v;
    Status s = Block(lines_[0].indent, &v);
    if (!s.ok()) return s;
    if (pos_ < lines_.size()) return Err(lines_[pos_], "unexpected indentation");
    return v;
  }

 private:
  Status Err(const Line& l, const std::string& what) const {
    return Status::ParseError(fmt::format("{}:{}: {} (sweep grids use a YAML subset: mappings, "
                                          "lists, scalars, [a, b] and {{k: v}})",
                                          name_, l.number, what));
  }

  static bool IsListItem(const std::string& t) { return t == "-" || t.rfind("- ", 0) == 0; }

  // Position of the `:` that ends a mapping key (outside quotes/brackets, followed by space/end).
  static size_t KeyColon(const std::string& t) {
    char quote = 0;
    int depth = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      const char c = t[i];
      if (quote) {
        if (c == quote) quote = 0;
        continue;
      }
      if (c == '"' || c == '\'') quote = c;
      else if (c == '[' || c == '{') ++depth;
      else if (c == ']' || c == '}') --depth;
      else if (c == ':' && depth == 0 && (i + 1 == t.size() || t[i + 1] == ' ')) return i;
    }
    return std::string::npos;
  }

  Status Block(int indent, json* out) {
    const Line& first = lines_[pos_];
    if (IsListItem(first.text)) return List(indent, out);
    if (KeyColon(first.text) != std::string::npos) return Map(indent, out);
    // A lone scalar document.
    ++pos_;
    return Scalar(first, first.text, out);
  }

  // The value after `key:` or `- `: inline text, or a nested block on the following lines.
  Status Value(const Line& l, const std::string& rest, int parent_indent, json* out) {
    if (!rest.empty()) return Scalar(l, rest, out);
    if (pos_ < lines_.size() && lines_[pos_].indent > parent_indent) return Block(lines_[pos_].indent, out);
    // `key:` followed by a list at the same indentation is valid YAML too.
    if (pos_ < lines_.size() && lines_[pos_].indent == parent_indent && IsListItem(lines_[pos_].text))
      return List(parent_indent, out);
    *out = nullptr;
    return Status::Ok();
  }

  Status Map(int indent, json* out) {
    *out = json::object();
    while (pos_ < lines_.size() && lines_[pos_].indent == indent && !IsListItem(lines_[pos_].text)) {
      const Line& l = lines_[pos_];
      const size_t c = KeyColon(l.text);
      if (c == std::string::npos) return Err(l, fmt::format("expected 'key: value', got '{}'", l.text));
      json key;
      Status s = Scalar(l, Trim(l.text.substr(0, c)), &key);
      if (!s.ok()) return s;
      const std::string k = key.is_string() ? key.get<std::string>() : key.dump();
      if (out->contains(k)) return Err(l, fmt::format("duplicate key '{}'", k));
      ++pos_;
      json v;
      s = Value(l, Trim(l.text.substr(c + 1)), indent, &v);
      if (!s.ok()) return s;
      (*out)[k] = std::move(v);
    }
    if (pos_ < lines_.size() && lines_[pos_].indent > indent) return Err(lines_[pos_], "unexpected indentation");
    return Status::Ok();
  }

  Status List(int indent, json* out) {
    *out = json::array();
    while (pos_ < lines_.size() && lines_[pos_].indent == indent && IsListItem(lines_[pos_].text)) {
      Line l = lines_[pos_];
      const std::string rest = l.text == "-" ? "" : Trim(l.text.substr(2));
      ++pos_;
      json v;
      if (!rest.empty() && KeyColon(rest) != std::string::npos && rest[0] != '{' && rest[0] != '[' &&
          rest[0] != '"' && rest[0] != '\'') {
        // `- key: value` starts a mapping whose further keys are indented to the key's column.
        const int item_indent = indent + static_cast<int>(l.text.size() - rest.size());
        lines_.insert(lines_.begin() + static_cast<long>(pos_), Line{l.number, item_indent, rest});
        Status s = Map(item_indent, &v);
        if (!s.ok()) return s;
      } else {
        Status s = Value(l, rest, indent, &v);
        if (!s.ok()) return s;
      }
      out->push_back(std::move(v));
    }
    if (pos_ < lines_.size() && lines_[pos_].indent > indent) return Err(lines_[pos_], "unexpected indentation");
    return Status::Ok();
  }

  Status Scalar(const Line& l, const std::string& text, json* out) {
    size_t i = 0;
    Status s = Flow(l, text, &i, out, /*top=*/true);
    if (!s.ok()) return s;
    if (i != text.size()) return Err(l, fmt::format("unexpected text after value: '{}'", text.substr(i)));
    return Status::Ok();
  }

  static void SkipSpace(const std::string& t, size_t* i) {
    while (*i < t.size() && (t[*i] == ' ' || t[*i] == '\t')) ++*i;
  }

  Status Flow(const Line& l, const std::string& t, size_t* i, json* out, bool top) {
    SkipSpace(t, i);
    if (*i >= t.size()) {
      *out = nullptr;
      return Status::Ok();
    }
    const char c = t[*i];
    if (c == '[' || c == '{') {
      const bool is_map = c == '{';
      const char close = is_map ? '}' : ']';
      *out = is_map ? json::object() : json::array();
      ++*i;
      SkipSpace(t, i);
      if (*i < t.size() && t[*i] == close) {
        ++*i;
        SkipSpace(t, i);
        return Status::Ok();
      }
      while (true) {
        // An entry left empty ("[a, , b]", "{, k: v}") is an error, not a null; one trailing
        // comma before the bracket closes ("[a, b, ]") is YAML's and ends the collection.
        if (*i < t.size() && t[*i] == ',') return Err(l, fmt::format("an empty entry in '{}'", c));
        json item;
        Status s = Flow(l, t, i, &item, false);
        if (!s.ok()) return s;
        SkipSpace(t, i);
        if (is_map) {
          if (*i >= t.size() || t[*i] != ':') return Err(l, "expected ':' in a {k: v} mapping");
          ++*i;
          json v;
          s = Flow(l, t, i, &v, false);
          if (!s.ok()) return s;
          const std::string k = item.is_string() ? item.get<std::string>() : item.dump();
          if (out->contains(k)) return Err(l, fmt::format("duplicate key '{}'", k));
          (*out)[k] = std::move(v);
        } else {
          out->push_back(std::move(item));
        }
        SkipSpace(t, i);
        if (*i >= t.size()) return Err(l, fmt::format("unclosed '{}'", c));
        if (t[*i] == ',') {
          ++*i;
          SkipSpace(t, i);
          if (*i < t.size() && t[*i] == close) {
            ++*i;
            SkipSpace(t, i);
            return Status::Ok();
          }
          continue;
        }
        if (t[*i] == close) {
          ++*i;
          SkipSpace(t, i);
          return Status::Ok();
        }
        return Err(l, fmt::format("expected ',' or '{}' at '{}'", close, t.substr(*i)));
      }
    }
    if (c == '"' || c == '\'') {
      std::string s;
      size_t j = *i + 1;
      for (; j < t.size() && t[j] != c; ++j) {
        if (c == '"' && t[j] == '\\' && j + 1 < t.size()) {
          ++j;
          const char e = t[j];
          s += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        } else {
          s += t[j];
        }
      }
      if (j >= t.size()) return Err(l, "unterminated quoted string");
      *i = j + 1;
      SkipSpace(t, i);
      *out = s;
      return Status::Ok();
    }
    if (c == '&' || c == '*' || c == '!' || c == '|' || c == '>')
      return Err(l, "anchors, aliases, tags and block scalars are not supported");
    // Plain scalar: to the end (block context) or to , ] } : (flow context).
    size_t j = *i;
    if (top) {
      j = t.size();
    } else {
      while (j < t.size() && t[j] != ',' && t[j] != ']' && t[j] != '}' &&
             !(t[j] == ':' && (j + 1 == t.size() || t[j + 1] == ' ')))
        ++j;
    }
    const std::string word = Trim(t.substr(*i, j - *i));
    *i = j;
    if (top && (word.find(": ") != std::string::npos))
      return Err(l, fmt::format("a value cannot hold ': ' unquoted: '{}'", word));
    *out = PlainValue(word);
    return Status::Ok();
  }

  static json PlainValue(const std::string& w) {
    if (w.empty() || w == "~" || w == "null") return nullptr;
    if (w == "true") return true;
    if (w == "false") return false;
    char* end = nullptr;
    const long long n = std::strtoll(w.c_str(), &end, 10);
    if (end && *end == 0 && (std::isdigit(static_cast<unsigned char>(w.back())))) return n;
    const double d = std::strtod(w.c_str(), &end);
    if (end && *end == 0 && std::isdigit(static_cast<unsigned char>(w.back()))) return d;
    return w;
  }

  std::vector<Line> lines_;
  std::string name_;
  size_t pos_ = 0;
};

}  // namespace

StatusOr<nlohmann::json> ParseYamlSubset(const std::string& text, const std::string& name) {
  std::vector<Line> lines;
  size_t start = 0;
  int number = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    ++number;
    std::string raw = text.substr(start, end - start);
    start = end + 1;
    if (raw.find('\t') != std::string::npos && Trim(raw).size() && raw.find_first_not_of(" \t") > 0 &&
        raw.substr(0, raw.find_first_not_of(" \t")).find('\t') != std::string::npos)
      return Status::ParseError(fmt::format("{}:{}: tabs cannot indent YAML", name, number));
    const std::string body = Trim(StripComment(raw));
    if (body.empty() || body == "---") continue;
    if (body == "...") break;
    if (body[0] == '&' || body[0] == '*' || body[0] == '!' || body[0] == '|' || body[0] == '>')
      return Status::ParseError(fmt::format("{}:{}: anchors, tags and block scalars are not supported", name, number));
    const int indent = static_cast<int>(raw.find_first_not_of(' '));
    lines.push_back(Line{number, indent, body});
    if (end == text.size()) break;
  }
  return Parser(std::move(lines), name).Document();
}

}  // namespace l2s::sweep
