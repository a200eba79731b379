// Starting handoffd when nothing answers at its socket (docs/design.md §12),
// as watchman and gpg-agent do: the client runs `handoffd --background`, which returns once the
// detached daemon listens, and then connects. Two clients starting it at once end with one
// daemon: the second handoffd finds the socket's lock held and exits 3, and its client connects
// to the first. A stale socket file (a daemon killed with -9) is the new daemon's to replace;
// a live daemon is never replaced.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>

#include "handoff/unix_stream.hpp"

namespace handoff::client {

struct autostart {
  std::filesystem::path daemon;                          // the handoffd to run
  std::chrono::milliseconds timeout{10'000};             // from the first failed connect to giving up
  std::chrono::milliseconds idle_exit{10 * 60 * 1000};   // its --idle-exit-ms
};

// How this process starts a daemon, from its environment: nullopt when HANDOFF_AUTOSTART=0, or
// when no handoffd is found. The daemon is $HANDOFF_DAEMON, else `handoffd` beside this
// executable (an install: both in PREFIX/bin), else ../daemon/handoffd from there (the build
// tree), else the first `handoffd` on $PATH. HANDOFF_IDLE_EXIT_MS and HANDOFF_AUTOSTART_TIMEOUT_MS
// override the two times (milliseconds; a bad value is ignored for the default).
std::optional<autostart> autostart_from_environment();

// Connects to `socket`; when nothing listens there, starts `how.daemon` and connects once it
// answers, within how.timeout. Throws client_error: daemon_absent (naming why the start failed
// and where the daemon's log is) when it cannot, or what unix_stream::connect throws for a
// socket that exists but refuses us.
unix_stream connect_or_start(const std::filesystem::path& socket, const autostart& how);

}  // namespace handoff::client
