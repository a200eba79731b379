#include "engine/mapped_file.hpp"

#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <system_error>
#include <utility>

namespace handoff {

// MAP_PRIVATE + PROT_READ: the view never changes our file and costs page cache only. The
// mapping keeps the file alive on its own, so the caller may close `fd` right away.
// A file truncated under the mapping would raise SIGBUS on access; the files we map live in
// 0700 directories of ours and are never rewritten in place, so nobody else can do that.
mapped_file::mapped_file(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw std::system_error(errno, std::generic_category(), "fstat");
  if (!S_ISREG(st.st_mode)) {
    throw std::system_error(std::make_error_code(std::errc::invalid_argument),
                            "mapped_file: not a regular file");
  }
  if (st.st_size == 0) return;  // mmap of length 0 is EINVAL; an empty view says it all
  const auto size = static_cast<std::size_t>(st.st_size);
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mmap");
  data_ = static_cast<const char*>(p);
  size_ = size;
}

mapped_file::~mapped_file() {
  if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
}

mapped_file::mapped_file(mapped_file&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

mapped_file& mapped_file::operator=(mapped_file&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

}  // namespace handoff
