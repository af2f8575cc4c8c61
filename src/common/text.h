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

// `s` with ASCII letters in lower case (other bytes as they are).
std::string AsciiLower(std::string_view s);

// Whether `s` is well-formed UTF-8.
bool IsUtf8(std::string_view s);

// Optimal-string-alignment Damerau-Levenshtein distance: insertions, deletions, substitutions and
// transpositions of two adjacent characters each cost 1 (byte-wise, case-sensitive).
int EditDistance(std::string_view a, std::string_view b);

// Largest edit distance at which an unknown name of `length` bytes is taken for a misspelling
// (HF config keys, command-line flags): 0 below 6 bytes, 1 from 6 to 11, 2 from 12
// ("num_layers" -> 1, "first_k_dense_replace" -> 2).
int MaxTypoDistance(size_t length);

// The index of the candidate nearest an unknown name, or -1: `distance(i)` is candidate i's
// distance (an edit distance, or a rule's own: 0 for the same name in another case, 1 for a
// prefix, ...; negative: not a candidate); the smallest at most `max_distance` wins, ties the
// earlier candidate. Every "did you mean" of l2s picks its suggestion so (flags, HF config keys,
// models, GPUs).
template <typename Distance>
int NearestIndex(size_t candidates, int max_distance, Distance distance) {
  int best = -1, best_d = max_distance + 1;
  for (size_t i = 0; i < candidates; ++i) {
    const int d = distance(i);
    if (d >= 0 && d < best_d) {
      best = static_cast<int>(i);
      best_d = d;
    }
  }
  return best;
}

}  // namespace l2s
