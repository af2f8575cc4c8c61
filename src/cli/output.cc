#include "cli/output.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include "cli/common.h"

namespace l2s::cli {
namespace {

namespace fs = std::filesystem;

std::string Errno(int err) { return std::strerror(err); }

// Writes all of `data` to `fd`; 0 or the errno of the failure.
int WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

bool ExistsNonRegular(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

std::string TempName(const std::string& path) {
  return fmt::format("{}.tmp-{}", path, static_cast<long>(::getpid()));
}

}  // namespace

Status WriteFileAtomic(const std::string& out_path, std::string_view contents) {
  std::error_code ec;
  // Through a symlink (/dev/stdout, a link into another directory): write what it points to,
  // rather than replacing the link.
  std::string path = out_path;
  if (fs::is_symlink(out_path, ec)) {
    const fs::path target = fs::canonical(out_path, ec);
    if (!ec) path = target.string();
  }
  if (fs::is_directory(path, ec))
    return Status::IoError(fmt::format("{}: is a directory", path));
  if (ExistsNonRegular(path)) {  // a device or FIFO: write in place
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) return Status::IoError(fmt::format("{}: cannot open for writing ({})", path, Errno(errno)));
    const int err = WriteAll(fd, contents);
    const int close_err = ::close(fd) != 0 ? errno : 0;
    if (err != 0 || close_err != 0)
      return Status::IoError(fmt::format("{}: write failed ({})", path, Errno(err ? err : close_err)));
    return Status::Ok();
  }
  const std::string tmp = TempName(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return Status::IoError(fmt::format("{}: cannot create {} ({})", path, tmp, Errno(errno)));
  int err = WriteAll(fd, contents);
  if (err == 0 && ::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    return Status::IoError(fmt::format("{}: write failed ({}); the file was left as it was", path, Errno(err)));
  }
  return Status::Ok();
}

Status CheckWritable(const std::string& flag, const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    return Status::IoError(fmt::format("{} {}: is a directory", flag, path));
  if (ExistsNonRegular(path)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno != ENXIO)  // ENXIO: a FIFO nobody reads yet
      return Status::IoError(fmt::format("{} {}: cannot open for writing ({})", flag, path, Errno(errno)));
    if (fd >= 0) ::close(fd);
    return Status::Ok();
  }
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec))
    return Status::IoError(fmt::format("{} {}: directory {} does not exist", flag, path, parent.string()));
  const std::string probe = TempName(path);
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0)
    return Status::IoError(fmt::format("{} {}: cannot create a file in {} ({})", flag, path,
                                       parent.empty() ? std::string(".") : parent.string(), Errno(errno)));
  ::close(fd);
  ::unlink(probe.c_str());
  return Status::Ok();
}

Status CheckNotAnInput(const std::string& flag, const std::string& out,
                       const std::vector<std::pair<std::string, std::string>>& inputs) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return Status::Ok();
  for (const auto& [in_flag, in_path] : inputs) {
    if (in_path.empty()) continue;
    std::error_code e2;
    fs::path p(in_path);
    if (fs::is_directory(p, e2)) p /= "config.json";  // --model DIR reads DIR/config.json
    if (fs::equivalent(out, p, e2) && !e2)
      return Status::InvalidArgument(fmt::format(
          "{} {} is the file {} reads ({}): writing it would destroy the input", flag, out,
          in_flag, in_path));
  }
  return Status::Ok();
}

std::string DumpJson(const nlohmann::ordered_json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void IgnoreSigpipe() { ::signal(SIGPIPE, SIG_IGN); }

namespace {
bool g_json_mode = false;
}  // namespace

void SetJsonMode(bool on) { g_json_mode = on; }
bool JsonMode() { return g_json_mode; }

int ExitCodeOf(const Status& s) {
  return s.code() == Status::Code::kInvalid     ? kExitImpossible
         : s.code() == Status::Code::kCancelled ? kExitInterrupted
                                                : kExitUsage;
}

int Fail(const Status& s) {
  // Status messages are one printable line whatever they quote (common/status.h).
  const int code = ExitCodeOf(s);
  fmt::print(stderr, "l2s: error: {}\n", s.message());
  if (g_json_mode) {
    nlohmann::ordered_json j;
    j["valid"] = false;
    j["reason"] = s.message();
    j["exit_code"] = code;
    fmt::print("{}\n", DumpJson(j));
  }
  return code;
}

void Warn(const std::string& message) {
  static std::mutex mu;
  static std::set<std::string> seen;
  if (message.empty()) return;
  const std::lock_guard<std::mutex> lock(mu);
  if (!seen.insert(message).second) return;
  fmt::print(stderr, "l2s: warning: {}\n", message);
}

int FinishStdout(int code) {
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    const int err = errno;
    std::fprintf(stderr, "l2s: error: cannot write to standard output (%s)\n",
                 err != 0 ? std::strerror(err) : "write error");
    return kExitUsage;
  }
  return code;
}

}  // namespace l2s::cli
