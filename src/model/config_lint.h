// Input checks of a model that loads: a HuggingFace config.json whose unknown keys look like
// misspellings of keys the importer reads, known keys with values that do not parse, and a total
// parameter count far from the size in the model's name. Each check returns warnings (one line
// each, no prefix; the CLI prints them as "l2s: warning: <line>"). None of them changes the model:
// a config that parses is still planned as written. docs/MODELS.md "Input checks".
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/text.h"
#include "model/model.h"

namespace l2s {

// EditDistance and MaxTypoDistance (the misspelling rule) are in common/text.h.

// The keys the importer (hf_config.cc and its reader files) reads at the top level or under
// text_config, and the common HuggingFace keys it deliberately ignores (token ids, dropout, rope
// settings, ...).
const std::vector<std::string_view>& HfImporterKeys();
const std::vector<std::string_view>& HfIgnoredKeys();
bool IsKnownHfKey(std::string_view key);

// Warnings about the config object `root` (and its text_config object, if any), in key order:
//  - an unknown key within MaxTypoDistance of a known key that the same object does not set:
//      <source>: unknown field "first_k_dense_replac" (did you mean "first_k_dense_replace"?);
//      it is ignored
//  - torch_dtype / dtype that is not a torch dtype name:
//      <source>: field "torch_dtype": unrecognised value "bfloat61" (did you mean "bfloat16"?;
//      expected one of ...); it is ignored
// Values the importer reads are checked by the importer itself (a bad one is an error). Only
// the first 4,096 keys of an object are checked (real configs have under 300).
std::vector<std::string> LintHfConfig(const nlohmann::json& root, std::string_view source);

// A size in a model name: "70B", "8x22B" (= 176B), "1.6t", "235B-A22B" (total 235B, active 22B),
// "17B-128E" (Llama 4: with an expert-count token the size is the active one). Tokens stand
// between non-alphanumeric characters (or the ends); units M, B, T in either case. The first
// total and the first active token count.
struct NamedSize {
  double total_params = 0;   // 0 = not named
  double active_params = 0;  // 0 = not named
  std::string total_token, active_token;
};
std::optional<NamedSize> ParseNamedSize(std::string_view name);

// Parameters outside [0.5x, 2x] of the named size: counts.h's total (and active, when the name
// gives an active size) against the name's. "" when the name gives no size or the counts agree.
//   <name>: the config gives 3.52T parameters, 50.3x the 70B in its name; check hidden_size,
//   intermediate_size, num_hidden_layers and the expert counts
std::string NamedSizeWarning(const ModelSpec& m, std::string_view name);

// The names a config is known by, in order: its "_name_or_path" when that is a non-empty string,
// then `fallback` (a repo id or file name). The size check reads the first that names a size.
std::vector<std::string> ConfigModelNames(const nlohmann::json& root, std::string_view fallback);

}  // namespace l2s
