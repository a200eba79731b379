// A read-only memory map of a whole file: large texts are read without copying them into
// the heap, so pending results cost page cache, not daemon memory.
#pragma once

#include <cstddef>
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
  // `read_whole`: the caller reads every byte (a projection, a copy), so the pages are mapped
  // at once (MAP_POPULATE) rather than one page fault at a time.
  mapped_file(int fd, std::size_t offset, std::size_t length, bool read_whole = false);
  ~mapped_file();
  mapped_file(mapped_file&& other) noexcept;
  mapped_file& operator=(mapped_file&& other) noexcept;
  mapped_file(const mapped_file&) = delete;
  mapped_file& operator=(const mapped_file&) = delete;

  std::string_view view() const noexcept { return {data_, size_}; }

 private:
  void* base_ = nullptr;       // what mmap returned (page aligned)
  std::size_t mapped_ = 0;     // bytes mapped from base_
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace handoff
