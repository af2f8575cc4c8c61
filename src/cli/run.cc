// The l2s command line as a function (cli/run.h): subcommand registration and dispatch, the
// top-level error handling, and the optional in-process capture of stdout/stderr.
#include "cli/run.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/gpu_list.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "common/text.h"
#include "l2s_version.h"  // generated at build time: L2S_VERSION (cmake/write_version_header.cmake)

namespace l2s::cli {

namespace {

// Whether the command line asks for JSON output: --json (or --json=true / 1) before any "--".
bool WantsJson(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--") break;
    if (a == "--json" || a == "--json=true" || a == "--json=1") return true;
  }
  return false;
}

// The command named by argv[1] (a subcommand of `app`), or nullptr when argv[1] names none.
CLI::App* CommandOf(CLI::App& app, int argc, char** argv) {
  if (argc < 2) return nullptr;
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    if (sub->get_name() == argv[1]) return sub;
  return nullptr;
}

// Other tools' names for l2s flags (the engines' servers and benchmark clients, vLLM's
// `--input-len`/`--num-prompts`/`--request-rate`, SGLang's `--random-input-len`, genai-perf's
// `--concurrency`...): suggested when the command has the l2s flag. Each entry: l2s flag, names.
struct FlagSynonyms {
  std::string_view flag;
  std::vector<std::string_view> names;
};
const std::vector<FlagSynonyms>& OtherToolsFlagNames() {
  static const std::vector<FlagSynonyms> table = {
      {"isl", {"input", "input-len", "input-length", "input-tokens", "prompt", "prompt-len",
               "prompt-length", "prompt-tokens", "random-input-len", "random-input",
               "sharegpt-input-len", "in-len", "seq-len", "sequence-length"}},
      {"osl", {"output", "output-len", "output-length", "output-tokens", "max-tokens",
               "max-new-tokens", "random-output-len", "random-output", "gen-len",
               "generation-len", "completion-len", "sharegpt-output-len", "out-len"}},
      {"rate", {"request-rate", "qps", "rps", "arrival-rate", "req-rate"}},
      {"requests", {"num-prompts", "num-requests", "n-requests", "prompts"}},
      {"concurrency", {"max-concurrency", "num-clients", "clients"}},
      {"gpus", {"num-gpus", "n-gpus", "ngpus", "world-size", "gpu-count", "total-gpus"}},
      {"gpu", {"gpu-type", "device", "hardware", "system"}},
      {"dtype", {"quantization", "quant", "precision", "weight-dtype"}},
      {"kv-dtype", {"kv-cache-dtype", "kv-cache-quant", "kv-quant"}},
      {"max-batch", {"max-num-seqs", "max-running-requests", "max-batch-size", "batch-size"}},
      {"max-num-tokens", {"max-num-batched-tokens", "chunked-prefill-size", "max-prefill-tokens"}},
      {"mtp", {"speculative-num-steps", "num-speculative-tokens", "speculative-tokens",
               "spec-tokens"}},
      {"strategy", {"tp", "pp", "dp", "ep", "tensor-parallel-size", "pipeline-parallel-size",
                    "data-parallel-size", "expert-parallel-size", "tp-size", "pp-size", "dp-size",
                    "ep-size", "enable-expert-parallel", "parallelism", "layout"}},
      {"slo", {"ttft", "tpot", "ttft-ms", "tpot-ms", "max-ttft", "max-tpot", "itl", "sla",
               "latency"}},
      {"model", {"model-path", "model-name", "config", "hf-config"}},
  };
  return table;
}

// CLI11's "The following arguments were not expected: ..." said in the flags' words: the first
// argument that looks like a flag (--name or --name=value, before any "--") and is not one of the
// command's, with the command's flag another tool names so (OtherToolsFlagNames: "--input-len" ->
// "--isl"), else the nearest flag of that command when it is within a misspelling
// (MaxTypoDistance) or shares its first word ("--gpu-count" -> "--gpus"). `fallback` (CLI11's
// message) when no such argument is found.
std::string UnknownFlagMessage(CLI::App& app, int argc, char** argv, const std::string& fallback) {
  CLI::App* named = CommandOf(app, argc, argv);
  CLI::App* cmd = named != nullptr ? named : &app;
  const int first = named != nullptr ? 2 : 1;
  std::vector<std::string> names;
  for (const CLI::App* a : {static_cast<const CLI::App*>(&app), static_cast<const CLI::App*>(cmd)})
    for (const CLI::Option* o : a->get_options())
      for (const std::string& n : o->get_lnames()) names.push_back(n);
  for (int i = first; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--") break;
    if (a.size() < 3 || a.substr(0, 2) != "--") continue;
    const std::string name(a.substr(2, a.find('=') == std::string_view::npos ? std::string_view::npos
                                                                            : a.find('=') - 2));
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    // Another tool's name for one of the command's flags; else near: within a misspelling, or
    // the flag's first word starts one of the flag's (--gpu-type -> --gpu), the nearest by edit
    // distance.
    std::string best;
    for (const FlagSynonyms& syn : OtherToolsFlagNames())
      if (best.empty() && std::find(syn.names.begin(), syn.names.end(), name) != syn.names.end() &&
          std::find(names.begin(), names.end(), syn.flag) != names.end())
        best = std::string(syn.flag);
    const std::string word = name.substr(0, name.find('-'));
    const int at = !best.empty() ? -1 : NearestIndex(names.size(), 1 << 29, [&](size_t i) {
      const std::string& n = names[i];
      const int d = EditDistance(name, n);
      const bool near = d <= std::max(1, MaxTypoDistance(name.size())) ||
                        (word.size() >= 3 && n.substr(0, n.find('-')).rfind(word, 0) == 0);
      return near ? d : -1;
    });
    if (at >= 0) best = names[static_cast<size_t>(at)];
    const std::string where = cmd == &app ? "l2s" : "l2s " + cmd->get_name();
    if (cmd == &app) {  // a command's flag before (or without) its command
      std::string owner;    // `plan` when it has the flag, else the first command that does
      for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
        for (const CLI::Option* o : sub->get_options())
          for (const std::string& n : o->get_lnames())
            if (n == name && (owner.empty() || sub->get_name() == "plan")) owner = sub->get_name();
      if (!owner.empty())
        return fmt::format("--{} needs a command before it, e.g. `l2s {} --{} ...` (`l2s --help` "
                           "lists the commands)",
                           name, owner, name);
    }
    return fmt::format("unknown flag --{} for `{}`{}; `{} --help` lists its flags",
                       PrintableText(name), where,
                       best.empty() ? "" : fmt::format(" (did you mean --{}?)", best), where);
  }
  return fallback;
}

// CLI11's "The following argument was not expected: X" for a word that is no flag, said in the
// flags' words: the first such argument after the command, with the switch (a flag that takes no
// value, e.g. --pareto) it follows when it does. nullopt when none is found.
std::optional<std::string> StrayArgumentMessage(CLI::App& app, int argc, char** argv) {
  CLI::App* named = CommandOf(app, argc, argv);
  CLI::App* cmd = named != nullptr ? named : &app;
  const int first = named != nullptr ? 2 : 1;
  const std::string where = cmd == &app ? "l2s" : "l2s " + cmd->get_name();
  for (int i = first; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--") break;
    if (a.rfind("--", 0) == 0) {
      if (a.find('=') != std::string_view::npos) continue;
      const CLI::Option* opt = cmd->get_option_no_throw(std::string(a));
      if (opt == nullptr) opt = app.get_option_no_throw(std::string(a));
      if (opt == nullptr) continue;
      if (opt->get_items_expected_min() > 0) {
        ++i;  // its value
      } else if (i + 1 < argc && std::string_view(argv[i + 1]).rfind("-", 0) != 0) {
        return fmt::format("{} takes no value, got \"{}\" after it (a switch: give it alone)", a,
                           PrintableText(argv[i + 1]));
      }
      continue;
    }
    if (cmd == &app) {  // a word before any command: a command misspelled, or none given
      std::vector<std::string> commands;
      for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
        commands.push_back(sub->get_name());
      const std::string word(a);
      const int at = NearestIndex(commands.size(), std::max(1, MaxTypoDistance(word.size())),
                                  [&](size_t k) { return EditDistance(word, commands[k]); });
      std::string list;
      for (const std::string& c : commands) list += (list.empty() ? "" : ", ") + c;
      const std::string hint =
          at < 0 ? std::string()
                 : fmt::format(" (did you mean {}?)", commands[static_cast<size_t>(at)]);
      return fmt::format("unknown command \"{}\"{}; the commands: {}", PrintableText(a), hint,
                         list);
    }
    return fmt::format("unexpected argument \"{}\": every value follows its flag (e.g. --model "
                       "NAME); `{} --help` lists the flags",
                       PrintableText(a), where);
  }
  return std::nullopt;
}

// A number as the user would write it: CLI11 prints real bounds with six decimals
// ("1000000.000000").
std::string PlainNumber(std::string x) {
  if (x.find('.') != std::string::npos) {
    while (!x.empty() && x.back() == '0') x.pop_back();
    if (!x.empty() && x.back() == '.') x.pop_back();
  }
  return x;
}

// CLI11's value errors said in the flags' words: "--isl: Value 2k not in range 1 to 16777216"
// (the range check of a number it could not read, or read as a fraction of a whole-number flag)
// and "Could not convert: --rate = fast". `what` unchanged when it is neither.
std::string ValueErrorMessage(const std::string& what) {
  const std::string range = ": Value ", in = " not in range ", to = " to ";
  const size_t v = what.find(range), r = what.find(in), t = what.rfind(to);
  if (what.rfind("--", 0) == 0 && v != std::string::npos && r != std::string::npos && r > v &&
      t != std::string::npos && t > r) {
    const std::string flag = what.substr(0, v);
    const std::string value = what.substr(v + range.size(), r - v - range.size());
    const std::string lo = what.substr(r + in.size(), t - r - in.size());
    const std::string hi = what.substr(t + to.size());
    const bool whole = lo.find('.') == std::string::npos && hi.find('.') == std::string::npos;
    char* end = nullptr;
    const double x = std::strtod(value.c_str(), &end);
    const bool number = !value.empty() && end == value.c_str() + value.size();
    const double lo_x = std::strtod(lo.c_str(), nullptr), hi_x = std::strtod(hi.c_str(), nullptr);
    if (!number || (whole && x >= lo_x && x <= hi_x))
      return fmt::format("{} expects {} from {} to {}, got \"{}\"", flag,
                         whole ? "a whole number" : "a number", PlainNumber(lo), PlainNumber(hi),
                         PrintableText(value));
    return fmt::format("{} must be from {} to {}, got {}", flag, PlainNumber(lo), PlainNumber(hi),
                       PrintableText(value));
  }
  // A flag given twice (CLI11: "--budget: At Most 1 required but received 2").
  const std::string twice = ": At Most 1 required but received ";
  if (const size_t at = what.find(twice); what.rfind("--", 0) == 0 && at != std::string::npos)
    return fmt::format("{} is given {} times: give it once", what.substr(0, at),
                       what.substr(at + twice.size()));
  // A flag last on the line without its value (CLI11: "--budget: 1 required INT:INT in [1 -
  // 100000000] missing", "--model: 1 required TEXT missing").
  if (const size_t at = what.find(": 1 required ");
      what.rfind("--", 0) == 0 && at != std::string::npos && what.ends_with(" missing"))
    return fmt::format("{} expects a value, got none after it", what.substr(0, at));
  const std::string conv = "Could not convert: ";
  const size_t eq = what.find(" = ");
  if (what.rfind(conv, 0) == 0 && eq != std::string::npos)
    return fmt::format("{} expects a number, got \"{}\"", what.substr(conv.size(), eq - conv.size()),
                       PrintableText(what.substr(eq + 3)));
  return what;
}

// A flag's value that is missing or empty, the first in argv; nullopt when argv has none.
// - Missing: a flag that takes a value followed by another flag. CLI11 (2.1) takes the second as
//   the first's value ("--model-id --budget 50" plans with --model-id "--budget" and then rejects
//   "50"; "--router --json" silently drops --json). No value of an l2s flag starts with "--", so
//   that is the user's missing value: one line naming both.
// - Empty (`--model ""`, `--gpu=`): CLI11 accepts it and every command read an empty string as
//   "not given", so `--model "$MODEL"` with MODEL unset planned the default model. No l2s flag
//   takes an empty value.
std::optional<std::string> BadFlagValue(CLI::App& app, int argc, char** argv) {
  CLI::App* sub = argc < 3 ? nullptr : CommandOf(app, argc, argv);
  if (sub == nullptr) return std::nullopt;
  for (int i = 2; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--") break;
    if (a.rfind("--", 0) != 0) continue;
    const size_t eq = a.find('=');
    const std::string name(a.substr(0, eq));
    const CLI::Option* opt = sub->get_option_no_throw(name);
    if (opt == nullptr || opt->get_items_expected_min() == 0) continue;
    const auto empty = [&] {
      return fmt::format("{} expects a value, got an empty string (drop {} for its default)", name,
                         name);
    };
    if (eq != std::string_view::npos) {
      if (eq + 1 == a.size()) return empty();
      continue;
    }
    if (i + 1 >= argc) continue;  // the last argument: CLI11 says it lacks a value
    const std::string_view next = argv[i + 1];
    if (next.empty()) return empty();
    if (next.rfind("--", 0) == 0)
      return fmt::format("{} expects a value, got the flag {} (give {} a value, or drop it)", name,
                         PrintableText(next), name);
  }
  return std::nullopt;
}

int Main(int argc, char** argv) {
  CLI::App app{"l2s - learn to shard: plan the parallelization of an LLM for inference"};
  app.require_subcommand(0, 1);
  // "l2s 0.1.0 (git <describe>)": the CMake project version and `git describe` at configure time.
  app.set_version_flag("--version", std::string("l2s ") + L2S_VERSION);
  // Every exit prints a JSON object under --json, parse errors included (common.h Fail).
  l2s::cli::SetJsonMode(WantsJson(argc, argv));
  std::map<std::string, l2s::cli::Runner> runners;
  auto add = [&](const char* name, l2s::cli::Runner r) { runners[name] = std::move(r); };
  add("describe", l2s::cli::RegisterDescribe(app));
  add("space", l2s::cli::RegisterSpace(app));
  add("explain", l2s::cli::RegisterExplain(app));
  add("eval", l2s::cli::RegisterEval(app));
  add("validate", l2s::cli::RegisterValidate(app));
  add("plan", l2s::cli::RegisterPlan(app));
  add("compare", l2s::cli::RegisterCompare(app));
  add("capacity", l2s::cli::RegisterCapacity(app));
  add("sweep", l2s::cli::RegisterSweep(app));
  if (const std::optional<std::string> bad = BadFlagValue(app, argc, argv))
    return l2s::cli::Fail(l2s::Status::InvalidArgument(*bad));
  // argv parsed, or the exit code of its parse error (help and version included).
  const auto parse = [&app](int n, char** args) -> std::optional<int> {
    try {
      app.parse(n, args);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e);
    } catch (const CLI::ExtrasError& e) {
      // A first word that is no command is the mistake to name (`l2s pln --gpus 8`), before
      // any flag it would have taken.
      const bool command_word =
          n < 2 || args[1][0] == '-' || CommandOf(app, n, args) != nullptr;
      std::string message =
          command_word ? UnknownFlagMessage(app, n, args, e.what()) : std::string(e.what());
      if (message == e.what()) message = StrayArgumentMessage(app, n, args).value_or(message);
      return l2s::cli::Fail(l2s::Status::InvalidArgument(message));
    } catch (const CLI::ParseError& e) {
      return l2s::cli::Fail(l2s::Status::InvalidArgument(ValueErrorMessage(e.what())));
    }
    return std::nullopt;
  };
  // `l2s plan|capacity --gpu a,b,...`: each GPU type is a child run of the command, so a usage
  // error would be found by every child, after the progress lines, and said in the children's
  // arguments (their added --json). The arguments are parsed here first as the first GPU type's
  // (--gpu and a per-type --price-per-gpu-hour at their first item).
  if (argc >= 2 && (std::string_view(argv[1]) == "plan" || std::string_view(argv[1]) == "capacity")) {
    const std::vector<std::string> args(argv + 2, argv + argc);
    if (l2s::cli::IsHardwareComparison(args)) {
      // The lists first (a GPU type twice, a price per type that is none), in their own words.
      if (const auto lists = l2s::cli::ParseGpuList(args); !lists.ok())
        return l2s::cli::Fail(lists.status());
      std::vector<std::string> first(argv, argv + 2);
      for (const std::string& a : l2s::cli::FirstGpuTypeArgs(args)) first.push_back(a);
      std::vector<char*> first_argv;
      for (std::string& a : first) first_argv.push_back(a.data());
      if (const std::optional<int> code = parse(static_cast<int>(first.size()), first_argv.data()))
        return *code;
      return std::string_view(argv[1]) == "plan" ? l2s::cli::RunPlanHardware(args)
                                                 : l2s::cli::RunCapacityHardware(args);
    }
  }
  if (const std::optional<int> code = parse(argc, argv)) return *code;
  for (CLI::App* sub : app.get_subcommands()) {
    return runners.at(sub->get_name())();
  }
  // No subcommand: the main job.
  const char* plan_argv[] = {argv[0], "plan"};
  CLI::App app2;
  auto run_plan = l2s::cli::RegisterPlan(app2);
  try {
    app2.parse(2, const_cast<char**>(plan_argv));
  } catch (const CLI::ParseError& e) {
    return app2.exit(e);
  }
  return run_plan();
}

