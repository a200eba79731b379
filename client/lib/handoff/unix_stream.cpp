#include "handoff/unix_stream.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "handoff/client_error.hpp"

namespace handoff::client {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

[[noreturn]] void fail_connect(const std::filesystem::path& path, int err) {
  const std::string where = path.string();
  switch (err) {
    case ENOENT:
    case ECONNREFUSED:
    case ENOTDIR:
      throw client_error(error_kind::daemon_absent,
                         "handoffd is not running at " + where + " (" + errno_text(err) +
                             "); start it with: handoffd --socket " + where);
    case EACCES:
    case EPERM:
      throw client_error(error_kind::refused, "permission denied connecting to " + where +
                                                  ": handoffd serves only its own user, and the socket and its "
                                                  "directory must be yours");
    case EAGAIN:
      throw client_error(error_kind::refused, "handoffd at " + where + " is not accepting connections (backlog full)");
    default:
      throw client_error(error_kind::io, "cannot connect to " + where + ": " + errno_text(err));
  }
}

// Milliseconds poll() may wait before `until`: -1 for ever, 0 when already passed.
int poll_timeout(deadline until) {
  if (!until) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*until - clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, std::numeric_limits<int>::max()));
}

}  // namespace

deadline deadline_after(std::optional<std::chrono::milliseconds> timeout) {
  if (!timeout) return std::nullopt;
  return clock::now() + *timeout;
}

unix_stream unix_stream::connect(const std::filesystem::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.native().size() >= sizeof addr.sun_path)
    throw client_error(error_kind::io, "socket path " + path.string() + " is too long for a Unix socket (max " +
                                           std::to_string(sizeof addr.sun_path - 1) + " bytes)");
  std::memcpy(addr.sun_path, path.c_str(), path.native().size());

  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw client_error(error_kind::io, "socket(): " + errno_text(errno));
  unix_stream stream(fd, path);
  // A blocking connect: on a Unix socket it either succeeds or fails at once.
  int rc;
  do {
    rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) fail_connect(path, errno);
  if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)
    throw client_error(error_kind::io, "fcntl(O_NONBLOCK): " + errno_text(errno));
  return stream;
}

unix_stream::unix_stream(unix_stream&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

unix_stream& unix_stream::operator=(unix_stream&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

unix_stream::~unix_stream() {
  if (fd_ >= 0) ::close(fd_);
}

bool unix_stream::wait_for(short events, deadline until, int wake_fd) {
  for (;;) {
    pollfd p[2] = {{fd_, events, 0}, {wake_fd, POLLIN, 0}};  // a negative fd is skipped
    const int rc = ::poll(p, 2, poll_timeout(until));
    if (rc > 0) return p[0].revents != 0;  // ready, or an error/hangup the next call reports
    if (rc == 0) {
      if (until && clock::now() >= *until) return false;
      continue;  // poll's millisecond rounding woke us a little early
    }
    if (errno != EINTR) throw client_error(error_kind::io, "poll(" + path_.string() + "): " + errno_text(errno));
  }
}

void unix_stream::after_send_error(int err, deadline until) {
  if (err == EINTR) return;
  if (err == EAGAIN || err == EWOULDBLOCK) {
    if (!wait_for(POLLOUT, until))
      throw client_error(error_kind::timeout, "handoffd at " + path_.string() + " stopped reading our request");
    return;
  }
  if (err == EPIPE || err == ECONNRESET)
    throw client_error(error_kind::refused, "handoffd at " + path_.string() + " closed the connection");
  throw client_error(error_kind::io, "send(" + path_.string() + "): " + errno_text(err));
}

void unix_stream::write_all(std::string_view bytes, deadline until) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n >= 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    after_send_error(errno, until);
  }
}

void unix_stream::write_all(std::string_view bytes, std::string_view more, deadline until) {
  while (!bytes.empty()) {
    iovec pieces[2] = {{const_cast<char*>(bytes.data()), bytes.size()}, {const_cast<char*>(more.data()), more.size()}};
    msghdr m{};
    m.msg_iov = pieces;
    m.msg_iovlen = 2;
    const ssize_t n = ::sendmsg(fd_, &m, MSG_NOSIGNAL);
    if (n >= 0) {
      const auto sent = static_cast<std::size_t>(n);
      const std::size_t of_bytes = std::min(sent, bytes.size());
      bytes.remove_prefix(of_bytes);
      more.remove_prefix(sent - of_bytes);
      continue;
    }
    after_send_error(errno, until);
  }
  write_all(more, until);
}

std::optional<std::size_t> unix_stream::read_some(std::span<char> buffer, deadline until, int wake_fd,
                                                   bool wait_first) {
  if (wait_first && !wait_for(POLLIN, until, wake_fd)) return std::nullopt;
  for (;;) {
    const ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
    if (n >= 0) return static_cast<std::size_t>(n);
    const int err = errno;
    if (err == EINTR) continue;
    if (err == ECONNRESET) return 0;
    if (err != EAGAIN && err != EWOULDBLOCK)
      throw client_error(error_kind::io, "recv(" + path_.string() + "): " + errno_text(err));
    if (!wait_for(POLLIN, until, wake_fd)) return std::nullopt;
  }
}

}  // namespace handoff::client
