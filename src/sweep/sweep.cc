// Running a sweep (sweep.h): child-process runner, store, worker threads, result files.
#include "sweep/sweep.h"

#include <fcntl.h>
#include <stdio_ext.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/core.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "cli/svg.h"
#include "plan/replicas.h"

extern char** environ;

namespace l2s::sweep {
namespace {

using nlohmann::json;

Status WriteFileAtomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return Status::IoError(fmt::format("cannot write '{}'", tmp));
    f << text;
    f.flush();
    if (!f) return Status::IoError(fmt::format("cannot write '{}'", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::IoError(fmt::format("cannot rename '{}' to '{}': {}", tmp, path, ec.message()));
  return Status::Ok();
}

std::string Num(const json& v) {
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return fmt::format("{}", v.get<double>());
  return "";
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c == '\n' ? ' ' : c;
  }
  return q + "\"";
}

}  // namespace

std::string SelfExe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

namespace {

// Reads fd to its end.
std::string ReadAll(int fd) {
  std::string text;
  char buf[65536];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      text.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  return text;
}

// The exit code of child pid as a shell reports it (128 + signal when killed).
int WaitExit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

bool IsL2sBinary(const std::string& exe) {
  return !exe.empty() && std::filesystem::path(exe).filename().string().rfind("l2s", 0) == 0;
}

Runner ProcessRunner(std::string exe) {
  return [exe](const Scenario& s) -> Outcome {
    Outcome o;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return {2, ""};
    std::vector<std::string> args = {exe, s.command};
    args.insert(args.end(), s.argv.begin(), s.argv.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
      close(fds[0]);
      return {2, ""};
    }
    o.stdout_text = ReadAll(fds[0]);
    close(fds[0]);
    o.exit_code = WaitExit(pid);
    return o;
  };
}

Runner ForkRunner(std::function<int(const std::vector<std::string>& args)> plan) {
  return [plan](const Scenario& s) -> Outcome {
    Outcome o;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return {2, ""};
    std::vector<std::string> args = {"l2s", s.command};
    args.insert(args.end(), s.argv.begin(), s.argv.end());
    const pid_t pid = fork();
    if (pid < 0) {
      close(fds[0]);
      close(fds[1]);
      return {2, ""};
    }
    if (pid == 0) {
      // The child: what the parent's stdio buffers held is the parent's to write, not ours.
      __fpurge(stdout);
      __fpurge(stderr);
      dup2(fds[1], 1);
      const int null_fd = open("/dev/null", O_WRONLY);
      if (null_fd >= 0) dup2(null_fd, 2);
      const int code = plan(args);
      std::fflush(nullptr);
      _exit(code);
    }
    close(fds[1]);
    o.stdout_text = ReadAll(fds[0]);
    close(fds[0]);
    o.exit_code = WaitExit(pid);
    return o;
  };
}

std::string StoreLine(const Scenario& s, const Outcome& o) {
  json j;
  j["id"] = s.id;
  j["index"] = s.index;
  j["scenario"] = s.Label();
  j["argv"] = s.argv;
  j["exit_code"] = o.exit_code;
  j["stdout"] = o.stdout_text;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

StatusOr<std::vector<json>> ReadStore(const std::string& path) {
  std::vector<json> out;
  std::ifstream in(path, std::ios::binary);
  if (!in) return out;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    try {
      json j = json::parse(line);
      if (!j.is_object() || !j.contains("id") || !j["id"].is_string()) throw std::runtime_error("no id");
      out.push_back(std::move(j));
    } catch (const std::exception&) {
      // A line cut short by a kill mid-write: that scenario runs again.
      continue;
    }
  }
  return out;
}

namespace {

// The number after `flag` in the scenario's plan arguments (a workload's traffic or the grid's
// `plan` flags put it there), or null.
json FlagNumber(const Scenario& s, const char* flag) {
  for (size_t i = 0; i + 1 < s.argv.size(); ++i)
    if (s.argv[i] == flag) {
      try {
        return json::parse(s.argv[i + 1]);
      } catch (const std::exception&) {
        return json(s.argv[i + 1]);
      }
    }
  return json(nullptr);
}

}  // namespace

json Summary(const Scenario& s, const json& entry) {
  json r = json::object();
  r["index"] = s.index;
  r["id"] = s.id;
  r["model"] = s.model;
  r["gpu"] = s.gpu;
  r["count"] = s.count ? json(*s.count) : json(nullptr);
  r["mode"] = s.workload.mode;
  r["input"] = s.workload.input ? json(*s.workload.input) : json(nullptr);
  r["output"] = s.workload.output ? json(*s.workload.output) : json(nullptr);
  r["context"] = s.workload.context ? json(*s.workload.context) : json(nullptr);
  r["slo"] = s.slo;
  r["engine_asked"] = s.engine;
  r["price_per_gpu_hour"] = s.price ? json(*s.price) : json(nullptr);
  r["exit_code"] = entry.is_object() ? json(entry.value("exit_code", -1)) : json(nullptr);
  json plan;
  if (entry.is_object() && entry.contains("stdout")) {
    try {
      plan = json::parse(entry["stdout"].get<std::string>());
    } catch (const std::exception&) {
      plan = nullptr;
    }
  }
  const bool has_best = plan.is_object() && plan.contains("best") && plan["best"].is_object();
  const bool valid = has_best && plan.value("valid", true) == true;
  r["valid"] = valid;
  const json best = has_best ? plan["best"] : json::object();
  r["engine"] = best.contains("engine") ? best["engine"]
                : (plan.is_object() && plan.contains("problem")) ? plan["problem"].value("engine", json(nullptr))
                                                                 : json(nullptr);
  for (const char* k : {"tokens_per_s_per_gpu", "ttft_ms", "tpot_ms"}) r[k] = best.value(k, json(nullptr));
  const json cost = best.contains("cost") && best["cost"].is_object() ? best["cost"] : json::object();
  for (const char* k : {"usd_per_mtok_output", "usd_per_mtok_total", "tokens_per_joule_output"})
    r[k] = cost.value(k, json(nullptr));
  r["gpus"] = plan.is_object() && plan.contains("problem") ? plan["problem"].value("gpus", json(nullptr)) : json(nullptr);
  r["serving"] = has_best ? json(best.value("serving", std::string("agg"))) : json(nullptr);
  r["strategy"] = best.value("strategy", json(nullptr));
  // Aggregated replicas (cli/plan_replicas.h): "Nx<strategy>", N instances of the strategy.
  if (r["strategy"].is_string() && best.value("instances", 1) > 1)
    r["strategy"] = plan::ReplicatedText(best.value("instances", 1), r["strategy"].get<std::string>());
  if (r["strategy"].is_null() && best.contains("prefill") && best.contains("decode") &&
      best["prefill"].is_object() && best["decode"].is_object()) {
    // Disaggregated: "prefill Nx<strategy>; decode Mx<strategy>".
    auto pool = [](const json& p) {
      return plan::ReplicatedText(p.value("instances", 1), p.value("strategy", std::string("?")));
    };
    r["strategy"] = "prefill " + pool(best["prefill"]) + "; decode " + pool(best["decode"]);
  }
  std::string reason;
  if (!entry.is_object()) reason = "not run";
  else if (plan.is_object() && plan.contains("reason") && plan["reason"].is_string()) reason = plan["reason"];
  else if (!plan.is_object()) reason = fmt::format("no JSON output (exit {})", entry.value("exit_code", -1));
  r["reason"] = reason;
  // A scenario with a traffic (percentile SLOs, plan's rate/concurrency/trace flags): its pick's
  // simulated P99s (null otherwise).
  const bool served = best.contains("serve") && best["serve"].is_object();
  for (const auto& [col, metric] : {std::pair{"p99_ttft_ms", "ttft_ms"}, {"p99_tpot_ms", "tpot_ms"}})
    r[col] = served && best["serve"].contains(metric) && best["serve"][metric].is_object()
                 ? best["serve"][metric].value("p99", json(nullptr))
                 : json(nullptr);
  // A traffic pick's price at the rate the traffic was served (best.cost_at_traffic; null
  // without a traffic or a price).
  const json at = best.contains("cost_at_traffic") && best["cost_at_traffic"].is_object()
                      ? best["cost_at_traffic"]
                      : json::object();
  r["usd_per_mtok_output_at_traffic"] = at.value("usd_per_mtok_output", json(nullptr));
  // The traffic the scenario was planned under, from its plan arguments (null: none).
  r["rate"] = FlagNumber(s, "--rate");
  r["concurrency"] = FlagNumber(s, "--concurrency");
  return r;
}

std::string CsvText(const std::vector<json>& rows) {
  static const char* kCols[] = {"index", "id", "model", "gpu", "count", "mode", "input", "output", "context",
                                "slo", "engine_asked", "price_per_gpu_hour", "exit_code", "valid", "engine",
                                "tokens_per_s_per_gpu", "ttft_ms", "tpot_ms", "usd_per_mtok_output", "usd_per_mtok_total",
                                "tokens_per_joule_output", "gpus", "serving", "strategy", "reason",
                                "p99_ttft_ms", "p99_tpot_ms", "rate", "concurrency",
                                "usd_per_mtok_output_at_traffic"};
  std::string out;
  for (size_t i = 0; i < std::size(kCols); ++i) {
    if (i) out += ',';
    out += kCols[i];
  }
  out += "\n";
  for (const json& r : rows) {
    for (size_t i = 0; i < std::size(kCols); ++i) {
      const json& v = r[kCols[i]];
      std::string t = v.is_string() ? v.get<std::string>() : v.is_boolean() ? (v.get<bool>() ? "true" : "false")
                                                                              : Num(v);
      if (i) out += ',';
      out += CsvField(t);
    }
    out += "\n";
  }
  return out;
}

namespace {

std::string SvgText(const std::vector<json>& rows) {
  cli::Plot p;
  p.title = "l2s sweep: best tokens/s per GPU per scenario";
  p.x_label = "scenario (grid order)";
  p.y_label = "tokens/s per GPU";
  p.pad = 0.04;  // the first and last scenarios inside the frame, not on it
  static const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  std::map<std::string, size_t> series_of;
  for (const json& r : rows) {
    if (!r["valid"].get<bool>() || !r["tokens_per_s_per_gpu"].is_number()) continue;
    const std::string key = r["model"].get<std::string>() + " " + r["gpu"].get<std::string>();
    auto it = series_of.find(key);
    if (it == series_of.end()) {
      cli::PlotSeries s;
      s.kind = cli::PlotSeries::Kind::kScatter;
      s.name = key;
      s.color = kColors[p.series.size() % std::size(kColors)];
      s.width_px = 4;
      it = series_of.emplace(key, p.series.size()).first;
      p.series.push_back(s);
    }
    p.series[it->second].x.push_back(r["index"].get<double>() + 1);
    p.series[it->second].y.push_back(r["tokens_per_s_per_gpu"].get<double>());
  }
  return cli::RenderSvg(p);
}

}  // namespace

Status RunSweep(const std::vector<Scenario>& scenarios, const SweepOptions& opt, const Runner& run,
                const Gather& gather, SweepStats* stats) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (opt.rank == 0) {
    fs::create_directories(opt.out_dir, ec);
    if (ec) return Status::IoError(fmt::format("cannot create output directory '{}': {}", opt.out_dir, ec.message()));
  }
  const std::string store_path = (fs::path(opt.out_dir) / "results.jsonl").string();
  auto store = ReadStore(store_path);
  if (!store.ok()) return store.status();
  std::map<std::string, json> done;
  for (const json& j : *store) done.emplace(j["id"].get<std::string>(), j);

