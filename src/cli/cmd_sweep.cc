// l2s sweep FILE: runs a scenario grid (src/sweep) — flags only; the logic is in l2s_sweep.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/run.h"
#include "sweep/grid.h"
#include "sweep/mpi.h"
#include "sweep/sweep.h"

namespace l2s::cli {
namespace {

struct SweepFlags {
  std::string file;
  std::string out = "sweep-results";
  int jobs = 0;  // 0 = all cores (divided among the MPI ranks of this node)
  bool quiet = false;
  std::string l2s_binary;
};

int Run(const SweepFlags& f) {
  std::optional<sweep::MpiSession> mpi;
  if (sweep::MpiBuilt() && sweep::LaunchedByMpi()) mpi.emplace();
  const int rank = mpi ? mpi->rank() : 0, ranks = mpi ? mpi->size() : 1;
  auto grid = sweep::LoadGrid(f.file);
  if (!grid.ok()) return Fail(grid.status());
  const auto scenarios = sweep::Expand(*grid);
  int jobs = f.jobs;
  if (jobs <= 0) {
    int local = 1;
    if (const char* l = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"); l && mpi) local = std::max(1, std::atoi(l));
    jobs = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / local);
  }
  // The l2s binary plans each scenario in a child process; where this process is not it (the
  // Python package), a forked child of this process runs the plan in-process.
  const sweep::Runner runner = PlanRunner(f.l2s_binary);
  sweep::SweepOptions opt;
  opt.out_dir = f.out;
  opt.jobs = jobs;
  opt.rank = rank;
  opt.ranks = ranks;
  opt.progress = !f.quiet;
  sweep::Gather gather = [&](const std::vector<std::string>& mine) {
    return mpi ? mpi->Gather(mine) : mine;
  };
  sweep::SweepStats st;
  const Status s = sweep::RunSweep(scenarios, opt, runner, gather, &st);
  if (!s.ok()) return Fail(s);
  if (rank == 0 && !f.quiet)
    fmt::print(stderr, "l2s sweep: {} scenarios ({} already in the store, {} run{}), {} with a valid plan; results in {}/\n",
               st.scenarios, st.skipped, st.scenarios - st.skipped,
               ranks > 1 ? fmt::format(" over {} MPI ranks", ranks) : "", st.valid, f.out);
  return kExitOk;
}

}  // namespace

Runner RegisterSweep(CLI::App& app) {
  auto f = std::make_shared<SweepFlags>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Plan every scenario of a grid (JSON/YAML); resumable; parallel over cores and MPI ranks");
  cmd->add_option("file", f->file, "grid file: models, gpus, counts, workloads, slos, engines, prices, plan")
      ->required();
  cmd->add_option("--out", f->out, "output directory (default sweep-results)");
  cmd->add_option("--jobs", f->jobs, "scenarios run at once per process (default: all cores)")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--quiet", f->quiet, "no progress lines on stderr");
  cmd->add_option("--l2s-binary", f->l2s_binary, "the l2s binary that plans each scenario (default: this one)");
  return [f] { return Run(*f); };
}

}  // namespace l2s::cli
