#include "handoff/cancel_signal.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "handoff/client_error.hpp"

namespace handoff::client {

cancel_signal::cancel_signal() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (fd_ < 0) throw client_error(error_kind::io, std::string("eventfd: ") + std::strerror(errno));
}

cancel_signal::~cancel_signal() { ::close(fd_); }

void cancel_signal::raise() noexcept {
  const int saved = errno;  // a signal handler must leave errno as it found it
  raised_.store(true, std::memory_order_release);
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(fd_, &one, sizeof one);  // fails only when already huge
  errno = saved;
}

}  // namespace handoff::client
