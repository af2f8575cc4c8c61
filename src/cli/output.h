// Output that cannot be lost silently (docs/LIMITS.md "Output"):
//  - every output file is written to a temporary name beside it, flushed, synced and closed with
//    each step checked, then renamed over the target, so a full disk, a kill or a crash never
//    leaves a truncated or half-written file under the final name (an existing target that is not
//    a regular file, such as /dev/stdout or a FIFO, is written in place, still checked);
//  - standard output errors (a closed pipe, a full disk) end the command with one line and exit 2:
//    SIGPIPE is ignored, and main() checks stdout after the command ran;
//  - JSON is rendered with bytes that are not UTF-8 replaced (U+FFFD) instead of throwing.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace l2s::cli {

// Writes `contents` to `path` as described above. IoError names the path and the system's reason.
Status WriteFileAtomic(const std::string& path, std::string_view contents);

// Checks before the work starts that `path` can be written: its directory exists and a file can
// be created in it (a temporary probe, removed), or the existing non-regular target opens for
// writing. `flag` names the option in messages ("--out").
Status CheckWritable(const std::string& flag, const std::string& path);

// InvalidArgument when `out` names the same file as one of `inputs` (paths that do not exist are
// skipped): writing it would destroy the input. Each input is {flag, path}.
Status CheckNotAnInput(const std::string& flag, const std::string& out,
                       const std::vector<std::pair<std::string, std::string>>& inputs);

// j.dump(indent) that cannot throw on strings that are not UTF-8.
std::string DumpJson(const nlohmann::ordered_json& j, int indent = 2);

// Ignores SIGPIPE, so that writing to a closed pipe is an error the command reports.
void IgnoreSigpipe();

// Flushes stdout; on failure prints one line to stderr and returns kExitUsage (2), else `code`.
int FinishStdout(int code);

}  // namespace l2s::cli
