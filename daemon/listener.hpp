// The daemon's listening socket: a private directory (0700, ours), a single-instance lock,
// a stale socket from a crashed run reclaimed, the socket itself 0600.
#pragma once

#include <filesystem>
#include <sys/types.h>

namespace handoff::daemon {

class listener {
 public:
  // Prepares the directory and lock and binds+listens on `socket_path`. Throws
  // std::runtime_error saying what is wrong (another daemon running, a directory open to
  // others, a non-socket file at the path...).
  explicit listener(std::filesystem::path socket_path);
  ~listener();
  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;

  // The listening fd; ownership passes to the caller (the acceptor).
  int release_fd() noexcept;
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
  int lock_fd_ = -1;
  int listen_fd_ = -1;
};

// The uid and pid of the process at the other end of a connected Unix socket.
struct peer_credentials {
  uid_t uid = static_cast<uid_t>(-1);
  pid_t pid = 0;
};
bool read_peer_credentials(int fd, peer_credentials& out) noexcept;

}  // namespace handoff::daemon
