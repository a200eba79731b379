// Reading the small files handoff mcp meets (a turn's answer and stderr, its state file, Codex's
// config.toml and rollouts) through engine's owning fd and read loop. Neither follows a symlink
// at the last component, and neither throws: a file that cannot be read is reported as absent.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace handoff::cli::codex {

// The whole of `path`, or nullopt when it cannot be opened or read, or holds more than
// `max_bytes` bytes.
std::optional<std::string> read_whole(const std::filesystem::path& path, std::size_t max_bytes);

// The last `most` bytes of the regular file `path` (all of a shorter one), or "" when it cannot
// be read.
std::string read_tail(const std::filesystem::path& path, std::size_t most);

}  // namespace handoff::cli::codex
