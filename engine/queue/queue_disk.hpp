// Small file operations the queue shares between its normal path and its recovery. (The generic
// ones, remove_name and sync_quietly, are in posix_io.hpp; hash_stem in sha256.hpp.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/fs/posix_io.hpp"
#include "engine/fs/sha256.hpp"

namespace handoff {

// Milliseconds since the Unix epoch, from the system clock.
std::int64_t unix_ms_now();

// Reads a small regular file of ours (at most max_queue_file_bytes). nullopt with `why` when it
// is absent, not trusted (symlink, FIFO, foreign, open to others) or unreadable.
std::optional<std::string> read_queue_file(int dir_fd, const std::string& name,
                                           std::string_view shown, std::string& why);

// Removes the temp files a crash left in a directory (writes publish by rename, so a temp file
// is never the only copy of anything), each with a line in `notes` (`area` names the
// directory), and returns the other names.
std::vector<std::string> names_after_temps(int dir_fd, const std::string& area, std::vector<std::string>& notes);

}  // namespace handoff
