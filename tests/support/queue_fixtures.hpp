// Helpers for the durable queue's tests (pending_queue_test.cpp, journal_test.cpp): a queue that
// has recovered on a real directory, completions, and the journal's files as a test sees them.
// The layout is the one pending_queue.hpp states: journal/<16 hex>.log, texts/<sha256>.txt,
// done/<key>; these helpers read it with plain file calls, never with the engine's own code.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/queue/pending_queue.hpp"
#include "engine/fs/sha256.hpp"
#include "support/fs_fixtures.hpp"

namespace handoff::test {

inline completion make_completion(const std::string& parent, const std::string& child,
                                  result_status status = result_status::done) {
  return {parent, child, "title of " + child, status, status == result_status::error ? "it broke" : ""};
}

// A queue on `dir` that has recovered; the problems it reported are kept.
struct opened_queue {
  explicit opened_queue(const std::filesystem::path& dir, queue_options options = {})
      : queue(dir, options), state(queue.recover(&problems)) {}
  std::vector<std::string> problems;
  pending_queue queue;
  pending_queue::recovered state;
};

inline std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  return all;
}

// done/<key>: sha256(parent "\0" child), computed here independently of the engine.
inline std::string key_of(const std::string& parent, const std::string& child) {
  std::string input = parent;
  input.push_back('\0');
  input += child;
  return sha256_hex(input);
}

inline std::string text_name(const std::string& text) { return sha256_hex(text) + ".txt"; }

// The journal's segment files, oldest first (their names sort by number).
inline std::vector<std::filesystem::path> segment_paths(const std::filesystem::path& queue_dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& name : names_in(queue_dir / "journal")) out.push_back(queue_dir / "journal" / name);
  return out;
}

inline std::size_t size_of(const std::filesystem::path& p) { return std::filesystem::file_size(p); }

inline void truncate_to(const std::filesystem::path& p, std::size_t size) {
  if (::truncate(p.c_str(), static_cast<off_t>(size)) != 0) throw std::runtime_error("cannot truncate " + p.string());
}

// Flips every bit of the byte at `offset`, keeping the file's mode.
inline void flip_byte(const std::filesystem::path& p, std::size_t offset) {
  std::string bytes = read_file(p);
  if (offset >= bytes.size()) throw std::out_of_range("flip_byte past the end of " + p.string());
  bytes[offset] = static_cast<char>(~static_cast<unsigned char>(bytes[offset]));
  write_file(p, bytes, 0600);
}

// Sets up to `count` bytes from `offset` to zero (what a write over zeros written ahead leaves
// where it did not reach the disk), keeping the file's size and mode.
inline void zero_bytes(const std::filesystem::path& p, std::size_t offset, std::size_t count = SIZE_MAX) {
  std::string bytes = read_file(p);
  if (offset > bytes.size()) throw std::out_of_range("zero_bytes past the end of " + p.string());
  std::fill_n(bytes.begin() + static_cast<std::ptrdiff_t>(offset), std::min(count, bytes.size() - offset), '\0');
  write_file(p, bytes, 0600);
}

// A copy of a whole queue directory (modes kept: copy_file and create_directory copy them).
inline void copy_queue(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
}

inline void check_same(const held_result& a, const held_result& b) {
  CHECK(a.seq == b.seq);
  CHECK(a.info.parent_id == b.info.parent_id);
  CHECK(a.info.child_id == b.info.child_id);
  CHECK(a.info.title == b.info.title);
  CHECK(a.info.status == b.info.status);
  CHECK(a.info.error == b.info.error);
  CHECK(a.sha256 == b.sha256);
  CHECK(a.shape.bytes == b.shape.bytes);
  CHECK(a.shape.lines == b.shape.lines);
  CHECK(a.completed_unix_ms == b.completed_unix_ms);
}

// A small tmpfs, mounted on `at` inside a temporary directory of its own, for running out of
// space or inodes; the queue under test goes in `queue` on it. When it cannot be mounted (no
// CAP_SYS_ADMIN), usable() says why via cannot_inject (which fails under
// HANDOFF_REQUIRE_FAULT_INJECTION) and the case returns.
struct small_disk {
  explicit small_disk(const std::string& tmpfs_options)
      : at(tmp.path() / "small"), mount((std::filesystem::create_directory(at), at), tmpfs_options), queue(at / "queue") {}
  bool usable() {
    if (!mount.mounted()) cannot_inject("cannot mount a tmpfs here (" + mount.why_not() + ")");
    return mount.mounted();
  }
  temp_dir tmp;
  std::filesystem::path at;
  tmpfs_mount mount;
  std::filesystem::path queue;
};

// Writes a filler file under `dir` until its filesystem has no data space left.
inline std::filesystem::path fill_space(const std::filesystem::path& dir) {
  const std::filesystem::path f = dir / "filler";
  const int fd = ::open(f.c_str(), O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + f.string());
  const std::string chunk(1024, 'f');
  while (::write(fd, chunk.data(), chunk.size()) > 0) {
  }
  while (::write(fd, chunk.data(), 1) > 0) {
  }
  ::close(fd);
  return f;
}

// Creates empty files under `dir` until its filesystem has no inode left; returns them.
inline std::vector<std::filesystem::path> take_all_inodes(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> fillers;
  for (;;) {
    const std::filesystem::path f = dir / ("inode-" + std::to_string(fillers.size()));
    const int fd = ::open(f.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) return fillers;
    ::close(fd);
    fillers.push_back(f);
  }
}

}  // namespace handoff::test
