#include "system/activation.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "system/environment.hpp"
#include "system/instance_lock.hpp"

namespace handoff::daemon {
namespace {

// sd_listen_fds(3): passed fds start here.
constexpr int listen_fds_start = 3;

[[noreturn]] void fail_activation(const std::string& what) {
  throw std::runtime_error("socket activation: " + what);
}

std::string errno_text() { return std::strerror(errno); }

std::string take_env(const char* name) {
  std::string value = env_or_empty(name);
  ::unsetenv(name);
  return value;
}

int socket_option(int fd, int option, const char* what) {
  int value = 0;
  socklen_t len = sizeof value;
  if (::getsockopt(fd, SOL_SOCKET, option, &value, &len) != 0)
    fail_activation("fd 3 is not a socket (" + std::string(what) + ": " + errno_text() + ")");
  return value;
}

// fd 3 must be what systemd's ListenStream=/path makes: a listening Unix stream socket with a
// filesystem name (an abstract or unnamed socket has no path for clients or for the lock).
std::filesystem::path check_listening_unix_stream(int fd) {
  if (::fcntl(fd, F_GETFD) < 0) fail_activation("LISTEN_FDS=1 but fd 3 is not open");
  if (socket_option(fd, SO_TYPE, "SO_TYPE") != SOCK_STREAM) fail_activation("fd 3 is not a stream socket");
  if (socket_option(fd, SO_ACCEPTCONN, "SO_ACCEPTCONN") == 0) fail_activation("fd 3 is not listening");
  sockaddr_un addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    fail_activation("getsockname on fd 3: " + errno_text());
  if (addr.sun_family != AF_UNIX) fail_activation("fd 3 is not a Unix socket (family " + std::to_string(addr.sun_family) + ")");
  const std::size_t header = offsetof(sockaddr_un, sun_path);
  if (len <= header || addr.sun_path[0] == '\0')
    fail_activation("fd 3 is an unnamed or abstract Unix socket; handoffd needs one bound to a path");
  return std::string(addr.sun_path, ::strnlen(addr.sun_path, len - header));
}

}  // namespace

std::optional<activated_socket> take_activated_socket() {
  const std::string pid_text = take_env("LISTEN_PID");
  const std::string fds_text = take_env("LISTEN_FDS");
  const std::string names = take_env("LISTEN_FDNAMES");
  if (pid_text.empty() && fds_text.empty()) return std::nullopt;

  // Inherited from a parent that was itself activated: not ours to touch.
  const auto pid = parse_decimal<pid_t>(pid_text);
  if (!pid || *pid != ::getpid()) return std::nullopt;

  const auto count = parse_decimal<int>(fds_text);
  if (!count) fail_activation("LISTEN_FDS=\"" + fds_text + "\" is not a number");
  if (*count != 1)
    fail_activation("LISTEN_FDS=" + fds_text + "; handoffd serves exactly one socket (one ListenStream= in handoffd.socket)");

  activated_socket out;
  out.path = check_listening_unix_stream(listen_fds_start);
  out.socket = unique_fd(listen_fds_start);
  if (::fcntl(listen_fds_start, F_SETFD, FD_CLOEXEC) != 0) fail_activation("cannot set close-on-exec on fd 3: " + errno_text());
  out.name = names.substr(0, names.find(':'));
  try {
    out.lock = lock_instance(out.path);
  } catch (const already_serving&) {
    throw;
  } catch (const std::runtime_error& e) {
    fail_activation(e.what());
  }
  return out;
}

}  // namespace handoff::daemon
