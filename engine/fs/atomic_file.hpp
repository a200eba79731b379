// All-or-nothing file publishing inside an open directory: a reader sees no file or the whole
// file, never a partial one, and a crash leaves at worst a temp file named temp_prefix + ...
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/fs/posix_io.hpp"

namespace handoff {

// Every temp file starts with this; nothing else we write does, so recovery may remove them.
inline constexpr std::string_view temp_prefix = ".tmp-";

enum class publish_mode {
  no_replace,  // an existing `name` is left alone and reported (content-addressed files)
  replace,     // an existing `name` is atomically replaced (renameat)
};

enum class temp_method {
  automatic,  // O_TMPFILE when the filesystem has it, else a named temp
  named,      // always a named O_CREAT|O_EXCL|O_NOFOLLOW temp (tests; odd filesystems)
};

enum class when_synced {
  before_return,  // the file and its directory entry are durable when the call returns
  by_caller,      // neither is synced: the caller fsyncs the file and the directory later
                  // (the queue's tombstones, which its journal already holds durably)
};

// Writes `bytes` as `name` in the directory open at `dir_fd`, mode 0600 whatever the umask:
// temp file, write, fchmod, fsync, publish, fsync of the directory.
// `unnamed`, when given, is an empty file with no name made ahead in that directory
// (open_unnamed), written and linked instead of a new one (no_replace and automatic only; it is
// used up either way).
// Returns false when mode is no_replace and `name` already exists (nothing is written then).
// Throws fs_error ("No space left on device while writing <what>") on failure, after removing
// its temp file; the published name never holds a partial file. If only the final directory
// fsync fails the file is complete but may not survive a power loss; that is thrown as well.
bool write_file_atomically(int dir_fd, const std::string& name, std::string_view bytes,
                           publish_mode mode, std::string_view what,
                           temp_method method = temp_method::automatic,
                           when_synced sync = when_synced::before_return,
                           std::optional<unique_fd> unnamed = std::nullopt);

// A file with no name yet (O_TMPFILE), written before its name is known (a content-addressed
// text while its hash is computed) and published later by linking the fd (link_open_file), after
// which only the directory needs a sync; a crash before that leaves nothing. In two steps, so
// that the file can be made ahead of its bytes (creating an inode on ext4 costs as much as
// writing a small text, more while many were freed recently; docs/benchmarks.md):
// - open_unnamed: an empty such file in the directory open at `dir_fd`, mode 0600, or nullopt
//   where the filesystem has no O_TMPFILE; throws fs_error otherwise;
// - fill_unnamed: `bytes` written into it and fsynced; throws fs_error.
std::optional<unique_fd> open_unnamed(int dir_fd, std::string_view what);
void fill_unnamed(int fd, std::string_view bytes, std::string_view what);

// Names in the directory open at `dir_fd`, without "." and "..". Throws fs_error.
std::vector<std::string> list_names(int dir_fd);

}  // namespace handoff
