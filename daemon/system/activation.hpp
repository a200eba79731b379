// Socket activation: adopting the listening socket a service manager (systemd, or
// systemd-socket-activate) created and passed to us, per sd_listen_fds(3).
//
// The protocol: the manager leaves the socket open as fd 3 (SD_LISTEN_FDS_START) and sets
//   LISTEN_PID      the pid the fds are meant for; any other process must ignore them
//   LISTEN_FDS      how many fds, from 3 on; handoffd takes exactly one
//   LISTEN_FDNAMES  optional, colon-separated names (FileDescriptorName=), for the log only
// We implement it ourselves (a few lines) rather than link libsystemd.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "engine/fs/posix_io.hpp"

namespace handoff::daemon {

// A listening socket handed over by the service manager. It was bound by the manager, so it is
// the manager's to unlink: nothing here ever removes the socket file.
struct activated_socket {
  unique_fd socket;              // the listening socket (fd 3), now close-on-exec
  std::filesystem::path path;    // where it is bound, from getsockname
  std::string name;              // its LISTEN_FDNAMES entry, or "" when none was given
  unique_fd lock;                // flock held on "<path>.lock" for as long as this lives
};

// Reads and then unsets LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES (so nothing we might start
// inherits them). Returns nullopt when they are absent or meant for another pid: the daemon
// then binds its own socket as usual.
//
// When they are meant for us, fd 3 must be a listening AF_UNIX SOCK_STREAM socket bound to a
// path, and LISTEN_FDS must be 1; anything else throws std::runtime_error saying what was
// passed, because serving on a socket nobody connects to would look like a hang.
//
// The adopted socket's "<path>.lock" is locked as daemon::listener locks it (lock_instance), so a
// handoffd started by hand on the same path refuses to start instead of unlinking the
// manager's socket as if it were a crashed run's; a lock already held throws.
std::optional<activated_socket> take_activated_socket();

}  // namespace handoff::daemon
