// The problem flags shared by `eval`, `explain`, `space`, `plan` and `compare`:
//   --model NAME_OR_PATH  --gpu TYPE  --gpus N | --nodes N  [--gpus-per-node 8]  --cluster FILE
//   --mode serve|decode|prefill  --isl I  --osl O  --context C  --dtype bf16|fp8|fp4
//   --kv-dtype bf16|fp8  --slo ttft_ms=X,tpot_ms=Y  --max-batch B
//   --engine trtllm|sglang|vllm|ideal  --adp-balance on|off  --max-num-tokens N
//   --cuda-graph-max-batch N  --mtp K  --mtp-accept A
// Add them to a subcommand with AddProblemFlags, then call BuildProblem after parsing.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "common/status.h"
#include "engine/engine.h"
#include "plan/work_bound.h"
#include "sim/simulator.h"

namespace l2s::cli {

// Bounds of the problem flags (docs/LIMITS.md). GPU counts stop at the cluster file's 2^24;
// lengths at 2^24 tokens (beyond every model's context); the batch bound keeps the auto-batch
// search's doubling far from int overflow.
constexpr int64_t kMaxGpusFlag = int64_t{1} << 24;
constexpr int64_t kMaxGpusPerNode = int64_t{1} << 16;
constexpr int64_t kMaxTokens = int64_t{1} << 24;
constexpr int64_t kMaxBatchFlag = int64_t{1} << 20;
constexpr double kMaxSloMs = 1e9;  // about 11.6 days
constexpr const char* kDefaultGpu = "h100";
// plan / compare: simulator calls per search (10^8 calls take hours: a 4,000-call search takes
// about a second), seeds, and the oracle's time limit (one week).
constexpr int64_t kMaxBudget = 100'000'000;
constexpr int64_t kMaxSeed = 4'294'967'295;
constexpr int kMaxSeeds = 1000;
constexpr double kMaxOracleSeconds = 7 * 24 * 3600.0;
// The oracle's work bound (plan, compare): --oracle-calls N, the oracle's simulator calls (its
// cost attributions and incumbent re-evaluations; 0 skips it). A bound that counts work gives the
// same answer on a loaded machine. The deprecated --oracle-seconds S is read as
// S x kOracleCallsPerSecond calls (plan/work_bound.h: the oracle's rate on one core).
constexpr int64_t kMaxOracleCalls = int64_t{1} << 40;
// Adds --oracle-calls (default *calls; `zero_means` what 0 does, e.g. "skips it") and
// --oracle-seconds (deprecated; *seconds < 0: not given).
// A count flag's check: 1 to `hi` (0 is an error naming the flag, not the default a 0 would
// otherwise stand for).
inline CLI::Range CountRange(int64_t hi) { return CLI::Range(int64_t{1}, hi); }
// CLI::Range for a real-valued flag, with Range's message ("--rate must be from 0 to 1000000, got
// nan" once run.cc words it), that also refuses nan: CLI::Range lets it through (every comparison
// with nan is false), and a nan price or rate was then taken as not given, silently.
inline CLI::Validator FiniteRange(double lo, double hi) {
  CLI::Validator v(
      [lo, hi](std::string& input) {
        double x = 0;
        if (!CLI::detail::lexical_cast(input, x) || !(x >= lo && x <= hi))
          return std::string("Value ") + input + " not in range " + std::to_string(lo) + " to " +
                 std::to_string(hi);
        return std::string();
      },
      "FLOAT in [" + CLI::detail::to_string(lo) + " - " + CLI::detail::to_string(hi) + "]");
  return v;
}

void AddOracleFlags(CLI::App* cmd, int64_t* calls, double* seconds, const char* zero_means);
// The bound in calls: seconds x kOracleCallsPerSecond when --oracle-seconds was given, else calls.
int64_t OracleCallsOf(int64_t calls, double seconds);

struct ProblemFlags {
  std::string model;
  // --model-id of the commands that print or write launch commands (plan, capacity; registered
  // by them): the checkpoint the commands load (ModelSpec::launch_id). "" = resolved.
  std::string model_id;
  // plan's --instance-gpus (0: not given): the aggregated replicas' size, which is what a
  // single-node engine (ATOM) must fit in one node (ApplyEngineFlags).
  int instance_gpus = 0;
  std::string gpu;  // "" = kDefaultGpu (and not given: --cluster brings its own GPU)
  int gpus = 0;
  int nodes = 0;
  int gpus_per_node = 0;  // 0: the GPU's own NVLink domain (8 on HGX nodes, 72 on GB200/GB300)
  std::string cluster;
  std::string mode;
  int64_t isl = 0, osl = 0, context = 0;
  std::string dtype, kv_dtype, attn_dtype;
  std::string slo;
  int max_batch = 0;
  // The user's price, $ per GPU-hour (plan/cost.h); < 0 = not given (the cluster file's, if any).
  double price_per_gpu_hour = -1;
  // Engine (docs/dev/COST_MODEL.md "Engines"): scheduler and the defaults of the limits below.
  std::string engine;
  std::string adp_balance;     // "on" / "off" (TensorRT-LLM attention_dp_config.enable_balance)
  int max_num_tokens = 0;      // 0 = the engine's default
  int cuda_graph_max_batch = 0;
  // Speculative decoding: -1 = not given (plan searches 0..3 on models with MTP layers in
  // decode/serve; eval/explain keep the strategy's mtp).
  int mtp = -1;
  double mtp_accept = 0;
  std::string draft_model;  // --draft-model: an EAGLE-3 draft for a model without MTP layers
  // AMD's quantised all-reduce (sim/simulator.h QuickReduce): "off", "int6" or "int4"; "" = off.
  std::string quick_reduce;
};

// Defaults differ per command (plan's built-in problem is gpt-moe-1.6t decode at 16k on 1,024
// H100s); pass them in `defaults`.
void AddProblemFlags(CLI::App* cmd, ProblemFlags* f);
// The engine and speculative-decoding flags (part of AddProblemFlags): --engine, --adp-balance,
// --max-num-tokens, --cuda-graph-max-batch, --mtp, --mtp-accept, --quick-reduce; ApplyEngineFlags checks them
// (one line naming the flag) and sets the workload (BuildProblem calls it).
// The engine --engine names (kIdeal when none, "ideal" or "none"; BuildProblem rejects the rest).
engine::EngineId LaunchEngineOf(const ProblemFlags& f);
void AddEngineFlags(CLI::App* cmd, ProblemFlags* f);
Status ApplyEngineFlags(const ProblemFlags& f, Problem* p);
// --model: a preset, a config path or a HuggingFace repo id (model/model_source.h), with its input
// checks (model/config_lint.h) printed as "l2s: warning: ..." lines on stderr.
StatusOr<ModelSpec> LoadModelWithWarnings(const std::string& name_or_path);
// The mode the flags ask for: --mode, else serve when --osl is given (only serving has outputs);
// "" leaves the default, decode.
std::string AskedMode(const ProblemFlags& f);
// The lengths `mode` reads: decode --context, prefill --isl, serve --isl and --osl. UnreadLength
// is the first length flag given that `mode` would ignore ("--isl", "--osl", "--context"; nullptr
// when none); CheckLengthsOfMode says it as InvalidArgument naming the flag (`f.mode` empty: the
// default decode, or serve when --osl is given).
const char* UnreadLength(const ProblemFlags& f, Mode mode);
Status CheckLengthsOfMode(const ProblemFlags& f, Mode mode);
// Validates every flag and builds the problem (the model through LoadModelWithWarnings); errors
// are one line naming the flag. Without --mode the workload serves when --osl is given, else
// decodes.
StatusOr<Problem> BuildProblem(const ProblemFlags& f);
// "ttft_ms=2000,tpot_ms=50" -> workload SLOs. Each key at most once, plain decimal numbers of
// milliseconds in (0, kMaxSloMs], no empty entries.
Status ParseSlo(const std::string& text, Workload* w);

}  // namespace l2s::cli
