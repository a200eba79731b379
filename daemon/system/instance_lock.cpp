#include "system/instance_lock.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/file.h>

namespace handoff::daemon {

unique_fd lock_instance(const std::filesystem::path& socket_path) {
  auto lock_path = socket_path;
  lock_path += ".lock";
  unique_fd fd(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) throw std::runtime_error("cannot open " + lock_path.string() + ": " + std::strerror(errno));
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) throw already_serving("another handoffd is already serving " + socket_path.string());
    throw std::runtime_error("cannot lock " + lock_path.string() + ": " + std::strerror(errno));
  }
  return fd;
}

}  // namespace handoff::daemon