// Main() with the top-level error handling and the final stdout check of the binary.
int RunUncaptured(const std::vector<std::string>& args) {
  std::vector<std::string> copy = args;
  if (copy.empty()) copy.emplace_back("l2s");
  std::vector<char*> argv;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  int code = 0;
  try {
    code = Main(static_cast<int>(copy.size()), argv.data());
  } catch (const std::system_error& e) {
    // fmt::print throws when a write to stdout fails (closed pipe, full disk).
    std::fprintf(stderr, "l2s: error: cannot write to standard output (%s)\n",
                 e.code().message().c_str());
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "l2s: error: out of memory\n");
    return kExitUsage;
  } catch (const std::exception& e) {
    return Fail(Status::InvalidArgument(fmt::format("internal error: {}", e.what())));
  }
  return FinishStdout(code);
}

// Redirects one file descriptor to an anonymous temporary file until Finish().
class FdCapture {
 public:
  explicit FdCapture(int fd) : fd_(fd) {
    tmp_ = std::tmpfile();
    saved_ = ::dup(fd_);
    ok_ = tmp_ != nullptr && saved_ >= 0 && ::dup2(::fileno(tmp_), fd_) >= 0;
  }
  bool ok() const { return ok_; }
  // Restores the descriptor and returns what was written to it.
  std::string Finish() {
    std::string text;
    if (saved_ >= 0) {
      ::dup2(saved_, fd_);
      ::close(saved_);
      saved_ = -1;
    }
    if (tmp_ != nullptr) {
      std::rewind(tmp_);
      char buf[65536];
      size_t n = 0;
      while ((n = std::fread(buf, 1, sizeof buf, tmp_)) > 0) text.append(buf, n);
      std::fclose(tmp_);
      tmp_ = nullptr;
    }
    return text;
  }
  ~FdCapture() { Finish(); }

