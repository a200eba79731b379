#include "support/socket_probe.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace handoff::test {
namespace {

// A connected socket to `path`, or -1.
int connect_to(const std::filesystem::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) return fd;
  ::close(fd);
  return -1;
}

}  // namespace

bool socket_accepts(const std::filesystem::path& path) {
  const int fd = connect_to(path);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

pid_t listener_pid(const std::filesystem::path& path) {
  const int fd = connect_to(path);
  if (fd < 0) return 0;
  ucred cred{};
  socklen_t len = sizeof cred;
  const pid_t pid = ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 ? cred.pid : 0;
  ::close(fd);
  return pid;
}

}  // namespace handoff::test
