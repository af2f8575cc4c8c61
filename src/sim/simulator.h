// The simulator: the environment every searcher optimises against. Evaluate(strategy) builds the
// per-GPU program (strategy/program.h), costs each step with the calibrated kernel and collective
// models (kernels.h, collectives.h), composes pipeline stages, checks memory and SLOs, and returns
// throughput. Evaluate allocates nothing; Describe* helpers (for the CLI) may.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/dtype.h"
#include "common/status.h"
#include "hw/hw.h"
#include "model/model.h"
#include "sim/collectives.h"
#include "sim/kernels.h"
#include "strategy/program.h"
#include "strategy/strategy.h"

namespace l2s {

enum class Mode { kDecode, kPrefill, kServe };
const char* ModeName(Mode m);
bool ParseMode(const std::string& s, Mode* out);

// The serving engine whose scheduler and limits a simulation follows (docs/dev/COST_MODEL.md
// "Engines"). kIdeal: no engine limits, prefill spread evenly over the attention-dp ranks.
enum class Engine : uint8_t { kIdeal, kTrtllm, kSglang, kVllm };
const char* EngineName(Engine e);  // "ideal", "trtllm", "sglang", "vllm"
// Engine family of a name as measurement files and --engine spell it ("trtllm-0.17",
// "TensorRT-LLM v1.0", "dynamo+trtllm" -> kTrtllm; "sglang-0.5.2" -> kSglang; "vllm" -> kVllm;
// "", "none", "ideal" -> kIdeal). False for any other family (an unknown engine).
bool ParseEngine(const std::string& name, Engine* out);
// An engine label as measurement files, notes and --engine spell it: the engine it names and
// whether a Dynamo front end is in front of it. Words are split at '-', '_', '+', '/', ',', ':'
// and spaces, versions dropped, the first engine word counts (vllm, sglang, atom, megatron;
// trtllm / tensorrt / trt -> "trtllm"), platform and remark words do not ("sglang-0.5.5-rocm",
// "AMD ATOM" -> sglang, atom); a parenthesised remark does not count ("vllm (AITER + MoRI)" ->
// vllm) but for the backend of a Dynamo front end ("Dynamo (TensorRT-LLM)" -> dynamo + trtllm).
struct EngineNameParts {
  std::string family;   // "trtllm", "sglang", "vllm", "atom", "megatron"; "" for no engine ("",
                        // "none", "ideal"); else the label's words joined (an unknown engine)
  bool dynamo = false;  // "dynamo" is one of the words
  bool ideal = false;   // "ideal" or "none" is (no engine, said so)
};
EngineNameParts ParseEngineName(std::string_view name);
// The words of an engine label in order, as ParseEngineName reads them: lower-cased, split at the
// separators above and parentheses, each with the release it carries - a release word ("0.17",
// "v1.1") has no word, a release glued to a word is split off ("vllm0.6" -> "vllm", "0.6").
struct EngineNameWord {
  std::string word;     // "" for a release word
  std::string release;  // "" for none
};
std::vector<EngineNameWord> EngineNameWords(std::string_view name);
// ParseEngineName(engine).family: "trtllm-0.17", "TensorRT-LLM v0.17", "trt-llm" -> "trtllm";
// "vLLM 0.6.3" -> "vllm"; "dynamo+trtllm" -> "trtllm"; "" for no engine, "none" or "ideal".
std::string EngineFamily(std::string_view engine);
// Limits an engine applies when the user states none (per attention-dp rank).
struct EngineDefaults {
  int max_batch;             // largest batch (sequences per rank)
  int max_num_tokens;        // tokens per rank per step (chunked-prefill budget); 0 = unlimited
  int cuda_graph_max_batch;  // largest decode batch captured as a CUDA graph; 0 = unlimited
};
EngineDefaults DefaultsOf(Engine e);
// The engine's own cap on running requests per attention-dp rank when the launch sets none, for a
// strategy's MTP depth and attention-dp ranks: DefaultsOf(e).max_batch, except SGLang with
// speculative decoding (MTP runs as EAGLE), whose server sets max_running_requests to 48 when it
// is not given (server_args.py, _handle_speculative_decoding) and whose scheduler divides it
// among the dp-attention ranks (at least 1 each).
int DefaultMaxRunning(Engine e, int mtp, int dp);

// The memory fraction each engine runs with when its launch gives none: vLLM (and ATOM)
// gpu_memory_utilization 0.90 of the GPU; SGLang mem_fraction_static of the GPU for weights and
// the KV pool, by --tp-size `tp_size` (sglang 0.4-0.5 ServerArgs: 0.88 at 1 GPU, 0.87 from 2,
// 0.85 from 4, 0.81 from 8, 0.79 from 16); TensorRT-LLM free_gpu_memory_fraction 0.90 of what
// weights and activations leave; 1 for the ideal engine. The launch flags (launch/command.cc) are
// at least these. The request-level simulator's KV pool stays the whole rest of the GPU (HBM -
// weights - activations - reserve, serve/step_cost.h): pools cut to these defaults were tried
// and moved measurements.csv from 5.9% to 6.3% median (its TensorRT-LLM factor refitted above 1,
// an engine faster than the ideal one), docs/dev/COST_MODEL.md "Engine limits".
double DefaultMemFraction(Engine e, int tp_size);

// Mean tokens emitted per decode step with `mtp` speculative tokens by the published acceptance
// curve (DeepSeek-R1 MTP on TensorRT-LLM, ../shared/reference/MEASUREMENTS.md): 1 for mtp = 0,
// 1.92, 2.58, 2.82, 2.99, 3.01 for mtp = 1..5, 3.01 beyond (the curve has flattened).
double DefaultMtpAccept(int mtp);

// AMD's quantised all-reduce, QuickReduce (ROCm builds of SGLang and vLLM on MI300-series and
// MI355X GPUs; off unless the launch sets ROCM_QUICK_REDUCE_QUANTIZATION, SGLang, or
// VLLM_ROCM_QUICK_REDUCE_QUANTIZATION, vLLM, to INT6 or INT4). A tensor-parallel all-reduce of
// 2, 4 or 8 GPUs of one node whose buffer is at least the engine's minimum for the level runs as
// a two-shot all-reduce of its blocks of 32 values quantised to 4 or 6 bits with one 16-bit scale
// each: its wire bytes are 4.5 / 16 (INT4) or 6.5 / 16 (INT6) of the fp16 buffer (bf16 is cast to
// fp16 first, the engines' default; ../shared/calibration/OTHER-MEASUREMENTS.md section 3: "Q4
// reduces 8 MB FP16 to 2.25 MB on the wire").
enum class QuickReduce : uint8_t { kOff, kInt6, kInt4 };
// The share of an all-reduce's bytes on the wire under `q` for a group of `group` GPUs of one
// node and a buffer of `bytes` (the engines' minimum sizes for fp16 kernels, SGLang/vLLM
// quick_all_reduce.py _QR_MIN_SIZE: INT4 1 / 2 / 2 MiB and INT6 2 / 4 / 4 MiB at 2 / 4 / 8 GPUs;
// at most 2 GiB); 1 where QuickReduce does not run.
double QuickReduceWireShare(QuickReduce q, int group, double bytes);
// Whether QuickReduce takes the all-reduces of a group of `group` GPUs of one node (2, 4 or 8).
bool QuickReduceTakesGroup(int group);

struct Workload {
  Mode mode = Mode::kDecode;
  int64_t context = 16384;  // decode: KV length each generated token attends
  int64_t kv_hold = 0;      // decode: KV tokens each sequence reserves in memory (0 = context);
                            // the decode pool of a disaggregated plan attends the average
                            // context isl + osl/2 but reserves isl + osl (sim/disagg.h)
  int64_t isl = 1024;       // prefill / serve: prompt length
  int64_t osl = 1024;       // serve: output length
  DType weight = DType::kBF16;
  DType kv = DType::kBF16;
  // Precision of the attention math: bf16 (the measured kernels; an FP8 KV cache is dequantised)
  // or fp8 (FP8 attention kernels: FA3 FP8, FlashMLA's FP8 path), which run QK^T and PV on the
  // FP8 tensor cores (docs/dev/COST_MODEL.md "Kernels", MLA).
  DType attn = DType::kBF16;
  double ttft_ms = 0;       // SLOs; 0 = none
  double tpot_ms = 0;
  int max_batch = 4096;     // upper bound for batch "auto" (engine max_batch_size per rank)
  // Engine limits (0 = the engine's default, see docs/dev/COST_MODEL.md "Engine limits"):
  int max_num_tokens = 0;        // tokens one rank processes per step (chunked-prefill size)
  int cuda_graph_max_batch = 0;  // largest decode batch replayed as a CUDA graph
  // Speculative decoding: mean tokens emitted per decode step including the verified one, for
  // strategies with mtp > 0; 0 = the published acceptance curve (docs/dev/COST_MODEL.md "MTP").
  double mtp_accept = 0;
  // Dispersion of expert popularity (lognormal sigma, sim/moe_load.h); < 0 = the value fitted on
  // measured routing (Simulator::kDefaultRoutingSigma), 0 = uniform routing.
  double routing_sigma = -1;
  // Scheduler (docs/dev/COST_MODEL.md "Attention-DP imbalance"): which engine's serve-mode
  // scheduling the step follows, and TensorRT-LLM's attention-DP balancing
  // (attention_dp_config.enable_balance; -1 = the engine's default, off).
  Engine engine = Engine::kIdeal;
  int adp_balance = -1;
  // One pool of a disaggregated deployment (sim/disagg.h PrefillProblem / DecodeProblem, and the
  // pools of the request-level simulator). vLLM moves a MoE layer's tokens between
  // data-parallel ranks with its default backend, all-gather + reduce-scatter, in an aggregated
  // server, and with an all-to-all in P/D pools, where launch sets --all2all-backend (DeepEP on
  // NVIDIA, MoRI on AMD); other engines use an all-to-all in both.
  bool disagg_pool = false;
  // The engine's request overhead (Simulator::RequestOverheadSeconds) in TTFT; false: without it
  // (what `l2s validate --fit-request-overhead` fits against).
  bool request_overhead = true;
  // The named engine's request overhead in seconds (Simulator::RequestOverheadSeconds of its
  // name: a family fitted on its own rows, such as ATOM's, which the simulator schedules as
  // vLLM); negative: that of `engine`. Set with engine_factor wherever an engine is named.
  double request_overhead_s = -1;
  // The named engine's fitted throughput factor (Simulator::EngineFactor of its name; 1 for the
  // ideal engine): every GPU step of the program takes 1 / engine_factor as long, so throughput
  // is engine_factor x the ideal engine's and TPOT and the steps of TTFT 1 / engine_factor x
  // (the request overhead is a measured time of its own and is not scaled). Set wherever an
  // engine is named (--engine, the engines' table, validate's rows); validate's fit sets 1.
  double engine_factor = 1.0;
  // AMD's quantised all-reduce (QuickReduce above): priced on the tensor-parallel all-reduces of
  // one node where it runs; kOff on every other GPU.
  QuickReduce quick_reduce = QuickReduce::kOff;
};

// Sets `w`'s engine_factor and request_overhead_s to those of the engine named `name`
// (Simulator::EngineFactor and RequestOverheadSeconds of the name), as every place that names an
// engine (--engine, the engines' table, launch re-pricing, validate's rows) sets them together.
void SetEngineFigures(const std::string& name, Workload* w);

struct Problem {
  ModelSpec model;
  ClusterSpec cluster;
  Workload workload;
};

// The workload's QuickReduce where it runs (an AMD GPU), kOff elsewhere: what the simulator prices
// and the launch commands turn on.
QuickReduce QuickReduceInForce(const Problem& p);

// Why an evaluation is invalid (the text comes from Simulator::Reason).
enum class Verdict : uint8_t { kValid, kStructure, kMemory, kTtft, kTpot, kNoBatch };

struct Evaluation {
  Verdict verdict = Verdict::kStructure;
  bool valid() const { return verdict == Verdict::kValid; }
  double tokens_per_s = 0;          // whole deployment (output tokens; input tokens in prefill)
  double tokens_per_s_per_gpu = 0;
  double ttft_s = 0;                // time to first token
  double tpot_s = 0;                // time per output token (decode step latency through all stages)
  double stage_s = 0;               // slowest pipeline stage's time for one step
  int batch = 0;                    // sequences per attention-dp rank (the chosen one when auto)
  int slowest_stage = 0;
  // Memory per GPU, bytes (worst stage).
  // state_bytes: fixed recurrent state of linear-attention / Mamba layers (not in kv_bytes).
  double weight_bytes = 0, kv_bytes = 0, state_bytes = 0, act_bytes = 0, reserve_bytes = 0;
  double mem_bytes = 0, mem_capacity_bytes = 0;
  // Where the time of the slowest stage goes (seconds per step).
  std::array<double, kNumOps> compute_s_by_op{};
  std::array<double, kNumOps> comm_s_by_op{};
  std::array<double, 7> comm_s_by_kind{};  // indexed by CommKind
  double compute_s = 0, comm_s = 0;
  // Speculative decoding: tokens emitted per decode step (1 without MTP) and the slowest stage's
  // seconds spent in the MTP draft passes (included in stage_s).
  double accept = 1;
  double mtp_s = 0;
  // Serve mode: step time of the whole model divided by its time with prefill spread evenly
  // over the attention-dp ranks (1 = balanced; docs/dev/COST_MODEL.md "Attention-DP imbalance").
  double adp_imbalance = 1;
};

// Time of one section by operator and collective kind (seconds per step).
struct SectionBreakdown {
  std::array<double, kNumOps> compute_s_by_op{};
  std::array<double, kNumOps> comm_s_by_op{};
  std::array<double, 7> comm_s_by_kind{};
};

class Simulator {
 public:
  explicit Simulator(Problem problem);

