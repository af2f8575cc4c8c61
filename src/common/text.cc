#include "common/text.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace l2s {
namespace {

// Length of the well-formed UTF-8 sequence starting at s[i] (2..4 bytes), or 0.
size_t Utf8SeqLen(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t c = b(i);
  size_t n = 0;
  uint32_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;   // no overlong forms
    if (c == 0xED) hi = 0x9F;   // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;   // <= U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}

// Appends the unit starting at s[i] (one printable byte, one UTF-8 sequence or one \xNN escape)
// to `out`; returns the index after it.
size_t EscapeUnit(std::string_view s, size_t i, std::string* out) {
  const auto c = static_cast<uint8_t>(s[i]);
  if (c >= 0x20 && c < 0x7F) {
    *out += static_cast<char>(c);
    return i + 1;
  }
  if (const size_t n = c >= 0x80 ? Utf8SeqLen(s, i) : 0; n > 0) {
    out->append(s.substr(i, n));
    return i + n;
  }
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02X", c);
  *out += buf;
  return i + 1;
}

std::string Escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) i = EscapeUnit(s, i, &out);
  return out;
}

}  // namespace

bool IsUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<uint8_t>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = Utf8SeqLen(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string PrintableText(std::string_view s, size_t max_bytes) {
  if (max_bytes < 32) max_bytes = 32;
  std::string out;
  size_t i = 0;
  while (i < s.size() && out.size() < max_bytes) i = EscapeUnit(s, i, &out);
  if (i == s.size() && out.size() <= max_bytes) return out;
  // Too long: about half of the room for the head, the rest for the tail.
  const size_t keep = (max_bytes - 24) / 2;
  std::string head;
  size_t h = 0;
  while (h < s.size()) {
    std::string unit;
    const size_t next = EscapeUnit(s, h, &unit);
    if (head.size() + unit.size() > keep) break;
    head += unit;
    h = next;
  }
  // The tail starts at a unit boundary found by walking back from the end.
  size_t t = s.size() > keep ? s.size() - keep : 0;
  t = std::max(t, h);
  std::string tail;
  for (;; ++t) {
    while (t < s.size() && (static_cast<uint8_t>(s[t]) & 0xC0) == 0x80) ++t;
    tail = Escape(s.substr(t));
    if (tail.size() <= keep) break;
  }
  return head + "...[" + std::to_string(s.size()) + " bytes]..." + tail;
}

int EditDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  // Three rows of the dynamic programme: i-2, i-1, i.
  std::vector<int> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= m; ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

int MaxTypoDistance(size_t length) { return length >= 12 ? 2 : length >= 6 ? 1 : 0; }

}  // namespace l2s
