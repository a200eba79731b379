// The daemon's listening socket: a private directory (0700, ours), a single-instance lock,
// a stale socket from a crashed run reclaimed, the socket itself 0600.
#pragma once

#include <filesystem>
#include <sys/types.h>

#include "engine/fs/posix_io.hpp"
#include "system/instance_lock.hpp"

namespace handoff::daemon {

class listener {
 public:
  // Prepares the directory and takes the single-instance lock (lock_instance), before anything
  // else of the daemon touches its queue. Throws already_serving when another handoffd holds
  // it, std::runtime_error for anything else wrong (a directory open to others, a symlink...).
  explicit listener(std::filesystem::path socket_path);
  ~listener();
  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;

  // Reclaims a crashed run's socket file and binds + listens at the path. Throws
  // std::runtime_error (a non-socket file at the path, bind failing...).
  void listen();
  // The listening fd; ownership passes to the caller (the acceptor).
  int release_fd() noexcept;
  const std::filesystem::path& path() const noexcept { return path_; }

  // An idle exit (server::exit_when_idle): hide() renames the socket file aside, so that no new
  // client can reach it, and restore() puts it back when one had already connected. The lock
  // stays held either way: no other daemon binds the path meanwhile. False when the rename failed.
  bool hide() noexcept;
  bool restore() noexcept;

 private:
  std::filesystem::path path_;
  std::filesystem::path hidden_;  // path_ + ".closing"
  bool is_hidden_ = false;
  unique_fd lock_;  // the single-instance lock, held for the life of the listener
  int listen_fd_ = -1;
};

// The uid and pid of the process at the other end of a connected Unix socket.
struct peer_credentials {
  uid_t uid = static_cast<uid_t>(-1);
  pid_t pid = 0;
};
bool read_peer_credentials(int fd, peer_credentials& out) noexcept;

}  // namespace handoff::daemon
