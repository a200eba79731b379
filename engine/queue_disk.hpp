// Small file operations the queue shares between its normal path and its recovery.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace handoff {

// Milliseconds since the Unix epoch, from the system clock.
std::int64_t unix_ms_now();

// Removes `name` from the directory open at `dir_fd` without following it; an absent name
// counts as removed. Returns "" or what went wrong, in plain words naming `shown`.
std::string remove_name(int dir_fd, const std::string& name, std::string_view shown);

// Reads a small regular file of ours (at most max_queue_file_bytes). nullopt with `why` when it
// is absent, not trusted (symlink, FIFO, foreign, open to others) or unreadable.
std::optional<std::string> read_queue_file(int dir_fd, const std::string& name,
                                           std::string_view shown, std::string& why);

// Best-effort fsync of a directory after removals: a removal lost to a crash is redone by the
// next recovery, so failing here loses nothing.
void sync_quietly(int dir_fd) noexcept;

// "<64 hex><suffix>" -> the hex part, else nullopt.
std::optional<std::string> hash_stem(std::string_view name, std::string_view suffix);

}  // namespace handoff
