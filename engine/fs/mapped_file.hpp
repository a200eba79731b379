// A read-only memory map of a whole file: large texts are read without copying them into
// the heap, so pending results cost page cache, not daemon memory. Or, for a range its reader
// reads whole right away, a copy of it in memory (see the constructor).
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

namespace handoff {

class mapped_file {
 public:
  mapped_file() = default;
  // Maps the regular file open at `fd` (the fd may be closed afterwards). Throws
  // std::system_error on failure. An empty file maps to an empty view.
  explicit mapped_file(int fd);
  // Maps `length` bytes at `offset` of the file open at `fd` (any offset: the mapping starts at
  // the page below it). The range must lie inside the file. Throws std::system_error.
  // `read_whole`: the caller reads every byte now (a projection, a copy) and lets go soon, so
  // the range is read into memory instead (pread): a copy from the page cache, but no page
  // fault per 4 KiB and no munmap, whose TLB shootdown across the daemon's threads is a
  // large part of a small wait (docs/benchmarks.md). For ranges of at most
  // a few hundred KiB (the queue's journal texts).
  mapped_file(int fd, std::size_t offset, std::size_t length, bool read_whole = false);
  ~mapped_file();
  mapped_file(mapped_file&& other) noexcept;
  mapped_file& operator=(mapped_file&& other) noexcept;
  mapped_file(const mapped_file&) = delete;
  mapped_file& operator=(const mapped_file&) = delete;

  std::string_view view() const noexcept { return {data_, size_}; }

 private:
  std::unique_ptr<char[]> copy_;  // read_whole's bytes (then nothing is mapped)
  void* base_ = nullptr;       // what mmap returned (page aligned)
  std::size_t mapped_ = 0;     // bytes mapped from base_
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace handoff
