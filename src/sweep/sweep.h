// Running a sweep (grid.h scenarios): each scenario is one `l2s plan ... --json` run, made by a
// Runner (ProcessRunner: the l2s binary in a child process, so scenarios run in parallel — the
// in-process RunCli path is serialized by a process-wide mutex because it redirects fds 1 and 2).
//
// Outputs in the output directory:
//   results.jsonl  the store: one line per finished scenario {"id","index","scenario","argv",
//                  "exit_code","stdout"} (stdout = the plan's --json output, byte for byte);
//                  a rerun skips every scenario whose id is already there (resuming). Rewritten
//                  in grid order at the end of a run.
//   results.csv / results.json / results.svg  one row per grid scenario, in grid order, derived
//                  from the store; they hold no wall-clock figures, so they are the same bytes
//                  whatever the --jobs count, the completion order or the number of MPI ranks.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "sweep/grid.h"

namespace l2s::sweep {

struct Outcome {
  int exit_code = 0;       // the plan's exit code (0 ok, 1 no valid plan, 2 bad input)
  std::string stdout_text; // what `l2s plan ... --json` printed
};
using Runner = std::function<Outcome(const Scenario&)>;

// Runs `exe plan ARGV...` (Scenario::command, "plan" unless set) in a child process (stderr
// dropped) and captures stdout.
Runner ProcessRunner(std::string exe);
// Runs `plan(["l2s", COMMAND, ARGV...])` in a forked child of this process (no exec: for l2s embedded in a
// program whose binary is not l2s, e.g. the Python package) with fd 1 on a pipe and fd 2 on
// /dev/null, and captures stdout; `plan` returns the exit code.
Runner ForkRunner(std::function<int(const std::vector<std::string>& args)> plan);
// The running binary's path (/proc/self/exe), "" if unreadable: the `exe` of ProcessRunner when
// l2s runs its own plans (sweeps, plan --gpu a,b,c).
std::string SelfExe();
// Whether `exe` names an l2s binary (its file name starts with "l2s"): ProcessRunner can run it.
bool IsL2sBinary(const std::string& exe);

// Combines every rank's finished store lines on rank 0 (MPI); single process: returns `mine`.
using Gather = std::function<std::vector<std::string>(const std::vector<std::string>& mine)>;

struct SweepOptions {
  std::string out_dir;
  int jobs = 1;          // worker threads in this process
  int rank = 0, ranks = 1;
  bool progress = true;  // "[k/N] label ... done" lines on stderr
};

struct SweepStats {
  size_t scenarios = 0, skipped = 0, ran = 0, valid = 0;
};

// One store line for a scenario's outcome (compact JSON, no newline).
std::string StoreLine(const Scenario& s, const Outcome& o);
// Reads results.jsonl (missing = empty): every line, and the ids it holds.
StatusOr<std::vector<nlohmann::json>> ReadStore(const std::string& path);
// The summary row of a scenario from its store entry (null entry = not run).
nlohmann::json Summary(const Scenario& s, const nlohmann::json& entry);
// results.csv text for the rows.
std::string CsvText(const std::vector<nlohmann::json>& rows);

// Runs the pending scenarios of this rank (index % ranks == rank), gathers, and on rank 0
// rewrites the store and writes results.csv/json/svg. IoError naming the path on failure.
Status RunSweep(const std::vector<Scenario>& scenarios, const SweepOptions& opt, const Runner& run,
                const Gather& gather, SweepStats* stats);

}  // namespace l2s::sweep