  SweepStats st;
  st.scenarios = scenarios.size();
  std::vector<const Scenario*> mine;
  for (const Scenario& s : scenarios) {
    if (done.count(s.id)) {
      ++st.skipped;
      continue;
    }
    if (static_cast<int>(s.index % static_cast<size_t>(opt.ranks)) == opt.rank) mine.push_back(&s);
  }

  // Single process: every finished scenario is appended to the store at once, so a killed sweep
  // resumes where it stopped. Under MPI rank 0 writes what the ranks gathered at the end.
  std::ofstream append;
  if (opt.ranks == 1 && !mine.empty()) {
    append.open(store_path, std::ios::binary | std::ios::app);
    if (!append) return Status::IoError(fmt::format("cannot write '{}'", store_path));
  }
  std::mutex mu;
  std::vector<std::string> lines(mine.size());
  std::atomic<size_t> next{0};
  size_t finished = 0;
  const size_t pending_total = scenarios.size() - st.skipped;
  auto worker = [&] {
    while (true) {
      const size_t k = next.fetch_add(1);
      if (k >= mine.size()) return;
      const Scenario& s = *mine[k];
      const Outcome o = run(s);
      // Interrupted (130, 143) or killed by a signal (128 + n): not finished, not stored.
      const bool interrupted = o.exit_code >= 128;
      std::string line = interrupted ? std::string() : StoreLine(s, o);
      std::lock_guard<std::mutex> lock(mu);
      ++finished;
      if (append.is_open() && !interrupted) {
        append << line << "\n";
        append.flush();
      }
      if (opt.progress) {
        std::string what;
        try {
          const json plan = json::parse(o.stdout_text);
          const json* reason = plan.contains("reason") && plan["reason"].is_string()
                                   ? &plan["reason"]
                                   : nullptr;
          if (plan.contains("best") && plan["best"].is_object() && plan.value("valid", true) == true)
            what = fmt::format("done, {:.1f} tok/s/GPU", plan["best"].value("tokens_per_s_per_gpu", 0.0));
          else if (o.exit_code == 2)  // the scenario's input is wrong, not its problem infeasible
            what = fmt::format("error: {}", reason ? reason->get<std::string>() : "bad input");
          else
            what = reason ? fmt::format("done, no valid plan: {}", reason->get<std::string>())
                          : std::string("done, no valid plan");
        } catch (const std::exception&) {
          what = fmt::format("failed (exit {})", o.exit_code);
        }
        const std::string who = opt.ranks > 1 ? fmt::format("rank {}: ", opt.rank) : "";
        fmt::print(stderr, "{}[{}/{}] {} ... {}\n", who, opt.ranks > 1 ? finished : finished,
                   opt.ranks > 1 ? mine.size() : pending_total, s.Label(), what);
      }
      lines[k] = std::move(line);
    }
  };
  const int jobs = std::max(1, std::min<int>(opt.jobs, static_cast<int>(std::max<size_t>(mine.size(), 1))));
  std::vector<std::thread> threads;
  for (int t = 1; t < jobs; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  if (append.is_open()) append.close();
  st.ran = mine.size();

  const std::vector<std::string> all = gather(lines);
  if (opt.rank != 0) {
    if (stats) *stats = st;
    return Status::Ok();
  }
  for (const std::string& l : all) {
    if (l.empty()) continue;
    try {
      json j = json::parse(l);
      const std::string id = j.at("id").get<std::string>();
      done[id] = std::move(j);
    } catch (const std::exception&) {
    }
  }
  // The store in grid order, then lines of scenarios no longer in the grid in their old order.
  std::string store_text;
  std::set<std::string> written;
  std::vector<json> rows;
  for (const Scenario& s : scenarios) {
    auto it = done.find(s.id);
    const json entry = it == done.end() ? json(nullptr) : it->second;
    if (it != done.end() && written.insert(s.id).second) {
      json e = entry;
      e["index"] = s.index;
      store_text += e.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    }
    rows.push_back(Summary(s, entry));
    if (rows.back()["valid"].get<bool>()) ++st.valid;
  }
  for (const json& j : *store)
    if (written.insert(j["id"].get<std::string>()).second)
      store_text += j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  const fs::path dir(opt.out_dir);
  Status s = WriteFileAtomic((dir / "results.jsonl").string(), store_text);
  if (s.ok()) s = WriteFileAtomic((dir / "results.csv").string(), CsvText(rows));
  if (s.ok()) s = WriteFileAtomic((dir / "results.json").string(), json(rows).dump(2) + "\n");
  if (s.ok()) s = WriteFileAtomic((dir / "results.svg").string(), SvgText(rows));
  if (stats) *stats = st;
  return s;
}

}  // namespace l2s::sweep
