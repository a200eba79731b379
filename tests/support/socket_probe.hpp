// What a test or a benchmark asks of a Unix socket it did not open: does something accept on it,
// and which process.
#pragma once

#include <sys/types.h>

#include <filesystem>

namespace handoff::test {

// True when a connection to `path` is accepted (then closed at once).
bool socket_accepts(const std::filesystem::path& path);

// The pid of the process listening at `path` (SO_PEERCRED of a connection), or 0 when none.
pid_t listener_pid(const std::filesystem::path& path);

}  // namespace handoff::test
