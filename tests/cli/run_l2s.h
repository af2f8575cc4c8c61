// Runs the built `l2s` binary (L2S_BIN, a compile definition) from end-to-end tests: fork/exec
// without a shell, stdout and stderr captured through temporary files.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace l2s_cli_test {

struct Result {
  int code = -1;  // exit status; 128 + signal when killed
  std::string out, err;
};

inline std::string TempPath(const std::string& stem) {
  return (std::filesystem::temp_directory_path() /
          (stem + "." + std::to_string(::getpid()) + ".tmp"))
      .string();
}

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Starts `l2s args...` with stdout and stderr redirected to files; returns the child's pid.
inline pid_t Spawn(const std::vector<std::string>& args, const std::string& out_path,
                   const std::string& err_path) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::FILE* o = std::freopen(out_path.c_str(), "w", stdout);
    std::FILE* e = std::freopen(err_path.c_str(), "w", stderr);
    if (o == nullptr || e == nullptr) ::_exit(127);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(L2S_BIN));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(L2S_BIN, argv.data());
    ::_exit(127);
  }
  return pid;
}

inline Result Wait(pid_t pid, const std::string& out_path, const std::string& err_path) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = Slurp(out_path);
  r.err = Slurp(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return r;
}

inline Result RunL2s(const std::vector<std::string>& args, const std::string& stem = "l2s_test") {
  const std::string out = TempPath(stem + "_out"), err = TempPath(stem + "_err");
  return Wait(Spawn(args, out, err), out, err);
}

}  // namespace l2s_cli_test
