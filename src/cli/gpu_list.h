// Several GPU types in one --gpu flag (`l2s plan --gpu a,b,c`, `l2s capacity --gpu a,b,c`): the
// same question asked of each GPU type in a child run of the command with --gpu G --json (as
// sweeps run scenarios), one row per GPU type. The argument helpers both comparisons share.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "sweep/sweep.h"

namespace l2s::cli {

std::vector<std::string> SplitCommas(const std::string& s);

// Where `flag` ("--gpu") takes its value in `args` (the arguments after the command): "--flag X"
// or "--flag=X". `index` is -1 when the flag is absent.
struct FlagValue {
  int index = -1;       // the argument holding the value
  bool joined = false;  // "--flag=X" (the value after the '=')
  std::string value;
  // The argument that gives `flag` the value `v`, in the same form.
  std::string With(const std::string& flag, const std::string& v) const {
    return joined ? flag + "=" + v : v;
  }
};
FlagValue FindFlag(const std::vector<std::string>& args, const std::string& flag);

// `args` without --json, which *json says was there: the children always print JSON, the
// comparison's own --json only chooses its table's form.
std::vector<std::string> WithoutJsonFlag(const std::vector<std::string>& args, bool* json);

// Removes `flag` and its value ("--flag X" or "--flag=X") from `args`; its value, or `dflt`.
std::string TakeFlag(std::vector<std::string>* args, const std::string& flag,
                     const std::string& dflt);

// --gpu a,b,c and --price-per-gpu-hour (one price, or p1,p2,... one per GPU type in --gpu's
// order) of `args`: the GPU types (none empty, none twice) and the per-type prices (empty: one
// price or none). Errors are one line naming the flag.
struct GpuList {
  std::vector<std::string> gpus, prices;
  FlagValue gpu, price;
};
StatusOr<GpuList> ParseGpuList(const std::vector<std::string>& args);

// `args` as the first GPU type's run reads them, for checking the flags once before any run:
// --gpu's and --price-per-gpu-hour's values cut at their first comma (each kept in its form).
std::vector<std::string> FirstGpuTypeArgs(const std::vector<std::string>& args);

// GPU type k's run of `command` ("plan", "capacity"): its arguments `base` (after the command)
// with --gpu set to gpus[k] and, with one price per type (`prices` not empty),
// --price-per-gpu-hour set to prices[k]; each flag found where it stands in `base`.
sweep::Scenario GpuScenario(const std::string& command, size_t k,
                            const std::vector<std::string>& gpus,
                            const std::vector<std::string>& prices,
                            const std::vector<std::string>& base);

// --emit DIR in one GPU type's arguments `args` becomes DIR/<gpu> (each type's launch files in a
// folder of their own, not all written into one); returns DIR ("" without --emit).
std::string EmitPerGpuType(std::vector<std::string>* args, const std::string& gpu);

// Every GPU type's `l2s COMMAND ... --json` at once (one per core, cli::PlanRunner), in --gpu's
// order: GpuScenario's arguments with --emit DIR made DIR/<gpu>. On a terminal a progress line per
// start ("l2s capacity: h100 (1 of 3)..."; in logs and pipes a usage error every GPU shares stays
// the one line on stderr, CommonInputError).
struct GpuRuns {
  std::vector<sweep::Scenario> scenarios;
  std::vector<sweep::Outcome> outcomes;  // one per scenario
  std::string emit_dir;                  // --emit's DIR ("" without --emit)
};
GpuRuns RunPerGpuType(const std::string& command, const std::vector<std::string>& gpus,
                      const std::vector<std::string>& prices, const std::vector<std::string>& base);

// A plan's strategy text without the per-operator dims, for the table: a named engine decides
// them (they are its own, the same for every plan of it), the full text is in --json. Handles
// the disaggregated form "prefill 1x pp=1,...; decode 1x pp=1,...".
std::string WithoutOperatorDims(const std::string& text);

// `v` formatted with `fmt_spec` when a number, else "-".
std::string Cell(const nlohmann::json& v, const char* fmt_spec);

// The one input error of the whole comparison: every GPU type's run stopped on bad input (exit 2)
// for the same reason - a flag common to all, not a GPU the engine lacks - so it is said once, as
// the command says it, instead of a table of identical rows.
std::optional<std::string> CommonInputError(const std::vector<std::pair<int, std::string>>& outcomes);

// The GPU types whose run stopped on bad input (exit 2), said on one stderr line after the table
// that holds the others' results: "l2s: error: h100: REASON; b200: REASON".
void ReportBadInputs(const std::vector<std::pair<std::string, std::string>>& bad);

}  // namespace l2s::cli
