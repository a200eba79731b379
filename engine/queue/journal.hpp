// The queue's journal directory (docs/design.md §8): numbered segment files <16 hex>.log,
// written by appending whole groups of entries (journal_entry.hpp), syncing once per group,
// after the last entry or over the zeros written ahead of it (zero_ahead). One segment is
// active (appended to); the others are sealed and only read, until nothing in them is needed
// and they are removed.
// One writer (the queue's) appends, cuts and removes; other threads may call segment_fd(),
// segment_size() and total_bytes() meanwhile (the map of segments has its own mutex). A reader
// maps a range through segment_fd() while nothing it reads can be removed (the queue's lock).
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "engine/fs/posix_io.hpp"

namespace handoff {

class journal {
 public:
  // Opens (creating, 0700) `<queue>/journal` inside the queue directory open at `queue_fd`, and
  // every segment in it (refusing, with std::runtime_error, a segment that is a symlink, not a
  // regular file, not ours or open to others). Names that are not segments are left alone and
  // listed by strangers().
  journal(int queue_fd, const std::filesystem::path& queue_dir);

  std::vector<std::uint64_t> segments() const;  // every segment, oldest first
  int segment_fd(std::uint64_t number) const;  // -1 when there is no such segment
  std::size_t segment_size(std::uint64_t number) const;
  const std::vector<std::string>& strangers() const noexcept { return strangers_; }

  // Cuts a segment back to `size` bytes (a torn tail found by recovery) and syncs it.
  void cut(std::uint64_t number, std::size_t size);
  // Recovery found the entries of a segment end at `size`, with only zeros after them (written
  // ahead by zero_ahead()): they stay, and the next append goes at `size`.
  void end_at(std::uint64_t number, std::size_t size);

  // Makes the newest segment the active one (a new, empty segment 1 when there is none).
  // Call once recovery has cut what it had to cut, before any append().
  void start_appending();
  std::uint64_t active() const noexcept { return active_; }

  // Appends `pieces`, in order, at the end of the active segment and syncs it (fdatasync);
  // returns the offset where they start. Refuses (fs_error) when the journal's path no longer
  // leads to the directory opened (the queue was moved or replaced). On failure throws fs_error after cutting the segment
  // back to where it was, so a failed group leaves no bytes; when even that fails the segment
  // is sealed and the next append starts a new one (recovery stops at the leftover bytes,
  // which were never acknowledged).
  std::size_t append(const std::vector<iovec>& pieces);

  // Starts a new active segment when the active one holds at least `bytes`; true if it did.
  // The old one is cut back to its entries (not synced: zeros after them read as its end too).
  // Throws fs_error when the new segment cannot be created (the old one stays active).
  bool rotate_if_over(std::size_t bytes);

  // Keeps the active segment's file written with zeros, and synced, at least `bytes` past its
  // entries: when less than half of that is left, writes zeros up to `bytes` past them. An
  // append into those blocks changes neither the file's size nor its block map, so its
  // fdatasync writes the data alone (docs/benchmarks.md, "Figures behind the code"). A
  // crash leaves zeros after the last entry, which recovery reads as the segment's end
  // (end_at). Not while the filesystem has less than zero_ahead_room times `bytes` free (the
  // zeros would take the space a text or an artifact needs). `interrupted`, asked between
  // pieces of 256 KiB, stops it (a group is waiting). False when skipped, interrupted or
  // refused: what was written is given back unsynced (so no later fdatasync writes it out),
  // and the appends extend the file, as without.
  bool zero_ahead(std::size_t bytes, const std::function<bool()>& interrupted);
  static constexpr std::size_t zero_ahead_room = 64;

  // Removes a sealed segment (never the active one) and syncs the directory. Throws fs_error.
  void remove(std::uint64_t number);

  // Bytes in all segments.
  std::size_t total_bytes() const;

 private:
  struct segment {
    unique_fd fd;  // O_RDWR
    std::size_t size = 0;        // where its entries end: the next append goes here
    std::size_t file_bytes = 0;  // the file's size: zeros from `size` to here
  };
  void create(std::uint64_t number);
  void check_in_place() const;  // throws fs_error when dir_ no longer leads to dir_fd_

  std::filesystem::path dir_;
  unique_fd dir_fd_;
  mutable std::mutex map_mutex_;  // guards segments_ (the map, not the files)
  std::map<std::uint64_t, segment> segments_;
  std::vector<std::string> strangers_;
  std::uint64_t active_ = 0;
  bool must_rotate_ = false;  // the active segment could not be cut back after a failed append
};

// One piece of a group for append(): bytes the caller keeps alive until append() returns.
inline iovec journal_piece(std::string_view bytes) { return iovec{const_cast<char*>(bytes.data()), bytes.size()}; }

// "0000000000000001.log" <-> 1
std::string segment_name(std::uint64_t number);

}  // namespace handoff