  const Problem& problem() const { return p_; }
  // Replaces the workload's SLOs (ms; 0 = none). Nothing the constructor precomputes depends on
  // them: the disaggregated oracle (search/joint.h) re-solves one pool at several limits.
  void SetSlo(double ttft_ms, double tpot_ms) {
    p_.workload.ttft_ms = ttft_ms;
    p_.workload.tpot_ms = tpot_ms;
  }

  // Evaluates a strategy; strategy.batch == 0 chooses the best batch (throughput within memory
  // and SLOs). Allocation-free.
  Evaluation Evaluate(const Strategy& s) const;
  // The same evaluation without the attribution to operators and collectives (compute_s,
  // comm_s, compute_s_by_op, comm_s_by_op and comm_s_by_kind stay 0); every other field is
  // identical to Evaluate's (simulator_test). What searchers need: ~10% faster (sim_bench).
  Evaluation EvaluateWithoutBreakdown(const Strategy& s) const;
  // Evaluation at one fixed batch (>0), ignoring strategy.batch.
  Evaluation EvaluateAtBatch(const Strategy& s, int batch) const;

  // One line saying why `e` is invalid ("" when valid).
  std::string Reason(const Strategy& s, const Evaluation& e) const;

  // The program of one step at the evaluation's batch, plus per-step seconds (for explain);
  // an empty program for a structurally invalid strategy or batch < 1.
  struct Detail {
    Program program;
    std::array<std::array<double, Section::kMaxSteps>, Program::kMaxKinds> layer_step_s{};
    std::array<double, Section::kMaxSteps> embed_step_s{}, lm_head_step_s{}, pipe_step_s{},
        mtp_step_s{};
    std::array<int, Program::kMaxKinds> layers_in_slowest_stage{};
    // Seconds each step adds to one pass of its section as the evaluation's breakdown attributes
    // them (Evaluation::compute_s_by_op / comm_s_by_op): under two-batch overlap the side of the
    // section that is not hidden, for both halves; in a serve step with attention-DP imbalance the
    // mix of the program's step and of its decode-only counterpart `dec_program` (whose steps'
    // shares are in the *_dec_shown_s arrays, all zero otherwise). Before the engine factor.
    Program dec_program;
    std::array<std::array<double, Section::kMaxSteps>, Program::kMaxKinds> layer_shown_s{},
        layer_dec_shown_s{};
    std::array<double, Section::kMaxSteps> embed_shown_s{}, lm_head_shown_s{}, pipe_shown_s{},
        mtp_shown_s{}, embed_dec_shown_s{}, lm_head_dec_shown_s{}, pipe_dec_shown_s{},
        mtp_dec_shown_s{};
  };
  void Explain(const Strategy& s, int batch, Detail* out) const;

