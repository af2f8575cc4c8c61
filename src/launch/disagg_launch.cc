#include "launch/disagg_launch.h"

#include "engine/engine.h"
#include "launch/dynamo.h"

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "strategy/space.h"

namespace l2s::launch {

namespace {

// Ports of the commands (the engines' usual ones; any free port works).
constexpr int kSglangPort = kSglangDefaultPort;
constexpr int kSglangBootstrapPort = 8998;  // --disaggregation-bootstrap-port default
constexpr int kVllmPort = kVllmDefaultPort;
constexpr int kTrtllmPort = 8001;
constexpr int kRouterPort = 8000;

// "<prefill-1>" ... : the hosts the user fills in.
std::string Host(const char* role, int i) { return fmt::format("<{}-{}>", role, i); }

// Models with recurrent state (Mamba, Gated DeltaNet): vLLM's NIXL connector needs the same TP
// on both sides for them (docs/PLAN.md).

// One side of the plan after the engine's rules: the strategy the command runs and the problem
// its command is written for (maximum length isl + osl, the KV dtype both sides share).
struct Side {
  const char* role;  // "prefill" / "decode"
  const PoolPlan* pool;
  Strategy launched;  // the plan's strategy or its best repair, as simulated
  Evaluation eval;
  bool have = false;
  Strategy command;   // what the command runs: `launched` with the pairing rules applied
  Problem command_problem;
};

// The part of a disaggregated launch that depends on the base engine (SGLang, vLLM or
// TensorRT-LLM): unsupported choices, repairs, and each side's plain launch command.
struct BaseTranslation {
  std::vector<std::string> unsupported;
  std::vector<std::string> notes;
  Side prefill, decode;
  bool runnable = false;
};

BaseTranslation Translate(Engine engine, const PoolPlan& pp, const PoolPlan& dp,
                          KvTransfer transfer) {
  BaseTranslation t;
  t.prefill.role = "prefill";
  t.prefill.pool = &pp;
  t.decode.role = "decode";
  t.decode.pool = &dp;
  const ModelSpec& m = dp.problem.model;
  const std::string_view E = EngineTitle(engine);
  for (Side* side : {&t.prefill, &t.decode}) {
    const engine::Role role =
        side == &t.prefill ? engine::Role::kPrefillPool : engine::Role::kDecodePool;
    for (const std::string& u : UnsupportedChoices(engine, m, side->pool->strategy, role))
      t.unsupported.push_back(fmt::format("{}: {}", side->role, u));
    const Simulator sim(side->pool->problem);
    side->have =
        BestAlternative(sim, engine, side->pool->strategy, &side->launched, &side->eval, role);
  }
  // A model with recurrent layers moves its state beside the KV cache: vLLM's NIXL connector
  // splits it between unequal TP degrees in the DS conv-state layout (vllm-project/vllm pull
  // requests 37635, 45019; tracking issue 40017), which the vLLM command sets
  // (MakeLaunchCommand: VLLM_SSM_CONV_STATE_LAYOUT=DS), so any pair of TP degrees runs.
  // The KV cache moves as stored: both sides keep it in one format (vLLM checks it at the
  // handshake; TensorRT-LLM's configs say it must match). The decode side's format wins.
  const DType kv_p = pp.problem.workload.kv, kv_d = dp.problem.workload.kv;
  if (kv_p != kv_d)
    t.unsupported.push_back(fmt::format(
        "both: KV cache in {} on the prefill side and {} on the decode side: the cache is copied "
        "as stored, so {} keeps one format on both sides; it runs {} on both",
        DTypeName(kv_p), DTypeName(kv_d), E, DTypeName(kv_d)));
  if (transfer == KvTransfer::kMooncake && engine == Engine::kTrtllm)
    t.unsupported.push_back(
        "both: transfer=mooncake: TensorRT-LLM's cache transceiver has no Mooncake backend (it "
        "has NIXL, UCX and MPI); it runs NIXL");
  t.runnable = t.prefill.have && t.decode.have && t.prefill.eval.valid() && t.decode.eval.valid();
  // Command problems: the request's whole length on both sides, the decode side's KV format.
  const int64_t isl = std::max(pp.problem.workload.isl, dp.problem.workload.isl);
  const int64_t osl = std::max(pp.problem.workload.osl, dp.problem.workload.osl);
  for (Side* side : {&t.prefill, &t.decode}) {
    Problem c = side->pool->problem;
    c.workload.mode = Mode::kServe;
    c.workload.isl = isl;
    c.workload.osl = osl;
    c.workload.kv = kv_d;
    side->command_problem = c;
  }
  // Speculative decoding pairs the two sides: the prefill side runs the decode side's MTP
  // setting (vLLM's handshake checks the method; the engines' published P/D configs with MTP set
  // it on both sides). A plan's prefill strategy carries it already (plan/disaggregated.h, priced
  // with the draft's extend); one that does not is started with it all the same, and says so.
  t.prefill.command = t.prefill.launched;
  t.decode.command = t.decode.launched;
  if (t.decode.launched.mtp > 0 && t.prefill.launched.mtp != t.decode.launched.mtp) {
    t.notes.push_back(fmt::format(
        "the decode side drafts with {} ({} token{}): the prefill side is started with the same "
        "speculative setting, which {} pairs between the two sides{}",
        dp.problem.model.has_draft_model() ? "the draft model " + dp.problem.model.draft_model
                                           : std::string("MTP"),
        t.decode.launched.mtp, t.decode.launched.mtp == 1 ? "" : "s", E,
        t.prefill.launched.mtp == 0
            ? "; the prefill figures were simulated without it (its servers also hold the draft "
              "and run it once over every prompt: l2s eval --mode prefill --mtp K prices that)"
            : ""));
    t.prefill.command.mtp = t.decode.launched.mtp;
  }
  return t;
}

// TensorRT-LLM's KV-cache transceiver settings (appended to each server's extra YAML); the
// buffer holds one whole prompt (the engine's advice: at least the longest isl).
std::string TransceiverYaml(int64_t isl, bool context) {
  return fmt::format("{}cache_transceiver_config:\n  backend: NIXL\n  max_tokens_in_buffer: {}\n",
                     context ? "disable_overlap_scheduler: true\n" : "", isl);
}

std::vector<std::string> Hosts(const char* role, int n) {
  std::vector<std::string> out;
  for (int i = 1; i <= n; ++i) out.push_back(Host(role, i));
  return out;
}

DisaggProcess Server(const Side& side, const LaunchCommand& lc, const std::string& extra) {
  DisaggProcess p;
  p.role = side.role;
  p.count = side.pool->instances;
  p.gpus = side.pool->gpus_per_instance;
  p.command = lc.command + extra;
  p.file_name = lc.extra_file_name;
  p.file = lc.extra_file;
  p.notes = lc.notes;
  return p;
}

// The launch options of one side's servers on `engine`: its role, its simulated memory,
// reachable from the other hosts, and its running limit (PoolPlan::max_running or
// engine_running_limit).
LaunchOptions SideOptions(const Side& side, Engine engine, int port) {
  LaunchOptions o;
  o.role = std::string(side.role) == "prefill" ? ServeRole::kPrefill : ServeRole::kDecode;
  o.eval = side.eval.valid() ? &side.eval : nullptr;
  o.listen_all = true;
  o.port = port;
  o.max_running = side.pool->max_running;
  // The engines' published P/D recipes leave a SGLang or vLLM prefill server's running limit at
  // (or near) the engine's own (InferenceX's GB300 SGLang recipe: 30,000; llm-d's vLLM wide-EP
  // prefill: unset), while TensorRT-LLM's context servers set max_batch_size to what the token
  // budget holds (its runtime sizes buffers by it; InferenceX ctx configs: 2 for 8k prompts
  // under 8,192 tokens): that is the priced batch, kept.
  // The flags count a rank's limit once per pipeline microbatch in flight (MakeLaunchCommand):
  // the engine's limit is shared by them.
  if (o.max_running == 0 && side.pool->engine_running_limit && engine != Engine::kTrtllm) {
    const int own = DefaultMaxRunning(SchedulerOf(engine), side.command.mtp,
                                      std::max(1, side.command.dp));
    const int pp = std::max(1, side.command.pp);
    if (own / pp > std::max(1, side.command.batch)) {
      o.max_running = own / pp;
      o.max_running_why =
          pp > 1 ? fmt::format("the engine's own default, {} per rank, over {} pipeline "
                               "microbatches, as a prefill server runs",
                               own, pp)
                 : std::string("the engine's own default, as a prefill server runs");
    }
  }
  return o;
}

void SglangProcesses(const BaseTranslation& t, KvTransfer transfer, DisaggLaunch* out) {
  // On AMD GPUs SGLang moves the KV cache with MoRI's IO engine (--disaggregation-transfer-backend
  // mori, server_args.py DISAGG_TRANSFER_BACKEND_CHOICES), as the measured MI355X P/D runs do
  // (../shared/reference/measurements-frontier.csv notes: "MoRI KV transfer").
  const bool amd = t.prefill.pool->problem.cluster.gpu.vendor == "amd";
  const std::string_view backend = amd ? "mori" : KvTransferName(transfer);
  for (const Side* side : {&t.prefill, &t.decode}) {
    const LaunchCommand lc =
        MakeLaunchCommand(Engine::kSglang, side->command_problem, side->command,
                          SideOptions(*side, Engine::kSglang, kSglangPort));
    const bool prefill = side == &t.prefill;
    out->processes.push_back(Server(
        *side, lc,
        fmt::format(" --disaggregation-mode {} --disaggregation-transfer-backend {}{}", side->role,
                    backend,
                    prefill ? fmt::format(" --disaggregation-bootstrap-port {}", kSglangBootstrapPort)
                            : "")));
  }
  DisaggProcess r;
  r.role = "router";
  r.command = "python -m sglang_router.launch_router --pd-disaggregation";
  for (const std::string& h : Hosts("prefill", t.prefill.pool->instances))
    r.command += fmt::format(" --prefill http://{}:{} {}", h, kSglangPort, kSglangBootstrapPort);
  for (const std::string& h : Hosts("decode", t.decode.pool->instances))
    r.command += fmt::format(" --decode http://{}:{}", h, kSglangPort);
  r.command += fmt::format(" --host 0.0.0.0 --port {}", kRouterPort);
  r.notes.push_back(
      "the router (sglang-router) sends each request to a prefill and a decode server, which pair "
      "up through the prefill server's bootstrap port (--prefill URL BOOTSTRAP_PORT)");
  out->processes.push_back(r);
  if (amd) {
    out->notes.push_back(
        "MoRI moves the KV cache between the prefill and decode servers (--disaggregation-transfer-backend "
        "mori, MoRI's IO engine; over RDMA, --disaggregation-ib-device <device> picks the NIC)");
  } else if (transfer == KvTransfer::kMooncake) {
    out->notes.push_back(
        "Mooncake moves the KV cache over RDMA: --disaggregation-ib-device <device> picks the NIC "
        "on each server");
    if (t.decode.pool->problem.cluster.gpus_per_domain > 8)
      out->notes.push_back(
          "inside an NVLink domain larger than a node (e.g. NVL72) Mooncake can move the KV cache "
          "over NVLink: SGLANG_MOONCAKE_CUSTOM_MEM_POOL=True MC_FORCE_MNNVL=True on every server");
  }
}

std::string VllmKvConfig(KvTransfer transfer, const char* role) {
  return fmt::format(" --kv-transfer-config '{{\"kv_connector\":\"{}\",\"kv_role\":\"{}\"}}'",
                     transfer == KvTransfer::kNixl ? "NixlConnector" : "MooncakeConnector", role);
}

void VllmProcesses(const BaseTranslation& t, KvTransfer transfer, DisaggLaunch* out) {
  for (const Side* side : {&t.prefill, &t.decode}) {
    const LaunchCommand lc = MakeLaunchCommand(Engine::kVllm, side->command_problem, side->command,
                                               SideOptions(*side, Engine::kVllm, kVllmPort));
    const bool prefill = side == &t.prefill;
    out->processes.push_back(
        Server(*side, lc, VllmKvConfig(transfer, prefill ? "kv_producer" : "kv_consumer")));
  }
  DisaggProcess r;
  r.role = "router";
  r.command = "vllm-router --vllm-pd-disaggregation";
  for (const std::string& h : Hosts("prefill", t.prefill.pool->instances))
    r.command += fmt::format(" --prefill http://{}:{}", h, kVllmPort);
  for (const std::string& h : Hosts("decode", t.decode.pool->instances))
    r.command += fmt::format(" --decode http://{}:{}", h, kVllmPort);
  r.command += fmt::format(" --host 0.0.0.0 --port {}", kRouterPort);
  r.notes.push_back(
      "the router is vLLM's P/D router (github.com/vllm-project/router, the vllm-router binary): "
      "it sends each request to a prefill server, then to a decode server that pulls the KV cache "
      "through the connector");
  out->processes.push_back(r);
  if (transfer == KvTransfer::kNixl)
    out->notes.push_back(
        "NIXL: set VLLM_NIXL_SIDE_CHANNEL_HOST to each server's own address; the handshake port "
        "VLLM_NIXL_SIDE_CHANNEL_PORT (default 5600) must be free on every host, one per server");
  out->notes.push_back(
      "with data parallelism the router needs only the head address of each server");
}

void TrtllmProcesses(const BaseTranslation& t, DisaggLaunch* out) {
  const int64_t isl = t.decode.command_problem.workload.isl;
  for (const Side* side : {&t.prefill, &t.decode}) {
    const bool context = side == &t.prefill;
    LaunchOptions o = SideOptions(*side, Engine::kTrtllm, kTrtllmPort);
    o.trtllm_file = context ? "ctx-extra-llm-api-config.yml" : "gen-extra-llm-api-config.yml";
    o.trtllm_yaml = TransceiverYaml(isl, context);
    const LaunchCommand lc = MakeLaunchCommand(Engine::kTrtllm, side->command_problem, side->command, o);
    out->processes.push_back(Server(*side, lc, ""));
  }
  DisaggProcess r;
  r.role = "router";
  r.command = "trtllm-serve disaggregated -c disagg-config.yml";
  r.file_name = "disagg-config.yml";
  r.file = fmt::format("hostname: 0.0.0.0\nport: {}\nbackend: pytorch\n", kRouterPort);
  for (const Side* side : {&t.prefill, &t.decode}) {
    r.file += fmt::format("{}:\n  num_instances: {}\n  urls:\n",
                          side == &t.prefill ? "context_servers" : "generation_servers",
                          side->pool->instances);
    for (const std::string& h : Hosts(side->role, side->pool->instances))
      r.file += fmt::format("    - \"{}:{}\"\n", h, kTrtllmPort);
  }
  r.notes.push_back(
      "the disaggregated server marks requests context-only for the context (prefill) servers "
      "and generation-only for the generation (decode) servers");
  out->processes.push_back(r);
}

// Dynamo's workers run the backend's own arguments behind `python -m dynamo.<backend>`
// (launch/dynamo.h), with their role's flags.
void DynamoProcesses(Engine backend, const BaseTranslation& t, KvTransfer transfer,
                     DisaggLaunch* out) {
  DisaggProcess f;
  f.role = "router";
  f.command = DynamoFrontendCommand();
  f.notes.push_back(
      "the frontend routes each request to a decode worker, which has a prefill worker compute "
      "the prompt and pulls its KV cache with NIXL");
  out->processes.push_back(f);
  const int64_t isl = t.decode.command_problem.workload.isl;
  for (const Side* side : {&t.prefill, &t.decode}) {
    const bool prefill = side == &t.prefill;
    DisaggProcess p;
    p.role = side->role;
    p.count = side->pool->instances;
    p.gpus = side->pool->gpus_per_instance;
    LaunchOptions o = SideOptions(*side, backend, 0);
    if (backend == Engine::kTrtllm) o.trtllm_yaml = TransceiverYaml(isl, prefill);
    const LaunchCommand lc = DynamoWorkerCommand(backend, side->command_problem, side->command, o,
                                                 fmt::format("{}.yaml", side->role));
    p.command = lc.command;
    p.file_name = lc.extra_file_name;
    p.file = lc.extra_file;
    p.notes = lc.notes;
    switch (backend) {
      case Engine::kSglang:
        // A prefill worker serves its KV through SGLang's bootstrap server (Dynamo's SGLang
        // examples set the port); workers sharing a node each get their own (launch/emit.cc).
        p.command += fmt::format(" --disaggregation-mode {} --disaggregation-transfer-backend {}{}",
                                 side->role, KvTransferName(transfer),
                                 prefill ? fmt::format(" --disaggregation-bootstrap-port {}",
                                                       kSglangBootstrapPort)
                                         : "");
        break;
      case Engine::kVllm:
        p.command += std::string(prefill ? " --is-prefill-worker" : " --is-decode-worker") +
                     VllmKvConfig(KvTransfer::kNixl, "kv_both");
        break;
      default:
        p.command += fmt::format(" --disaggregation-mode {}", side->role);
        break;
    }
    out->processes.push_back(p);
  }
  out->notes.push_back(fmt::format(
      "Dynamo: {} prefill worker{} and {} decode worker{} running {}", t.prefill.pool->instances,
      t.prefill.pool->instances == 1 ? "" : "s", t.decode.pool->instances,
      t.decode.pool->instances == 1 ? "" : "s", EngineTitle(backend)));
  out->notes.push_back(DynamoDiscoveryNote());
}

}  // namespace

Status CheckPoolPlan(const PoolPlan& pool, std::string_view what) {
  if (pool.instances < 1)
    return Status::InvalidArgument(
        fmt::format("{}: instances must be >= 1, got {}", what, pool.instances));
  if (pool.gpus_per_instance != pool.strategy.gpus())
    return Status::InvalidArgument(fmt::format(
        "{}: gpus_per_instance {} but the strategy pp*tp*dp uses {} GPUs", what,
        pool.gpus_per_instance, pool.strategy.gpus()));
  if (pool.problem.cluster.num_gpus != pool.gpus_per_instance)
    return Status::InvalidArgument(fmt::format(
        "{}: the problem's cluster has {} GPUs, not one instance's {}", what,
        pool.problem.cluster.num_gpus, pool.gpus_per_instance));
  if (Status st = CheckStrategy(pool.problem.model, pool.gpus_per_instance, pool.strategy);
      !st.ok())
    return Status::InvalidArgument(fmt::format("{}: {}", what, st.message()));
  return Status::Ok();
}

std::string_view DisaggEngineName(DisaggEngine e) {
  switch (e) {
    case DisaggEngine::kSglang: return "sglang";
    case DisaggEngine::kVllm: return "vllm";
    case DisaggEngine::kTrtllm: return "trtllm";
    case DisaggEngine::kDynamo: return "dynamo";
  }
  return "?";
}

std::string_view DisaggEngineTitle(DisaggEngine e) {
  switch (e) {
    case DisaggEngine::kSglang: return "SGLang";
    case DisaggEngine::kVllm: return "vLLM";
    case DisaggEngine::kTrtllm: return "TensorRT-LLM";
    case DisaggEngine::kDynamo: return "NVIDIA Dynamo";
  }
  return "?";
}

std::string_view KvTransferName(KvTransfer t) {
  return t == KvTransfer::kNixl ? "nixl" : "mooncake";
}

bool ParseKvTransfer(std::string_view name, KvTransfer* out) {
  if (name == "nixl") *out = KvTransfer::kNixl;
  else if (name == "mooncake") *out = KvTransfer::kMooncake;
  else return false;
  return true;
}

StatusOr<DisaggLaunch> MakeDisaggLaunch(DisaggEngine engine, const PoolPlan& prefill,
                                        const PoolPlan& decode, KvTransfer transfer,
                                        std::optional<Engine> dynamo_backend) {
  if (Status st = CheckPoolPlan(prefill, "prefill pool"); !st.ok()) return st;
  if (Status st = CheckPoolPlan(decode, "decode pool"); !st.ok()) return st;
  if (dynamo_backend && *dynamo_backend == Engine::kMegatron)
    return Status::InvalidArgument("Dynamo's workers run SGLang, vLLM or TensorRT-LLM, not Megatron-LM");
  if (prefill.problem.model.name != decode.problem.model.name)
    return Status::InvalidArgument(fmt::format("the prefill pool serves {} and the decode pool {}",
                                               prefill.problem.model.name,
                                               decode.problem.model.name));
  DisaggLaunch out;
  out.engine = engine;
  out.transfer = transfer;
  out.prefill_pool = prefill;
  out.decode_pool = decode;
  Engine base = Engine::kSglang;
  BaseTranslation t;
  switch (engine) {
    case DisaggEngine::kSglang: base = Engine::kSglang; break;
    case DisaggEngine::kVllm: base = Engine::kVllm; break;
    case DisaggEngine::kTrtllm: base = Engine::kTrtllm; break;
    case DisaggEngine::kDynamo: {
      // The backend: the one asked for, else exact first (SGLang, TensorRT-LLM, vLLM in that
      // order), else the runnable one with the fewest unsupported choices.
      bool have = false;
      size_t best_unsupported = 0;
      std::vector<Engine> backends = {Engine::kSglang, Engine::kTrtllm, Engine::kVllm};
      if (dynamo_backend) backends = {*dynamo_backend};
      for (Engine b : backends) {
        BaseTranslation c = Translate(b, prefill, decode, transfer);
        // Dynamo moves the KV cache with NIXL; only its SGLang workers take Mooncake.
        if (transfer == KvTransfer::kMooncake && b != Engine::kSglang)
          c.unsupported.push_back(fmt::format(
              "both: transfer=mooncake: Dynamo's {} workers move the KV cache with NIXL; they "
              "run NIXL",
              EngineTitle(b)));
        const bool better = !have || (c.runnable && !t.runnable) ||
                            (c.runnable == t.runnable && c.unsupported.size() < best_unsupported);
        if (better) {
          have = true;
          base = b;
          best_unsupported = c.unsupported.size();
          t = std::move(c);
        }
      }
      break;
    }
  }
  if (engine != DisaggEngine::kDynamo) t = Translate(base, prefill, decode, transfer);
  out.backend = base;
  out.unsupported = t.unsupported;
  if (engine == DisaggEngine::kDynamo)
    for (std::string& u : out.unsupported) {
      const size_t colon = u.find(": ");
      u.insert(colon + 2, fmt::format("(Dynamo's {} workers) ", EngineTitle(base)));
    }
  out.notes = t.notes;
  out.runnable = t.runnable;
  out.prefill = t.prefill.launched;
  out.decode = t.decode.launched;
  out.prefill_eval = t.prefill.eval;
  out.decode_eval = t.decode.eval;
  if (!t.runnable) {
    out.notes.push_back(fmt::format(
        "{} cannot run this plan: {}", DisaggEngineTitle(engine),
        !t.prefill.have || !t.prefill.eval.valid()
            ? "no repair of the prefill strategy is valid in the prefill pool"
            : "no repair of the decode strategy is valid in the decode pool"));
    return out;
  }
  switch (engine) {
    case DisaggEngine::kSglang: SglangProcesses(t, transfer, &out); break;
    case DisaggEngine::kVllm: VllmProcesses(t, transfer, &out); break;
    case DisaggEngine::kTrtllm: TrtllmProcesses(t, &out); break;
    case DisaggEngine::kDynamo:
      DynamoProcesses(base, t, base == Engine::kSglang ? transfer : KvTransfer::kNixl, &out);
      break;
  }
  if (prefill.problem.cluster.gpu.name != decode.problem.cluster.gpu.name)
    out.notes.push_back(fmt::format(
        "mixed GPU types: the prefill servers run on {} and the decode servers on {}; the KV "
        "transfer crosses between them over the network both reach",
        prefill.problem.cluster.gpu.name, decode.problem.cluster.gpu.name));
  // The commands above are per server, on the engine's port: servers that share a host need
  // their own GPUs and ports (and SGLang prefill servers their own bootstrap ports).
  if (prefill.gpus_per_instance < HostGpus(prefill.problem.cluster) ||
      decode.gpus_per_instance < HostGpus(decode.problem.cluster))
    out.notes.push_back(
        fmt::format("servers that share a node need their own GPUs ({}) and ports: "
                    "`l2s plan --emit DIR` writes each node's script with them",
                    prefill.problem.cluster.gpu.vendor == "amd"
                        ? "HIP_VISIBLE_DEVICES, and CUDA_VISIBLE_DEVICES equal to it"
                        : "CUDA_VISIBLE_DEVICES"));
  return out;
}

bool DisaggRunsOn(DisaggEngine e, std::string_view vendor) {
  const engine::EngineId id = e == DisaggEngine::kSglang   ? engine::EngineId::kSglang
                              : e == DisaggEngine::kVllm   ? engine::EngineId::kVllm
                              : e == DisaggEngine::kTrtllm ? engine::EngineId::kTrtllm
                                                           : engine::EngineId::kDynamoSglang;
  return engine::RunsOn(engine::CapabilitiesOf(id), vendor);
}

std::optional<DisaggEngine> DisaggEngineOf(engine::EngineId id) {
  switch (id) {
    case engine::EngineId::kSglang: return DisaggEngine::kSglang;
    case engine::EngineId::kVllm: return DisaggEngine::kVllm;
    case engine::EngineId::kTrtllm: return DisaggEngine::kTrtllm;
    case engine::EngineId::kDynamoVllm:
    case engine::EngineId::kDynamoSglang:
    case engine::EngineId::kDynamoTrtllm: return DisaggEngine::kDynamo;
    default: return std::nullopt;
  }
}

StatusOr<std::vector<DisaggLaunch>> TranslateDisaggPlan(const PoolPlan& prefill,
                                                       const PoolPlan& decode,
                                                       KvTransfer transfer,
                                                       std::optional<DisaggEngine> first,
                                                       std::optional<Engine> dynamo_backend) {
  std::vector<DisaggEngine> order;
  if (first) order.push_back(*first);
  for (DisaggEngine e : kDisaggEngines)
    if (!first || e != *first) order.push_back(e);
  std::vector<DisaggLaunch> out;
  for (DisaggEngine e : order) {
    if (!DisaggRunsOn(e, prefill.problem.cluster.gpu.vendor) ||
        !DisaggRunsOn(e, decode.problem.cluster.gpu.vendor))
      continue;
    StatusOr<DisaggLaunch> l = MakeDisaggLaunch(
        e, prefill, decode, transfer, e == DisaggEngine::kDynamo ? dynamo_backend : std::nullopt);
    if (!l.ok()) return l.status();
    out.push_back(std::move(*l));
  }
  return out;
}

}  // namespace l2s::launch
