#include "e2e_support.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <system_error>

#include "bench_daemon.hpp"

namespace handoff::bench {
namespace {

constexpr std::array<std::string_view, 16> words = {
    "parser",  "queue",   "budget", "artifact", "socket", "verdict", "fsync",  "projection",
    "latency", "tail",    "head",   "frame",    "daemon", "client",  "record", "checksum"};
constexpr std::array<std::string_view, 6> dirs = {"daemon", "protocol", "engine", "client", "tests", "docs"};

std::string_view word(std::uint64_t r) { return words[r % words.size()]; }

// One line of a report, ending in '\n', chosen by `r`.
void append_line(std::string& out, std::uint64_t line, std::uint64_t r) {
  switch (r % 10) {
    case 0:
      out += "\n## Step ";
      out += std::to_string(line);
      out += ": ";
      out += word(r >> 8);
      out += ' ';
      out += word(r >> 16);
      out += '\n';
      return;
    case 1:
      out += "\tif (bytes > limit) return \"";
      out += word(r >> 8);
      out += " over budget\";  // line ";
      out += std::to_string(line);
      out += '\n';
      return;
    default:
      break;
  }
  out += "- Checked `";
  out += dirs[(r >> 4) % dirs.size()];
  out += '/';
  out += word(r >> 8);
  out += '_';
  out += std::to_string((r >> 12) % 97);
  out += ".cpp`: the ";
  out += word(r >> 20);
  out += " path keeps the \"";
  out += word(r >> 24);
  out += "\" contract";
  for (std::uint64_t extra = (r >> 28) % 6; extra > 0; --extra) {
    out += ", and the ";
    out += word(r >> (30 + extra * 3));
    out += " case";
  }
  out += ".\n";
}

}  // namespace

std::uint64_t mix(std::uint64_t i) noexcept {
  std::uint64_t z = i + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::string report_text(std::size_t bytes, std::uint64_t seed) {
  std::string out;
  out.reserve(bytes + 256);
  out += "# Subagent report ";
  out += std::to_string(seed);
  out += "\n\nSummary: audited the handoff paths listed below.\n\n";
  for (std::uint64_t line = 1; out.size() < bytes; ++line) append_line(out, line, mix(seed * 1'000'003 + line));
  out.resize(bytes);
  if (bytes > 0) out.back() = '\n';
  return out;
}

double samples::quantile(double q) const {
  if (us_.empty()) return 0;
  std::vector<double> sorted = us_;
  std::sort(sorted.begin(), sorted.end());
  const double rank = std::ceil(q * static_cast<double>(sorted.size()));
  const auto index = static_cast<std::size_t>(std::max(rank, 1.0)) - 1;
  return sorted[std::min(index, sorted.size() - 1)];
}

std::string format_us(double us) {
  char buf[32];
  if (us < 1000)
    std::snprintf(buf, sizeof buf, "%.0f us", us);
  else if (us < 1'000'000)
    std::snprintf(buf, sizeof buf, "%.2f ms", us / 1000);
  else
    std::snprintf(buf, sizeof buf, "%.2f s", us / 1'000'000);
  return buf;
}

std::string format_ratio(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, r < 10 ? "%.2fx" : "%.0fx", r);
  return buf;
}

std::string format_mib(std::size_t kib) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(kib) / 1024.0);
  return buf;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  if (n == 0) return 0;
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string format_bytes(std::size_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

void print_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  auto print_row = [](const std::vector<std::string>& cells) {
    std::cout << '|';
    for (const auto& c : cells) std::cout << ' ' << c << " |";
    std::cout << '\n';
  };
  print_row(header);
  std::cout << '|';
  for (std::size_t i = 0; i < header.size(); ++i) std::cout << (i == 0 ? "---|" : "---:|");
  std::cout << '\n';
  for (const auto& r : rows) print_row(r);
  std::cout << std::endl;
}

void print_environment(const std::filesystem::path& data_dir, const std::filesystem::path& handoffd) {
  std::ifstream loadavg("/proc/loadavg");
  std::string load;
  std::getline(loadavg, load);
  std::cout << "- handoffd: `" << handoffd.string() << "` (" << HANDOFF_BENCH_BUILD_TYPE << ")\n"
            << "- store and queue under `" << data_dir.string() << "` (" << filesystem_type(data_dir)
            << ")\n"
            << "- CPUs online: " << ::sysconf(_SC_NPROCESSORS_ONLN) << ", load average: " << load << "\n\n";
}

int connect_unix(const std::filesystem::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int e = errno;
    ::close(fd);
    throw std::system_error(e, std::generic_category(), "connect " + path.string());
  }
  return fd;
}

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "write");
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void read_exactly(int fd, char* out, std::size_t n) {
  while (n > 0) {
    const ssize_t got = ::read(fd, out, n);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "read");
    }
    if (got == 0) throw std::runtime_error("end of stream");
    out += got;
    n -= static_cast<std::size_t>(got);
  }
}

bool read_line(int fd, std::string& buffer, std::string& out) {
  for (;;) {
    if (const auto nl = buffer.find('\n'); nl != std::string::npos) {
      out.assign(buffer, 0, nl + 1);
      buffer.erase(0, nl + 1);
      return true;
    }
    char chunk[64 * 1024];
    const ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "read");
    }
    if (got == 0) {
      if (buffer.empty()) return false;
      throw std::runtime_error("end of stream inside a line");
    }
    buffer.append(chunk, static_cast<std::size_t>(got));
  }
}

unix_peer::unix_peer(std::filesystem::path path, std::function<bool(int fd)> serve, runs_as how)
    : path_(std::move(path)) {
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path_.c_str());
  if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 4) != 0) {
    const int e = errno;
    ::close(listen_fd_);
    throw std::system_error(e, std::generic_category(), "bind/listen " + path_.string());
  }
  auto run = [fd = listen_fd_, s = std::move(serve)] {
    const int conn = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) return;
    try {
      while (s(conn)) {
      }
    } catch (const std::exception&) {
      // The client left: the peer's work is done.
    }
    ::close(conn);
  };
  if (how == runs_as::thread) {
    thread_ = std::thread(std::move(run));
    return;
  }
  child_ = ::fork();
  if (child_ < 0) {
    const int e = errno;
    ::close(listen_fd_);
    throw std::system_error(e, std::generic_category(), "fork");
  }
  if (child_ == 0) {
    // Only the listening socket: the parent's other sockets (the daemon's, other peers') must
    // close when the parent closes them, not live on here.
    const auto keep = static_cast<unsigned>(listen_fd_);
    if (keep > 3) ::close_range(3, keep - 1, 0);
    ::close_range(keep + 1, ~0U, 0);
    run();
    ::_exit(0);
  }
}

unix_peer::~unix_peer() {
  ::shutdown(listen_fd_, SHUT_RDWR);  // wakes an accept() nobody connected to
  if (thread_.joinable()) thread_.join();
  if (child_ > 0) {
    // The child leaves once its client has closed the connection; one that does not is killed.
    int status = 0;
    pid_t reaped = 0;
    for (int i = 0; i < 1000 && reaped == 0; ++i) {
      reaped = ::waitpid(child_, &status, WNOHANG);
      if (reaped < 0 && errno == EINTR) reaped = 0;
      if (reaped == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (reaped == 0) {
      ::kill(child_, SIGKILL);
      while (::waitpid(child_, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }
  ::close(listen_fd_);
  ::unlink(path_.c_str());
}

}  // namespace handoff::bench