  // Seconds of one step of the program on this cluster, under the workload's engine (its kernel
  // time / Workload::engine_factor).
  double StepSeconds(const Step& st, bool decode_kernels) const;

  // --- Exact decomposition, for solvers that exploit structure (the oracle) ---
  // Everything Compose needs about one step at a fixed batch.
  struct Totals {
    int num_kinds = 0;
    std::array<double, Program::kMaxKinds> layer_s{}, layer_w{}, layer_kv{};
    std::array<double, Program::kMaxKinds> layer_state{};  // of layer_kv: recurrent state
    // Two-batch overlap (Strategy::overlap = tbo): *_s hold one half batch's compute seconds
    // and *_comm_s its communication seconds, combined by SectionSeconds; otherwise *_s hold the
    // whole section and *_comm_s are 0. pipe_s is always final.
    std::array<double, Program::kMaxKinds> layer_comm_s{};
    double act = 0;  // largest live activation of any section (before double-buffering)
    double embed_s = 0, embed_w = 0, lm_s = 0, lm_w = 0, pipe_s = 0;
    double embed_comm_s = 0, lm_comm_s = 0;
    double ttft_prefill_s = 0;  // serve: one prompt prefilled alone through every stage
    // MTP draft passes (last stage): their seconds are part of lm_s / lm_comm_s (the passes
    // overlap like the LM head under tbo); mtp_s repeats their time for display; weights and KV
    // (per microbatch) are apart.
    double mtp_s = 0, mtp_w = 0, mtp_kv = 0;
    double mtp_passes = 0;  // draft passes per step (Program::mtp_passes)
    double adp_imbalance = 1;  // serve: whole-model step time / its time with balanced prefill
  };
  // The same, attributed to the operator each step belongs to. The MTP draft passes (last stage)
  // are folded into the LM-head section's figures: their seconds into lm_s (lm_comm_s), their
  // weights and KV (x pp microbatches, as Compose counts it) into lm_w, so that the sums stay
  // exact. Every step belongs to exactly one
  // operator, and a step's cost depends only on the residual layout (sp) and the dims of its
  // operator's group — {attn_qkv, attn_core, attn_out}, {moe_ffn1, moe_ffn2},
  // {shared_ffn1, shared_ffn2}, {dense_ffn1, dense_ffn2}, or a single operator — so totals of a
  // strategy are sums of per-group attributions taken from strategies that agree on that group.
  struct OpTotals {
    int num_kinds = 0;
    std::array<std::array<double, kNumOps>, Program::kMaxKinds> layer_s{}, layer_w{}, layer_act{},
        ttft_layer_s{}, layer_comm_s{};  // layer_comm_s: tbo only (see Totals)
    std::array<double, kNumOps> embed_comm_s{}, lm_comm_s{};
    std::array<double, Program::kMaxKinds> layer_kv{};
    std::array<double, kNumOps> embed_s{}, embed_w{}, embed_act{}, lm_s{}, lm_w{}, lm_act{},
        ttft_embed_s{}, ttft_lm_s{};
    double pipe_s = 0, ttft_pipe_s = 0;
  };
  void ComputeTotals(const Strategy& s, int batch, Totals* out) const;
  void ComputeOpTotals(const Strategy& s, int batch, OpTotals* out) const;
  // Seconds of a section from its compute and communication seconds: 2 max(stretch x compute,
  // comm) under two-batch overlap (both are one half batch's; stretch = OverlapStretch()),
  // compute + comm otherwise.
  double SectionSeconds(double compute, double comm, bool two_batch) const;
  // Slow-down of compute while a communication kernel runs beside it: the kernel holds
  // DeepEP's SM budget (CollectiveCoeffs::deepep_normal_sms = 20) of the GPU's sm_count SMs,
  // so compute runs on the rest: sm_count / (sm_count - 20). 1 when sm_count is unknown.
  double OverlapStretch() const { return overlap_stretch_; }
  // Evaluation (without breakdown) from totals: identical to EvaluateAtBatch's figures.
  Evaluation Compose(const Strategy& s, int batch, const Totals& t) const;

