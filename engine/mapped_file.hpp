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
  ~mapped_file();
  mapped_file(mapped_file&& other) noexcept;
  mapped_file& operator=(mapped_file&& other) noexcept;
  mapped_file(const mapped_file&) = delete;
  mapped_file& operator=(const mapped_file&) = delete;

  std::string_view view() const noexcept { return {data_, size_}; }

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace handoff
