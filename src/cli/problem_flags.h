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
#include "sim/simulator.h"

namespace l2s::cli {

struct ProblemFlags {
  std::string model;
  std::string gpu = "h100";
  int gpus = 0;
  int nodes = 0;
  int gpus_per_node = 8;
  std::string cluster;
  std::string mode;
  int64_t isl = 0, osl = 0, context = 0;
  std::string dtype, kv_dtype;
  std::string slo;
  int max_batch = 0;
  // Engine (docs/COST_MODEL.md "Engines"): scheduler and the defaults of the limits below.
  std::string engine;
  std::string adp_balance;     // "on" / "off" (TensorRT-LLM attention_dp_config.enable_balance)
  int max_num_tokens = 0;      // 0 = the engine's default
  int cuda_graph_max_batch = 0;
  // Speculative decoding: -1 = not given (plan searches 0..3 on models with MTP layers in
  // decode/serve; eval/explain keep the strategy's mtp).
  int mtp = -1;
  double mtp_accept = 0;
};

// Defaults differ per command (plan's built-in problem is gpt-moe-1.6t decode at 16k on 1,024
// H100s); pass them in `defaults`.
void AddProblemFlags(CLI::App* cmd, ProblemFlags* f);
// The engine and speculative-decoding flags (part of AddProblemFlags): --engine, --adp-balance,
// --max-num-tokens, --cuda-graph-max-batch, --mtp, --mtp-accept; ApplyEngineFlags checks them
// (one line naming the flag) and sets the workload (BuildProblem calls it).
void AddEngineFlags(CLI::App* cmd, ProblemFlags* f);
Status ApplyEngineFlags(const ProblemFlags& f, Problem* p);
// Validates every flag and builds the problem; errors are one line naming the flag.
StatusOr<Problem> BuildProblem(const ProblemFlags& f);
// "ttft_ms=2000,tpot_ms=50" -> workload SLOs.
Status ParseSlo(const std::string& text, Workload* w);

}  // namespace l2s::cli