  // Per-engine efficiency factor (measured / simulated throughput), fitted in
  // docs/dev/VALIDATION.md; unknown engines get the default.
  static double EngineFactor(const std::string& engine);

  // Seconds a request of engine `e` waits outside the simulated steps before its first token
  // reaches the client: measured TTFTs of SGLang at low concurrency sit a near-constant 0.1-0.4 s
  // above its prefill step, while its TPOTs at high concurrency leave no room for that time
  // inside the steps (decode is not stalled by it). The cause (front end, scheduler hand-off,
  // streaming) is not measured in ../shared: a constant fitted per engine family on its
  // low-concurrency TTFT rows (engine_figures.cc: SGLang, ATOM), 0 for families without such rows.
  // By scheduler: its own engine's (kVllm: vLLM's, not ATOM's).
  static double RequestOverheadSeconds(Engine e);
  // The same for an engine as named (measurement files, --engine): its family's fitted value
  // (SGLang, ATOM), else that of the engine the name parses to (0 for unknown engines).
  static double RequestOverheadSeconds(const std::string& engine);
  // Workload `w`'s: w.request_overhead_s when set, else its engine's; 0 when w.request_overhead
  // is false.
  static double RequestOverheadOf(const Workload& w);
  // RequestOverheadOf the problem's workload. TTFT includes it (serve and prefill modes, and the
  // request-level simulator, where a request reaches the engine that long after the client sent
  // it); throughput does not.
  double RequestOverheadS() const { return request_overhead_s_; }
  // "the TTFT SLO of X ms is below SGLang's request overhead (132.3 ms ...)" when workload `w`
  // has a TTFT limit that its engine's request overhead alone exceeds (no deployment meets it),
  // else "".
  static std::string TtftBelowRequestOverhead(const Workload& w);

