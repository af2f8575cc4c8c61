// A small YAML subset reader for sweep grids (no yaml-cpp dependency): block mappings
// (`key: value`), block lists (`- item`, items may be mappings), flow lists `[a, b]` and flow
// mappings `{k: v}`, plain/single/double-quoted scalars and `#` comments. Anchors, tags,
// multi-line scalars and multiple documents are not supported (a clear error names the line).
// Scalars become JSON numbers, true/false, null or strings, so a grid reads the same as JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace l2s::sweep {

// Parses `text` (`name` is used in messages: "NAME:LINE: ..."). Returns a ParseError on input
// outside the subset.
StatusOr<nlohmann::json> ParseYamlSubset(const std::string& text, const std::string& name);

}  // namespace l2s::sweep
