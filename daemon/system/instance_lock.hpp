// One handoffd per socket: an exclusive flock on "<socket>.lock", held for as long as its fd is
// open. Both kinds of start take it, the daemon binding its own socket (net/listener.hpp) and the
// one adopting a socket a service manager passed (activation.hpp), so the two exclude each other.
#pragma once

#include <filesystem>
#include <stdexcept>

#include "engine/fs/posix_io.hpp"

namespace handoff::daemon {

// Another handoffd holds the socket's lock: it serves there (or is finishing its exit).
struct already_serving : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Opens "<socket_path>.lock" (created 0600, a symlink refused, close-on-exec) and locks it without
// waiting. Throws already_serving when another handoffd holds it, std::runtime_error naming the
// lock file for anything else.
unique_fd lock_instance(const std::filesystem::path& socket_path);

}  // namespace handoff::daemon