 private:
  int fd_;
  int saved_ = -1;
  std::FILE* tmp_ = nullptr;
  bool ok_ = false;
};

std::mutex g_run_mutex;

}  // namespace

int RunCli(const std::vector<std::string>& args, std::string* out, std::string* err) {
  if (out == nullptr && err == nullptr) return RunUncaptured(args);
  std::lock_guard<std::mutex> lock(g_run_mutex);
  struct sigaction old_int {}, old_term {}, old_pipe {};
  sigaction(SIGINT, nullptr, &old_int);
  sigaction(SIGTERM, nullptr, &old_term);
  sigaction(SIGPIPE, nullptr, &old_pipe);
  IgnoreSigpipe();
  ClearInterruptForTest();  // a Ctrl-C seen by an earlier call must not stop this one
  std::fflush(nullptr);
  int code = kExitUsage;
  {
    FdCapture cap_out(STDOUT_FILENO);
    FdCapture cap_err(STDERR_FILENO);
    if (!cap_out.ok() || !cap_err.ok()) {
      if (err) *err = "l2s: error: cannot capture the output (no temporary file)\n";
      if (out) out->clear();
    } else {
      code = RunUncaptured(args);
      std::fflush(nullptr);
      std::clearerr(stdout);
    }
    std::string o = cap_out.Finish();
    std::string e = cap_err.Finish();
    if (cap_out.ok() && cap_err.ok()) {
      if (out) *out = std::move(o);
      if (err) *err = std::move(e);
    }
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGPIPE, &old_pipe, nullptr);
  return code;
}

sweep::Runner PlanRunner(const std::string& l2s_binary) {
  const std::string exe = l2s_binary.empty() ? sweep::SelfExe() : l2s_binary;
  if (!l2s_binary.empty() || sweep::IsL2sBinary(exe)) return sweep::ProcessRunner(exe);
  return sweep::ForkRunner(
      [](const std::vector<std::string>& args) { return RunCli(args, nullptr, nullptr); });
}

}  // namespace l2s::cli
