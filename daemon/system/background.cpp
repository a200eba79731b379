#include "system/background.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace handoff::daemon {
namespace {

constexpr off_t max_log_bytes = off_t{8} << 20;

[[noreturn]] void fail_to_start(const std::string& what) { throw std::runtime_error(what); }

void write_line(int fd, std::string_view line) noexcept {
  while (!line.empty()) {
    const ssize_t n = ::write(fd, line.data(), line.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    line.remove_prefix(static_cast<std::size_t>(n));
  }
}

// The log, appended to; a regular file of ours only, never through a symlink.
unique_fd open_log(const std::filesystem::path& log_file) {
  std::error_code ec;
  std::filesystem::create_directories(log_file.parent_path(), ec);
  if (ec) fail_to_start("cannot create " + log_file.parent_path().string() + ": " + ec.message());
  struct stat st {};
  if (::lstat(log_file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > max_log_bytes) {
    auto old = log_file;
    old += ".1";
    ::rename(log_file.c_str(), old.c_str());
  }
  unique_fd fd(::open(log_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) fail_to_start("cannot open the log " + log_file.string() + ": " + std::strerror(errno));
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid())
    fail_to_start("the log " + log_file.string() + " is not a regular file of ours");
  return fd;
}

// The parent: the child's one line ("0", or "<status> <why>"), then its exit status.
int wait_for_word(unique_fd pipe, pid_t child, const std::filesystem::path& log_file) {
  std::string word;
  char buffer[512];
  for (;;) {
    const ssize_t n = ::read(pipe.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    word.append(buffer, static_cast<std::size_t>(n));
    if (word.size() > 4096) break;
  }
  if (word == "0\n") return 0;  // the child runs on, detached; it is not ours to wait for
  int status = 0;
  ::waitpid(child, &status, 0);
  std::string why;
  int code = exit_failed;
  if (const auto space = word.find(' '); space != std::string::npos && !word.empty()) {
    code = std::atoi(word.substr(0, space).c_str());
    why = word.substr(space + 1);
  } else {
    why = "handoffd exited before it listened; see " + log_file.string() + "\n";
  }
  std::fprintf(stderr, "handoffd: %s", why.c_str());
  return code > 0 ? code : exit_failed;
}

}  // namespace

void readiness::ready() noexcept {
  if (!pipe_) return;
  write_line(pipe_.get(), "0\n");
  pipe_.reset();
}

void readiness::failed(int status, std::string_view why) noexcept {
  if (!pipe_) return;
  std::string line = std::to_string(status) + " " + std::string(why) + "\n";
  write_line(pipe_.get(), line);
  pipe_.reset();
}

std::optional<int> detach(const std::filesystem::path& log_file, readiness& out) {
  ::umask(077);
  unique_fd log = open_log(log_file);
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) fail_to_start(std::string("pipe: ") + std::strerror(errno));
  unique_fd read_end(ends[0]), write_end(ends[1]);
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) fail_to_start(std::string("fork: ") + std::strerror(errno));
  if (child > 0) {
    write_end.reset();
    return wait_for_word(std::move(read_end), child, log_file);
  }
  read_end.reset();
  ::setsid();
  if (::chdir("/") != 0) { /* "/" always exists; nothing relies on the cwd */ }
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null >= 0) {
    ::dup2(null, STDIN_FILENO);
    ::close(null);
  }
  ::dup2(log.get(), STDOUT_FILENO);
  ::dup2(log.get(), STDERR_FILENO);
  log.reset();
  // Nothing the client had open (its stdout pipe to a harness, say) stays open in the daemon:
  // a harness reading a hook's output to its end would wait for the daemon's exit otherwise.
  const int keep = write_end.get();
  for (int fd = 3; fd < keep; ++fd) ::close(fd);
  ::close_range(static_cast<unsigned>(keep) + 1, ~0U, 0);
  out = readiness(std::move(write_end));
  return std::nullopt;
}

}  // namespace handoff::daemon