  // Tokens emitted per decode step for strategy `s` (1 without MTP and in prefill mode).
  double TokensPerStep(const Strategy& s) const;
  // Largest batch per attention-dp rank the engine's token budget (max_num_tokens) admits for
  // `s`: decode batch x (mtp + 1) tokens, plus in serve mode on engines that mix prefill chunks
  // into decode steps the steady-state prefill share; prefill batch x isl. Under vLLM's
  // scheduler, decode and serve batches also keep the sequences in flight (batch x pp, its
  // --max-num-seqs) within the budget, as vLLM requires. INT_MAX = no limit.
  int TokenBatchLimit(const Strategy& s) const;
  // Largest batch per attention-dp rank of `s` whose memory fits one GPU, at most the workload's
  // max_batch and TokenBatchLimit (the bound of the auto batch before latency limits); 0 when
  // batch 1 does not fit or `s` is structurally impossible.
  int LargestBatchInMemory(const Strategy& s) const;
  // max_num_tokens and the CUDA-graph limit in force (the workload's, else the engine's default;
  // 0 = unlimited).
  int MaxNumTokens() const { return max_num_tokens_; }
  int CudaGraphMaxBatch() const { return graph_max_batch_; }

  // Attention-dp ranks that wait for each other in every step: all dp ranks of a stage when the
  // model has MoE layers (their expert collectives span the stage), else 1 (dense replicas).
  int SyncRanks(const Strategy& s) const;

