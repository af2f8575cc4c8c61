// Text that is safe to show: user-supplied strings (paths, flag values, file contents) quoted in
// one-line error messages and JSON output may hold control characters, bytes that are not UTF-8
// or megabytes of data. docs/LIMITS.md lists the bounds.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace l2s {

// Longest value quoted in a message, in bytes (longer values are clipped in the middle).
constexpr size_t kMaxQuotedBytes = 200;
// Longest one-line error message, in bytes.
constexpr size_t kMaxMessageBytes = 1000;

// `s` with every byte that is not printable ASCII or part of a well-formed UTF-8 sequence written
// as \xNN (newline and tab included, so the result is one line), clipped to about `max_bytes`
// (the start and the end kept, "...[N bytes]..." between).
std::string PrintableText(std::string_view s, size_t max_bytes = kMaxQuotedBytes);

// Whether `s` is well-formed UTF-8.
bool IsUtf8(std::string_view s);

}  // namespace l2s
