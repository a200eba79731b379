// The disk's own floors for the durable queue, measured in the same run as the daemon and on the
// same file system: writing each result as its own fsynced file (what a completion cannot do
// with less, one result at a time), and reading back every file of a directory tree (what a
// recovery cannot do with less). Single-threaded, plain POSIX calls; errors throw
// std::system_error naming the file.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>

namespace handoff::bench {

// One write floor pass: `count` texts, each created as a new file in a fresh directory under
// `base` (O_CREAT | O_EXCL), written fully, fsynced and closed, in order, from one thread; with
// `fsync_dir`, the directory is fsynced after each file too (what makes the new name durable).
// The files are removed afterwards, outside the timing. Returns the wall seconds.
double write_floor(const std::filesystem::path& base, std::size_t count,
                   const std::function<const std::string&(std::size_t)>& text_of, bool fsync_dir);

// What a directory tree holds: regular files (symlinks are not followed), their bytes, the
// bytes allocated for them on disk (st_blocks), and the directories under the root.
struct tree_size {
  std::size_t files = 0;
  std::size_t bytes = 0;
  std::size_t allocated_bytes = 0;
  std::size_t directories = 0;
};
tree_size measure_tree(const std::filesystem::path& root);

// One read floor pass: every regular file under `root`, recursively, opened, read fully and
// closed, one at a time; with `hash`, each file's SHA-256 is computed as it is read. Whatever
// the page cache holds is used (the caller says whether it is warm).
struct read_pass {
  double seconds = 0;
  std::size_t files = 0;
  std::size_t bytes = 0;
};
read_pass read_floor(const std::filesystem::path& root, bool hash);

}  // namespace handoff::bench