  // Workload::routing_sigma used when it is < 0 (see simulator.cc for the fit).
  static const double kDefaultRoutingSigma;

 private:
  // StepSeconds of the ideal engine (factor 1).
  double IdealStepSeconds(const Step& st, bool decode_kernels) const;
  struct Costed;
  void Shape(const Strategy& s, int batch, StepShape* sh) const;
  // The shape of the program Prepare builds for (s, batch): Shape with serve mode's prefill
  // chunk and, under two-batch overlap, the larger half batch; `full` (may be null) gets Shape's.
  void ProgramShape(const Strategy& s, int batch, StepShape* sh, StepShape* full) const;
  // Serve mode on an engine with a token budget (max_num_tokens): the factor from the program's
  // step tokens per rank to the budget's (>= 1), by which the step's activations grow in a full
  // budget step; 1 otherwise.
  double BudgetActivationScale(const Strategy& s, int batch) const;
  // Sets the expert-load imbalance of a step running `tokens` tokens per attention-dp rank in
  // `cfg`, and returns whether that step runs the decode (low-latency) kernels.
  bool ConfigureForTokens(const Strategy& s, double tokens, ProgramConfig* cfg) const;
  // Serve mode on an engine with a token budget: the step is priced from two programs, the
  // decode-only step and the same step with one full prefill chunk of `chunk` tokens per rank
  // (engines prefill in chunks, so a prompt's tokens are not spread thinly over decode steps:
  // DeepSeek's experts read for 8 prefill tokens per step would be 64 experts a step, not 1/1024
  // of one 8,192-token chunk's reads). Per decode step:
  //   rank work   = b * chunk_rank + (a - b) * decode_rank
  //   pooled work = r * chunk_pooled + (a - r) * decode_pooled
  // a: steps per decode step (1 + prefill steps on SGLang), r: chunks per decode step (the
  // prefill share p / chunk), b: r raised by the attention-DP imbalance (some rank's chunk holds
  // every rank back); b_even: b without it (Evaluation::adp_imbalance = b / b_even as costs).
  struct AdpCoeffs {
    bool active = false;
    double a = 1, b = 1, r = 1, b_even = 1;
    double chunk = 0;          // prefill tokens of one chunk per rank
    bool dec_kernels = true;   // the decode-only step runs the decode (low-latency) kernels
    // TensorRT-LLM / vLLM: the step is the spread one (no chunk), r = b_even = 1, a = 1.
    bool spread = false;
  };
  // Whether `sh` is a serve step with prefill work on an engine with a token budget, the steps
  // Adp and ChunkTokens price (false in other modes, for the ideal engine, without a budget).
  bool BudgetedPrefillStep(const StepShape& sh) const;
  // Prefill tokens of one chunk per rank for a serve step of shape `sh` (its prefill share p =
  // prefill_seqs x prefill_len per decode step); 0 when the step is not chunk-priced (other
  // modes, the ideal engine, engines that mix chunks into decode steps, no token budget, no
  // prefill).
  double ChunkTokens(const StepShape& sh) const;
  AdpCoeffs Adp(const Strategy& s, const StepShape& sh) const;
  // Adp for the latest Prepare on this thread, and when active the decode-only program in `dec`.
  AdpCoeffs AdpProgram(const Strategy& s, Program* dec) const;
  // Compute and communication seconds of `sec` (mixed program) against `dec` (decode-only) under
  // `c`, attributed like CostSection (acc) and per operator (by_op; comm steps to by_op_comm when
  // given).
  // `even`, when given, receives the section's seconds at b_even (no imbalance); `shown` and
  // `dec_shown` each step's seconds of `sec` and `dec` as `acc` attributes them.
  void CostAdp(const Section& sec, const Section& dec, bool dk, const AdpCoeffs& c,
               bool two_batch, double* compute, double* comm, SectionBreakdown* acc,
               std::array<double, kNumOps>* by_op,
               std::array<double, kNumOps>* by_op_comm = nullptr, double* even = nullptr,
               double* shown = nullptr, double* dec_shown = nullptr) const;
  // Seconds of a section (two_batch: Strategy::overlap = tbo, the program built for one half).
  // `like`: an earlier section of the same program whose raw step seconds (before the sbo
  // adjustment) are in like_raw; steps identical to its same-index steps reuse them (the attention
  // block that several layer kinds share). `raw`, when given, receives this section's raw step
  // seconds; `shown` each step's seconds as `acc` attributes them (Detail::*_shown_s).
  void CostSection(const Section& sec, bool decode, double* compute, double* comm,
                   SectionBreakdown* acc, bool two_batch, const Section* like = nullptr,
                   const double* like_raw = nullptr, double* raw = nullptr,
                   double* shown = nullptr) const;
  double CostSection(const Section& sec, bool decode) const;  // compute + comm, no breakdown
  // Per-step seconds of a section, overlapped (sbo) steps reduced to what sticks out.
  void StepTimes(const Section& sec, bool decode, double* x, const Section* like = nullptr,
                 const double* like_raw = nullptr, double* raw = nullptr) const;
  bool Prepare(const Strategy& s, int batch, Program* prog, bool* decode_kernels) const;
  double MemoryBytes(const Strategy& s, int batch) const;  // per GPU, worst stage
  void PrefillPass(const Strategy& s, Program* prog, bool* decode_kernels) const;
  Evaluation EvaluateImpl(const Strategy& s, int batch, bool with_breakdown,
                          double ttft_prefill_s = -1.0) const;
  // breakdown: also fill the per-section attribution (tl_breakdown) that EvaluateImpl reads.
  void ComputeTotalsWithTtft(const Strategy& s, int batch, double ttft_prefill_s, Totals* t,
                             bool breakdown) const;
  Evaluation EvaluateAuto(const Strategy& s, bool breakdown) const;
  double TtftSeconds(const Strategy& s) const;
  bool QuickStructureOk(const Strategy& s) const;

  Problem p_;
  int max_num_tokens_ = 0, graph_max_batch_ = 0;
  double request_overhead_s_ = 0;  // RequestOverheadSeconds of the engine (or 0)
  std::vector<std::vector<int>> kind_prefix_;  // [kind][layer+1] counts, built per program kinds
  std::array<LayerKind, Program::kMaxKinds> kinds_{};  // CollectLayerKinds, once per problem
  int num_kinds_ = 0;
  double reserve_bytes_ = 0;
  double routing_sigma_ = 0;
  double overlap_stretch_ = 1;
  // Fitted kernel and collective coefficient sets of the cluster's GPU (CoeffsFor /
  // CollectiveCoeffsFor, resolved once; static storage).
  const KernelCoeffs* kc_ = nullptr;
  const CollectiveCoeffs* cc_ = nullptr;
  // FP8 GEMMs run the block-scaled kernels: the weights are the checkpoint's own block-scaled
  // FP8 (ModelSpec::weight_block_scaled; a bf16 checkpoint quantised to FP8 is per-tensor).
  bool block_fp8_ = false;
  // QuickReduceInForce of the problem (the steps' all-reduces read it).
  QuickReduce quick_reduce_ = QuickReduce::kOff;
  // Static expert-load factor (sim/moe_load.h) per (ep, slots), precomputed for every ep that
  // divides the GPU count and every slot option so that Evaluate does not allocate.
  struct StaticLoad {
    int ep = 0, slots = 0;
    double factor = 1;
  };
  std::vector<StaticLoad> static_load_;
  double StaticLoadFactor(int ep, int slots) const;
  ProgramConfig cfg_;
};

}  // namespace l2s
